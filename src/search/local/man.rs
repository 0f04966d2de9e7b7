//! A man page's roff source (`ls.1`, `ssh.1.gz`, `Algorithm::Diff.3pm.gz`, as a Debian system
//! installs them under `/usr/share/man`) to plain text as `man` shows it: man(7) and BSD's
//! mdoc(7) macros, a paragraph on one line, a section's heading (`.SH OPTIONS`) a paragraph of
//! its own, and its title from the NAME line (`ls - list directory contents`), else `.TH`'s
//! name and section (`LS(1)`).
//!
//! What a person does not read as prose is set apart between fence lines ([`super::fence`]):
//! the SYNOPSIS, examples and other blocks kept as typed (`.EX`, mdoc's literal displays;
//! `.nf` and pod2man's `.Vb` unless they read as prose), and the tags of options (`.TP` then
//! `-a, --all`, mdoc's `.It Fl a`), so that no option is glued to the sentence that describes
//! it. Only what this module fences is fenced: a line of the page's text that would read as a
//! fence (literal backticks) is escaped ([`fence::Prose`]), lest it pair with a fence of ours
//! and swap prose and code. Macro definitions, conditionals, comments, fonts and spacing are
//! left out; tables keep their rows, one line each. Pure text work: [`super::roff`] reads the
//! words.

use std::collections::HashMap;

use super::roff::{arguments, mdoc_inline, unescape};
use super::{fence, paragraphs};

/// Requests and macros that end the line being filled: a paragraph, a break, an indent.
const BREAKS: &[&str] = &[
    "PP", "LP", "P", "Pp", "Lp", "sp", "br", "HP", "RS", "RE", "ti", "in", "Bl", "El", "Rs", "Re",
    "YS",
];

/// Macros that set their arguments in a font, apart by spaces (`.B word`) or alternating
/// fonts without them (`.BR ls (1)`).
const FONTS: &[&str] = &["B", "I", "SM", "SB"];
const ALTERNATING: &[&str] = &["BR", "BI", "IB", "IR", "RB", "RI"];

/// Whether `source` is roff: its first line that is not blank is a request or a comment
/// (`.TH`, `.\"`, `'\" t`), and a man page's title or section (`.TH`, `.Dd`, `.SH`) or an
/// alias (`.so`) comes within its first 400 lines.
pub fn is_roff(source: &str) -> bool {
    let mut lines = source.lines().filter(|l| !l.trim().is_empty()).take(400);
    lines.next().is_some_and(|l| l.starts_with(['.', '\'']))
        && lines.any(|l| {
            [".TH ", ".Dd", ".Dt ", ".SH", ".Sh ", ".so "]
                .iter()
                .any(|m| l.starts_with(m))
        })
        || source.trim_start().starts_with(".so ")
}

/// Whether `source` only sends the reader to another page (`.so man1/bzip2.1`): an alias,
/// not a document.
pub fn is_alias(source: &str) -> bool {
    let mut lines = source
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(".\\\"") && !l.starts_with("'\\\""));
    lines.next().is_some_and(|l| l.starts_with(".so ")) && lines.next().is_none()
}

/// The page's title, if it gives one, and its text.
pub fn to_text(source: &str) -> (Option<String>, String) {
    let page = read(source);
    let title = page.name_line.or(page.fallback);
    (title, page.out)
}

/// The page read: its text, the page's own lines that read as fences escaped.
fn read(source: &str) -> Page {
    let mut page = Page::default();
    for line in source.lines() {
        page.line(line);
    }
    page.flush();
    page.nofill = false;
    page.synopsis = false;
    page.end_code();
    page.prose.end(&mut page.out);
    page
}

/// Where the reading of a page is.
#[derive(Default)]
struct Page {
    out: String,
    /// Where the page's own text written since the last fence starts.
    prose: fence::Prose,
    /// The byte ranges of the blocks fenced (what the tests find again with
    /// [`fence::byte_spans`]).
    #[cfg(test)]
    fenced: Vec<std::ops::Range<usize>>,
    /// The line being filled, and whether the next words join it without a space (`\c`).
    line: String,
    glue: bool,
    /// Lines are kept as written (`.nf`, `.EX`, a literal display).
    nofill: bool,
    /// In the SYNOPSIS section.
    synopsis: bool,
    /// What is kept as code, fenced when neither holds; `sure` when it is code whatever it
    /// reads like (`.EX`, a synopsis), not a `.nf` block that may be prose.
    code: Option<String>,
    sure: bool,
    /// The section's heading, in capitals.
    section: String,
    /// The next text is a heading (`.SH` alone), or a tag (`.TP`).
    heading_next: bool,
    tag_next: bool,
    /// The NAME section's line, and `.TH`'s name and section.
    name_line: Option<String>,
    fallback: Option<String>,
    /// The page's own macros that start (true) or end (false) a block kept as written
    /// (pod2man's `.Vb` and `.Ve`), and the one being defined.
    macros: HashMap<String, bool>,
    defining: Option<(String, Option<bool>)>,
    /// How many `\{` of a skipped conditional are open.
    braces: usize,
    /// Whether the `.el` after an `.ie` is taken: the `.ie` tested `t` (typesetter), which
    /// a terminal reader is not.
    otherwise: bool,
    /// In a table: whether its format lines are over, and what separates its cells.
    table: Option<bool>,
    tab: char,
    /// mdoc: the page's name (`.Nm`), and a tag that goes on over lines (`.It Xo` to `.Xc`).
    mdoc: bool,
    name: String,
    long_tag: Option<String>,
}

impl Page {
    fn line(&mut self, raw: &str) {
        if self.braces > 0 {
            let depth = self.braces + raw.matches("\\{").count();
            self.braces = depth.saturating_sub(raw.matches("\\}").count());
            return;
        }
        if self.defining.is_some() {
            return self.define(raw);
        }
        match raw.strip_prefix(['.', '\'']) {
            Some(request) => self.request(request),
            None if self.table == Some(false) => {
                if let Some((_, tab)) = raw.split_once("tab(") {
                    self.tab = tab.chars().next().unwrap_or('\t');
                }
                self.table = Some(raw.trim_end().ends_with('.'));
            }
            None if self.table.is_some() => {
                let row = raw
                    .replace("T{", "")
                    .replace("T}", "")
                    .replace(self.tab, " ");
                self.flush();
                self.text(&row);
                self.flush();
            }
            None => self.text(raw),
        }
    }

    /// A conditional (`.if`, `.ie`, `.el`) as a terminal reader takes it: the `n` (nroff)
    /// branch read, the `t` one and any other condition skipped; a body on one line only
    /// (pod2man's `.ie n .SS """LCS_length"""` / `.el .SS "\f(CWLCS_length\fP"`): a block in
    /// `\{ ... \}` is skipped whole.
    fn conditional(&mut self, name: &str, rest: &str, request: &str) {
        let depth = request.matches("\\{").count();
        self.braces = depth.saturating_sub(request.matches("\\}").count());
        let (taken, body) = match name {
            "el" => (std::mem::take(&mut self.otherwise), rest),
            _ => {
                let (test, body) = rest
                    .trim_start()
                    .split_once([' ', '\t'])
                    .unwrap_or((rest, ""));
                self.otherwise = name == "ie" && test == "t";
                (test == "n", body)
            }
        };
        if !taken || depth > 0 {
            return;
        }
        let body = body.trim_start();
        match body.strip_prefix(['.', '\'']) {
            Some(request) => self.request(request),
            None if !body.is_empty() => self.text(body),
            None => {}
        }
    }

    /// A line of a macro's definition: whether it starts or ends a block kept as written.
    fn define(&mut self, raw: &str) {
        let Some((name, effect)) = self.defining.as_mut() else {
            return;
        };
        let line = raw.trim();
        if line == ".." {
            if let Some(effect) = *effect {
                self.macros.insert(std::mem::take(name), effect);
            }
            self.defining = None;
        } else if line.starts_with(".nf") {
            *effect = Some(true);
        } else if line.starts_with(".fi") {
            *effect = Some(false);
        }
    }

    fn request(&mut self, request: &str) {
        let request = request.trim_start();
        let (name, rest) = request.split_once([' ', '\t']).unwrap_or((request, ""));
        if name.is_empty() || name.starts_with("\\\"") {
            return;
        }
        if ["if", "ie", "el"].iter().any(|c| name.starts_with(c)) {
            return self.conditional(name, rest, request);
        }
        let args = arguments(rest);
        match name {
            "de" | "de1" | "am" | "dei" | "ig" => {
                let defined = if name == "ig" { "" } else { first(&args) };
                self.defining = Some((defined.to_string(), None));
            }
            "TH" | "Dt" => {
                self.mdoc |= name == "Dt";
                let section = args.get(1).map(String::as_str).unwrap_or_default();
                self.fallback = Some(format!("{}({section})", first(&args)));
            }
            "Dd" | "Os" => self.mdoc = true,
            "SH" | "SS" | "Sh" | "Ss" => match args.is_empty() {
                true => self.heading_next = true,
                false => self.heading(&args.join(" ")),
            },
            "TP" | "TQ" => {
                self.flush();
                self.tag_next = true;
            }
            "IP" | "It" => {
                self.flush();
                let tag = match name {
                    "It" => mdoc_inline(&args, &self.name),
                    _ => first(&args).to_string(),
                };
                match args.last().is_some_and(|a| a == "Xo") {
                    true => self.long_tag = Some(tag),
                    false => self.tag(&tag),
                }
            }
            "Xc" => {
                let tag = self.long_tag.take().unwrap_or_default();
                self.tag(&tag);
            }
            "Sm" | "Ex" | "Rv" => {}
            // DocBook's pages write an option's tag as a paragraph, its text indented under it.
            "RS" if self.line.trim_start().starts_with(['-', '+']) => {
                let tag = std::mem::take(&mut self.line);
                self.tag(&tag);
            }
            "nf" | "EX" | "Vb" => self.begin_code(name == "EX"),
            "fi" | "EE" | "Ve" | "Ed" => self.end_nofill(),
            "Bd" if args.iter().any(|a| a == "-literal" || a == "-unfilled") => {
                self.begin_code(true)
            }
            "Dl" => {
                self.flush();
                self.fence(&mdoc_inline(&args, &self.name));
            }
            "TS" => {
                self.table = Some(false);
                self.tab = '\t';
            }
            "TE" => self.table = None,
            _ if BREAKS.contains(&name) || name == "Bd" || name == "D1" => {
                self.flush();
                if name == "D1" {
                    self.put(&mdoc_inline(&args, &self.name), false);
                    self.flush();
                }
            }
            _ => self.macro_call(name, &args),
        }
    }

    /// A macro that prints words: a font's, mdoc's, man's synopsis macros, or one the page
    /// defined; anything else prints nothing.
    fn macro_call(&mut self, name: &str, args: &[String]) {
        if let Some(&starts) = self.macros.get(name) {
            return match starts {
                true => self.begin_code(false),
                false => self.end_nofill(),
            };
        }
        let text = if FONTS.contains(&name) {
            args.join(" ")
        } else if ALTERNATING.contains(&name) {
            args.concat()
        } else if name == "OP" {
            format!("[{}]", args.join(" "))
        } else if name == "SY" {
            self.flush();
            first(args).to_string()
        } else if self.mdoc && name.len() <= 3 && name.starts_with(|c: char| c.is_uppercase()) {
            if name == "Nm" && self.section == "NAME" && !args.is_empty() {
                self.name = args[0].clone();
            } else if name == "Nm" && self.synopsis {
                self.flush();
            }
            let mut words = vec![name.to_string()];
            words.extend(args.iter().cloned());
            match name {
                "Nd" => format!("- {}", args.join(" ")),
                _ => mdoc_inline(&words, &self.name),
            }
        } else {
            return;
        };
        if !text.is_empty() {
            self.put(&text, false);
        }
    }

    /// A text line as written.
    fn text(&mut self, raw: &str) {
        self.put(&unescape(raw), raw.trim_end().ends_with("\\c"));
    }

    /// Printed text: a line kept as written, a heading or a tag to come, or words filling the
    /// line (the next ones joined without a space when `glue`).
    fn put(&mut self, text: &str, glue: bool) {
        if let Some(tag) = self.long_tag.as_mut() {
            tag.push_str(if tag.is_empty() || glue { "" } else { " " });
            tag.push_str(text.trim());
            return;
        }
        if self.nofill {
            let code = self.code.get_or_insert_default();
            code.push_str(text.trim_end());
            code.push('\n');
            return;
        }
        if text.trim().is_empty() {
            return self.flush();
        }
        if std::mem::take(&mut self.heading_next) {
            return self.heading(text.trim());
        }
        if std::mem::take(&mut self.tag_next) {
            return self.tag(text.trim());
        }
        if !self.line.is_empty() && !self.glue {
            self.line.push(' ');
        }
        self.line.push_str(text.trim());
        self.glue = glue;
    }

    /// Ends the line being filled: into the code being kept, else into the text.
    fn flush(&mut self) {
        let line = std::mem::take(&mut self.line);
        self.glue = false;
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        if self.section == "NAME" && self.name_line.is_none() {
            self.name_line = Some(line.to_string());
        }
        let out = match self.synopsis || self.nofill {
            true => self.code.get_or_insert_default(),
            false => &mut self.out,
        };
        out.push_str(line);
        out.push('\n');
    }

    /// A section's heading: a paragraph of its own. The SYNOPSIS is code up to the next one.
    fn heading(&mut self, text: &str) {
        self.flush();
        self.synopsis = false;
        self.nofill = false;
        self.end_code();
        for _ in 0..2 {
            if !self.out.is_empty() && !self.out.ends_with("\n\n") {
                self.out.push('\n');
            }
        }
        self.out.push_str(text);
        self.out.push_str("\n\n");
        self.section = text.to_uppercase();
        self.synopsis = self.section == "SYNOPSIS";
        self.sure = self.synopsis;
    }

    /// A tag (`.TP`'s next line, `.IP`'s or `.It`'s argument): a list's mark (`•`, `1.`)
    /// opens the line it marks; a tag in words is a line of its own; an option, a name or a
    /// path (`-a, --all`, `LS_COLORS`, `/etc/frob.conf`) is fenced.
    fn tag(&mut self, tag: &str) {
        self.tag_next = false;
        let tag = tag.trim();
        let words = tag.split_whitespace().count();
        if tag.is_empty() || matches!(tag, "\u{2022}" | "-" | "*" | "o") {
            return;
        }
        if words == 1 && tag.chars().count() <= 3 && !tag.starts_with(['-', '+']) {
            self.line = tag.to_string();
        } else if words == 1
            || tag.starts_with(['-', '+', '[', '<', '/', '.'])
            || tag.contains(['=', '_', '(', '[', '<', '{', '|'])
        {
            self.fence(tag);
        } else {
            self.line = tag.to_string();
            self.flush();
        }
    }

    fn begin_code(&mut self, sure: bool) {
        self.flush();
        self.nofill = true;
        self.sure |= sure;
        self.code.get_or_insert_default();
    }

    fn end_nofill(&mut self) {
        self.flush();
        self.nofill = false;
        self.end_code();
    }

    /// Sets the code kept apart, once nothing keeps it open: fenced, or as prose when nothing
    /// says it is code and it reads as prose.
    fn end_code(&mut self) {
        if self.nofill || self.synopsis {
            return;
        }
        let Some(code) = self.code.take() else {
            return;
        };
        if !std::mem::take(&mut self.sure) && fence::reads_as_prose(&code) {
            self.out.push_str(&paragraphs::join_wrapped(&code));
            self.out.push('\n');
        } else {
            self.fence(&code);
        }
    }

    /// Sets `code` between fence lines, after the page's text before it is escaped.
    fn fence(&mut self, code: &str) {
        let _block = self.prose.fence(&mut self.out, code);
        #[cfg(test)]
        if !_block.is_empty() {
            self.fenced.push(_block);
        }
    }
}

fn first(args: &[String]) -> &str {
    args.first().map(String::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#".\" A comment.
.TH FROB 1 "March 2024" "frob 2.1"
.de Vb
.ft CW
.nf
..
.de Ve
.fi
..
.if n \{\
.ds x hidden
.\}
.SH NAME
frob \- adjust the frobnication level of a file
.SH SYNOPSIS
.B frob
[\fB\-l\fR \fIlevel\fR] \fIfile\fR...
.SH DESCRIPTION
.B frob
changes the level of each
.I file
in place.
The default level is 3.
.TP
.BR \-l ", " \-\-level =\fIN\fR
set the level to \fIN\fR.
.TP
1.
Levels above 9 are refused.
.PP
\-\-dry\-run
.RS 4
Print what would change.
.RE
.Vb
\&  frob \-l 5 notes.txt
.Ve
.nf
This block was typed by hand, and it reads as a sentence
of prose that wraps over two lines of the page.
.fi
.SS "Exit status:"
.TS
tab(:);
l l.
0:success
.TE
"#;

    /// A man(7) page as `man` shows it: its title from the NAME line, headings apart, the
    /// synopsis, the examples and the options' tags fenced, a `.nf` block of prose joined,
    /// definitions, conditionals and comments left out.
    #[test]
    fn a_man_page_reads_as_man_shows_it() {
        assert!(is_roff(PAGE) && !is_alias(PAGE));
        let (title, text) = to_text(PAGE);
        assert_eq!(
            title.as_deref(),
            Some("frob - adjust the frobnication level of a file")
        );
        assert_eq!(
            text,
            "NAME\n\nfrob - adjust the frobnication level of a file\n\nSYNOPSIS\n\n\
             ```\nfrob [-l level] file...\n```\n\nDESCRIPTION\n\n\
             frob changes the level of each file in place. The default level is 3.\n\
             ```\n-l, --level=N\n```\nset the level to N.\n\
             1. Levels above 9 are refused.\n\
             ```\n--dry-run\n```\nPrint what would change.\n\
             ```\n  frob -l 5 notes.txt\n```\n\
             This block was typed by hand, and it reads as a sentence of prose that wraps over \
             two lines of the page.\n\nExit status:\n\n0 success\n"
        );
    }

    /// An mdoc(7) page (BSD's macros, as OpenSSH writes them).
    #[test]
    fn an_mdoc_page_reads_as_man_shows_it() {
        let page = ".Dd $Mdocdate$\n.Dt SSH 1\n.Os\n.Sh NAME\n.Nm ssh\n\
                    .Nd OpenSSH remote login client\n.Sh SYNOPSIS\n.Nm ssh\n\
                    .Op Fl 46\n.Op Fl B Ar bind_interface\n.Ar destination\n\
                    .Sh DESCRIPTION\n.Nm\nconnects to\n.Ar destination ,\n\
                    as in\n.Xr ssh_config 5 .\n.Bl -tag -width Ds\n.It Fl 4\n\
                    Forces\n.Nm\nto use IPv4 addresses only.\n.It Xo\n.Fl D\n.Ar port\n.Xc\n\
                    Forwards a port.\n.El\n.Bd -literal -offset indent\n$ ssh host\n.Ed\n";
        let (title, text) = to_text(page);
        assert_eq!(title.as_deref(), Some("ssh - OpenSSH remote login client"));
        assert_eq!(
            text,
            "NAME\n\nssh - OpenSSH remote login client\n\nSYNOPSIS\n\n\
             ```\nssh [-46] [-B bind_interface] destination\n```\n\nDESCRIPTION\n\n\
             ssh connects to destination, as in ssh_config(5).\n\
             ```\n-4\n```\nForces ssh to use IPv4 addresses only.\n\
             ```\n-D port\n```\nForwards a port.\n```\n$ ssh host\n```\n"
        );
    }

    #[test]
    fn an_alias_and_text_that_is_not_roff() {
        assert!(is_alias(".so man1/bzip2.1\n") && is_roff(".so man1/bzip2.1\n"));
        assert!(!is_roff("GNU GENERAL PUBLIC LICENSE\n.TH is not here\n"));
        assert!(!is_roff(".NET is a platform.\nIt runs programs.\n"));
    }

    /// pod2man writes each heading with code twice, for a terminal (`n`) and for a typesetter
    /// (`t`): the terminal's is read once, a condition it cannot test and a block in braces
    /// are skipped.
    #[test]
    fn a_conditional_is_read_as_a_terminal_reads_it() {
        let (_, text) = to_text(
            ".TH Algorithm::Diff 3pm\n.SH METHODS\n\
             .ie n .SS \"LCS_length\"\n.el .SS \"\\f(CWLCS_length\\fP\"\n\
             It gives a gain of about 9%.\n\
             .if t .sp\n.if \\n(.g .ds Aq \\(aq\n.ie t \\{\\\nTypeset only.\n.\\}\n\
             .el \\{\\\nNot read either.\n.\\}\nAfter.\n",
        );
        assert_eq!(
            text, "METHODS\n\nLCS_length\n\nIt gives a gain of about 9%. After.\n",
            "{text}"
        );
    }

    /// A line of the page's text made of backticks is escaped: it stays prose, and the `.nf`
    /// block after it is what is fenced.
    #[test]
    fn backticks_in_the_prose_fence_nothing() {
        let page = read(
            ".TH FROB 1\n.SH DESCRIPTION\nWrite a fence as\n.br\n```\n.br\n\
             and close it the same way.\n.nf\nx = 1\n.fi\nAfter.\n",
        );
        assert_eq!(
            page.out,
            "DESCRIPTION\n\nWrite a fence as\n\\```\nand close it the same way.\n\
             ```\nx = 1\n```\nAfter.\n"
        );
        let nf = std::ops::Range { start: 5, end: 8 };
        assert_eq!(fence::spans(page.out.lines()), [nf]);
        assert_eq!(fence::byte_spans(&page.out), page.fenced);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 300,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Any soup of requests, macros, escapes and text (runs of backticks as well, which
        /// make a line look like a fence) reads without a panic, into text no more than a few
        /// times as long, and what a reader of its text takes for code ([`fence::spans`]) is
        /// exactly what it fenced: every fence closed, and no line of its prose a fence.
        #[test]
        fn any_roff_reads_without_a_panic(
            lines in proptest::collection::vec(
                "([.']?(TH|SH|SS|TP|TQ|IP|nf|fi|EX|EE|Vb|Ve|de|ig|if|ie|el|TS|TE|B|BR|RS|br|PP|It|Op|Fl|Xr|Nm|Bd|Ed|Xo|Xc|Dl|D1|so|\\\\\"))?( ([a-z(\\[\\]{}.:\"\\\\`-]{0,10}|`{3,4}[a-z]{0,2})){0,4}|`{3,4}[a-z]{0,2}",
                0..40,
            )
        ) {
            let source = lines.join("\n");
            let page = read(&source);
            let text = &page.out;
            proptest::prop_assert!(text.len() <= 8 * source.len() + 64, "{source:?} gave {text:?}");
            proptest::prop_assert_eq!(
                fence::byte_spans(text), page.fenced.clone(), "{:?} gave {:?}", source, text
            );
            let stray = fence::stray_fence(&page.out, &page.fenced);
            proptest::prop_assert!(stray.is_none(), "{source:?} gave {text:?}");
        }
    }
}
