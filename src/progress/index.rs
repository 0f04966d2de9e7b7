//! What the display shows while a corpus is indexed ([`IndexState`]): files read of those to
//! read, then chunks embedded of those to embed, each with its rate and the time left at that
//! rate; nothing for an open that takes under a second.

use std::time::{Duration, Instant};

use super::state::{Line, LineKey, clock, fit, grouped};
use crate::search::local::report::IndexStep;

/// An open shorter than this shows nothing.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// The index's open, from its steps alone.
#[derive(Debug)]
pub struct IndexState {
    started: Instant,
    /// The last step, and when its phase (reading, embedding) started.
    step: Option<(IndexStep, Instant)>,
    finished: bool,
}

impl IndexState {
    pub fn new(now: Instant) -> IndexState {
        IndexState {
            started: now,
            step: None,
            finished: false,
        }
    }

    pub fn apply(&mut self, step: IndexStep, now: Instant) {
        let same_phase = |a: &IndexStep| std::mem::discriminant(a) == std::mem::discriminant(&step);
        let since = match self.step {
            Some((last, since)) if same_phase(&last) => since,
            _ => now,
        };
        self.step = Some((step, since));
    }

    /// The open ended: nothing more is shown.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn lines(&self, now: Instant, columns: usize) -> Vec<Line> {
        let Some((step, since)) = self.step else {
            return Vec::new();
        };
        if self.finished || now.duration_since(self.started) < QUIET_FOR {
            return Vec::new();
        }
        let (what, unit, done, total) = match step {
            IndexStep::Read { done, total } => ("indexing the corpus", "files read", done, total),
            IndexStep::Embedded { done, total } => ("embedding the corpus", "chunks", done, total),
        };
        let took = now.duration_since(since).as_secs_f64();
        let rate = (took > 0.0 && done > 0).then(|| done as f64 / took);
        let mut text = format!(
            "{what}: {} of {} {unit}",
            grouped(done as u64),
            grouped(total as u64)
        );
        if let Some(rate) = rate {
            let left = Duration::from_secs_f64(total.saturating_sub(done) as f64 / rate);
            text.push_str(&format!(" · {rate:.1}/s · about {} left", clock(left)));
        }
        vec![Line {
            key: LineKey::Overall,
            text: fit(&text, columns),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_for_a_second_then_counts_with_rate_and_time_left() {
        let t0 = Instant::now();
        let mut state = IndexState::new(t0);
        state.apply(
            IndexStep::Read {
                done: 0,
                total: 400,
            },
            t0,
        );
        state.apply(
            IndexStep::Read {
                done: 100,
                total: 400,
            },
            t0 + Duration::from_millis(500),
        );
        assert!(state.lines(t0 + Duration::from_millis(900), 120).is_empty());
        let lines = state.lines(t0 + Duration::from_secs(2), 120);
        assert_eq!(
            lines[0].text,
            "indexing the corpus: 100 of 400 files read · 50.0/s · about 6s left"
        );
        let at = t0 + Duration::from_secs(3);
        state.apply(
            IndexStep::Embedded {
                done: 0,
                total: 2000,
            },
            at,
        );
        state.apply(
            IndexStep::Embedded {
                done: 10,
                total: 2000,
            },
            at + Duration::from_secs(1),
        );
        let lines = state.lines(at + Duration::from_secs(2), 120);
        assert_eq!(
            lines[0].text,
            "embedding the corpus: 10 of 2,000 chunks · 5.0/s · about 6m38s left"
        );
        state.finish();
        assert!(state.lines(at + Duration::from_secs(3), 120).is_empty());
        assert!(state.is_finished());
    }
}
