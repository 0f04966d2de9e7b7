//! A run's events as MCP progress notifications. [`Forward`] is the run's event listener: it
//! only passes each event's [`Update`] on (listeners must be cheap); [`Tally`] keeps the
//! counts the notifications carry. `progress` is the tasks done, `total` the tasks planned so
//! far, and the message says the round, both counts and the tokens spent. The first
//! notification (progress 0) names the plan file, so a client that cancels the call knows
//! which file to `resume`; after it, a notification is sent when a task ends, and while tasks
//! stream their answers at most once a second with their tokens so far and tokens a second.
//! `progress` grows with every one, as the protocol asks: a task's end raises it to the tasks
//! done, a streaming note moves it a tenth of the way to the next task.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::events::{Event, EventListener};
use crate::progress::Update;

/// Passes a run's updates to the tool call that sends them.
pub struct Forward(pub mpsc::UnboundedSender<Update>);

impl EventListener<Event> for Forward {
    fn on_event(&self, event: &Event) {
        if let Some(update) = Update::of(event) {
            // The receiver is gone only once the call has ended: nothing to tell then.
            let _ = self.0.send(update);
        }
    }

    fn on_tokens(&self, node: &str, tokens: u64, per_second: Option<f64>) {
        let _ = self.0.send(Update::Tokens {
            node: node.to_string(),
            tokens,
            per_second,
        });
    }
}

/// The least time between two notifications of streaming tasks.
const STREAM_NOTE_EVERY: Duration = Duration::from_secs(1);

/// A streaming call not heard from for this long is not told any more (a planner's call ends
/// with no task's end to say so).
const STREAM_GONE_AFTER: Duration = Duration::from_secs(3);

/// One notification: `progress` of `total`, and its message.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: String,
}

/// What a run has done so far, as its notifications count it.
#[derive(Debug, Default)]
pub struct Tally {
    /// Counting a Thinkon run's blocks, not a workflow's rounds and tasks.
    blocks: bool,
    round: u64,
    planned: HashSet<String>,
    done: HashSet<String>,
    /// Of those done, the ones that failed.
    failed: HashSet<String>,
    tokens: u64,
    /// The calls streaming lately (a task, `planner`, `review`): tokens so far, tokens a
    /// second, and when they were last heard from.
    streaming: BTreeMap<String, (u64, Option<f64>, Instant)>,
    /// The progress last sent, and when a streaming note was last sent.
    sent: f64,
    streamed_at: Option<Instant>,
}

impl Tally {
    /// The first notification: nothing done yet, and where the run is written (its plan
    /// file, or a Thinkon run's folder).
    pub fn start(&self, path: &str) -> Note {
        let what = match self.blocks {
            true => "folder",
            false => "plan file",
        };
        Note {
            progress: 0.0,
            total: None,
            message: format!("started: {what} `{path}`"),
        }
    }

    /// A tally of a Thinkon run: blocks done of blocks planned.
    pub fn of_blocks() -> Tally {
        Tally {
            blocks: true,
            ..Tally::default()
        }
    }

    /// Takes in one update; a notification when a task ended.
    pub fn on(&mut self, update: Update) -> Option<Note> {
        match update {
            Update::Round {
                round,
                planned,
                tokens,
            } => {
                self.round = round;
                self.tokens += tokens;
                self.planned.extend(planned);
                None
            }
            Update::Finalising { node } | Update::Planned { node } => {
                self.planned.insert(node);
                None
            }
            // A resumed run's pending tasks were planned before this call.
            Update::Started { node, .. } => {
                self.planned.insert(node);
                None
            }
            Update::Ended {
                node,
                tokens,
                failed,
            } => {
                if failed {
                    self.failed.insert(node.clone());
                }
                self.tokens += tokens;
                self.streaming.remove(&node);
                self.planned.insert(node.clone());
                self.done.insert(node).then(|| self.note())
            }
            Update::Tokens {
                node,
                tokens,
                per_second,
            } => self.streamed(node, tokens, per_second, Instant::now()),
            Update::Begin | Update::RoundFailed { .. } | Update::Finished => None,
        }
    }

    /// A streaming task's tokens: a note when none was sent within [`STREAM_NOTE_EVERY`].
    fn streamed(
        &mut self,
        node: String,
        tokens: u64,
        per_second: Option<f64>,
        now: Instant,
    ) -> Option<Note> {
        self.streaming.insert(node, (tokens, per_second, now));
        if self
            .streamed_at
            .is_some_and(|at| now.duration_since(at) < STREAM_NOTE_EVERY)
        {
            return None;
        }
        self.streamed_at = Some(now);
        let before = self.sent;
        let mut note = self.note();
        note.progress = before + (note.progress + 1.0 - before) / 10.0;
        self.sent = note.progress;
        self.streaming
            .retain(|_, (_, _, at)| now.duration_since(*at) < STREAM_GONE_AFTER);
        let tasks: Vec<String> = self
            .streaming
            .iter()
            .map(|(node, (n, rate, _))| match rate {
                Some(rate) => format!("{node} {n} tokens at {rate:.1}/s"),
                None => format!("{node} {n} tokens"),
            })
            .collect();
        note.message = format!("{}; writing: {}", note.message, tasks.join(", "));
        Some(note)
    }

    fn note(&mut self) -> Note {
        let (done, planned) = (self.done.len(), self.planned.len());
        let message = match self.blocks {
            true if self.failed.is_empty() => format!("{done} of {planned} blocks done"),
            true => format!(
                "{done} of {planned} blocks done ({} failed)",
                self.failed.len()
            ),
            false => format!(
                "round {}: {done} of {planned} tasks done, {} tokens",
                self.round, self.tokens
            ),
        };
        self.sent = done as f64;
        Note {
            progress: done as f64,
            total: Some(planned as f64),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(node: &str, tokens: u64) -> Update {
        Update::Ended {
            node: node.into(),
            failed: false,
            tokens,
        }
    }

    #[test]
    fn each_ended_task_is_one_more_done_of_the_tasks_planned() {
        let mut tally = Tally::default();
        let round = |n: u64, planned: &[&str]| Update::Round {
            round: n,
            planned: planned.iter().map(|s| s.to_string()).collect(),
            tokens: 100,
        };
        assert_eq!(tally.on(round(1, &["b", "c"])), None);
        let first = tally.on(ended("b", 50)).expect("a note");
        assert_eq!((first.progress, first.total), (1.0, Some(2.0)));
        assert_eq!(first.message, "round 1: 1 of 2 tasks done, 150 tokens");
        assert_eq!(tally.on(ended("b", 0)), None, "counted once");
        tally.on(ended("c", 50)).expect("a note");
        assert_eq!(tally.on(round(2, &["d"])), None);
        let last = tally.on(ended("d", 10)).expect("a note");
        assert_eq!((last.progress, last.total), (3.0, Some(3.0)));
        assert_eq!(last.message, "round 2: 3 of 3 tasks done, 310 tokens");
        let start = Tally::default().start("/r/p.json").message;
        assert_eq!(start, "started: plan file `/r/p.json`");
    }

    #[test]
    fn streaming_tasks_are_told_once_a_second_and_progress_still_only_grows() {
        let mut tally = Tally::default();
        tally.on(Update::Round {
            round: 1,
            planned: vec!["b".into(), "c".into()],
            tokens: 0,
        });
        let t0 = Instant::now();
        let note = tally
            .streamed("b".into(), 12, Some(9.54), t0)
            .expect("a note");
        assert_eq!(
            note.message,
            "round 1: 0 of 2 tasks done, 0 tokens; writing: b 12 tokens at 9.5/s"
        );
        assert_eq!(
            tally.streamed("c".into(), 3, None, t0),
            None,
            "within a second"
        );
        let next = tally
            .streamed("b".into(), 40, Some(10.0), t0 + STREAM_NOTE_EVERY)
            .expect("a note");
        assert!(
            next.message.ends_with("b 40 tokens at 10.0/s, c 3 tokens"),
            "{}",
            next.message
        );
        assert!(0.0 < note.progress && note.progress < next.progress && next.progress < 1.0);
        let ended = tally.on(ended("b", 40)).expect("a note");
        assert_eq!(ended.progress, 1.0);
        let later = tally
            .streamed("c".into(), 9, None, t0 + 2 * STREAM_NOTE_EVERY)
            .expect("a note");
        assert!(later.progress > 1.0 && later.message.ends_with("writing: c 9 tokens"));
        tally.streamed("planner".into(), 5, None, t0 + 3 * STREAM_NOTE_EVERY);
        let quiet = t0 + 3 * STREAM_NOTE_EVERY + STREAM_GONE_AFTER;
        let last = tally.streamed("c".into(), 30, None, quiet).expect("a note");
        assert!(
            last.message.ends_with("writing: c 30 tokens"),
            "a call not heard from is not told: {}",
            last.message
        );
    }

    #[test]
    fn a_thinkon_run_counts_its_blocks_done_of_planned() {
        let mut tally = Tally::of_blocks();
        let planned = |n: &str| Update::Planned { node: n.into() };
        assert_eq!(tally.on(planned("root")), None);
        assert_eq!(tally.on(planned("root.1")), None);
        let note = tally.on(ended("root.1", 0)).expect("a note");
        assert_eq!((note.progress, note.total), (1.0, Some(2.0)));
        assert_eq!(note.message, "1 of 2 blocks done");
        assert_eq!(tally.start("/r/t").message, "started: folder `/r/t`");
        let failed = Update::Ended {
            node: "root".into(),
            failed: true,
            tokens: 0,
        };
        let note = tally.on(failed).expect("a note");
        assert_eq!(note.message, "2 of 2 blocks done (1 failed)");
    }

    #[test]
    fn a_resumed_run_counts_the_tasks_it_finds_pending() {
        let mut tally = Tally::default();
        tally.on(Update::Started {
            node: "c".into(),
            kind: "search".into(),
            title: "t".into(),
            is_final: false,
        });
        let note = tally.on(ended("c", 5)).expect("a note");
        assert_eq!((note.progress, note.total), (1.0, Some(1.0)));
    }
}
