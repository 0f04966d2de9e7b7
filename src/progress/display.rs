//! The terminal's progress display: it feeds a run's events (as an [`EventListener`]) to a
//! [`ProgressState`], or a batch's updates (as [`Progress`]) to a [`QuestionsState`], and draws
//! their lines with indicatif, one spinner each, into the `MultiProgress` above which
//! `logging` prints log lines.
//! `run_finished`, which every run writes on every way out (Ctrl-C and SIGTERM included), and
//! a batch's end clear the display for good, so no spinner line stays behind.
//!
//! The display only reads: it never writes to a plan or an event log.

use crate::sync::Locked;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use super::index::IndexState;
use super::questions::QuestionsState;
use super::state::{Line, LineKey, ProgressState};
use crate::events::{Event, EventListener};
use crate::logging::ProgressTarget;
use crate::progress::{BatchUpdate, Progress};
use crate::search::local::report::{IndexStep, Steps};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// How often the spinners turn and the elapsed times are redrawn.
const TICK: Duration = Duration::from_millis(120);
/// Columns assumed when the terminal does not say.
const DEFAULT_COLUMNS: usize = 80;
/// Columns left free at the right edge, for the terminal's `^C` (see [`EchoRoom`]).
const ECHO_COLUMNS: usize = 2;
/// The spinner and the space after it, drawn by indicatif before each line.
const SPINNER_COLUMNS: usize = 2;

/// Draws a run's or a batch's state with indicatif: one spinner per line, redrawn on every event and
/// on a ticker thread (the spinners turn and the elapsed times count while nothing happens).
pub struct ProgressDisplay {
    shared: Arc<Shared>,
}

struct Shared {
    target: ProgressTarget,
    style: ProgressStyle,
    stopped: AtomicBool,
    shown: Mutex<Shown>,
}

/// The state and the bars that show it, changed together under one lock.
struct Shown {
    state: Screen,
    bars: Vec<(LineKey, ProgressBar)>,
}

/// What the display shows: one run, or a batch's questions (from a batch's start on).
#[derive(Debug)]
enum Screen {
    Run(ProgressState),
    Questions(QuestionsState),
    Index(IndexState),
}

impl Screen {
    fn on_event(&mut self, event: &Event, now: Instant) {
        // A batch's questions run without a listener: no event reaches its screen.
        if let Screen::Run(r) = self {
            r.on_event(event, now);
        }
    }

    fn apply(&mut self, update: BatchUpdate, now: Instant) {
        match (&mut *self, update) {
            (_, BatchUpdate::Begin { total }) => {
                *self = Screen::Questions(QuestionsState::new(total, now));
            }
            (Screen::Questions(q), update) => q.apply(update, now),
            (Screen::Run(_) | Screen::Index(_), _) => {}
        }
    }

    fn lines(&self, now: Instant, columns: usize) -> Vec<Line> {
        match self {
            Screen::Run(r) => r.lines(now, columns),
            Screen::Questions(q) => q.lines(now, columns),
            Screen::Index(i) => i.lines(now, columns),
        }
    }

    fn is_finished(&self) -> bool {
        match self {
            Screen::Run(r) => r.is_finished(),
            Screen::Questions(q) => q.is_finished(),
            Screen::Index(i) => i.is_finished(),
        }
    }
}

impl ProgressDisplay {
    /// The display for this process, when `logging` draws progress (a workflow, a batch, an
    /// evaluation or a worker on a terminal, without `-q`); `None` otherwise.
    pub fn for_terminal() -> Option<Arc<ProgressDisplay>> {
        let target = crate::logging::progress_target()?;
        target
            .bars
            .set_draw_target(ProgressDrawTarget::term_like_with_hz(
                Box::new(EchoRoom::new(console::Term::buffered_stderr())),
                20,
            ));
        Some(Arc::new(ProgressDisplay::new(target)))
    }

    /// A display drawing into `target` as it is (tests give a hidden one).
    pub fn new(target: ProgressTarget) -> ProgressDisplay {
        let template = if target.color {
            "{spinner:.cyan} {msg}"
        } else {
            "{spinner} {msg}"
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let shared = Arc::new(Shared {
            target,
            style,
            stopped: AtomicBool::new(false),
            shown: Mutex::new(Shown {
                state: Screen::Run(ProgressState::default()),
                bars: Vec::new(),
            }),
        });
        let ticker = Arc::downgrade(&shared);
        // Without the thread the display still follows events; only the clocks stand still.
        let _ = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || tick(&ticker));
        ProgressDisplay { shared }
    }
}

impl ProgressDisplay {
    /// Changes what is shown with `change`, then redraws; once the run or batch has finished,
    /// clears the display for good.
    fn change(&self, change: impl FnOnce(&mut Screen, Instant)) {
        if self.shared.stopped.load(Ordering::Relaxed) {
            return;
        }
        let mut shown = self.shared.lock();
        change(&mut shown.state, Instant::now());
        self.shared.draw(&mut shown);
        if shown.state.is_finished() {
            drop(shown);
            self.shared.stop();
        }
    }
}

impl ProgressDisplay {
    /// What an index's open tells of its steps, shown on this display (from a second on);
    /// [`ProgressDisplay::index_done`] clears it.
    pub fn index_steps(self: &Arc<Self>) -> Steps {
        let display = Arc::clone(self);
        Steps::to(move |step: IndexStep| {
            display.change(|screen, now| {
                if !matches!(screen, Screen::Index(_)) {
                    *screen = Screen::Index(IndexState::new(now));
                }
                if let Screen::Index(i) = screen {
                    i.apply(step, now);
                }
            });
        })
    }

    /// The index is open: its line goes, and this display with it.
    pub fn index_done(&self) {
        self.change(|screen, now| match screen {
            Screen::Index(i) => i.finish(),
            _ => *screen = Screen::Index(finished(now)),
        });
    }
}

fn finished(now: Instant) -> IndexState {
    let mut state = IndexState::new(now);
    state.finish();
    state
}

impl Progress for ProgressDisplay {
    /// Shows a batch's start, a question's start or end, the batch's end.
    fn show(&self, update: BatchUpdate) {
        self.change(|screen, now| screen.apply(update, now));
    }
}

impl EventListener<Event> for ProgressDisplay {
    fn on_event(&self, event: &Event) {
        self.change(|screen, now| screen.on_event(event, now));
    }

    /// Kept for the next tick's redraw: a token is too small a thing to draw for.
    fn on_tokens(&self, node: &str, tokens: u64, per_second: Option<f64>) {
        if let Screen::Run(run) = &mut self.shared.lock().state {
            run.tokens(node, tokens, per_second);
        }
    }
}

impl Drop for ProgressDisplay {
    /// A run that ends without `run_finished` (a panic) must not leave lines either.
    fn drop(&mut self) {
        self.shared.stop();
    }
}

/// Redraws until the display stops or is dropped.
fn tick(shared: &Weak<Shared>) {
    loop {
        std::thread::sleep(TICK);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.stopped.load(Ordering::Relaxed) {
            return;
        }
        let mut shown = shared.lock();
        shared.draw(&mut shown);
        for (_, bar) in &shown.bars {
            bar.tick();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Shown> {
        self.shown.locked()
    }

    /// Makes the bars match the state's lines: new lines get a bar (tasks or questions above
    /// the overall line), gone lines lose theirs, every text is refreshed. Once stopped, never again: the
    /// ticker may have waited for the lock while `stop` cleared the display.
    fn draw(&self, shown: &mut Shown) {
        if self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let columns = console::Term::stderr()
            .size_checked()
            .map_or(DEFAULT_COLUMNS, |(_, cols)| usize::from(cols));
        let lines = shown.state.lines(
            Instant::now(),
            columns.saturating_sub(SPINNER_COLUMNS + ECHO_COLUMNS),
        );
        let bars = &self.target.bars;
        shown.bars.retain(|(key, bar)| {
            let keep = lines.iter().any(|l| &l.key == key);
            if !keep {
                bar.finish_and_clear();
                bars.remove(bar);
            }
            keep
        });
        for line in lines {
            match shown.bars.iter().find(|(key, _)| *key == line.key) {
                Some((_, bar)) => bar.set_message(line.text),
                None => {
                    let bar = ProgressBar::new_spinner()
                        .with_style(self.style.clone())
                        .with_message(line.text);
                    let bar = match line.key {
                        LineKey::Overall => bars.add(bar),
                        // Just above the overall line, which is always there and last.
                        LineKey::Running(_) => bars.insert_from_back(1, bar),
                    };
                    shown.bars.push((line.key, bar));
                }
            }
        }
    }

    /// Clears the display for good; log lines still print through the `MultiProgress`.
    fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        let mut shown = self.lock();
        for (_, bar) in shown.bars.drain(..) {
            bar.finish_and_clear();
            self.target.bars.remove(&bar);
        }
        let _ = self.target.bars.clear();
    }
}

/// Stderr for indicatif, less one habit. indicatif pads every line with spaces to the full
/// width, so the cursor rests at the right edge of the last line; the `^C` that a terminal
/// echoes on Ctrl-C then wraps onto a new line, the display's final clear (counted from the
/// cursor) stops one line short, and the first task line stays behind. So the padding of the
/// last line of a frame (the one written just before the flush) is replaced by "erase to the end
/// of the line": the cursor stays beside the text, where the echo fits (lines leave
/// [`ECHO_COLUMNS`] free), and indicatif's count of lines stays right.
#[derive(Debug)]
struct EchoRoom<T> {
    term: T,
    /// Spaces written last, held back until we know whether another write follows.
    padding: Mutex<Option<String>>,
}

impl<T: TermLike> EchoRoom<T> {
    fn new(term: T) -> EchoRoom<T> {
        EchoRoom {
            term,
            padding: Mutex::new(None),
        }
    }

    fn held(&self) -> MutexGuard<'_, Option<String>> {
        self.padding.locked()
    }

    /// Writes the held-back padding: more follows, so it was not the frame's last.
    fn settle(&self) -> io::Result<()> {
        match self.held().take() {
            Some(spaces) => self.term.write_str(&spaces),
            None => Ok(()),
        }
    }
}

impl<T: TermLike> TermLike for EchoRoom<T> {
    fn width(&self) -> u16 {
        self.term.width()
    }

    fn height(&self) -> u16 {
        self.term.height()
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.settle()?;
        self.term.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.settle()?;
        self.term.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.settle()?;
        self.term.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.settle()?;
        self.term.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.settle()?;
        self.term.write_line(s)
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.settle()?;
        if !s.is_empty() && s.bytes().all(|b| b == b' ') {
            *self.held() = Some(s.to_string());
            return Ok(());
        }
        self.term.write_str(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.settle()?;
        self.term.clear_line()
    }

    fn flush(&self) -> io::Result<()> {
        if self.held().take().is_some() {
            // CSI K: erase from the cursor to the end of the line, the cursor staying put.
            self.term.write_str("\x1b[K")?;
        }
        self.term.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden() -> ProgressDisplay {
        ProgressDisplay::new(ProgressTarget {
            bars: indicatif::MultiProgress::with_draw_target(
                indicatif::ProgressDrawTarget::hidden(),
            ),
            color: false,
        })
    }

    fn bars(d: &ProgressDisplay) -> Vec<LineKey> {
        d.shared
            .lock()
            .bars
            .iter()
            .map(|(k, _)| k.clone())
            .collect()
    }

    #[test]
    fn the_display_keeps_one_bar_per_line_and_none_after_the_run() {
        use crate::events::catalogue::{RunFinished, RunStarted};
        let display = hidden();
        let begin = Event::RunStarted(RunStarted::Workflow {
            plan_file: "p.json".into(),
            workflow_id: "wf".into(),
            max_rounds: 8,
            concurrency: 3,
            round: 1,
        });
        display.on_event(&begin);
        assert_eq!(bars(&display), [LineKey::Overall]);
        for node in ["b", "c"] {
            display.on_event(&Event::TaskStarted {
                node: node.into(),
                kind: crate::plan::NodeType::Search,
                title: node.into(),
                attempt: Some(1),
                is_final: false,
            });
        }
        display.on_event(&Event::TaskCompleted {
            node: "b".into(),
            seconds: 1.0,
            tokens: 10,
            sources: 1,
            truncated: false,
        });
        assert_eq!(
            bars(&display),
            [LineKey::Overall, LineKey::Running("c".into())]
        );
        display.on_event(&Event::RunFinished(RunFinished::Workflow {
            status: crate::events::RunStatus::Completed,
            final_node: None,
            report: None,
            reason: None,
            error: None,
            totals: crate::events::Totals::default(),
            review: None,
        }));
        assert!(bars(&display).is_empty());
        assert!(display.shared.stopped.load(Ordering::Relaxed));
        display.on_event(&begin);
        assert!(bars(&display).is_empty(), "a stopped display stays empty");
    }

    #[test]
    fn a_batch_gets_a_bar_per_running_question_and_none_after_its_end() {
        let display = hidden();
        display.show(BatchUpdate::Begin { total: Some(3) });
        assert_eq!(bars(&display), [LineKey::Overall]);
        for name in ["q1", "q2"] {
            display.show(BatchUpdate::Started {
                name: name.into(),
                query: format!("{name}?"),
            });
        }
        display.show(BatchUpdate::Ended {
            name: "q1".into(),
            end: crate::progress::QuestionEnd::Done,
            tokens: 5,
        });
        assert_eq!(
            bars(&display),
            [LineKey::Overall, LineKey::Running("q2".into())]
        );
        display.show(BatchUpdate::Finished);
        assert!(bars(&display).is_empty());
        assert!(display.shared.stopped.load(Ordering::Relaxed));
    }

    /// Records what reaches the terminal, 20 columns wide.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl Screen {
        fn push(&self, what: String) -> io::Result<()> {
            self.0.lock().expect("lock").push(what);
            Ok(())
        }
    }

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            20
        }
        fn move_cursor_up(&self, n: usize) -> io::Result<()> {
            self.push(format!("up {n}"))
        }
        fn move_cursor_down(&self, n: usize) -> io::Result<()> {
            self.push(format!("down {n}"))
        }
        fn move_cursor_right(&self, n: usize) -> io::Result<()> {
            self.push(format!("right {n}"))
        }
        fn move_cursor_left(&self, n: usize) -> io::Result<()> {
            self.push(format!("left {n}"))
        }
        fn write_line(&self, s: &str) -> io::Result<()> {
            self.push(format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> io::Result<()> {
            self.push(s.to_string())
        }
        fn clear_line(&self) -> io::Result<()> {
            self.push("clear".into())
        }
        fn flush(&self) -> io::Result<()> {
            self.push("flush".into())
        }
    }

    #[test]
    fn the_last_line_of_a_frame_is_not_padded_to_the_edge() {
        let screen = Screen::default();
        let room = EchoRoom::new(screen.clone());
        // indicatif's frame: each line, then spaces up to the width, then a flush.
        for part in ["⠋ b  x  1s", "          ", "⠋ round 1", "           "] {
            room.write_str(part).expect("write");
        }
        room.flush().expect("flush");
        room.move_cursor_up(1).expect("up");
        assert_eq!(
            *screen.0.lock().expect("lock"),
            [
                "⠋ b  x  1s",
                "          ",
                "⠋ round 1",
                "\x1b[K",
                "flush",
                "up 1"
            ]
        );
    }
}
