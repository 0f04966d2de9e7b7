//! What the terminal's progress display shows of a batch (`batch`, `eval`) or a queue worker,
//! worked out from its [`BatchUpdate`]s alone: one line per running question (its
//! name, a short query, elapsed time; at most [`MAX_QUESTION_LINES`]) and one overall line
//! (questions done of the total, how many failed, how many run, tokens, elapsed time, and
//! once a question has ended the time left at the pace so far). A worker's questions come as
//! they come: it has no total and no time left. Like `state.rs`, nothing here knows of
//! terminals.
//!
//! A question's run writes no event here: its tokens count when it ends.

use std::time::{Duration, Instant};

use super::state::{Line, LineKey, clock, fit, grouped, running_line};
use crate::logging::{Escape, escape_controls};
use crate::progress::{BatchUpdate, QuestionEnd};

/// The most running questions given a line each: a batch with many `--jobs` must not fill
/// the terminal; the overall line counts them all.
pub const MAX_QUESTION_LINES: usize = 8;

/// A question being run.
#[derive(Debug, Clone)]
struct Running {
    name: String,
    query: String,
    started: Instant,
}

/// How many questions ended, each way.
#[derive(Debug, Default, Clone, Copy)]
struct Ended {
    done: usize,
    failed: usize,
    stopped: usize,
}

impl Ended {
    fn count(&mut self, end: QuestionEnd) {
        match end {
            QuestionEnd::Done => self.done += 1,
            QuestionEnd::Failed => self.failed += 1,
            QuestionEnd::Stopped => self.stopped += 1,
        }
    }

    /// Questions that ran to their end, well or not (a stopped one will run again).
    fn finished(self) -> usize {
        self.done + self.failed
    }
}

/// What the display knows of a batch's questions.
#[derive(Debug)]
pub struct QuestionsState {
    started: Instant,
    total: Option<usize>,
    ended: Ended,
    tokens: u64,
    running: Vec<Running>,
    finished: bool,
}

impl QuestionsState {
    /// A batch of `total` questions (`None`: a worker's) starting at `now`.
    pub fn new(total: Option<usize>, now: Instant) -> QuestionsState {
        QuestionsState {
            started: now,
            total,
            ended: Ended::default(),
            tokens: 0,
            running: Vec::new(),
            finished: false,
        }
    }

    /// Takes in one update.
    pub fn apply(&mut self, update: BatchUpdate, now: Instant) {
        match update {
            BatchUpdate::Begin { total } => *self = QuestionsState::new(total, now),
            BatchUpdate::Started { name, query } => {
                self.running.retain(|q| q.name != name);
                self.running.push(Running {
                    // The query is the user's text, the name derived from it: neither may
                    // reach the terminal raw.
                    name: escape_controls(&name, Escape::OneLine).into_owned(),
                    query: escape_controls(&query, Escape::OneLine).into_owned(),
                    started: now,
                });
            }
            BatchUpdate::Ended { name, end, tokens } => {
                let name = escape_controls(&name, Escape::OneLine);
                self.running.retain(|q| q.name != name);
                self.ended.count(end);
                self.tokens += tokens;
            }
            BatchUpdate::Finished => {
                self.finished = true;
                self.running.clear();
            }
        }
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The lines to show at `now`: running questions in the order they started (the first
    /// [`MAX_QUESTION_LINES`]), the overall line last, each at most `columns` wide.
    pub fn lines(&self, now: Instant, columns: usize) -> Vec<Line> {
        if self.finished {
            return Vec::new();
        }
        let mut lines: Vec<Line> = self
            .running
            .iter()
            .take(MAX_QUESTION_LINES)
            .map(|q| Line {
                key: LineKey::Running(q.name.clone()),
                text: running_line(
                    &format!("{}  ", q.name),
                    &q.query,
                    &clock(now.saturating_duration_since(q.started)),
                    columns,
                ),
            })
            .collect();
        lines.push(Line {
            key: LineKey::Overall,
            text: fit(&self.overall(now), columns),
        });
        lines
    }

    /// `12/40 questions done (1 failed) · 4 running · 123,456 tokens · 3m10s · about 7m left`
    fn overall(&self, now: Instant) -> String {
        let elapsed = now.saturating_duration_since(self.started);
        let finished = self.ended.finished();
        let done = match self.total {
            Some(total) => format!("{finished}/{total} questions done"),
            None if finished == 1 => "1 question done".to_string(),
            None => format!("{finished} questions done"),
        };
        let mut parts = vec![match self.ended.failed {
            0 => done,
            n => format!("{done} ({n} failed)"),
        }];
        parts.push(format!("{} running", self.running.len()));
        parts.push(format!("{} tokens", grouped(self.tokens)));
        parts.push(clock(elapsed));
        if let Some(left) = self.left(elapsed) {
            parts.push(format!("about {} left", clock(left)));
        }
        parts.join(" · ")
    }

    /// The time the questions not yet ended will take at the pace so far: unknown without a
    /// total or before the first question ends, and not worth saying under a second.
    fn left(&self, elapsed: Duration) -> Option<Duration> {
        let finished = self.ended.finished();
        let total = self.total?;
        if finished == 0 || finished >= total {
            return None;
        }
        let remaining = u32::try_from(total - finished).ok()?;
        let finished = u32::try_from(finished).ok()?;
        // Under a second is no estimate worth a word.
        Some(elapsed * remaining / finished).filter(|left| left.as_secs() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(name: &str) -> BatchUpdate {
        BatchUpdate::Started {
            name: name.into(),
            query: format!("What about {name}?"),
        }
    }

    fn ended(name: &str, end: QuestionEnd, tokens: u64) -> BatchUpdate {
        BatchUpdate::Ended {
            name: name.into(),
            end,
            tokens,
        }
    }

    fn texts(state: &QuestionsState, now: Instant) -> Vec<String> {
        state.lines(now, 100).into_iter().map(|l| l.text).collect()
    }

    #[test]
    fn a_batch_shows_its_running_questions_counts_tokens_and_time_left() {
        let t0 = Instant::now();
        let mut state = QuestionsState::new(Some(4), t0);
        assert_eq!(
            texts(&state, t0),
            ["0/4 questions done · 0 running · 0 tokens · 0s"]
        );
        for name in ["q1", "q2", "q3"] {
            state.apply(started(name), t0);
        }
        state.apply(ended("q1", QuestionEnd::Done, 12_000), t0);
        state.apply(ended("q2", QuestionEnd::Failed, 500), t0);
        let now = t0 + Duration::from_secs(60);
        assert_eq!(
            texts(&state, now),
            [
                "q3  What about q3?  1m00s",
                // Two of four ended in a minute: two more take another minute.
                "2/4 questions done (1 failed) · 1 running · 12,500 tokens · 1m00s · about 1m00s left"
            ]
        );
        state.apply(BatchUpdate::Finished, now);
        assert!(state.is_finished() && state.lines(now, 100).is_empty());
    }

    #[test]
    fn a_worker_has_no_total_and_a_stopped_question_is_neither_done_nor_failed() {
        let t0 = Instant::now();
        let mut state = QuestionsState::new(None, t0);
        state.apply(started("a"), t0);
        state.apply(started("b"), t0);
        state.apply(ended("a", QuestionEnd::Done, 10), t0);
        state.apply(ended("b", QuestionEnd::Stopped, 0), t0);
        assert_eq!(
            texts(&state, t0 + Duration::from_secs(5)),
            ["1 question done · 0 running · 10 tokens · 5s"]
        );
    }

    #[test]
    fn many_running_questions_get_a_bounded_number_of_lines_and_hostile_names_are_escaped() {
        let t0 = Instant::now();
        let mut state = QuestionsState::new(Some(20), t0);
        for n in 0..20 {
            state.apply(started(&format!("q{n}\x1b]0;x\x07")), t0);
        }
        let lines = state.lines(t0, 60);
        assert_eq!(lines.len(), MAX_QUESTION_LINES + 1);
        assert!(lines[MAX_QUESTION_LINES].text.contains("20 running"));
        for line in &lines {
            assert!(!line.text.contains('\x1b'), "{line:?}");
            assert!(console::measure_text_width(&line.text) <= 60, "{line:?}");
        }
        state.apply(ended("q0\x1b]0;x\x07", QuestionEnd::Done, 0), t0);
        assert!(
            state.lines(t0, 60)[MAX_QUESTION_LINES]
                .text
                .contains("19 running")
        );
    }
}
