//! What the terminal's progress display shows of a workflow run, worked out from its events
//! alone (their [`Update`]s, and the round limit and final rounds the display needs beyond): one line per running task (node id, type, a short title, the tokens
//! of its streamed answer so far and their rate, elapsed time)
//! and one overall line (round, tasks done of planned, tokens, elapsed time). A batch's
//! questions are `questions.rs`'s. Nothing here knows of terminals or indicatif (`display.rs`
//! draws the lines), so what is shown is tested without a terminal.
//!
//! A finished task leaves the display: its log line says how it ended. After `run_finished`
//! nothing is shown. The round named is one the engine can still plan: after the final round,
//! or once this invocation's `--max-rounds` are spent, the next stage is the final summary.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::events::Event;
use crate::events::catalogue::{RoundPlanned, RunStarted};
use crate::logging::{Escape, escape_controls};
use crate::progress::Update;

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
    /// Its streamed answer so far: tokens, and tokens a second.
    tokens: Option<(u64, Option<f64>)>,
}

/// Which line of the display a text is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKey {
    /// A running task (by node id) or question (by name).
    Running(String),
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
    /// The last round this invocation planned (or failed to plan); 0 before any.
    round: u64,
    /// The round planned next: from `run_started` (rounds continue across resumes), then one
    /// past the last.
    next_round: u64,
    /// Rounds this invocation may still plan (`None`: not known); at 0 the engine adds the
    /// final summary itself.
    rounds_left: Option<u64>,
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
    /// Takes in one event of the run: its [`Update`], and what only this display needs beyond
    /// it (the round the run goes on from and its round limit; whether a round planned the
    /// final summary, after which no round comes).
    pub fn on_event(&mut self, event: &Event, now: Instant) {
        let Some(update) = Update::of(event) else {
            return;
        };
        self.apply(update, now);
        match event {
            Event::RunStarted(RunStarted::Workflow {
                round, max_rounds, ..
            }) => {
                self.next_round = u64::from(*round);
                self.rounds_left = Some(u64::from(*max_rounds));
            }
            Event::RoundPlanned(RoundPlanned::Applied { is_final: true, .. }) => {
                self.finalising = true;
            }
            _ => {}
        }
    }

    /// Takes in one update.
    pub fn apply(&mut self, update: Update, now: Instant) {
        match update {
            Update::Begin => {
                *self = ProgressState {
                    started: Some(now),
                    next_round: 1,
                    ..ProgressState::default()
                };
            }
            Update::Round {
                round,
                planned,
                tokens,
            } => {
                self.round_ended(round);
                self.planned.extend(planned);
                self.tokens += tokens;
            }
            Update::RoundFailed { round } => self.round_ended(round),
            Update::Planned { node } => {
                self.planned.insert(node);
            }
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
            Update::Tokens {
                node,
                tokens,
                per_second,
            } => self.tokens(&node, tokens, per_second),
            Update::Finished => {
                self.finished = true;
                self.running.clear();
            }
        }
    }

    /// A round was planned, or failed: the engine counts both against its round limit.
    fn round_ended(&mut self, round: u64) {
        self.round = round;
        self.next_round = round + 1;
        self.rounds_left = self.rounds_left.map(|n| n.saturating_sub(1));
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
            tokens: None,
        });
    }

    /// How far the streamed answer of running task `node` has come.
    pub fn tokens(&mut self, node: &str, tokens: u64, per_second: Option<f64>) {
        if let Some(task) = self.running.iter_mut().find(|t| t.node == node) {
            task.tokens = Some((tokens, per_second));
        }
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
                key: LineKey::Running(task.node.clone()),
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
        } else if self.running.is_empty() && self.rounds_left == Some(0) {
            // The round limit is reached: no round is planned, the final summary is added.
            "final summary".to_string()
        } else if self.running.is_empty() {
            format!("planning round {}", self.next_round)
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

/// `b  search   <title, cut to fit>  312 tok 14/s  12s`
fn task_line(task: &Running, now: Instant, columns: usize) -> String {
    let head = format!("{}  {:<7}  ", task.node, task.kind);
    let elapsed = clock(now.saturating_duration_since(task.started));
    let tail = match task.tokens {
        Some((n, Some(rate))) => format!("{} tok {rate:.0}/s  {elapsed}", grouped(n)),
        Some((n, None)) => format!("{} tok  {elapsed}", grouped(n)),
        None => elapsed,
    };
    running_line(&head, &task.title, &tail, columns)
}

/// `<head><title, cut to fit>  <tail>`: a running task's or question's line, its tail the
/// elapsed time (and what else it counts).
pub(super) fn running_line(head: &str, title: &str, elapsed: &str, columns: usize) -> String {
    let fixed = console::measure_text_width(head) + 2 + elapsed.len();
    let room = columns.saturating_sub(fixed).min(TITLE_COLUMNS);
    let line = format!("{head}{}  {elapsed}", fit(title, room));
    // On a terminal too narrow even for the title's ellipsis, the line is cut as a whole.
    fit(&line, columns)
}

/// `text` cut to `columns`, an ellipsis marking the cut.
pub(super) fn fit(text: &str, columns: usize) -> String {
    match columns {
        0 => String::new(),
        _ => console::truncate_str(text, columns, "…").into_owned(),
    }
}

/// `7s`, `1m05s`, `2h03m`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `12345` -> `12,345`.
pub fn grouped(n: u64) -> String {
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
        assert_eq!(lines[0].key, LineKey::Running("b".into()));
        assert_eq!(lines[0].text, "b  search   Solid-state batteries  3s");
        assert_eq!(lines[1].key, LineKey::Overall);
        assert_eq!(
            lines[1].text,
            "round 1 · 0/2 tasks done · 1,200 tokens · 3s"
        );
    }

    #[test]
    fn a_streaming_task_shows_its_tokens_and_their_rate() {
        let t0 = Instant::now();
        let mut state = started_run(t0);
        state.apply(started("b", "search", "Solid-state batteries", false), t0);
        state.tokens("b", 1, None);
        let later = t0 + Duration::from_secs(3);
        assert_eq!(
            state.lines(later, 100)[0].text,
            "b  search   Solid-state batteries  1 tok  3s"
        );
        state.tokens("b", 1312, Some(14.4));
        state.tokens("gone", 5, None);
        assert_eq!(
            state.lines(later, 100)[0].text,
            "b  search   Solid-state batteries  1,312 tok 14/s  3s"
        );
        assert_eq!(
            state.lines(later, 30)[0].text.chars().count(),
            30,
            "cut to fit like any line"
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

    /// A workflow's `run_started`: going on from `round`, at most `max_rounds` more.
    fn run_started(round: u32, max_rounds: u32) -> Event {
        Event::RunStarted(RunStarted::Workflow {
            plan_file: "p.json".into(),
            workflow_id: "wf".into(),
            max_rounds,
            concurrency: 3,
            round,
        })
    }

    fn round_planned(round: u32, tasks: &[&str], is_final: bool) -> Event {
        Event::RoundPlanned(RoundPlanned::Applied {
            round,
            tasks: tasks.iter().map(|t| t.to_string()).collect(),
            is_final,
            refs: Vec::new(),
            calls: 1,
            tokens: 0,
        })
    }

    /// A search task's start and end.
    fn task(node: &str) -> [Event; 2] {
        [
            Event::TaskStarted {
                node: node.into(),
                kind: crate::plan::NodeType::Search,
                title: node.into(),
                attempt: Some(1),
                is_final: false,
            },
            Event::TaskCompleted {
                node: node.into(),
                seconds: 0.2,
                tokens: 0,
                sources: 5,
                truncated: false,
            },
        ]
    }

    /// The overall line's stage (`planning round 2`, `final summary`).
    fn stage(state: &ProgressState, now: Instant) -> String {
        let lines = texts(state, now, 100);
        let overall = lines.last().cloned().unwrap_or_default();
        overall.split(" · ").next().unwrap_or_default().to_string()
    }

    /// Issue 28 item 18: a run of two rounds showed "planning round 3" between its second
    /// round, which planned the final summary, and the final summary's start. The events are
    /// those an offline run of two rounds wrote (`workflow --offline`), in their order.
    #[test]
    fn no_round_is_named_after_a_round_that_planned_the_final_summary() {
        let t0 = Instant::now();
        let mut state = ProgressState::default();
        state.on_event(&run_started(1, 8), t0);
        assert_eq!(stage(&state, t0), "planning round 1");
        state.on_event(&round_planned(1, &["b", "c", "d"], false), t0);
        let [b0, b1] = task("b");
        let [c0, c1] = task("c");
        let [d0, d1] = task("d");
        for event in [b0, c0, d0, d1, b1] {
            state.on_event(&event, t0);
        }
        assert_eq!(stage(&state, t0), "round 1");
        state.on_event(&c1, t0);
        assert_eq!(stage(&state, t0), "planning round 2");
        state.on_event(&round_planned(2, &["e"], true), t0);
        assert_eq!(stage(&state, t0), "final summary");
    }

    #[test]
    fn no_round_is_named_past_the_round_limit_and_a_resumed_run_goes_on_from_its_rounds() {
        let t0 = Instant::now();
        // `--max-rounds 2`: after the second round's tasks the engine adds the final itself.
        let mut state = ProgressState::default();
        state.on_event(&run_started(1, 2), t0);
        for (round, node) in [(1, "b"), (2, "c")] {
            state.on_event(&round_planned(round, &[node], false), t0);
            let [start, end] = task(node);
            state.on_event(&start, t0);
            assert_eq!(stage(&state, t0), format!("round {round}"));
            state.on_event(&end, t0);
        }
        assert_eq!(stage(&state, t0), "final summary");

        let mut state = ProgressState::default();
        state.on_event(&run_started(4, 8), t0);
        assert_eq!(stage(&state, t0), "planning round 4");
        let [start, _] = task("f");
        state.on_event(&start, t0);
        assert_eq!(stage(&state, t0), "resuming");
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
