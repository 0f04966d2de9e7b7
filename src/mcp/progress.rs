//! A run's events as MCP progress notifications. [`Forward`] is the run's event listener: it
//! only passes each event's [`Update`] on (listeners must be cheap); [`Tally`] keeps the
//! counts the notifications carry. `progress` is the tasks done, `total` the tasks planned so
//! far, and the message says the round, both counts and the tokens spent. The first
//! notification (progress 0) names the plan file, so a client that cancels the call knows
//! which file to `resume`; after it, a notification is sent only when a task ends, so
//! `progress` grows with every one, as the protocol asks.

use std::collections::HashSet;

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
}

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
                self.planned.insert(node.clone());
                self.done.insert(node).then(|| self.note())
            }
            Update::Begin | Update::RoundFailed { .. } | Update::Finished => None,
        }
    }

    fn note(&self) -> Note {
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
