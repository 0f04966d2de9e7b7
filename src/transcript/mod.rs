//! The run record: `<out>.transcript.jsonl`, one line per LLM exchange (each attempt, with the
//! messages and response format sent, the answer or the error, usage, latency) and per search
//! call (provider, query, results), after a `session` line for every invocation on the plan.
//! [`Recorder`] writes it; [`Replayer`] serves a recorded run's answers back, call by call,
//! so a run can be reproduced without the network (`--replay`).
//!
//! Calls are keyed by who asks: the role (or `search`), the node and the planning round (a
//! [`Site`]), and numbered within that key in the order they are made. Calls of one key are
//! sequential (one task's, or one round's), so the numbering is the same on every run of the
//! same program, whatever the concurrency between tasks. What a replay compares is what the
//! program asks: the messages of an LLM call, the query of a search; anything else (the
//! response format negotiated, the token limit) may differ.

mod line;
mod record;
mod replay;
mod salvage;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use line::{Line, LlmLine, PageLine, SearchLine, SessionLine};
pub use record::Recorder;
pub use replay::{Diverged, LoadError, Replayer};
pub use salvage::Salvage;

/// Who makes a call: the node whose task it is, or the planning round; neither for a call of
/// the whole run (a review).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Site {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

impl Site {
    /// A task's calls.
    pub fn node(id: impl Into<String>) -> Site {
        Site {
            node: Some(id.into()),
            round: None,
        }
    }

    /// A planning round's calls.
    pub fn round(round: u32) -> Site {
        Site {
            node: None,
            round: Some(round),
        }
    }

    /// The key calls are numbered under: what is called (`llm:<role>`, or `search`) and the
    /// site.
    fn key(&self, what: &str) -> String {
        format!(
            "{what}/{}/{}",
            self.node.as_deref().unwrap_or("-"),
            self.round
                .map_or_else(|| "-".to_string(), |r| r.to_string())
        )
    }

    /// `planning LLM call #2 of round 1`, `search #1 of node b`: a call as divergences name
    /// it (numbered from 1).
    pub fn describe(&self, what: &str, call: u32) -> String {
        let whose = match (&self.node, self.round) {
            (Some(node), _) => format!(" of node {node}"),
            (None, Some(round)) => format!(" of round {round}"),
            (None, None) => String::new(),
        };
        format!("{what} #{}{whose}", call + 1)
    }

    fn llm_key(&self, role: &str) -> String {
        self.key(&format!("llm:{role}"))
    }

    fn search_key(&self) -> String {
        self.key("search")
    }

    fn page_key(&self) -> String {
        self.key("page")
    }
}

/// What a run does with its calls: records them, serves them from a transcript, or both (a
/// replay writes its own transcript too); a resumed run also serves its interrupted tasks'
/// answered calls again ([`Salvage`]).
#[derive(Debug, Clone, Default)]
pub struct Tape {
    pub recorder: Option<Arc<Recorder>>,
    pub replayer: Option<Arc<Replayer>>,
    pub salvage: Option<Arc<Salvage>>,
}

impl Tape {
    /// Nothing recorded, nothing replayed (`doctor`, tests of one part).
    pub fn off() -> Tape {
        Tape::default()
    }

    /// The number of the next LLM call of `role` at `site`: the replayer's count when
    /// replaying, else the recorder's.
    pub fn next_llm_call(&self, role: &str, site: &Site) -> u32 {
        self.next_call(&site.llm_key(role))
    }

    /// The number of the next search at `site`.
    pub fn next_search(&self, site: &Site) -> u32 {
        self.next_call(&site.search_key())
    }

    /// The number [`Tape::next_search`] would give, not taken.
    pub fn peek_search(&self, site: &Site) -> u32 {
        self.peek(&site.search_key())
    }

    /// The number [`Tape::next_llm_call`] would give, not taken.
    pub fn peek_llm_call(&self, role: &str, site: &Site) -> u32 {
        self.peek(&site.llm_key(role))
    }

    fn peek(&self, key: &str) -> u32 {
        match (&self.replayer, &self.recorder) {
            (Some(replayer), _) => replayer.peek_call(key),
            (None, Some(recorder)) => recorder.peek_call(key),
            (None, None) => 0,
        }
    }

    fn next_call(&self, key: &str) -> u32 {
        match (&self.replayer, &self.recorder) {
            (Some(replayer), _) => replayer.next_call(key),
            (None, Some(recorder)) => recorder.next_call(key),
            (None, None) => 0,
        }
    }
}
