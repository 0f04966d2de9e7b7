//! What a progress display is told ([`Update`]): a run's events as the display needs them
//! ([`Update::of`]), or a batch's questions starting and ending; [`Progress`] is whoever
//! shows them (the terminal's display, `crate::progress`). A driver reports to the trait, so
//! it needs no display of its own.

use super::event::{Event, PlanningFailed, RoundPlanned};

/// Shows updates as they come; called from drivers and running tasks, so it must be cheap.
pub trait Progress: Send + Sync {
    fn show(&self, update: Update);
}

/// What happened, as the display needs to know it: a run's events ([`Update::of`]) or a
/// batch's questions.
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
            Event::RunFinished(_) => Update::Finished,
            _ => return None,
        })
    }
}
