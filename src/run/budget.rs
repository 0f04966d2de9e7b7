//! What a run may spend ([`Budget`]: `--max-tokens`, `--max-time`, `budget.*`), checked as a
//! plain function of what was spent ([`check`]), and the stop it makes ([`BudgetStop`]). What
//! a stop does is the driver's (a workflow stops new research, gives running tasks a grace and
//! writes its final summary from what exists). Limits count one invocation's spending (a
//! resumed run starts afresh).

use std::time::Duration;

use serde::Serialize;

use crate::plan::BudgetRecord;
use crate::settings::Budget;

/// Which limit stopped a run, its value, and what was used when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetStop {
    /// `max_tokens` or `max_time`.
    pub limit: &'static str,
    /// Tokens, or seconds.
    pub value: u64,
    pub used: u64,
}

impl BudgetStop {
    /// The stop in plain words, for the reason and the report's notice.
    pub fn describe(&self) -> String {
        match self.limit {
            "max_tokens" => format!(
                "the token budget ({} tokens) was reached after {} tokens",
                self.value, self.used
            ),
            _ => format!(
                "the time budget ({} s) was reached after {} s",
                self.value, self.used
            ),
        }
    }
}

/// The first limit of `budget` that `tokens` and `elapsed` reach, if any.
pub fn check(budget: &Budget, tokens: u64, elapsed: Duration) -> Option<BudgetStop> {
    match (budget.max_tokens(), budget.max_time()) {
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
    }
}

/// The budget and its use as the plan's outcome records them; `None` without a budget.
pub fn record(
    budget: &Budget,
    stopped: Option<BudgetStop>,
    tokens: u64,
    elapsed: Duration,
) -> Option<BudgetRecord> {
    let (max_tokens, max_time) = (budget.max_tokens(), budget.max_time());
    (max_tokens.is_some() || max_time.is_some()).then(|| BudgetRecord {
        max_tokens,
        max_seconds: max_time.map(|t| t.as_secs()),
        stopped_by: stopped.map(|s| s.limit.to_string()),
        used_tokens: tokens,
        used_seconds: elapsed.as_secs(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{LimitArgs, Seconds, Tokens};

    #[test]
    fn tokens_are_checked_before_time_and_neither_without_a_limit() {
        let budget = Budget {
            limits: LimitArgs {
                max_tokens: Tokens::new(40),
                max_time: Seconds::new(10),
            },
            ..Budget::default()
        };
        let secs = Duration::from_secs;
        assert_eq!(check(&budget, 39, secs(9)), None);
        assert_eq!(
            check(&budget, 54, secs(11)).map(|s| s.limit),
            Some("max_tokens")
        );
        let time = check(&budget, 0, secs(12)).expect("time");
        assert_eq!((time.limit, time.value, time.used), ("max_time", 10, 12));
        assert_eq!(check(&Budget::default(), u64::MAX, secs(1_000_000)), None);
        assert!(record(&Budget::default(), None, 5, secs(1)).is_none());
        let kept = record(&budget, Some(time), 7, secs(12)).expect("a record");
        assert_eq!(kept.stopped_by.as_deref(), Some("max_time"));
    }
}
