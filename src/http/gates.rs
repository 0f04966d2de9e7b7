//! [`Gates`]: the gate of every endpoint of a process, created once and shared by every client
//! (every role's LLM client, the web search), as the `Negotiator` is, so that every workflow
//! of the process spends one rate budget per endpoint.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

use super::gate::Gate;
use crate::settings::RateLimits;

/// The gates of a process, by endpoint key (an LLM's base URL and model; a search URL).
#[derive(Debug, Default)]
pub struct Gates {
    gates: Mutex<HashMap<String, Arc<Gate>>>,
    /// The processes sharing every budget: 1 (0 is taken for 1), or a queue's live workers.
    share: Arc<AtomicU32>,
}

impl Gates {
    pub fn new() -> Gates {
        Gates::default()
    }

    /// Gates whose budgets are divided among `share` processes (a queue keeps the count of its
    /// live workers there).
    pub fn shared_by(share: Arc<AtomicU32>) -> Gates {
        Gates {
            gates: Mutex::default(),
            share,
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
        let gate = Arc::new(Gate::shared_by(shown, limits, Arc::clone(&self.share)));
        gates.insert(key.to_string(), Arc::clone(&gate));
        gate
    }
}
