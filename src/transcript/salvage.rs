//! [`Salvage`]: the answers an interrupted run already paid for, served again when it resumes.
//!
//! A run stopped by a crash, a kill or a signal leaves its tasks in flight unended in the
//! plan (`running`, or still `planned` when no checkpoint came after their start), and their
//! calls answered so far in its transcript (each answer is written there as it arrives,
//! before the task acts on it). When the run resumes, such a task runs again from
//! its start; each of its model calls that asks exactly what the interrupted session asked
//! (same role, same call number, same messages) and was answered then is answered from the
//! transcript instead of the server. A call asked differently goes to the server, as does
//! every call of a task that was not in flight: an answer that a task completed or failed
//! with is never reused. The served answer is written to the new session's transcript too
//! (marked `replayed`), so a second interruption salvages it again.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::line::LlmLine;
use super::{Replayer, Site};

/// The answered calls of an interrupted run's tasks in flight.
#[derive(Debug)]
pub struct Salvage {
    transcript: Replayer,
    /// The nodes that had not ended when the run stopped.
    nodes: HashSet<String>,
}

impl Salvage {
    /// The salvage of the transcript at `path` for the unended tasks `running` (none:
    /// nothing to salvage). A transcript that cannot be read salvages nothing: the calls go to the
    /// servers, as they would have.
    pub fn load(path: &Path, running: HashSet<String>) -> Option<Salvage> {
        if running.is_empty() || !path.is_file() {
            return None;
        }
        match Replayer::load(path) {
            Ok(transcript) => Some(Salvage {
                transcript,
                nodes: running,
            }),
            Err(e) => {
                tracing::warn!("{e}: the interrupted tasks' answers are asked for again");
                None
            }
        }
    }

    /// The answer recorded for call `call` of `role` at `site`, if the site is a task that
    /// was in flight, the recorded call asked the same `messages`, and it was answered.
    pub fn llm(&self, role: &str, site: &Site, call: u32, messages: &[Value]) -> Option<&LlmLine> {
        if !site.node.as_ref().is_some_and(|n| self.nodes.contains(n)) {
            return None;
        }
        let line = self.transcript.llm(role, site, call, messages).ok()?;
        line.content.as_ref()?;
        Some(line)
    }
}
