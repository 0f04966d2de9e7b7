//! [`Sharing`]: a gate's lease of a budget shared with other processes
//! ([`super::super::shared_gate`]). Calls do not wait on the store: they are paced by the
//! gate at the share its last lease granted (under a rate limit, at the times of the shared
//! schedule it handed out; a call finding none left renews at once), and only note what they
//! did here (asked, admitted, succeeded, refused). A task renews the lease every
//! [`RENEW_EVERY`] while the gate is in use, at once after a 429 (its own, or another
//! process's when the store tells of it: [`GateStore::watch`]), and not at all while it is
//! idle (its lease is then forgotten); a call finding no fresh lease (the first, one after a
//! quiet spell, the first when a closed gate opens) waits for one renewal. When the store
//! does not answer, the gate goes on with its own budget and says so once.

use crate::sync::Locked;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use super::super::shared_gate::{GateStore, Lease, News, Refusal, Report, SharedState};
use super::state::State;
use super::{WaitReason, lock};

/// How often a gate in use renews its lease: the store sees a few transactions a second per
/// process and endpoint, however many calls there are.
pub const RENEW_EVERY: Duration = Duration::from_millis(200);

/// The least time between two renewals, so a burst of 429s makes one, not one each.
const RENEW_GAP: Duration = Duration::from_millis(50);

/// What the calls did since the last renewal.
#[derive(Debug, Default)]
struct Pending {
    asked: u32,
    /// Calls waiting for admission now (a gauge, not reset by a renewal).
    waiting: u32,
    succeeded: u32,
    refused: Option<Refusal>,
    /// When the last report was taken (or the first call asked).
    since: Option<tokio::time::Instant>,
}

/// A shared gate's side of the store: the key of its budget, what to report, the renewals.
pub(super) struct Sharing {
    store: Arc<dyn GateStore>,
    key: String,
    /// This gate in this process, as the store tells processes apart.
    process: String,
    shown: String,
    pending: Mutex<Pending>,
    /// One renewal at a time: callers that find no fresh lease wait for the same one.
    renewing: tokio::sync::Mutex<()>,
    /// Wakes the renewals at once: a 429 of this process's, or the store telling of one
    /// (which also makes the lease in hand stale).
    news: Arc<News>,
    started: AtomicBool,
    failing: AtomicBool,
}

/// A call waiting for admission, counted in the demand until it is admitted or dropped.
pub(super) struct Waiting<'a>(&'a Sharing);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut pending = self.0.pending();
        pending.waiting = pending.waiting.saturating_sub(1);
    }
}

impl Sharing {
    pub(super) fn new(store: Arc<dyn GateStore>, key: &str, shown: &str) -> Sharing {
        static GATES: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        Sharing {
            store,
            key: key.to_string(),
            process: format!(
                "{}-{nanos:x}-{}",
                std::process::id(),
                GATES.fetch_add(1, Ordering::Relaxed)
            ),
            shown: shown.to_string(),
            pending: Mutex::default(),
            renewing: tokio::sync::Mutex::new(()),
            news: Arc::default(),
            started: AtomicBool::new(false),
            failing: AtomicBool::new(false),
        }
    }

    /// A call asks for admission: counted until admitted (or dropped); the renewals start
    /// with the first call.
    pub(super) fn ask(self: &Arc<Self>, state: &Arc<Mutex<State>>) -> Waiting<'_> {
        {
            let mut pending = self.pending();
            pending.asked += 1;
            pending.waiting += 1;
            pending.since.get_or_insert_with(tokio::time::Instant::now);
        }
        if !self.started.swap(true, Ordering::Relaxed) {
            self.start(Arc::downgrade(state));
        }
        Waiting(self)
    }

    /// Whether a call must renew before it goes: no fresh lease (or no time of the schedule
    /// left), or news that the lease in hand is stale.
    pub(super) fn must_renew(&self, state: &Mutex<State>) -> bool {
        self.news.stale() || !lock(state).can_admit()
    }

    /// A call found no fresh lease, no time of the schedule left, or news that a 429 closed
    /// the gate: it waits for a renewal, unless the store is failing (then the background
    /// renewals keep trying and the gate's own budget admits it).
    pub(super) async fn renew_for_call(&self, state: &Mutex<State>) {
        if !self.failing.load(Ordering::Relaxed) {
            self.renew(state, true).await;
        }
    }

    /// A call holds no time of the schedule: it waits for a renewal to hand one out; while
    /// the store fails, it waits a little (the lease goes stale, then the gate's own budget
    /// admits it).
    pub(super) async fn renew_for_slot(&self, state: &Mutex<State>) {
        if self.failing.load(Ordering::Relaxed) {
            tokio::time::sleep(RENEW_GAP).await;
        } else {
            self.renew(state, true).await;
        }
    }

    pub(super) fn succeeded(&self) {
        self.pending().succeeded += 1;
    }

    /// A 429: reported at once, so the other processes wait it out from their next renewal.
    pub(super) fn refused(&self, epoch: u64, delay: Duration, reason: WaitReason) {
        let refusal = Refusal {
            epoch,
            delay_ms: delay.as_secs_f64() * 1000.0,
            reason,
        };
        {
            let mut pending = self.pending();
            pending.refused = Some(Refusal::longer(pending.refused, refusal));
        }
        self.news.wake();
    }

    /// The renewals while the gate lives: every [`RENEW_EVERY`], at a 429 of this process's
    /// or when the store tells of another's, skipped while nothing asks.
    fn start(self: &Arc<Self>, state: Weak<Mutex<State>>) {
        self.store.watch(&self.key, Arc::downgrade(&self.news));
        let sharing = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(RENEW_EVERY) => {}
                    () = sharing.news.woken() => {}
                }
                let Some(state) = state.upgrade() else {
                    return;
                };
                if sharing.idle() {
                    lock(&state).forget_lease();
                } else {
                    sharing.renew(&state, false).await;
                }
                drop(state);
                tokio::time::sleep(RENEW_GAP).await;
            }
        });
    }

    fn idle(&self) -> bool {
        let pending = self.pending();
        pending.asked == 0
            && pending.waiting == 0
            && pending.succeeded == 0
            && pending.refused.is_none()
    }

    /// One renewal: what happened since the last one reported, the lease acted on. `inline`
    /// (a call waiting for a lease) renews only if no other renewal brought one meanwhile.
    async fn renew(&self, state: &Mutex<State>, inline: bool) {
        let _one = self.renewing.lock().await;
        if inline && !self.must_renew(state) {
            return;
        }
        self.news.renewing();
        let (limits, held) = {
            let state = lock(state);
            (state.limits, state.slots_held())
        };
        let report = self.report(limits, held);
        let mut step = |s: &mut SharedState, now: f64| s.renew(now, &report);
        match self.store.update(&self.key, &mut step).await {
            Ok(lease) => {
                self.granted(lease);
                lock(state).take_lease(lease);
            }
            Err(e) => {
                self.restore(report);
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "`{}`'s shared rate budget cannot be read ({e}): calls are admitted by this process's budget alone until it answers",
                        self.shown
                    );
                }
            }
        }
    }

    fn granted(&self, lease: Lease) {
        if self.failing.swap(false, Ordering::Relaxed) {
            tracing::info!("`{}`'s shared rate budget answers again", self.shown);
        }
        if let Some(rate) = lease.lowered_to {
            tracing::info!(
                "`{}` is rate limited: at most {rate:.1} requests a minute from now on, for every worker",
                self.shown
            );
        }
    }

    /// What happened since the last renewal, taken (the waiting calls stay counted); `held`
    /// times of the schedule are in hand already.
    fn report(&self, limits: crate::settings::RateLimits, held: usize) -> Report {
        let mut pending = self.pending();
        let now = tokio::time::Instant::now();
        let since = pending.since.replace(now).unwrap_or(now);
        let report = Report {
            process: self.process.clone(),
            limits,
            demand: pending.asked + pending.waiting,
            waiting: pending
                .waiting
                .saturating_sub(u32::try_from(held).unwrap_or(u32::MAX)),
            succeeded: pending.succeeded,
            since_ms: now.saturating_duration_since(since).as_secs_f64() * 1000.0,
            refused: pending.refused.take(),
        };
        pending.asked = 0;
        pending.succeeded = 0;
        report
    }

    /// A report the store did not take, kept for the next renewal.
    fn restore(&self, report: Report) {
        let mut pending = self.pending();
        pending.asked += report.demand.saturating_sub(pending.waiting);
        pending.succeeded += report.succeeded;
        if let Some(since) = &mut pending.since {
            *since -= Duration::from_secs_f64(report.since_ms / 1000.0);
        }
        if let Some(refused) = report.refused {
            pending.refused = Some(Refusal::longer(pending.refused, refused));
        }
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        // Counters only: a poisoned lock is still usable.
        self.pending.locked()
    }
}
