//! [`News`]: what a store tells the gates of a process between their renewals.

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// What a store tells one gate of a process: an update closed its gate. The lease in hand
/// is stale from then on (it says open: a call acting on it would go into the 429), so the
/// next call renews first; and the background renewals are woken.
#[derive(Debug, Default)]
pub struct News {
    stale: AtomicBool,
    wake: Notify,
}

impl News {
    /// The gate was closed by an update: the lease is stale, and the renewals wake.
    pub fn tell(&self) {
        self.stale.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// Wakes the renewals, the lease being still good (this process's own 429, which
    /// closed its gate already).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// Whether news came since the last renewal began.
    pub fn stale(&self) -> bool {
        self.stale.load(Ordering::SeqCst)
    }

    /// A renewal begins: news until now comes with it.
    pub fn renewing(&self) {
        self.stale.store(false, Ordering::SeqCst);
    }
}
