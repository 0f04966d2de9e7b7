//! Logging set-up: tracing on stderr, filtered by `RUST_LOG`, else by `-v` / `-q`; and
//! [`line()`], for the fixed-format status lines (`[planning] ...`, `AGENT_STATUS ...`) that
//! scripts read and that therefore carry no timestamp or level.
//!
//! Text from servers and models reaches the log (error bodies, model answers), so every field
//! value and status line has its control characters escaped ([`escape_controls`]): a terminal
//! escape in a model's answer must not retitle or repaint the user's terminal. Only the values
//! are escaped, never the formatter's own colours.
//!
//! Every line also has the password of any URL in it masked (`user:***@`), and every secret
//! the process knows (`crate::text::secrets`).
//!
//! With progress on (a workflow, a batch, an evaluation or a worker on a terminal) this module
//! owns the [`MultiProgress`] that the display draws into ([`progress_target`]), and every log
//! line is written through it, so lines never tear the display. This module knows nothing of
//! what is drawn there.
//!
//! A command that runs many questions at once (`batch`, `eval`, `worker`) runs each inside a
//! [`question_span`]; with [`LogConfig::quiet_questions`] the info lines of a question's own
//! run (a dozen each: rounds, tasks, files) are left out, so the log keeps the batch's own
//! lines (a question starts, a question ends) and every warning and error. `-v` or `RUST_LOG`
//! brings them back.

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{MultiProgress, ProgressDrawTarget};
use tracing::field::{Field, Visit};
use tracing::{Level, Metadata};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FormatFields, MakeWriter};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How the log is set up, in plain values (the command line is converted in `cmd/`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogConfig {
    /// Only warnings and errors.
    pub quiet: bool,
    /// 0 info, 1 debug for researchflow, 2 or more trace.
    pub verbose: u8,
    /// A progress display, drawn only when stderr is a terminal and `quiet` is off.
    pub progress: bool,
    /// Many questions at once: the info lines inside a [`question_span`] are left out, unless
    /// `verbose` or `RUST_LOG` asks for more.
    pub quiet_questions: bool,
    /// ANSI colours in log lines and the display; off when stderr is not a terminal or
    /// `NO_COLOR` is set.
    pub color: bool,
}

/// Where a progress display draws: log lines are printed above it. The display sets its draw
/// target; until then nothing is drawn and log lines print as usual.
#[derive(Clone)]
pub struct ProgressTarget {
    pub bars: MultiProgress,
    /// Whether the display may use colours (it always moves the cursor: it is on a terminal).
    pub color: bool,
}

static QUIET: AtomicBool = AtomicBool::new(false);
static PROGRESS: OnceLock<ProgressTarget> = OnceLock::new();

/// The name of the span a question of a batch runs in.
const QUESTION: &str = "question";

/// The span one question of a batch (or of a worker) runs in: its log lines name it, and
/// [`LogConfig::quiet_questions`] knows them by it.
pub fn question_span(name: &str) -> tracing::Span {
    tracing::info_span!(QUESTION, name = %name)
}

/// Installs the global tracing subscriber. Calling it twice is harmless.
pub fn init(config: LogConfig) {
    QUIET.store(config.quiet, Ordering::Relaxed);
    let default = match (config.quiet, config.verbose) {
        (true, _) => "warn",
        // The MCP SDK's info lines are one per message: its debug output, not ours.
        (false, 0) => "info,rmcp=warn",
        (false, 1) => "researchflow=debug,info",
        (false, _) => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A terminal that cannot move its cursor (`TERM=dumb`) gets plain lines.
    let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
    if config.progress && !config.quiet && std::io::stderr().is_terminal() && !dumb {
        // Hidden until the display attaches the terminal: it alone knows how it draws.
        let _ = PROGRESS.set(ProgressTarget {
            bars: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            color: config.color,
        });
    }
    let quiet_questions =
        config.quiet_questions && config.verbose == 0 && std::env::var_os("RUST_LOG").is_none();
    let questions = tracing_subscriber::filter::dynamic_filter_fn(move |meta, cx| {
        !(quiet_questions && is_question_info(meta, cx))
    });
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .fmt_fields(EscapedFields)
                .with_writer(StderrLines)
                .with_ansi(config.color)
                .with_target(false)
                .with_filter(questions),
        )
        .try_init();
}

/// Whether `meta` is an info (or finer) line written inside a question's span.
fn is_question_info<S>(meta: &Metadata<'_>, cx: &Context<'_, S>) -> bool
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    meta.is_event()
        && *meta.level() >= Level::INFO
        && cx
            .lookup_current()
            .is_some_and(|span| span.scope().any(|s| s.name() == QUESTION))
}

/// The display's drawing target, when progress is to be drawn (a workflow, stderr a terminal
/// that is not `TERM=dumb`, no `-q`); `None` otherwise.
pub fn progress_target() -> Option<ProgressTarget> {
    PROGRESS.get().cloned()
}

/// Writes finished log text to stderr, above the progress display when there is one; the
/// password of a URL in it is masked (our endpoints are named without it where the message is
/// made, but a server or a model may quote one), and so is every secret of the process.
fn write_stderr(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let text = crate::text::without_url_passwords(&text);
    let text = crate::text::secrets::mask(&text);
    let write = || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
    };
    match PROGRESS.get() {
        Some(target) => target.bars.suspend(write),
        None => write(),
    }
}

/// Writes one status line to stderr, unless `-q` was given. The line may span several lines
/// (the `[planning]` input and output): newlines and tabs are kept, every other control
/// character is escaped.
pub fn line(text: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        let mut text = escape_controls(text, Escape::KeepLines).into_owned();
        text.push('\n');
        write_stderr(text.as_bytes());
    }
}

/// Writes one status line even under `-q` (the `AGENT_STATUS` signal); it stays one line.
pub fn signal(text: &str) {
    let mut text = escape_controls(text, Escape::OneLine).into_owned();
    text.push('\n');
    write_stderr(text.as_bytes());
}

/// Which control characters survive escaping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Only the tab: one log event stays one line.
    OneLine,
    /// Tabs and newlines (a CR before a newline is dropped), for text that is multi-line by
    /// design.
    KeepLines,
}

/// `text` with its C0 and C1 control characters (and DEL), bidirectional controls and
/// zero-width characters ([`crate::text::is_invisible`]) written as Rust escapes (`\n`, `\r`,
/// `\u{1b}`, `\u{202e}`), except those `mode` keeps.
pub fn escape_controls(text: &str, mode: Escape) -> Cow<'_, str> {
    if !text.chars().any(|c| escaped(c) && !kept(c, mode)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && mode == Escape::KeepLines && chars.peek() == Some(&'\n') {
            continue;
        }
        // Writing to a String cannot fail.
        let _ = push_escaped(&mut out, c, mode);
    }
    Cow::Owned(out)
}

fn kept(c: char, mode: Escape) -> bool {
    c == '\t' || (c == '\n' && mode == Escape::KeepLines)
}

/// Whether `c` is written as an escape (unless `mode` keeps it).
fn escaped(c: char) -> bool {
    c.is_control() || crate::text::is_invisible(c)
}

fn push_escaped<W: fmt::Write>(out: &mut W, c: char, mode: Escape) -> fmt::Result {
    if !escaped(c) || kept(c, mode) {
        return out.write_char(c);
    }
    match c {
        '\n' => out.write_str("\\n"),
        '\r' => out.write_str("\\r"),
        '\t' => out.write_str("\\t"),
        c => write!(out, "\\u{{{:x}}}", u32::from(c)),
    }
}

/// A `fmt::Write` that escapes control characters on their way through.
struct Escaping<'a, W> {
    inner: &'a mut W,
}

impl<W: fmt::Write> fmt::Write for Escaping<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        s.chars()
            .try_for_each(|c| push_escaped(self.inner, c, Escape::OneLine))
    }
}

/// The fields of events and spans, formatted like tracing-subscriber's default fields
/// (`message name=value`), with every value escaped.
struct EscapedFields;

impl<'writer> FormatFields<'writer> for EscapedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let ansi = writer.has_ansi_escapes();
        let mut visitor = FieldVisitor {
            writer,
            ansi,
            empty: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct FieldVisitor<'writer> {
    writer: Writer<'writer>,
    ansi: bool,
    empty: bool,
    result: fmt::Result,
}

impl FieldVisitor<'_> {
    /// Writes one field; `value` is formatted with `{:?}` (a message's arguments print as
    /// written, other strings quoted) and escaped.
    fn field(&mut self, name: &str, value: &dyn fmt::Debug) {
        // Metadata of `log` records, already shown by the event formatter.
        if self.result.is_err() || name.starts_with("log.") {
            return;
        }
        self.result = self.write_field(name, value);
    }

    fn write_field(&mut self, name: &str, value: &dyn fmt::Debug) -> fmt::Result {
        if !std::mem::replace(&mut self.empty, false) {
            self.writer.write_char(' ')?;
        }
        if name != "message" {
            let name = name.strip_prefix("r#").unwrap_or(name);
            if self.ansi {
                // Italic name, dimmed `=`, as tracing-subscriber's default fields.
                write!(self.writer, "\x1b[3m{name}\x1b[0m\x1b[2m=\x1b[0m")?;
            } else {
                write!(self.writer, "{name}=")?;
            }
        }
        write!(
            Escaping {
                inner: &mut self.writer
            },
            "{value:?}"
        )
    }
}

impl Visit for FieldVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.field(field.name(), &format_args!("{value}"));
        } else {
            self.field(field.name(), &value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let mut text = value.to_string();
        let mut source = value.source();
        while let Some(cause) = source {
            let _ = write!(text, ": {cause}");
            source = cause.source();
        }
        self.field(field.name(), &format_args!("{text}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.field(field.name(), value);
    }
}

/// Hands each formatted event to [`write_stderr`] in one piece, so it is printed above the
/// progress display in one go.
struct StderrLines;

impl<'a> MakeWriter<'a> for StderrLines {
    type Writer = EventBuffer;

    fn make_writer(&'a self) -> EventBuffer {
        EventBuffer(Vec::new())
    }
}

struct EventBuffer(Vec<u8>);

impl Write for EventBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventBuffer {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            write_stderr(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_escape_is_written_out_in_one_line_text() {
        assert_eq!(
            escape_controls("boom \x1b]0;pwned\x07 end", Escape::OneLine),
            "boom \\u{1b}]0;pwned\\u{7} end"
        );
        assert_eq!(
            escape_controls("a\nb\r\nc\0d", Escape::OneLine),
            "a\\nb\\r\\nc\\u{0}d"
        );
    }

    #[test]
    fn c1_controls_and_del_are_escaped_and_printable_text_is_borrowed() {
        assert_eq!(
            escape_controls("x\u{9b}31m\u{7f}", Escape::OneLine),
            "x\\u{9b}31m\\u{7f}"
        );
        let plain = "Ünïcödé — 電池\tok";
        assert!(matches!(
            escape_controls(plain, Escape::OneLine),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn bidi_controls_and_zero_width_characters_are_escaped() {
        assert_eq!(
            escape_controls("key\u{200b}word \u{202e}cod.exe", Escape::OneLine),
            "key\\u{200b}word \\u{202e}cod.exe"
        );
    }

    #[test]
    fn multi_line_text_keeps_newlines_and_tabs_only() {
        assert_eq!(
            escape_controls(
                "[planning] MODEL_OUTPUT\r\n{\t\x1b[2J}\n\rx",
                Escape::KeepLines
            ),
            "[planning] MODEL_OUTPUT\n{\t\\u{1b}[2J}\n\\rx"
        );
    }

    #[test]
    fn field_values_are_escaped_and_names_are_not() {
        let mut out = String::new();
        let mut visitor = FieldVisitor {
            writer: Writer::new(&mut out),
            ansi: false,
            empty: true,
            result: Ok(()),
        };
        visitor.field("message", &format_args!("task b failed: \x1b]0;x\x07"));
        visitor.field("node", &"b\nc");
        visitor.field("r#type", &format_args!("search"));
        visitor.field("log.target", &"hidden");
        assert!(visitor.result.is_ok());
        assert_eq!(
            out,
            "task b failed: \\u{1b}]0;x\\u{7} node=\"b\\nc\" type=search"
        );
    }
}
