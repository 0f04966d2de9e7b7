//! [`Locked`]: a [`Mutex`]'s guard whether or not a thread panicked while holding it. Every
//! mutex in researchflow guards plain values that are consistent between statements (counters,
//! maps, a file handle), so a lock poisoned by a panic elsewhere is still right to use, and a
//! panicked task must not take every later caller down with it.

use std::sync::{Mutex, MutexGuard};

/// [`Mutex::lock`] that takes a poisoned lock as it is.
pub trait Locked<T> {
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Locked<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_is_still_used() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let held = std::sync::Arc::clone(&m);
        let panicked = std::thread::spawn(move || {
            let mut guard = held.lock().expect("first");
            *guard = 2;
            panic!("while holding the lock");
        })
        .join();
        assert!(panicked.is_err() && m.is_poisoned());
        assert_eq!(*m.locked(), 2);
    }
}
