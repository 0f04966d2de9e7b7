//! [`Gates`]: the gate of every endpoint of a process, created once and shared by every client
//! (every role's LLM client, the web search), as the `Negotiator` is, so that every workflow
//! of the process spends one rate budget per endpoint.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::gate::Gate;
use super::shared_gate::GateStore;
use crate::settings::RateLimits;

/// The gates of a process, by endpoint key (an LLM's base URL and model; a search URL).
#[derive(Default)]
pub struct Gates {
    gates: Mutex<HashMap<String, Arc<Gate>>>,
    /// Where every gate's state is kept when shared with other processes (a queue's workers).
    store: Option<Arc<dyn GateStore>>,
}

impl std::fmt::Debug for Gates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gates")
            .field("shared", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

impl Gates {
    pub fn new() -> Gates {
        Gates::default()
    }

    /// Gates whose state lives in `store`, one budget per endpoint for every process using it.
    pub fn shared(store: Arc<dyn GateStore>) -> Gates {
        Gates {
            gates: Mutex::default(),
            store: Some(store),
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
        let mut gate = Gate::new(shown, limits);
        if let Some(store) = &self.store {
            gate = gate.shared(Arc::clone(store), &crate::text::without_url_passwords(key));
        }
        let gate = Arc::new(gate);
        gates.insert(key.to_string(), Arc::clone(&gate));
        gate
    }
}
