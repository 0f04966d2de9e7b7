//! The mark that sets apart, in a document's indexed text, what is not prose: code, a
//! signature, a man page's synopsis, each between two fence lines of backticks, as Markdown
//! writes code. The text stays whole (searchable, readable in a passage, shown to a model as
//! it is), and the offline engine, which quotes sentences, never makes a sentence of what is
//! fenced nor glues it to one (`offline::units`).
//!
//! Every reader writes the mark with [`push_fenced`]; [`spans`] finds it again, in our texts
//! and in plain text that fences its code itself (a `README`). A fence is three or more
//! backticks at the start of a line ([`fence_line`]); the opening one may name a language
//! (```` ```python ````), the closing one is bare and at least as long. An opening fence never
//! closed fences nothing (CommonMark would fence the rest of the document: one stray line must
//! not silence it). Tildes do not fence: reStructuredText underlines its titles with them.
//! [`escape_fences`] keeps a line of a document's prose that looks like a fence (literal
//! backticks in a page's text) from pairing with a reader's own. [`reads_as_prose`] tells a
//! block kept as typed that is prose from one that is code. Pure text work.

use std::borrow::Cow;
use std::ops::Range;

/// Appends `code` to `out` between two fence lines, on lines of its own: the fence is longer
/// than any run of backticks that opens a line of `code`, so none of them closes it. Blank
/// lines around `code` are left out; nothing is written for blank code.
pub fn push_fenced(out: &mut String, code: &str) {
    let code = code.trim_matches(['\n', '\r']).trim_end();
    if code.trim().is_empty() {
        return;
    }
    let longest = code.lines().map(leading_ticks).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out.push_str(code);
    out.push('\n');
    out.push_str(&fence);
    out.push('\n');
}

/// The fenced blocks among `lines`, each as the range of line indices from its opening fence
/// to its closing one, both included, in order.
pub fn spans<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // The open fence: its first line and its length.
    let mut open: Option<(usize, usize)> = None;
    for (k, line) in lines.into_iter().enumerate() {
        let Some((ticks, rest)) = fence_line(line) else {
            continue;
        };
        match open {
            Some((first, length)) if ticks >= length && rest.is_empty() => {
                out.push(first..k + 1);
                open = None;
            }
            None => open = Some((k, ticks)),
            _ => {}
        }
    }
    out
}

/// If `line` is a fence, its length and what follows its backticks (a language, empty on a
/// closing fence): three backticks or more at its start, after any white space, and no
/// backtick after them (CommonMark: a backtick fence's info string holds no backtick). The
/// one rule [`spans`] and [`escape_fences`] read a fence by.
pub fn fence_line(line: &str) -> Option<(usize, &str)> {
    let line = line.trim();
    let ticks = leading_ticks(line);
    let rest = &line[ticks..];
    (ticks >= 3 && !rest.contains('`')).then_some((ticks, rest))
}

/// How many backticks open `line`, after any white space.
fn leading_ticks(line: &str) -> usize {
    line.trim_start().chars().take_while(|c| *c == '`').count()
}

/// `text` with a backslash before the backticks of each line that is a fence ([`fence_line`]),
/// after its indentation, and nothing else changed: Markdown's escape, `` \``` `` reads as
/// three backticks and fences nothing. For the text a reader takes from a document as prose (a
/// page's literal backticks), where such a line is no fence of the reader's: left as it is, it
/// would pair with the reader's next fence and fence the prose, leaving the code as prose.
/// Borrowed when no line is a fence; escaping twice changes nothing.
pub fn escape_fences(text: &str) -> Cow<'_, str> {
    if text.split('\n').all(|line| fence_line(line).is_none()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (k, line) in text.split('\n').enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let code = line.trim_start();
        if fence_line(line).is_some() {
            out.push_str(&line[..line.len() - code.len()]);
            out.push('\\');
            out.push_str(code);
        } else {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

/// Where a reader's own fences end in the text it writes: what it wrote after the last one is
/// the document's own text, whose lines that read as fences are escaped ([`escape_fences`])
/// when the reader's next block comes ([`Prose::fence`], [`Prose::push_set_apart`]) and when
/// the document ends ([`Prose::end`]). Each line is read once, once ended, so the work stays
/// linear in the text; the blocks the reader writes through it are never escaped.
#[derive(Debug, Default)]
pub struct Prose {
    /// Where the text written since the last block starts in `out`: a line's start.
    start: usize,
}

impl Prose {
    /// Escapes the document's text written since the last block, then fences `code` after it
    /// ([`push_fenced`]). The byte range of the block, its opening fence's line to its closing
    /// one's end; empty when `code` is blank and nothing is written.
    pub fn fence(&mut self, out: &mut String, code: &str) -> Range<usize> {
        self.escape(out);
        let start = out.len();
        push_fenced(out, code);
        if out.len() == start {
            return start..start;
        }
        self.start = out.len();
        // `push_fenced` may first end the line before the block.
        start + usize::from(out[start..].starts_with('\n'))..out.len()
    }

    /// Escapes the document's text written since the last block, then appends `text`, on lines
    /// of its own: text set apart already, its prose escaped and each of its fences closed
    /// (what [`super::html::to_text`] gives for an HTML block in a Markdown document). The byte
    /// range of `text` in `out`.
    pub fn push_set_apart(&mut self, out: &mut String, text: &str) -> Range<usize> {
        self.escape(out);
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        let start = out.len();
        out.push_str(text);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        self.start = out.len();
        start..out.len()
    }

    /// Escapes the document's text written since the last block, once the document is read.
    pub fn end(&mut self, out: &mut String) {
        self.escape(out);
    }

    /// Escapes the text written since the last block. The lines it ended stay escaped and are
    /// not read again; the last one, if nothing ends it, is read again with what goes on it.
    fn escape(&mut self, out: &mut String) {
        if let Cow::Owned(escaped) = escape_fences(&out[self.start..]) {
            out.truncate(self.start);
            out.push_str(&escaped);
        }
        if let Some(end) = out[self.start..].rfind('\n') {
            self.start += end + 1;
        }
    }
}

/// The fenced blocks of `text` ([`spans`]) as byte ranges, from an opening fence's line to the
/// end of its closing one: what a reader of the text takes for code (what the readers' tests
/// compare with the blocks they wrote).
#[cfg(test)]
pub fn byte_spans(text: &str) -> Vec<Range<usize>> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let start = |line: usize| starts.get(line).copied().unwrap_or(text.len());
    spans(text.split('\n'))
        .into_iter()
        .map(|span| start(span.start)..start(span.end))
        .collect()
}

/// The first line of `text` outside its `fenced` blocks that reads as a fence: a line of the
/// document's own text a reader would take for code (what the readers' tests look for).
#[cfg(test)]
pub fn stray_fence<'a>(text: &'a str, fenced: &[Range<usize>]) -> Option<&'a str> {
    let mut at = 0;
    let mut prose = Vec::new();
    for block in fenced {
        prose.push(&text[at..block.start]);
        at = block.end;
    }
    prose.push(&text[at..]);
    prose
        .into_iter()
        .flat_map(str::lines)
        .find(|l| fence_line(l).is_some())
}

/// Whether a preformatted block that nothing calls code reads as prose (a mail's body, a text
/// kept as typed: an HTML `<pre>` without a class, a man page's `.nf` block), not as code: two
/// lines or more, long ones (six words or more on average), a sentence ended somewhere, and
/// almost none of the symbols code is made of (`=`, `;`, `{`, `>>>`, `#`: one in a hundred
/// characters at most).
pub fn reads_as_prose(block: &str) -> bool {
    let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 {
        return false;
    }
    let words: usize = lines.iter().map(|l| l.split_whitespace().count()).sum();
    let shown = block.chars().filter(|c| !c.is_whitespace()).count();
    let symbols = block
        .chars()
        .filter(|c| "{}[]<>=;*#$&|\\^~@%+_`".contains(*c))
        .count();
    let ends_sentence = block
        .split_whitespace()
        .any(|w| w.ends_with(['.', '!', '?']) && w.len() > 1);
    words >= 6 * lines.len() && symbols * 100 <= shown && ends_sentence
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fenced(before: &str, code: &str) -> String {
        let mut out = before.to_string();
        push_fenced(&mut out, code);
        out
    }

    #[test]
    fn code_goes_between_fence_lines_of_its_own() {
        assert_eq!(
            fenced("Intro:", "\n\n  x = 1\nprint(x)\n\n"),
            "Intro:\n```\n  x = 1\nprint(x)\n```\n"
        );
        assert_eq!(fenced("", "a()"), "```\na()\n```\n");
        assert_eq!(fenced("text\n", " \n\t\n"), "text\n");
        // A fence inside the code (a Markdown tutorial's) does not close it.
        let inner = fenced("", "```python\nprint(1)\n```");
        assert!(
            inner.starts_with("````\n") && inner.ends_with("\n````\n"),
            "{inner}"
        );
        let lines: Vec<&str> = inner.lines().collect();
        assert_eq!(
            spans(lines.iter().copied()),
            vec![Range { start: 0, end: 5 }]
        );
    }

    #[test]
    fn spans_pair_an_opening_fence_with_the_next_bare_one_as_long() {
        let text = "prose\n```python\ncode\n``` not closing\n```\nprose\n\
                    ~~~~~~~~\nunderlined, not fenced\n~~~~~~~~\n  ````\n  x\n```\n  ````\n\
                    ```\nnever closed\n";
        assert_eq!(spans(text.lines()), [1..5, 9..13]);
        assert!(spans("`` two\n``\n".lines()).is_empty());
    }

    /// A line of prose that is a fence gets a backslash before its backticks, after its
    /// indentation, and fences nothing; a line that is not one (two backticks, a code span, a
    /// backtick after its text, an escaped one) is left as it is.
    #[test]
    fn escaping_leaves_no_fence_and_changes_nothing_else() {
        let text = "Write\n```\ncode, then\n  ````python\n``\n```a`\nx ```\n\\```\n";
        let escaped = escape_fences(text);
        assert_eq!(
            escaped,
            "Write\n\\```\ncode, then\n  \\````python\n``\n```a`\nx ```\n\\```\n"
        );
        assert!(escaped.lines().all(|line| fence_line(line).is_none()));
        assert!(matches!(escape_fences(&escaped), Cow::Borrowed(_)));
        assert!(matches!(escape_fences("no fence\n``\n"), Cow::Borrowed(_)));
        assert_eq!(fence_line(" ```python "), Some((3, "python")));
        assert_eq!(fence_line("````"), Some((4, "")));
    }

    /// The document's text is escaped before each block and at the end, each line once; the
    /// blocks written through [`Prose`] are not, and are where [`byte_spans`] finds code.
    #[test]
    fn prose_is_escaped_and_blocks_are_not() {
        let mut out = String::from("Write\n```\nthen");
        let mut prose = Prose::default();
        let code = prose.fence(&mut out, "```\nx\n```");
        let html = prose.push_set_apart(&mut out, "a\n\\```\n```\ny\n```");
        // A blank block writes nothing: the line it stood in is read whole.
        out.push_str("``");
        let empty = prose.fence(&mut out, " \n");
        out.push_str("`\n~~~\n````\n");
        prose.end(&mut out);
        assert_eq!(
            out,
            "Write\n\\```\nthen\n````\n```\nx\n```\n````\n\
             a\n\\```\n```\ny\n```\n\\```\n~~~\n\\````\n"
        );
        assert_eq!(&out[code.clone()], "````\n```\nx\n```\n````\n");
        assert_eq!(&out[html.clone()], "a\n\\```\n```\ny\n```\n");
        assert!(empty.is_empty());
        let y = html.start + "a\n\\```\n".len()..html.end;
        assert_eq!(byte_spans(&out), [code, y]);
    }

    #[test]
    fn a_block_reads_as_prose_by_its_lines_and_symbols() {
        for prose in [
            "Dear all, the meeting moves to Thursday this week.\nPlease tell me if that does \
             not suit you, and I will find another day.",
            "The quick brown fox jumps over the lazy dog, and then\nit runs back home to sleep.",
        ] {
            assert!(reads_as_prose(prose), "{prose}");
        }
        for code in [
            ">>> import json\n>>> json.dumps({\"a\": 1}, sort_keys=True)\n'{\"a\": 1}'",
            "int main()\n{\n  return 0;\n}",
            "sed -n 1p file",
            "puts(\"The call returned without an error at all.\");\nreturn rc;",
            "key = value\nother_key = another value here.",
            "frob -l 5 notes.txt   # the default level of notes.txt becomes 5.",
            "A sentence alone on its line, as long as it likes to be.",
            "",
        ] {
            assert!(!reads_as_prose(code), "{code}");
        }
    }
}
