//! [`Active`]: the runs this server has in flight, one per plan file, each with its own stop
//! signal, and the server's stop of them all. A run is a spawned task, so that a cancelled
//! tool call (whose response nobody awaits) still ends its run cleanly: what finished saved,
//! the plan `interrupted`. A tool that reads a plan the server is stopping waits until the
//! run has saved it ([`Active::settled`]); the server, when it stops, waits for every run.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The runs in flight.
#[derive(Default)]
pub struct Active {
    runs: Mutex<HashMap<PathBuf, Entry>>,
    /// Stops every run: the server is stopping.
    stop_all: CancellationToken,
    tracker: TaskTracker,
}

struct Entry {
    stop: CancellationToken,
    /// The cancellation of the tool call that drives the run: once it is cancelled the run
    /// is as good as stopping, even before the call has stopped it (a request that comes
    /// right after the cancellation must see that).
    call: CancellationToken,
    ended: watch::Receiver<bool>,
}

impl Entry {
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
        lock(&self.active.runs).remove(&self.plan);
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
    /// Claims `plan` (its real path) for a run driven by the call that `call` cancels;
    /// `None` when this server already runs it.
    pub fn claim(self: &Arc<Self>, plan: &Path, call: CancellationToken) -> Option<Slot> {
        let mut runs = lock(&self.runs);
        if runs.contains_key(plan) {
            return None;
        }
        let stop = self.stop_all.child_token();
        let (ended, watched) = watch::channel(false);
        runs.insert(
            plan.to_path_buf(),
            Entry {
                stop: stop.clone(),
                call,
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
        lock(&self.runs).get(plan).map(|e| {
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
            let runs = lock(&self.runs);
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
        let stopping: Vec<watch::Receiver<bool>> = lock(&self.runs)
            .values()
            .filter(|e| e.stopping())
            .map(|e| e.ended.clone())
            .collect();
        for mut ended in stopping {
            let _ = ended.wait_for(|done| *done).await;
        }
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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the map leaves it consistent: each change is one insert or remove.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_plan_is_claimed_once_and_a_stopped_run_is_waited_for() {
        let active = Arc::new(Active::default());
        let plan = Path::new("/runs/p.json");
        let call = CancellationToken::new();
        let slot = active.claim(plan, call.clone()).expect("free");
        assert!(active.claim(plan, call.clone()).is_none(), "claimed twice");
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
        assert!(active.claim(plan, call).is_some(), "free again");
    }

    #[tokio::test]
    async fn stopping_the_server_stops_every_run_and_waits_for_it() {
        let active = Arc::new(Active::default());
        let slot = active
            .claim(Path::new("/a.json"), CancellationToken::new())
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
}
