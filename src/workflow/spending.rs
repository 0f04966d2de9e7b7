//! [`Spending`]: what a run may spend and what it has spent, watched as it goes. The first time
//! a limit is reached ([`Spending::spent`]) the stop is recorded (a `budget_reached` event) and
//! no research task starts from then on; the finish records the budget's use in the plan.

use std::time::{Duration, Instant};

use super::ledger::Ledger;
use crate::events::Event;
use crate::plan::BudgetRecord;
use crate::run::{BudgetStop, budget};
use crate::settings::Budget;

/// A run's budget, when its invocation started, and the limit that stopped it.
pub(super) struct Spending {
    budget: Budget,
    started: Instant,
    stopped: Option<BudgetStop>,
}

impl Spending {
    pub(super) fn new(budget: Budget) -> Spending {
        Spending {
            budget,
            started: Instant::now(),
            stopped: None,
        }
    }

    /// The limits count from now (an invocation's start).
    pub(super) fn restart(&mut self) {
        self.started = Instant::now();
    }

    pub(super) fn budget(&self) -> &Budget {
        &self.budget
    }

    /// The limit that stopped the research, if one did.
    pub(super) fn stopped(&self) -> Option<BudgetStop> {
        self.stopped
    }

    pub(super) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Whether a limit is reached; the first time, stops new research and records why.
    pub(super) fn spent(&mut self, ledger: &Ledger) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        let tokens = ledger.tokens().total_tokens;
        let Some(stop) = budget::check(&self.budget, tokens, self.started.elapsed()) else {
            return false;
        };
        tracing::warn!(
            "{}: no new task starts; the final summary is written from what exists",
            stop.describe()
        );
        ledger.emit(Event::BudgetReached {
            limit: stop.limit,
            value: stop.value,
            used: stop.used,
        });
        self.stopped = Some(stop);
        true
    }

    /// When the time budget runs out, if there is one.
    pub(super) fn deadline(&self) -> Option<tokio::time::Instant> {
        self.budget
            .max_time()
            .map(|max| crate::clock::deadline(self.started.into(), max))
    }

    /// The budget and its use as the plan's outcome records them; `None` without a budget.
    pub(super) fn record(&self, ledger: &Ledger) -> Option<BudgetRecord> {
        budget::record(
            &self.budget,
            self.stopped,
            ledger.tokens().total_tokens,
            self.started.elapsed(),
        )
    }
}
