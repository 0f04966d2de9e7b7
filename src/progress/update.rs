//! What a progress display is told: a run's events as its listeners need them ([`Update`],
//! [`Update::of`]: the terminal's display and an MCP client's notifications), or a batch's
//! questions starting and ending ([`BatchUpdate`]); [`Progress`] is whoever shows a batch
//! (the terminal's display, `crate::progress`). A driver of many questions reports to the
//! trait, so it needs no display of its own.

use crate::events::Event;
use crate::events::catalogue::{PlanningFailed, RoundPlanned};

/// Shows a batch's updates as they come; called from drivers, so it must be cheap.
pub trait Progress: Send + Sync {
    fn show(&self, update: BatchUpdate);
}

/// A batch's (or a queue worker's) questions, as a display needs to know them.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchUpdate {
    /// The batch started: `total` questions to run, `None` when they come as they come (a
    /// worker). What was shown before is forgotten.
    Begin {
        total: Option<usize>,
    },
    Started {
        name: String,
        query: String,
    },
    Ended {
        name: String,
        end: QuestionEnd,
        tokens: u64,
    },
    /// The batch ended: nothing more is shown.
    Finished,
}

/// How a question of a batch ended, as a display counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionEnd {
    /// What was asked was delivered (`completed`, `partial`).
    Done,
    /// It ended short (`degraded`, `final_failed`, `failed`, its last attempt failed).
    Failed,
    /// Stopped before its end: interrupted, or back to the queue; neither done nor failed.
    Stopped,
}

/// What happened in a run, as its listeners need to know it ([`Update::of`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// A run started: what was shown before is forgotten.
    Begin,
    /// A round planned these tasks (none when it was discarded), spending `tokens`.
    Round {
        round: u64,
        planned: Vec<String>,
        tokens: u64,
    },
    RoundFailed {
        round: u64,
    },
    /// One more piece of work was planned (a Thinkon block).
    Planned {
        node: String,
    },
    /// The final summary was added: no more rounds come.
    Finalising {
        node: String,
    },
    Started {
        node: String,
        kind: String,
        title: String,
        is_final: bool,
    },
    Ended {
        node: String,
        failed: bool,
        tokens: u64,
    },
    /// A running task's streamed answer has come `tokens` far, at `per_second` (not an
    /// event: [`crate::events::EventListener::on_tokens`] tells it).
    Tokens {
        node: String,
        tokens: u64,
        per_second: Option<f64>,
    },
    /// The run ended: nothing more is shown.
    Finished,
}

impl Update {
    /// What an event of a run changes on the display, if anything.
    pub fn of(event: &Event) -> Option<Update> {
        Some(match event {
            Event::RunStarted(_) => Update::Begin,
            Event::RoundPlanned(RoundPlanned::Applied {
                round,
                tasks,
                tokens,
                ..
            }) => Update::Round {
                round: u64::from(*round),
                planned: tasks.clone(),
                tokens: *tokens,
            },
            // A discarded round's tasks were taken out of the plan again.
            Event::RoundPlanned(RoundPlanned::Discarded { round, .. }) => Update::Round {
                round: u64::from(*round),
                planned: Vec::new(),
                tokens: 0,
            },
            Event::PlanningFailed(PlanningFailed::Round { round, .. }) => Update::RoundFailed {
                round: u64::from(*round),
            },
            Event::FinalForced { node, .. } => Update::Finalising { node: node.clone() },
            Event::TaskStarted {
                node,
                kind,
                title,
                is_final,
                ..
            } => Update::Started {
                node: node.clone(),
                kind: kind.as_str().to_string(),
                title: title.clone(),
                is_final: *is_final,
            },
            Event::TaskCompleted { node, tokens, .. } => Update::Ended {
                node: node.clone(),
                failed: false,
                tokens: *tokens,
            },
            Event::TaskFailed { node, .. } => Update::Ended {
                node: node.clone(),
                failed: true,
                tokens: 0,
            },
            Event::BlockPlanned(shape) => Update::Planned {
                node: shape.block.clone(),
            },
            Event::BlockStarted { block, .. } => Update::Started {
                node: block.clone(),
                kind: "block".into(),
                title: String::new(),
                is_final: false,
            },
            Event::BlockCompleted { block } => Update::Ended {
                node: block.clone(),
                failed: false,
                tokens: 0,
            },
            Event::BlockFailed(failed) => Update::Ended {
                node: failed.block().to_string(),
                failed: true,
                tokens: 0,
            },
            Event::RunFinished(_) => Update::Finished,
            _ => return None,
        })
    }
}
