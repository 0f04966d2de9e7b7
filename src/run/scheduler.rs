//! [`Scheduler`]: jobs run as spawned tasks, at most `slots` at once, in the order they were
//! queued. A queued job is only what makes it (a closure holding its inputs): its future, which
//! may be tens of kilobytes, exists from its start, so a long queue costs what its inputs do. It knows nothing of plans, nodes or budgets: the driver says, as each job is about
//! to start, whether it may ([`Admit`]), and hears of each job's end ([`Done`]), a panic as an
//! end like any other. A job is a future keyed by what the driver calls it (a node id, a
//! question), so the driver alone decides what a result means and writes it down.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::task::{JoinError, JoinSet};

/// What makes a job when it starts.
type Make<T> = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = T> + Send>> + Send>;

/// Whether a queued job may start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    Run,
    /// It does not start, and leaves the queue (the driver records why).
    Skip,
}

/// A job that ended: its output, or the panic that ended it.
#[derive(Debug)]
pub struct Done<K, T> {
    pub key: K,
    pub outcome: Result<T, String>,
    /// From its start to its end.
    pub took: Duration,
}

/// Jobs waiting for a slot, and jobs running.
pub struct Scheduler<K, T> {
    slots: usize,
    queue: VecDeque<(K, Make<T>)>,
    tasks: JoinSet<(K, T, Duration)>,
    running: HashMap<tokio::task::Id, (K, Instant)>,
}

impl<K, T> Scheduler<K, T>
where
    K: Clone + Send + 'static,
    T: Send + 'static,
{
    /// At most `slots` jobs at once (at least one).
    pub fn new(slots: usize) -> Scheduler<K, T> {
        Scheduler {
            slots: slots.max(1),
            queue: VecDeque::new(),
            tasks: JoinSet::new(),
            running: HashMap::new(),
        }
    }

    /// Queues the job `make` makes under `key`; `make` is called when [`Scheduler::start`]
    /// finds it a slot.
    pub fn queue<F>(&mut self, key: K, make: impl FnOnce() -> F + Send + 'static)
    where
        F: Future<Output = T> + Send + 'static,
    {
        let make: Make<T> = Box::new(move || Box::pin(make()));
        self.queue.push_back((key, make));
    }

    /// Starts queued jobs, in order, while slots are free; `admit` is asked about each just
    /// before it would start (an error stops the starting and is returned).
    pub fn start<E>(&mut self, mut admit: impl FnMut(&K) -> Result<Admit, E>) -> Result<(), E> {
        while self.tasks.len() < self.slots {
            let Some((key, make)) = self.queue.pop_front() else {
                break;
            };
            if admit(&key)? == Admit::Skip {
                continue;
            }
            let (owned, job) = (key.clone(), make());
            let handle = self.tasks.spawn(async move {
                let clock = Instant::now();
                let output = job.await;
                (owned, output, clock.elapsed())
            });
            self.running.insert(handle.id(), (key, Instant::now()));
        }
        Ok(())
    }

    /// Whether no job is running (queued ones may wait: call [`Scheduler::start`]).
    pub fn is_idle(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The next job to end; `None` when none is running.
    pub async fn next(&mut self) -> Option<Done<K, T>> {
        loop {
            let joined = self.tasks.join_next_with_id().await?;
            if let Some(done) = self.done(joined) {
                return Some(done);
            }
        }
    }

    /// A job that has already ended, without waiting.
    pub fn try_next(&mut self) -> Option<Done<K, T>> {
        while let Some(joined) = self.tasks.try_join_next_with_id() {
            if let Some(done) = self.done(joined) {
                return Some(done);
            }
        }
        None
    }

    /// Stops every running job and empties the queue. Returns what was running, with how
    /// long it ran, and what was still queued, in order.
    pub fn abort_all(&mut self) -> (Vec<(K, Duration)>, Vec<K>) {
        self.tasks.abort_all();
        let running = self
            .running
            .drain()
            .map(|(_, (key, started))| (key, started.elapsed()))
            .collect();
        let queued = self.queue.drain(..).map(|(key, _)| key).collect();
        (running, queued)
    }

    /// Takes a joined task out of the running set; a cancelled one (aborted) is no end.
    fn done(
        &mut self,
        joined: Result<(tokio::task::Id, (K, T, Duration)), JoinError>,
    ) -> Option<Done<K, T>> {
        match joined {
            Ok((id, (key, output, took))) => {
                self.running.remove(&id);
                Some(Done {
                    key,
                    outcome: Ok(output),
                    took,
                })
            }
            Err(err) => {
                let (key, started) = self.running.remove(&err.id())?;
                if err.is_cancelled() {
                    return None;
                }
                Some(Done {
                    key,
                    outcome: Err(panic_message(err)),
                    took: started.elapsed(),
                })
            }
        }
    }
}

fn panic_message(err: JoinError) -> String {
    match err.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into()),
        Err(err) => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn at_most_slots_run_at_once_in_queue_order() {
        let mut scheduler: Scheduler<u32, u32> = Scheduler::new(2);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        for n in 0..5 {
            let (running, most) = (Arc::clone(&running), Arc::clone(&most));
            scheduler.queue(n, move || async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                n * 10
            });
        }
        let mut started = Vec::new();
        let mut ended = Vec::new();
        loop {
            scheduler
                .start(|k| {
                    started.push(*k);
                    Ok::<_, ()>(Admit::Run)
                })
                .expect("start");
            let Some(done) = scheduler.next().await else {
                break;
            };
            ended.push(done.outcome.expect("no panic"));
        }
        assert_eq!(started, [0, 1, 2, 3, 4]);
        ended.sort_unstable();
        assert_eq!(ended, [0, 10, 20, 30, 40]);
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_skipped_job_never_runs_and_a_panic_is_an_end() {
        let mut scheduler: Scheduler<&str, ()> = Scheduler::new(4);
        let ran = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&ran);
        scheduler.queue("skipped", move || async move {
            counted.fetch_add(1, Ordering::SeqCst);
        });
        scheduler.queue("explodes", || async { panic!("boom") });
        scheduler
            .start(|k| {
                Ok::<_, ()>(if *k == "skipped" {
                    Admit::Skip
                } else {
                    Admit::Run
                })
            })
            .expect("start");
        let done = scheduler.next().await.expect("one end");
        assert_eq!(done.key, "explodes");
        assert_eq!(done.outcome.expect_err("a panic"), "boom");
        assert!(scheduler.next().await.is_none());
        assert_eq!(ran.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_queued_job_is_made_only_when_it_starts() {
        let mut scheduler: Scheduler<u32, ()> = Scheduler::new(2);
        let made = Arc::new(AtomicUsize::new(0));
        for n in 0..1000 {
            let made = Arc::clone(&made);
            scheduler.queue(n, move || {
                made.fetch_add(1, Ordering::SeqCst);
                std::future::pending()
            });
        }
        assert_eq!(
            made.load(Ordering::SeqCst),
            0,
            "nothing made before a start"
        );
        scheduler.start(|_| Ok::<_, ()>(Admit::Run)).expect("start");
        assert_eq!(made.load(Ordering::SeqCst), 2, "only the two that run");
        let (running, queued) = scheduler.abort_all();
        assert_eq!((running.len(), queued.len()), (2, 998));
    }

    #[tokio::test]
    async fn abort_all_names_what_ran_and_what_waited() {
        let mut scheduler: Scheduler<u32, ()> = Scheduler::new(1);
        scheduler.queue(1, std::future::pending);
        scheduler.queue(2, std::future::pending);
        scheduler.start(|_| Ok::<_, ()>(Admit::Run)).expect("start");
        let (running, queued) = scheduler.abort_all();
        assert_eq!(running.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [1]);
        assert_eq!(queued, [2]);
        assert!(scheduler.try_next().is_none(), "an aborted job is no end");
        assert!(scheduler.next().await.is_none());
    }
}
