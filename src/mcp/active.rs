//! [`Active`]: the runs this server has in flight, one per plan file, each with its own stop
//! signal, and the server's stop of them all. A run is a spawned task, so that a cancelled
//! tool call (whose response nobody awaits) still ends its run cleanly: what finished saved,
//! the plan `interrupted`. A tool that reads a plan the server is stopping waits until the
//! run has saved it ([`Active::settled`]); the server, when it stops, waits for every run.
//!
//! A run started over streamable HTTP is also known by its session and request
//! ([`HttpCall`]): the HTTP gate stops it when the client closes the call's stream or ends the
//! session, as a cancellation would ([`Active::stop_call`], [`Active::stop_session`]).

use crate::sync::Locked;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The most HTTP calls remembered as closed before their run was claimed.
const MAX_ORPHANS: usize = 1024;

/// How long such a call is remembered: far more than a call takes to claim its run, and short
/// enough that a client which reuses a request id later is not stopped by an old close.
const ORPHAN_TTL: Duration = Duration::from_secs(60);

/// An HTTP request that drives a run: its session (`Mcp-Session-Id`) and its JSON-RPC id
/// (as [`HttpCall::key`] writes it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HttpCall {
    pub session: String,
    pub request: String,
}

impl HttpCall {
    /// A JSON-RPC id as a key that tells `1` from `"1"`.
    pub fn key(id: &serde_json::Value) -> String {
        id.to_string()
    }
}

/// The runs in flight.
#[derive(Default)]
pub struct Active {
    runs: Mutex<HashMap<PathBuf, ActiveRun>>,
    /// HTTP calls whose stream closed before they claimed a run: stopped as they claim.
    orphans: Mutex<HashMap<HttpCall, Instant>>,
    /// Stops every run: the server is stopping.
    stop_all: CancellationToken,
    tracker: TaskTracker,
}

struct ActiveRun {
    stop: CancellationToken,
    /// The cancellation of the tool call that drives the run: once it is cancelled the run
    /// is as good as stopping, even before the call has stopped it (a request that comes
    /// right after the cancellation must see that).
    call: CancellationToken,
    http: Option<HttpCall>,
    ended: watch::Receiver<bool>,
}

impl ActiveRun {
    fn stopping(&self) -> bool {
        self.stop.is_cancelled() || self.call.is_cancelled()
    }
}

/// A run's place among the active ones: its stop signal; dropping it says the run ended.
pub struct Slot {
    active: Arc<Active>,
    plan: PathBuf,
    pub stop: CancellationToken,
    ended: watch::Sender<bool>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.active.runs.locked().remove(&self.plan);
        let _ = self.ended.send(true);
    }
}

/// What this server is doing with a plan file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Running,
    /// Told to stop, still saving.
    Stopping,
}

impl Active {
    /// Claims `plan` (its real path) for a run driven by the call that `call` cancels (an
    /// HTTP request `http`); `None` when this server already runs it.
    pub fn claim(
        self: &Arc<Self>,
        plan: &Path,
        call: CancellationToken,
        http: Option<HttpCall>,
    ) -> Option<Slot> {
        let mut runs = self.runs.locked();
        if runs.contains_key(plan) {
            return None;
        }
        let stop = self.stop_all.child_token();
        if let Some(http) = &http
            && self
                .orphans
                .locked()
                .remove(http)
                .is_some_and(|closed| closed.elapsed() < ORPHAN_TTL)
        {
            stop.cancel();
        }
        let (ended, watched) = watch::channel(false);
        runs.insert(
            plan.to_path_buf(),
            ActiveRun {
                stop: stop.clone(),
                call,
                http,
                ended: watched,
            },
        );
        Some(Slot {
            active: Arc::clone(self),
            plan: plan.to_path_buf(),
            stop,
            ended,
        })
    }

    /// What this server is doing with `plan`, if anything.
    pub fn state(&self, plan: &Path) -> Option<RunState> {
        self.runs.locked().get(plan).map(|e| {
            if e.stopping() {
                RunState::Stopping
            } else {
                RunState::Running
            }
        })
    }

    /// Waits until a run of `plan` that was told to stop has ended (its results saved); a
    /// run still going is left alone.
    pub async fn settled(&self, plan: &Path) {
        let ended = {
            let runs = self.runs.locked();
            match runs.get(plan) {
                Some(e) if e.stopping() => Some(e.ended.clone()),
                _ => None,
            }
        };
        if let Some(mut ended) = ended {
            // An error means the sender is gone: the run has ended too.
            let _ = ended.wait_for(|done| *done).await;
        }
    }

    /// Waits until every run that was told to stop has ended (its results saved): what a
    /// listing of runs does first, so that a run cancelled just before shows `interrupted`,
    /// not `running`.
    pub async fn settled_all(&self) {
        let stopping: Vec<watch::Receiver<bool>> = self
            .runs
            .locked()
            .values()
            .filter(|e| e.stopping())
            .map(|e| e.ended.clone())
            .collect();
        for mut ended in stopping {
            let _ = ended.wait_for(|done| *done).await;
        }
    }

    /// Stops the run that `call` drives: its client closed the call's stream. A call that has
    /// not claimed its run yet is stopped as it does.
    pub fn stop_call(&self, call: &HttpCall) {
        let runs = self.runs.locked();
        let driven = runs.values().find(|e| e.http.as_ref() == Some(call));
        match driven {
            Some(entry) => entry.stop.cancel(),
            None => {
                let mut orphans = self.orphans.locked();
                orphans.retain(|_, closed| closed.elapsed() < ORPHAN_TTL);
                if orphans.len() >= MAX_ORPHANS {
                    orphans.clear();
                }
                orphans.insert(call.clone(), Instant::now());
            }
        }
    }

    /// Stops every run driven by a call of `session`: the session ended.
    pub fn stop_session(&self, session: &str) {
        for entry in self.runs.locked().values() {
            if entry.http.as_ref().is_some_and(|h| h.session == session) {
                entry.stop.cancel();
            }
        }
        self.orphans.locked().retain(|h, _| h.session != session);
    }

    /// Runs `work` as a task the server waits for when it stops.
    pub fn spawn<F>(&self, work: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(work)
    }

    /// Stops every run and waits until each has saved what it did.
    pub async fn stop_all(&self) {
        self.stop_all.cancel();
        self.tracker.close();
        self.tracker.wait().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_plan_is_claimed_once_and_a_stopped_run_is_waited_for() {
        let active = Arc::new(Active::default());
        let plan = Path::new("/runs/p.json");
        let call = CancellationToken::new();
        let slot = active.claim(plan, call.clone(), None).expect("free");
        assert!(
            active.claim(plan, call.clone(), None).is_none(),
            "claimed twice"
        );
        assert_eq!(active.state(plan), Some(RunState::Running));
        active.settled(plan).await; // a running run is not waited for
        call.cancel();
        assert_eq!(
            active.state(plan),
            Some(RunState::Stopping),
            "the call is cancelled"
        );
        let waiter = {
            let active = Arc::clone(&active);
            tokio::spawn(async move { active.settled(Path::new("/runs/p.json")).await })
        };
        let all = {
            let active = Arc::clone(&active);
            tokio::spawn(async move { active.settled_all().await })
        };
        drop(slot);
        waiter.await.expect("settled");
        all.await.expect("all settled");
        assert_eq!(active.state(plan), None);
        assert!(active.claim(plan, call, None).is_some(), "free again");
    }

    #[tokio::test]
    async fn stopping_the_server_stops_every_run_and_waits_for_it() {
        let active = Arc::new(Active::default());
        let slot = active
            .claim(Path::new("/a.json"), CancellationToken::new(), None)
            .expect("free");
        let stop = slot.stop.clone();
        let task = active.spawn(async move {
            stop.cancelled().await;
            drop(slot);
            "saved"
        });
        active.stop_all().await;
        assert_eq!(task.await.expect("joined"), "saved");
        assert_eq!(active.state(Path::new("/a.json")), None);
    }

    #[test]
    fn a_closed_http_call_stops_its_run_even_before_it_is_claimed() {
        let active = Arc::new(Active::default());
        let call = |session: &str, id: &str| HttpCall {
            session: session.into(),
            request: id.into(),
        };
        let a = active
            .claim(
                Path::new("/a.json"),
                CancellationToken::new(),
                Some(call("s", "1")),
            )
            .expect("free");
        let b = active
            .claim(
                Path::new("/b.json"),
                CancellationToken::new(),
                Some(call("s", "2")),
            )
            .expect("free");
        let c = active
            .claim(
                Path::new("/c.json"),
                CancellationToken::new(),
                Some(call("t", "1")),
            )
            .expect("free");
        active.stop_call(&call("s", "1"));
        assert!(a.stop.is_cancelled() && !b.stop.is_cancelled());
        active.stop_session("s");
        assert!(b.stop.is_cancelled() && !c.stop.is_cancelled());
        active.stop_call(&call("t", "9"));
        let late = active
            .claim(
                Path::new("/d.json"),
                CancellationToken::new(),
                Some(call("t", "9")),
            )
            .expect("free");
        assert!(late.stop.is_cancelled(), "closed before it claimed its run");
    }
}
