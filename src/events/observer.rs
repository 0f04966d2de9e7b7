//! [`Observer`]: what the calls of one task (a node, `planner`, `review`, a Thinkon block)
//! report (retries, rate-limit waits, negotiated forms, cut inputs, review failures, streamed
//! attempts that broke, whose tokens the log counts), written as events of that task.

use super::EventLog;
use super::attempt::LlmAttemptFailed;
use super::catalogue::{Event, ReviewFailed};
use crate::http::{GateWait, RetryNotice, RetryObserver};
use crate::llm::{CallObserver, FailedAttempt, Negotiated, PageNote, Progress, Streamed};
use crate::review::{ReviewFinished, ReviewObserver};
use crate::text::Cut;

impl EventLog {
    /// What the calls of one task (`node`: a node id, `planner`, `review`, a block id) report,
    /// as events of that task.
    pub fn observer<'a>(&'a self, node: &str) -> Observer<'a> {
        Observer {
            log: self,
            node: node.to_string(),
        }
    }
}

/// Turns what one task's calls report into its events.
pub struct Observer<'a> {
    log: &'a EventLog,
    node: String,
}

impl Observer<'_> {
    /// The task the events are of.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Writes `event` to the task's log.
    pub fn emit(&self, event: Event) {
        self.log.emit(event);
    }
}

impl RetryObserver for Observer<'_> {
    fn on_retry(&self, notice: &RetryNotice) {
        self.log.count_retry();
        self.emit(Event::HttpRetry {
            node: self.node.clone(),
            what: notice.what.clone(),
            retry: notice.retry,
            delay_ms: u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
            cause: notice.cause.clone(),
            retry_after: notice.server_asked,
        });
    }

    fn on_gate_wait(&self, wait: &GateWait) {
        self.emit(Event::RateLimited {
            node: self.node.clone(),
            endpoint: wait.endpoint.clone(),
            wait_ms: wait.wait_ms,
            reason: wait.reason,
        });
    }
}

impl CallObserver for Observer<'_> {
    fn on_negotiated(&self, change: &Negotiated) {
        self.emit(Event::LlmNegotiated {
            node: self.node.clone(),
            role: change.role,
            model: change.model.clone(),
            url: change.url.clone(),
            refused: change.refused,
            from: change.from.clone(),
            to: change.to.clone(),
            status: change.status,
        });
    }

    fn on_tokens(&self, progress: &Progress) {
        self.log
            .tokens(&self.node, progress.tokens, progress.tokens_per_second());
    }

    fn on_streamed(&self, call: &Streamed) {
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let p = &call.progress;
        self.emit(Event::LlmStreamed {
            node: self.node.clone(),
            role: call.role,
            model: call.model.clone(),
            first_token_ms: p.first_token.map(ms),
            tokens: call.completion_tokens,
            tokens_per_second: p.tokens_per_second().map(|r| (r * 10.0).round() / 10.0),
            ms: ms(p.elapsed),
        });
    }

    fn on_attempt_failed(&self, attempt: &FailedAttempt) {
        self.log.count_unanswered(attempt.spent.usage);
        self.emit(Event::LlmAttemptFailed(LlmAttemptFailed {
            node: self.node.clone(),
            role: attempt.role,
            model: attempt.model.clone(),
            usage: attempt.spent.usage,
            estimated: attempt.spent.estimated,
        }));
    }

    fn on_input_cut(&self, cut: &Cut) {
        self.emit(Event::InputCut {
            node: self.node.clone(),
            what: cut.what.clone(),
            chars: cut.chars,
            kept: cut.kept,
        });
    }

    fn on_page(&self, note: &PageNote) {
        let (node, url) = (self.node.clone(), note.url.clone());
        self.emit(match &note.outcome {
            Ok(seen) => Event::PageRead {
                node,
                url,
                kind: seen.kind,
                chars: seen.chars,
                cut: seen.cut.clone(),
                passages: seen.passages,
                from: seen.from,
            },
            Err(cause) => Event::PageUnread {
                node,
                url,
                cause: cause.clone(),
            },
        });
    }
}

impl ReviewObserver for Observer<'_> {
    fn on_review_failed(&self, role: Option<&str>, error: &str, codes: &[String]) {
        let node = self.node.clone();
        let error = error.to_string();
        self.emit(Event::ReviewFailed(match role {
            Some(role) => ReviewFailed::Role {
                node,
                role: role.to_string(),
                error,
                codes: codes.to_vec(),
            },
            None => ReviewFailed::Review { node, error },
        }));
    }

    fn on_review_finished(&self, finished: &ReviewFinished) {
        self.emit(Event::ReviewFinished {
            node: self.node.clone(),
            verdict: finished.verdict,
            complete: finished.complete,
            files: finished.files.clone(),
            tokens: finished.tokens,
        });
    }
}
