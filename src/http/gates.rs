//! [`Gates`]: the gate of every endpoint of a process, created once and shared by every client
//! (every role's LLM client, the web search), as the `Negotiator` is, so that every workflow
//! of the process spends one rate budget per endpoint.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::gate::{Gate, Sharing};
use crate::settings::RateLimits;

/// The gates of a process, by endpoint key (an LLM's base URL and model; a search URL). A
/// clone is a handle on the same gates.
#[derive(Debug, Clone, Default)]
pub struct Gates {
    gates: Arc<Mutex<HashMap<String, Arc<Gate>>>>,
    /// The processes sharing every budget: this one alone, or a queue's live workers.
    sharing: Sharing,
}

impl Gates {
    pub fn new() -> Gates {
        Gates::default()
    }

    /// Gates whose budgets are divided among the processes of `sharing` (a queue keeps the
    /// count of its live workers there, and tells the others the rates measured here).
    pub fn shared_by(sharing: Sharing) -> Gates {
        Gates {
            gates: Arc::default(),
            sharing,
        }
    }

    /// Another process measured the rate of the endpoint `key` at `estimate` requests a
    /// minute after a 429 (nothing when this process has no gate for it).
    pub fn heard(&self, key: &str, estimate: f64) {
        let gate = self.gates.locked().get(key).cloned();
        if let Some(gate) = gate {
            gate.heard(estimate);
        }
    }

    /// The gate of `key`, created with `limits` on first use (`shown` names the endpoint in
    /// logs and events). A later caller's lower limits tighten it: one endpoint, one budget,
    /// the lower of the limits asked for.
    pub fn gate(&self, key: &str, shown: &str, limits: RateLimits) -> Arc<Gate> {
        let mut gates = self.gates.locked();
        if let Some(gate) = gates.get(key) {
            gate.tighten(limits);
            return Arc::clone(gate);
        }
        let gate = Arc::new(Gate::shared_by(key, shown, limits, self.sharing.clone()));
        gates.insert(key.to_string(), Arc::clone(&gate));
        gate
    }
}
