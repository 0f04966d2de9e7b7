//! What the terminal's progress display shows, worked out from [`Update`]s alone (a run's
//! events, or a batch's questions): one line per running task (node id, type, a short title,
//! elapsed time) and one overall line (round, tasks done of planned, tokens, elapsed time).
//! Nothing here knows of terminals or indicatif (`display.rs` draws the lines), so what is
//! shown is tested without a terminal.
//!
//! A finished task leaves the display: its log line says how it ended. After `run_finished`
//! nothing is shown.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::kernel::progress::Update;
use crate::logging::{Escape, escape_controls};

/// The most columns a task's title takes, however wide the terminal: the line is a reminder,
/// the log has the whole title.
const TITLE_COLUMNS: usize = 60;

/// A task being run.
#[derive(Debug, Clone)]
struct Running {
    node: String,
    kind: String,
    title: String,
    started: Instant,
}

/// Which line of the display a text is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKey {
    Task(String),
    Overall,
}

/// One line to show, without its spinner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub key: LineKey,
    pub text: String,
}

/// What the display knows of the run, from its updates alone.
#[derive(Debug, Default)]
pub struct ProgressState {
    started: Option<Instant>,
    round: u64,
    /// Every node this invocation planned or ran (a resumed run runs nodes planned earlier).
    planned: BTreeSet<String>,
    done: BTreeSet<String>,
    failed: usize,
    tokens: u64,
    running: Vec<Running>,
    /// The final summary was added or started: no more planning rounds come.
    finalising: bool,
    finished: bool,
}

impl ProgressState {
    /// Takes in one update.
    pub fn apply(&mut self, update: Update, now: Instant) {
        match update {
            Update::Begin => {
                *self = ProgressState {
                    started: Some(now),
                    ..ProgressState::default()
                };
            }
            Update::Round {
                round,
                planned,
                tokens,
            } => {
                self.round = round;
                self.planned.extend(planned);
                self.tokens += tokens;
            }
            Update::RoundFailed { round } => self.round = round,
            Update::Finalising { node } => {
                self.finalising = true;
                self.planned.insert(node);
            }
            Update::Started {
                node,
                kind,
                title,
                is_final,
            } => self.start(node, &kind, &title, is_final, now),
            Update::Ended {
                node,
                failed,
                tokens,
            } => {
                self.running.retain(|t| t.node != node);
                self.planned.insert(node.clone());
                if self.done.insert(node) && failed {
                    self.failed += 1;
                }
                self.tokens += tokens;
            }
            Update::Finished => {
                self.finished = true;
                self.running.clear();
            }
        }
    }

    fn start(&mut self, node: String, kind: &str, title: &str, is_final: bool, now: Instant) {
        self.finalising |= is_final;
        let kind = if is_final { "final" } else { kind };
        self.running.retain(|t| t.node != node);
        self.planned.insert(node.clone());
        self.running.push(Running {
            // The title is the planner's text: it must not reach the terminal raw.
            title: escape_controls(title, Escape::OneLine).into_owned(),
            kind: escape_controls(kind, Escape::OneLine).into_owned(),
            node: escape_controls(&node, Escape::OneLine).into_owned(),
            started: now,
        });
    }

    /// Whether the run has finished: nothing is shown any more.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The lines to show at `now`, tasks in the order they started and the overall line last,
    /// each at most `columns` wide. Nothing before `run_started` or after `run_finished`.
    pub fn lines(&self, now: Instant, columns: usize) -> Vec<Line> {
        let Some(started) = self.started.filter(|_| !self.finished) else {
            return Vec::new();
        };
        let mut lines: Vec<Line> = self
            .running
            .iter()
            .map(|task| Line {
                key: LineKey::Task(task.node.clone()),
                text: task_line(task, now, columns),
            })
            .collect();
        lines.push(Line {
            key: LineKey::Overall,
            text: fit(&self.overall(now, started), columns),
        });
        lines
    }

    fn overall(&self, now: Instant, started: Instant) -> String {
        let stage = if self.finalising {
            "final summary".to_string()
        } else if self.running.is_empty() {
            format!("planning round {}", self.round + 1)
        } else if self.round == 0 {
            // Tasks left over by an earlier invocation, before any round of this one.
            "resuming".to_string()
        } else {
            format!("round {}", self.round)
        };
        let failed = match self.failed {
            0 => String::new(),
            n => format!(" ({n} failed)"),
        };
        format!(
            "{stage} · {}/{} tasks done{failed} · {} tokens · {}",
            self.done.len(),
            self.planned.len(),
            grouped(self.tokens),
            clock(now.saturating_duration_since(started)),
        )
    }
}

/// `b  search   <title, cut to fit>  12s`
fn task_line(task: &Running, now: Instant, columns: usize) -> String {
    let elapsed = clock(now.saturating_duration_since(task.started));
    let head = format!("{}  {:<7}  ", task.node, task.kind);
    let fixed = console::measure_text_width(&head) + 2 + elapsed.len();
    let room = columns.saturating_sub(fixed).min(TITLE_COLUMNS);
    let line = format!("{head}{}  {elapsed}", fit(&task.title, room));
    // On a terminal too narrow even for the title's ellipsis, the line is cut as a whole.
    fit(&line, columns)
}

/// `text` cut to `columns`, an ellipsis marking the cut.
fn fit(text: &str, columns: usize) -> String {
    match columns {
        0 => String::new(),
        _ => console::truncate_str(text, columns, "…").into_owned(),
    }
}

/// `7s`, `1m05s`, `2h03m`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `12345` -> `12,345`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(state: &ProgressState, now: Instant, columns: usize) -> Vec<String> {
        state
            .lines(now, columns)
            .into_iter()
            .map(|l| l.text)
            .collect()
    }

    fn started(node: &str, kind: &str, title: &str, is_final: bool) -> Update {
        Update::Started {
            node: node.into(),
            kind: kind.into(),
            title: title.into(),
            is_final,
        }
    }

    fn ended(node: &str, failed: bool, tokens: u64) -> Update {
        Update::Ended {
            node: node.into(),
            failed,
            tokens,
        }
    }

    fn started_run(t0: Instant) -> ProgressState {
        let mut state = ProgressState::default();
        state.apply(Update::Begin, t0);
        state.apply(
            Update::Round {
                round: 1,
                planned: vec!["b".into(), "c".into()],
                tokens: 1200,
            },
            t0,
        );
        state
    }

    #[test]
    fn a_started_task_shows_its_id_type_title_and_time() {
        let t0 = Instant::now();
        let mut state = started_run(t0);
        state.apply(started("b", "search", "Solid-state batteries", false), t0);
        let lines = state.lines(t0 + Duration::from_secs(3), 100);
        assert_eq!(lines[0].key, LineKey::Task("b".into()));
        assert_eq!(lines[0].text, "b  search   Solid-state batteries  3s");
        assert_eq!(lines[1].key, LineKey::Overall);
        assert_eq!(
            lines[1].text,
            "round 1 · 0/2 tasks done · 1,200 tokens · 3s"
        );
    }

    #[test]
    fn a_finished_task_disappears_and_is_counted_with_its_tokens() {
        let t0 = Instant::now();
        let mut state = started_run(t0);
        for node in ["b", "c"] {
            state.apply(started(node, "search", node, false), t0);
        }
        state.apply(ended("b", false, 34_000), t0);
        state.apply(ended("c", true, 0), t0);
        let now = t0 + Duration::from_secs(65);
        assert_eq!(
            texts(&state, now, 100),
            ["planning round 2 · 2/2 tasks done (1 failed) · 35,200 tokens · 1m05s"]
        );
    }

    #[test]
    fn the_final_summary_and_a_forced_final_count_as_planned() {
        let t0 = Instant::now();
        let mut state = started_run(t0);
        // A discarded round: its tasks were taken out again.
        state.apply(
            Update::Round {
                round: 2,
                planned: Vec::new(),
                tokens: 0,
            },
            t0,
        );
        state.apply(Update::Finalising { node: "e".into() }, t0);
        state.apply(started("e", "summary", "Final", true), t0);
        assert_eq!(
            texts(&state, t0, 100),
            [
                "e  final    Final  0s",
                "final summary · 0/3 tasks done · 1,200 tokens · 0s"
            ]
        );
    }

    #[test]
    fn run_finished_clears_everything() {
        let t0 = Instant::now();
        let mut state = started_run(t0);
        state.apply(started("b", "search", "x", false), t0);
        state.apply(Update::Finished, t0);
        assert!(state.is_finished());
        assert!(state.lines(t0, 100).is_empty());
        assert!(ProgressState::default().lines(t0, 100).is_empty());
    }

    #[test]
    fn a_long_title_is_cut_to_the_width_and_a_hostile_one_is_escaped() {
        let t0 = Instant::now();
        let mut state = started_run(t0);
        let title = format!("\x1b]0;pwned\x07{}", "word ".repeat(40));
        state.apply(started("b", "search", &title, false), t0);
        let narrow = &state.lines(t0, 40)[0].text;
        assert_eq!(narrow, "b  search   \\u{1b}]0;pwned\\u{7}word…  0s");
        assert_eq!(console::measure_text_width(narrow), 40);
        let wide = &state.lines(t0, 300)[0].text;
        assert_eq!(console::measure_text_width(wide), 12 + TITLE_COLUMNS + 4);
        assert!(!wide.contains('\x1b'));
        for columns in [0, 5, 15] {
            for line in state.lines(t0, columns) {
                assert!(
                    console::measure_text_width(&line.text) <= columns,
                    "{line:?}"
                );
            }
        }
    }

    #[test]
    fn a_run_s_events_become_the_updates_the_display_needs() {
        use crate::kernel::Event;
        use crate::kernel::event::RoundPlanned;
        let round = Event::RoundPlanned(RoundPlanned::Discarded {
            round: 3,
            tasks: vec!["d".into()],
            is_final: false,
            discarded: true,
        });
        assert_eq!(
            Update::of(&round),
            Some(Update::Round {
                round: 3,
                planned: Vec::new(),
                tokens: 0
            })
        );
        let failed = Event::TaskFailed {
            node: "c".into(),
            seconds: 1.0,
            error: "HTTP 500".into(),
        };
        assert_eq!(Update::of(&failed), Some(ended("c", true, 0)));
        let file = Event::FileWritten {
            path: "p.json".into(),
            why: "saved".into(),
        };
        assert_eq!(Update::of(&file), None);
    }

    #[test]
    fn clocks_and_token_counts_read_well() {
        assert_eq!(clock(Duration::from_millis(59_900)), "59s");
        assert_eq!(clock(Duration::from_secs(61)), "1m01s");
        assert_eq!(clock(Duration::from_secs(7_380)), "2h03m");
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
    }
}
