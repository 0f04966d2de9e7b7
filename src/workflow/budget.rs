//! What a run may spend (`--max-tokens`, `--max-time`, `budget.*`), and what happens when it
//! has spent it: no new task starts, running tasks finish (the time limit gives them a short
//! grace, then cuts them), the final summary is written from what exists, and the run ends
//! `partial`. The final summary is never cut by the budget that ended the research: under a
//! time budget it has its own bound (`Budget::final_bound`, `--final-time`). A `budget_reached` event says which limit stopped it and how much was used.
//! Limits count this invocation's spending (a resumed run starts afresh).

use super::engine::Engine;
use crate::agents::TaskRunner;
use crate::kernel::{BudgetStop, Event};
use crate::planner::PlanRound;

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// Whether a limit is reached; the first time, stops new tasks and records why.
    pub(super) fn budget_spent(&mut self) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        let budget = self.options.budget;
        let tokens = self.totals.tokens.total_tokens;
        let elapsed = self.started.elapsed();
        let stop = match (budget.max_tokens, budget.max_time) {
            (Some(max), _) if tokens >= max => Some(BudgetStop {
                limit: "max_tokens",
                value: max,
                used: tokens,
            }),
            (_, Some(max)) if elapsed >= max => Some(BudgetStop {
                limit: "max_time",
                value: max.as_secs(),
                used: elapsed.as_secs(),
            }),
            _ => None,
        };
        let Some(stop) = stop else {
            return false;
        };
        tracing::warn!(
            "{}: no new task starts; the final summary is written from what exists",
            stop.describe()
        );
        self.events.emit(Event::BudgetReached {
            limit: stop.limit,
            value: stop.value,
            used: stop.used,
        });
        self.stopped = Some(stop);
        true
    }

    /// When the time budget runs out, if there is one.
    pub(super) fn deadline(&self) -> Option<tokio::time::Instant> {
        self.options
            .budget
            .max_time
            .map(|max| tokio::time::Instant::from_std(self.started) + max)
    }
}
