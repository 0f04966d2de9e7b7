//! A counting global allocator: the bytes allocated and not yet freed, their peak since a
//! mark, and a hard limit past which an allocation is refused (a refused allocation aborts the
//! process through `handle_alloc_error`, unless the caller asked with `try_reserve`), so that
//! an input that would take gigabytes on a machine shared with others is stopped at the
//! fuzzer's memory bound instead.
//!
//! What is counted is what the program asked for (the layouts' sizes), not the pages the
//! system allocator holds: the same measure whatever the allocator, and cheap (two atomic
//! operations per call). Nothing here allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

pub struct Counting;

/// Bytes allocated and not yet freed.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most [`LIVE`] has been since the last [`Mark`].
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// [`LIVE`] at the last mark: the limit counts from here.
static BASE: AtomicUsize = AtomicUsize::new(0);
/// The most bytes an input may hold above [`BASE`].
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// An allocation was refused since the last mark.
static REFUSED: AtomicBool = AtomicBool::new(false);

impl Counting {
    fn admit(size: usize) -> bool {
        let live = LIVE.fetch_add(size, Relaxed).saturating_add(size);
        if live.saturating_sub(BASE.load(Relaxed)) > LIMIT.load(Relaxed) {
            LIVE.fetch_sub(size, Relaxed);
            REFUSED.store(true, Relaxed);
            return false;
        }
        PEAK.fetch_max(live, Relaxed);
        true
    }
}

// SAFETY: every call is passed on to `System` unchanged; the counters only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Counting::admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Counting::admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: as in `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout (every path above).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !Counting::admit(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as in `dealloc`; `new_size` is the caller's.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        match (new.is_null(), new_size > old) {
            (true, true) => {
                LIVE.fetch_sub(new_size - old, Relaxed);
            }
            (false, false) => {
                LIVE.fetch_sub(old - new_size, Relaxed);
            }
            _ => {}
        }
        new
    }
}

/// Sets the most bytes one input may hold (see [`Mark`]).
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Relaxed);
}

/// Marks open: the outermost sets [`BASE`].
static DEPTH: AtomicUsize = AtomicUsize::new(0);

/// The memory one input (or one call) takes: the peak of live bytes above what was live when
/// the mark was made. Marks nest: an inner mark's peak still counts for the outer one, and the
/// limit counts from the outermost.
pub struct Mark {
    base: usize,
    outer_peak: usize,
}

impl Mark {
    pub fn start() -> Mark {
        let live = LIVE.load(Relaxed);
        if DEPTH.fetch_add(1, Relaxed) == 0 {
            BASE.store(live, Relaxed);
            REFUSED.store(false, Relaxed);
        }
        Mark {
            base: live,
            outer_peak: PEAK.swap(live, Relaxed),
        }
    }

    /// The peak bytes held above the mark, and whether an allocation was refused since the
    /// outermost mark.
    pub fn end(self) -> (usize, bool) {
        let peak = PEAK.load(Relaxed);
        PEAK.fetch_max(self.outer_peak, Relaxed);
        if DEPTH.fetch_sub(1, Relaxed) == 1 {
            BASE.store(0, Relaxed);
        }
        (peak.saturating_sub(self.base), REFUSED.load(Relaxed))
    }
}
