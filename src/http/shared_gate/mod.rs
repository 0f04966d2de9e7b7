//! One endpoint's rate budget kept where every process of a batch shares it (a queue's
//! database), leased out in shares: no call waits on the store.
//!
//! Each process paces its own calls with its [`super::Gate`], at the share of the budget its
//! last [`Lease`] granted, and renews that lease a few times a second at most
//! ([`super::gate::lease`]), reporting what it did since the last renewal (the calls that
//! asked, the successes, the longest 429). [`SharedState::renew`] folds a report into the
//! budget (the AIMD rate, closed-until with its reason, the accepted rate) and divides it
//! among the processes seen lately, by what each asked for; while the rate has a limit, it
//! also hands out times of one request schedule for all processes ([`Slots`]), so that their
//! requests together are spaced as one process's would be (and, while the limit is unknown,
//! on one [`Ramp`]). A 429 seen by one process closes the gate for every other at its next
//! renewal. The store's load grows with the number of processes, not with the number of
//! calls. The arithmetic is pure, on the store's clock; the store lives with the queue.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Weak;

use serde::{Deserialize, Serialize};

mod news;

pub use news::News;

use super::aimd::Aimd;
use super::ramp::{self, Ramp};
use super::wait::WaitReason;
use crate::settings::RateLimits;

/// Successes measuring the accepted rate: reports holding at least the last 20 within a
/// minute (as the gate's measure).
const ACCEPTED_MAX: u32 = 20;
const ACCEPTED_WINDOW_MS: f64 = 60_000.0;

/// A process that reported a success this long before the last report of one is taken to
/// have reported all of its successes (see [`SharedState::accepted_rpm`]).
const REPORTED_LATELY_MS: f64 = 500.0;

/// A process not heard from for this long has no share any more.
pub const LIVE_MS: f64 = 2_000.0;

/// How far ahead a renewal hands out times on the shared schedule of requests.
pub const SLOT_HORIZON_MS: f64 = 500.0;

/// A gate's state in the store; times are the store's clock, in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SharedState {
    /// `None` until the first report sets it from its limits.
    pub aimd: Option<Aimd>,
    pub tokens_per_minute: Option<u32>,
    /// Closed by a 429 until then, for that reason (`retry_after`, `backoff`).
    pub closed_until: f64,
    pub closed_reason: Option<String>,
    pub decrease_due: bool,
    /// Reported successes (oldest first): by which process, from when to when (its time
    /// between two renewals), and how many.
    pub accepted: VecDeque<Accepted>,
    /// The end of the last report let go: successes before it may be gone with that report,
    /// so the accepted rate is measured from there on.
    pub accepted_from: f64,
    /// The processes renewing lately: when each was last heard from, and what it asked for.
    pub processes: BTreeMap<String, Seen>,
    /// The first time of the request schedule not handed out yet.
    pub next_slot: f64,
    /// The ramp of an unknown limit, while it runs: the request schedule follows it.
    pub ramp: Ramp,
}

/// A process as the store last heard from it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    pub at: f64,
    pub demand: f64,
}

/// One report of successes, kept to measure the accepted rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accepted {
    pub process: String,
    pub since: f64,
    pub until: f64,
    pub n: u32,
}

/// What a process tells the store at a renewal: what it did since its last one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The process (and gate) renewing, unique among the store's users.
    pub process: String,
    pub limits: RateLimits,
    /// How many calls asked to be admitted since the last renewal, plus those still waiting.
    pub demand: u32,
    /// How many calls wait for a time on the request schedule (and hold none).
    pub waiting: u32,
    /// How many calls succeeded since the last renewal...
    pub succeeded: u32,
    /// ...which was this many milliseconds ago (or the first call asked).
    pub since_ms: f64,
    /// The longest 429 answered since the last renewal.
    pub refused: Option<Refusal>,
}

/// A 429 answered a call admitted at AIMD `epoch`: the gate closes for `delay_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refusal {
    pub epoch: u64,
    pub delay_ms: f64,
    pub reason: WaitReason,
}

impl Refusal {
    /// The longer of two refusals (the later epoch's, when one is as long as the other).
    pub fn longer(a: Option<Refusal>, b: Refusal) -> Refusal {
        match a {
            Some(a) if a.delay_ms > b.delay_ms => Refusal {
                epoch: a.epoch.max(b.epoch),
                ..a
            },
            Some(a) => Refusal {
                epoch: a.epoch.max(b.epoch),
                ..b
            },
            None => b,
        }
    }
}

/// What the store grants a process until its next renewal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lease {
    /// The process's share of the request rate, in requests a minute (`None`: no limit).
    pub requests_per_minute: Option<f64>,
    /// Its share of the tokens budget, in tokens a minute (`None`: no limit).
    pub tokens_per_minute: Option<u32>,
    /// How much longer the gate stays closed for every process, in milliseconds (0: open).
    pub closed_ms: f64,
    pub reason: WaitReason,
    /// The AIMD epoch a call admitted under this lease belongs to.
    pub epoch: u64,
    /// The whole budget's rate, when a 429 has just lowered it (for the log).
    pub lowered_to: Option<f64>,
    /// Times this process may send a request at, when the rate has a limit.
    pub slots: Option<Slots>,
}

/// Times on the one request schedule every process shares, handed to one process: `count`
/// of them, the first `first_ms` after the store's now, `interval_ms` apart. No other
/// process gets a time closer than the interval to them, so the requests of every process
/// together keep the rate as one process's would. With none to give, `retry_ms` says when
/// the next free time comes within reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slots {
    pub first_ms: f64,
    pub interval_ms: f64,
    pub count: u32,
    pub retry_ms: f64,
}

/// A renewal on one gate's state, given the store's clock in milliseconds.
pub type Step<'a> = dyn FnMut(&mut SharedState, f64) -> Lease + Send + 'a;

/// Where shared gates live. `update` reads the state of `key` (a new one when absent), runs
/// `step` on it and writes it back, all under one lock: no other process sees half a step.
/// The step may run more than once (a store retries a conflict); the error is one line.
pub trait GateStore: Send + Sync {
    fn update<'a>(
        &'a self,
        key: &'a str,
        step: &'a mut Step<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Lease, String>> + Send + 'a>>;

    /// Asks for `news` to be told when an update closes `key`'s gate (a 429 reported by any
    /// process), so that its process stops acting on its lease and renews at once instead of
    /// at its next renewal. A store that cannot tell its users does nothing: the renewals
    /// alone bring the news.
    fn watch(&self, key: &str, news: Weak<News>) {
        let _ = (key, news);
    }
}

impl SharedState {
    /// Folds `report` into the budget at `now` and grants its process a share of it.
    pub fn renew(&mut self, now: f64, report: &Report) -> Lease {
        self.follow(report.limits);
        let cold = self
            .processes
            .values()
            .all(|seen| now - seen.at > ramp::COLD_AFTER_MS);
        let unknown = self.aimd.as_ref().is_none_or(Aimd::unknown);
        self.ramp.follow(unknown, cold);
        if let Some(refused) = report.refused {
            self.refused(now, refused);
        }
        self.succeeded(
            &report.process,
            now - report.since_ms.max(0.0),
            now,
            report.succeeded,
        );
        let lowered_to = self.lower_when_open(now);
        let share = self.share(now, &report.process, report.demand);
        let aimd = self.aimd.get_or_insert_with(|| Aimd::new(None));
        let (rate, epoch) = (aimd.rate().or(self.ramp.rate()), aimd.epoch());
        let closed_ms = (self.closed_until - now).max(0.0);
        // On the ramp, no more times than go before the rate doubles.
        let wanted = report
            .waiting
            .min(self.ramp.before_doubling().unwrap_or(u32::MAX));
        let slots = rate.map(|rate| self.slots(now, 60_000.0 / rate, wanted));
        self.ramp.admitted(slots.map_or(0, |s| s.count));
        Lease {
            requests_per_minute: rate.map(|rate| (rate * share).max(f64::EPSILON)),
            tokens_per_minute: self
                .tokens_per_minute
                .map(|tpm| ((f64::from(tpm) * share).round() as u32).max(1)),
            closed_ms,
            reason: match self.closed_reason.as_deref() {
                Some("backoff") => WaitReason::Backoff,
                _ => WaitReason::RetryAfter,
            },
            epoch,
            lowered_to,
            slots,
        }
    }

    /// Up to `wanted` times on the shared schedule, `interval` apart: from the first one not
    /// handed out (and not before now, nor before the gate opens), within
    /// [`SLOT_HORIZON_MS`]. While a 429's decrease is due, none: the times after the gate
    /// opens go at the lowered rate (after a ramp met the limit, the rate before it was many
    /// times the server's).
    fn slots(&mut self, now: f64, interval: f64, wanted: u32) -> Slots {
        let first = self.next_slot.max(now).max(self.closed_until);
        if self.decrease_due {
            return Slots {
                first_ms: first - now,
                interval_ms: interval,
                count: 0,
                retry_ms: (self.closed_until - now).max(0.0),
            };
        }
        let room = ((now + SLOT_HORIZON_MS - first) / interval).ceil().max(0.0);
        let count = (f64::from(wanted)).min(room) as u32;
        if count > 0 {
            self.next_slot = first + f64::from(count) * interval;
        }
        Slots {
            first_ms: first - now,
            interval_ms: interval,
            count,
            retry_ms: (first - now - SLOT_HORIZON_MS).max(0.0),
        }
    }

    /// The configured limits of a process: the rate starts there, a lower one tightens it.
    fn follow(&mut self, limits: RateLimits) {
        let rpm = limits.requests_per_minute.map(|n| f64::from(n.get()));
        match (&mut self.aimd, rpm) {
            (None, _) => self.aimd = Some(Aimd::new(rpm)),
            (Some(aimd), Some(rpm)) => aimd.tighten(rpm),
            (Some(_), None) => {}
        }
        if let Some(tpm) = limits.tokens_per_minute.map(|n| n.get()) {
            self.tokens_per_minute = Some(self.tokens_per_minute.map_or(tpm, |t| t.min(tpm)));
        }
    }

    /// A 429: closed for everyone for its delay, and the rate lowered once per epoch when
    /// the gate opens again.
    fn refused(&mut self, now: f64, refused: Refusal) {
        if self.closed_until < now + refused.delay_ms {
            self.closed_until = now + refused.delay_ms;
            self.closed_reason = Some(refused.reason.as_str().to_string());
        }
        if let Some(aimd) = self.aimd.as_mut().filter(|a| a.epoch() == refused.epoch) {
            self.decrease_due = true;
            if let Some(rate) = self.ramp.stop() {
                aimd.pin(rate);
            }
        }
    }

    /// `process`'s `n` successes from `since` to `now`: counted as accepted; the rate takes
    /// one step up for each.
    fn succeeded(&mut self, process: &str, since: f64, now: f64, n: u32) {
        if n == 0 {
            return;
        }
        self.accepted.push_back(Accepted {
            process: process.to_string(),
            since,
            until: now,
            n,
        });
        while self.accepted.len() > 1
            && self.accepted.iter().skip(1).map(|a| a.n).sum::<u32>() >= ACCEPTED_MAX
        {
            self.let_go_of_accepted();
        }
        if let Some(aimd) = &mut self.aimd {
            for _ in 0..n {
                aimd.increase();
            }
        }
    }

    /// Lowers the rate if a 429 asked for it and the gate is open again; the new rate. With
    /// no rate and no success reported yet, nothing says where to lower it to: it stays due.
    fn lower_when_open(&mut self, now: f64) -> Option<f64> {
        if !self.decrease_due || self.closed_until > now {
            return None;
        }
        let accepted = self.accepted_rpm(now);
        let lowered = self.aimd.as_mut().and_then(|a| a.decrease(accepted));
        self.decrease_due =
            lowered.is_none() && self.aimd.as_ref().is_some_and(|a| a.rate().is_none());
        lowered
    }

    /// The part of the budget that is `process`'s: what it asks for among what every process
    /// heard from within [`LIVE_MS`] asks for (each asking for at least one call, so a quiet
    /// process keeps a little).
    fn share(&mut self, now: f64, process: &str, demand: u32) -> f64 {
        let mine = f64::from(demand) + 1.0;
        self.processes.insert(
            process.to_string(),
            Seen {
                at: now,
                demand: mine,
            },
        );
        self.processes.retain(|_, seen| now - seen.at <= LIVE_MS);
        let all: f64 = self.processes.values().map(|seen| seen.demand).sum();
        mine / all
    }

    /// The rate accepted lately, in requests a minute: the successes of the reports kept
    /// within one span (a report across one of its ends counted for its part within), over
    /// the time within it that reports cover (at least a second, so that a burst that began
    /// a moment ago does not count as a high rate: all of a burst's successes within that
    /// second count); `None` with fewer than two, which make no rate.
    ///
    /// Each process's reports follow one another without a gap, but the processes renew at
    /// times of their own, so the span is where every process's successes are all known: it
    /// begins with the earliest report kept, or at the end of the last report let go; it
    /// ends with the last report of a success of the process that reported one least
    /// lately, among those that reported one within [`REPORTED_LATELY_MS`] of the last (the
    /// others are taken to have had none since). Measured from the earliest report to the
    /// last, the successes of the other processes before and after their own reports would
    /// be missing, and the rate measured short (13% in this module's test of four
    /// processes), which kept the rate that far under the server's limit after every 429.
    /// The span ends at a report of a success, so the time a 429 kept the gate closed (no
    /// call, no success) does not dilute it.
    fn accepted_rpm(&mut self, now: f64) -> Option<f64> {
        while self
            .accepted
            .front()
            .is_some_and(|a| now - a.until > ACCEPTED_WINDOW_MS)
        {
            self.let_go_of_accepted();
        }
        let earliest = self.accepted.iter().map(|a| a.since).reduce(f64::min)?;
        // Reports are kept in the order they came: the last is the latest.
        let last = self.accepted.back()?.until;
        let mut ends: BTreeMap<&str, f64> = BTreeMap::new();
        for a in &self.accepted {
            ends.insert(&a.process, a.until);
        }
        let from = earliest.max(self.accepted_from);
        let to = ends
            .into_values()
            .filter(|end| last - end <= REPORTED_LATELY_MS)
            .fold(last, f64::min)
            // Within the second the measure takes at least, every success counts.
            .max(last.min(from + 1000.0));
        let n: f64 = self
            .accepted
            .iter()
            .map(|a| f64::from(a.n) * a.part_within(from, to))
            .sum();
        if n < 2.0 {
            return None;
        }
        Some(n * 60_000.0 / self.covered(from, to).max(1000.0))
    }

    /// The time within `from..to` that some kept report covers: a stretch no report covers
    /// had no process calling (the gap between two batches of a queue, say), and counting it
    /// would measure the accepted rate short, lowering the rate far under the server's limit.
    /// (Time no report covers while calls waited only makes the rate measured higher, which
    /// a decrease does not go above: it lowers the lower of the rate and the measure.)
    fn covered(&self, from: f64, to: f64) -> f64 {
        let mut spans: Vec<(f64, f64)> = self
            .accepted
            .iter()
            .map(|a| (a.since.max(from), a.until.min(to)))
            .filter(|(start, end)| end > start)
            .collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut total, mut reach) = (0.0, f64::NEG_INFINITY);
        for (start, end) in spans {
            total += (end - start.max(reach)).max(0.0);
            reach = reach.max(end);
        }
        total
    }

    fn let_go_of_accepted(&mut self) {
        if let Some(a) = self.accepted.pop_front() {
            self.accepted_from = self.accepted_from.max(a.until);
        }
    }
}

impl Accepted {
    /// The part of this report's time within `from..to` (all of it for a report of no time
    /// within).
    fn part_within(&self, from: f64, to: f64) -> f64 {
        if self.until <= self.since {
            return if self.since >= from && self.until <= to {
                1.0
            } else {
                0.0
            };
        }
        ((self.until.min(to) - self.since.max(from)) / (self.until - self.since)).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    fn report(process: &str, rpm: u32, demand: u32) -> Report {
        Report {
            process: process.to_string(),
            limits: RateLimits {
                requests_per_minute: NonZeroU32::new(rpm),
                tokens_per_minute: NonZeroU32::new(6000),
            },
            demand,
            ..Report::default()
        }
    }

    #[test]
    fn the_budget_is_shared_by_what_each_process_asks_for_and_a_silent_one_drops_out() {
        let mut s = SharedState::default();
        let alone = s.renew(0.0, &report("a", 600, 31));
        assert_eq!(alone.requests_per_minute, Some(600.0));
        assert_eq!(alone.tokens_per_minute, Some(6000));
        let b = s.renew(100.0, &report("b", 600, 31));
        assert_eq!(
            b.requests_per_minute,
            Some(300.0),
            "two busy processes: half each"
        );
        assert_eq!(b.tokens_per_minute, Some(3000));
        let a = s.renew(200.0, &report("a", 600, 95));
        assert_eq!(
            a.requests_per_minute,
            Some(450.0),
            "three times the calls asking: three quarters"
        );
        let a = s.renew(200.0 + LIVE_MS + 1.0, &report("a", 600, 3));
        assert_eq!(a.requests_per_minute, Some(600.0), "b was not heard from");
        assert_eq!(s.processes.len(), 1);
    }

    #[test]
    fn a_429_closes_the_gate_for_every_process_then_lowers_the_rate_once() {
        let mut s = SharedState::default();
        s.renew(0.0, &report("a", 600, 1));
        for t in [200.0, 400.0, 600.0] {
            let mut r = report("a", 600, 1);
            r.succeeded = 5;
            r.since_ms = 200.0;
            s.renew(t, &r);
        }
        let mut r = report("a", 600, 1);
        r.refused = Some(Refusal {
            epoch: 0,
            delay_ms: 2000.0,
            reason: WaitReason::RetryAfter,
        });
        let a = s.renew(1000.0, &r);
        assert_eq!((a.closed_ms, a.reason), (2000.0, WaitReason::RetryAfter));
        let b = s.renew(1500.0, &report("b", 600, 1));
        assert_eq!(b.closed_ms, 1500.0, "b waits out a's 429");
        assert_eq!(b.lowered_to, None, "not while the gate is closed");
        let b = s.renew(3000.0, &report("b", 600, 1));
        assert_eq!(b.closed_ms, 0.0);
        let rate = b.lowered_to.expect("lowered when open");
        // 15 successes from 0 to 600 ms: 1,500 a minute over the second the measure takes
        // at least, however long the gate then stayed closed.
        assert_eq!(rate, 600.0 * 0.95, "under what was accepted: {rate}");
        assert_eq!(b.epoch, 1);
        let mut late = report("a", 600, 1);
        late.refused = Some(Refusal {
            epoch: 0,
            delay_ms: 10.0,
            reason: WaitReason::RetryAfter,
        });
        assert_eq!(s.renew(3100.0, &late).lowered_to, None);
        assert_eq!(
            s.renew(3200.0, &report("a", 600, 1)).lowered_to,
            None,
            "a 429 of the old rate lowers nothing"
        );
    }

    #[test]
    fn the_accepted_rate_of_processes_renewing_at_times_of_their_own_is_measured_whole() {
        // Four processes, each with a success every 400 ms (10 a second in all), renewing
        // 100 ms apart from one another: the oldest reports are let go as new ones come.
        // Over one span from the earliest report kept to the last, 20 successes in 2.3 s
        // would measure 522 a minute, 13% short.
        let mut s = SharedState::default();
        for round in 1..=20 {
            for (i, process) in ["a", "b", "c", "d"].iter().enumerate() {
                let mut r = report(process, 6000, 1);
                r.succeeded = 1;
                r.since_ms = 400.0;
                s.renew(f64::from(round) * 400.0 + 100.0 * i as f64, &r);
            }
        }
        let rate = s.accepted_rpm(8400.0).expect("a rate");
        assert!((rate - 600.0).abs() < 6.0, "10 a second, within 1%: {rate}");
        // The others stop; "a" goes on alone at 10 a second: the span is not cut short at
        // their last reports.
        for t in 1..=30 {
            let mut r = report("a", 6000, 1);
            r.succeeded = 1;
            r.since_ms = 100.0;
            s.renew(8400.0 + f64::from(t) * 100.0, &r);
        }
        let rate = s.accepted_rpm(11_400.0).expect("a rate");
        assert!((rate - 600.0).abs() < 6.0, "a alone, within 1%: {rate}");
    }

    #[test]
    fn time_when_no_process_called_does_not_count_in_the_accepted_rate() {
        // One batch's two workers at 10 a second for 2 s, then none for 5 s, then the next
        // batch's two workers for a second: 30 successes in 3 s of calling, not in 8.
        let mut s = SharedState::default();
        let mut at = 0.0;
        for (processes, start, end) in [(["a", "b"], 0.0, 2000.0), (["c", "d"], 7000.0, 8000.0)] {
            at = start;
            for process in processes {
                s.renew(at, &report(process, 6000, 1));
            }
            while at < end {
                at += 200.0;
                for process in processes {
                    let mut r = report(process, 6000, 1);
                    r.succeeded = 1;
                    r.since_ms = 200.0;
                    s.renew(at, &r);
                }
            }
        }
        let rate = s.accepted_rpm(at).expect("a rate");
        assert!((rate - 600.0).abs() < 6.0, "10 a second, within 1%: {rate}");
    }

    #[test]
    fn processes_get_times_of_one_schedule_within_the_horizon_and_none_while_closed() {
        let mut s = SharedState::default();
        let mut r = report("a", 600, 8);
        r.waiting = 8;
        let a = s.renew(0.0, &r).slots.expect("a schedule at 600 a minute");
        // 100 ms apart, as far as 500 ms ahead: five of the eight asked for.
        assert_eq!((a.first_ms, a.interval_ms, a.count), (0.0, 100.0, 5));
        let mut r = report("b", 600, 8);
        r.waiting = 8;
        let b = s.renew(20.0, &r).slots.expect("b");
        assert_eq!(
            (b.first_ms, b.count),
            (480.0, 1),
            "b's first comes after a's last, 100 ms on"
        );
        let c = s.renew(30.0, &r).slots.expect("b again");
        assert_eq!(
            (c.count, c.retry_ms),
            (0, 70.0),
            "nothing within reach for 70 ms"
        );
        let mut refused = report("a", 600, 1);
        refused.waiting = 1;
        refused.refused = Some(Refusal {
            epoch: 0,
            delay_ms: 2000.0,
            reason: WaitReason::RetryAfter,
        });
        let closed = s.renew(40.0, &refused).slots.expect("a");
        assert_eq!(closed.count, 0, "no time before the gate opens");
        assert_eq!(closed.first_ms, 2000.0);
    }

    /// A process's report of `waiting` calls and no limit: the rate is unknown.
    fn unlimited(process: &str, waiting: u32) -> Report {
        Report {
            process: process.to_string(),
            demand: waiting,
            waiting,
            ..Report::default()
        }
    }

    #[test]
    fn without_a_limit_a_cold_endpoint_ramps_then_the_lease_has_none_until_a_429() {
        let mut s = SharedState::default();
        let lease = s.renew(0.0, &unlimited("a", 40));
        assert_eq!(lease.requests_per_minute, Some(ramp::START_RPM));
        let slots = lease.slots.expect("the ramp's schedule");
        // 5 ms apart; ten of them, then the rate doubles.
        assert_eq!(
            (slots.first_ms, slots.interval_ms, slots.count),
            (0.0, 5.0, 10)
        );
        let b = s.renew(20.0, &unlimited("b", 40)).slots.expect("b");
        assert_eq!(
            (b.first_ms, b.interval_ms, b.count),
            (30.0, 2.5, 10),
            "after a's"
        );
        for _ in 0..4 {
            assert!(s.renew(30.0, &unlimited("a", 40)).slots.is_some());
        }
        let over = s.renew(40.0, &unlimited("a", 40));
        assert_eq!(over.requests_per_minute, None, "60 calls: the ramp is over");
        assert_eq!(over.slots, None, "no schedule: calls go at once");
        assert_eq!(over.tokens_per_minute, None);
        let live = s.renew(2000.0, &unlimited("b", 40));
        assert_eq!(live.slots, None, "a was heard from lately: still warm");
        let cold = s.renew(4500.0, &unlimited("a", 40));
        assert_eq!(
            cold.requests_per_minute,
            Some(ramp::START_RPM),
            "cold again"
        );
    }

    #[test]
    fn a_429_met_in_the_ramp_pins_the_rate_there_and_lowers_it_from_what_was_accepted() {
        let mut s = SharedState::default();
        s.renew(0.0, &unlimited("a", 30));
        s.renew(10.0, &unlimited("a", 30));
        let mut refused = unlimited("a", 30);
        refused.refused = Some(Refusal {
            epoch: 0,
            delay_ms: 1000.0,
            reason: WaitReason::RetryAfter,
        });
        let closed = s.renew(50.0, &refused);
        assert_eq!(closed.closed_ms, 1000.0);
        assert_eq!(
            closed.requests_per_minute,
            Some(4.0 * ramp::START_RPM),
            "the rate the ramp stood at after 20 calls"
        );
        let late = s.renew(900.0, &unlimited("b", 30)).slots.expect("b");
        assert_eq!(
            (late.count, late.retry_ms),
            (0, 150.0),
            "no time after the opening at the ramp's rate: the decrease comes first"
        );
        let mut answered = unlimited("a", 30);
        answered.succeeded = 10;
        answered.since_ms = 1000.0;
        let open = s.renew(1050.0, &answered);
        assert_eq!(
            open.lowered_to,
            Some(570.0),
            "ten answers in a second, less 5%"
        );
        assert_eq!(open.epoch, 1);
        let again = s.renew(5000.0, &unlimited("a", 30));
        assert!(
            again.requests_per_minute.is_some_and(|r| r < 600.0),
            "a limit once met is not ramped again: {again:?}"
        );
    }

    #[test]
    fn a_state_survives_its_round_trip_through_the_store_and_an_old_one_is_read() {
        let mut s = SharedState::default();
        s.renew(0.0, &report("a", 60, 1));
        let back: SharedState =
            serde_json::from_value(serde_json::to_value(&s).expect("json")).expect("back");
        assert_eq!(back.aimd, s.aimd);
        assert_eq!(back.processes, s.processes);
        let old = serde_json::json!({"aimd": null, "requests_next": 5.0, "tokens_next": 0.0,
            "closed_until": 0.0, "decrease_due": false, "accepted": [1.0, 2.0]});
        assert!(
            serde_json::from_value::<SharedState>(old).is_err(),
            "an older version's state does not parse: the store starts it anew"
        );
    }
}
