//! Plain text wrapped at 72-80 columns to one line per paragraph, as the Markdown and HTML
//! extractors give their blocks, so that a sentence is never cut where the author's editor
//! wrapped it (a licence's "...any\npatent must be licensed..." quoted from "patent").
//!
//! A line joins the one before it (with one space, its indentation dropped) unless something
//! starts there: a blank line ends a paragraph; a list item (`-`, `*`, `1.`, `(a)`), a heading
//! (`#`, a line in capitals, a `===`/`---` underline), a quote (`>`) or a table row (`|`)
//! starts a line of its own; a line indented deeper than the one before starts a paragraph
//! (an indented block, a centred title), except the continuation of a list item at its text's
//! column; a line indented less than the one before starts one too, except after a
//! paragraph's first line, which is often indented alone. Code the text fences itself (```` ```
//! ```` lines, [`super::fence`]) is kept line by line, as written. A paragraph that reads as a
//! heading ([`reads_as_heading`]: a few words ending no sentence, or a FAQ's question) with
//! blank lines around it, or a line at the margin after a blank one with lines indented under
//! it, is set apart by blank lines, as the other kinds set headings apart.
//!
//! A record of fields (RFC 822's and Debian's `Package: xz-utils` / `Installed-Size: 1226`
//! stanzas, a package's metadata header) keeps a line per field, its wrapped continuation
//! joined to it, and is set apart by blank lines, so that one field never runs into the next
//! and a reader knows which record a field is of ([`field_key`]). Pure text work.

use std::collections::HashMap;

use super::fence;
use crate::text::is_key;

/// The text with each paragraph on one line, blank lines gone; every other character kept.
pub fn join_wrapped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The open paragraph: its first line's indentation and list-item text column, and the
    // previous line's indentation and whether it ends the paragraph.
    let mut open: Option<Paragraph> = None;
    let fenced = fence::spans(text.split('\n'));
    let mut fences = fenced.iter().peekable();
    let records = records(text);
    let mut field = Field::default();
    // A record or a heading is set apart: the paragraph after one opens after a blank line.
    let mut after_apart = false;
    // The line before was blank, or there was none.
    let mut blank_before = true;
    for (k, raw) in text.split('\n').enumerate() {
        let line = raw.trim_end();
        let content = line.trim_start();
        let was_blank = std::mem::replace(&mut blank_before, content.is_empty());
        while fences.next_if(|f| f.end <= k).is_some() {}
        if fences.peek().is_some_and(|f| f.contains(&k)) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
            open = None;
            continue;
        }
        if content.is_empty() {
            after_apart |= open.take().is_some_and(|p| p.set_apart(&mut out));
            continue;
        }
        if let Some(&opens) = records.get(&k) {
            field.push(&mut out, line, opens);
            after_apart = true;
            open = None;
            continue;
        }
        let indent = line.chars().take_while(|c| c.is_whitespace()).count();
        let joins = open.as_ref().is_some_and(|p| p.takes(content, indent));
        // A line at the margin with lines indented under it heads them (`NAME` over `ls -
        // list directory contents`, `test: test [expr]` over its help).
        let heads = |p: &Paragraph| p.lines == 1 && p.last_indent == 0 && indent > 0;
        if !joins
            && open
                .as_ref()
                .is_some_and(|p| heads(p) && p.set_apart(&mut out))
        {
            after_apart = true;
        }
        if joins {
            out.push(' ');
        } else if std::mem::take(&mut after_apart) {
            out.push_str("\n\n");
        } else if !out.is_empty() {
            out.push('\n');
        }
        let start = out.len();
        out.push_str(content);
        open = match open.filter(|_| joins) {
            Some(mut p) => {
                p.lines += 1;
                p.last_indent = indent;
                p.closed = stands_alone(content);
                Some(p)
            }
            None => Some(Paragraph {
                item_column: item_text_column(content)
                    .or_else(|| second_column(content).map(|at| content[..at].chars().count()))
                    .map(|c| indent + c),
                last_indent: indent,
                lines: 1,
                closed: content.starts_with('#') || stands_alone(content),
                start,
                after_blank: was_blank,
            }),
        };
    }
    if let Some(p) = open {
        p.set_apart(&mut out);
    }
    out
}

/// Ends the line, unless it is ended: what a reader writes after each block of a document.
pub fn line_break(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

/// Ends the line and leaves one blank line, around a heading: it is a paragraph of its own,
/// never the start of the sentence under it ("2.7 Thread Safety" over "libffi is not...").
pub fn paragraph_break(text: &mut String) {
    if text.is_empty() {
        return;
    }
    while !text.ends_with("\n\n") {
        text.push('\n');
    }
}

/// The most words of a heading.
pub const HEADING_WORDS: usize = 10;

/// The most words of a question that heads its answer, as a FAQ's do.
const QUESTION_WORDS: usize = 30;

/// Whether a paragraph reads as a heading: a few words that end no sentence (`Version 4.3
/// (19 Jan 2020)`, an outline's `* Noteworthy changes in release 1.12`), or a question (a
/// FAQ's, which heads its answer); not a table's row nor an address.
pub fn reads_as_heading(paragraph: &str) -> bool {
    let line = paragraph.trim();
    let words = line.split_whitespace().count();
    let question = line.ends_with('?') && words <= QUESTION_WORDS;
    let titled =
        (1..=HEADING_WORDS).contains(&words) && !line.ends_with(['.', '!', '?', ':', ';', ',']);
    let opens = line
        .trim_start_matches(['*', ' '])
        .starts_with(char::is_alphanumeric);
    (question || titled) && opens && !line.contains('|') && !line.contains("://")
}

/// The most characters of a field's key.
const KEY_LENGTH: usize = 40;

/// The length of a record field's key with its colon, when `content` opens with one: a word
/// that starts with a capital, of letters, digits and `-` (`Installed-Size:`, `Files:`), then
/// the line's end or a space.
pub fn field_key(content: &str) -> Option<usize> {
    let colon = content.find(':')?;
    let key = &content[..colon];
    let rest = &content[colon + 1..];
    let named = key.starts_with(|c: char| c.is_ascii_uppercase())
        && key.len() <= KEY_LENGTH
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (named && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some(colon + 1)
}

/// The lines of `text` that are in records of fields, each with whether it opens one: a
/// paragraph whose lines at the margin are all fields ([`field_key`]), two at least, its
/// first among them, and whose other lines are indented (a field's continuation).
fn records(text: &str) -> HashMap<usize, bool> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = HashMap::new();
    let mut k = 0;
    while k < lines.len() {
        let end = (k..lines.len())
            .find(|&j| lines[j].trim().is_empty())
            .unwrap_or(lines.len());
        let block = &lines[k..end];
        let at_margin = |l: &&str| !l.starts_with([' ', '\t']);
        let fields = block.iter().filter(|l| at_margin(l)).count();
        let record = block.first().is_some_and(at_margin)
            && fields >= 2
            && block
                .iter()
                .filter(|l| at_margin(l))
                .all(|l| field_key(l).is_some());
        if record {
            out.extend((k..end).map(|j| (j, j == k)));
        }
        k = end + 1;
    }
    out
}

/// Where a record's field stands as its lines are joined.
#[derive(Default)]
struct Field {
    /// Continuation lines taken since the field's line.
    continued: usize,
    /// A `.` line broke the field's text: the next line opens a paragraph of it.
    broken: bool,
}

impl Field {
    /// Adds a record's line to `out`: a field on a line of its own (after a blank line when
    /// it `opens` a record); a continuation joined to the line before, but on a line of its
    /// own after a `.` line (Debian's paragraph break), when it opens a list item, or when,
    /// the field's first, it opens with a capital (a description after its synopsis, a
    /// licence's text after its name).
    fn push(&mut self, out: &mut String, line: &str, opens: bool) {
        let content = line.trim_start();
        let separator = if content.len() == line.len() {
            *self = Field::default();
            match (opens, out.is_empty()) {
                (_, true) => "",
                (true, false) => "\n\n",
                (false, false) => "\n",
            }
        } else if content == "." {
            self.broken = true;
            return;
        } else {
            let apart = std::mem::take(&mut self.broken)
                || (self.continued == 0 && content.starts_with(char::is_uppercase))
                || item_text_column(content).is_some();
            self.continued += 1;
            if apart { "\n" } else { " " }
        };
        out.push_str(separator);
        out.push_str(content);
    }
}

struct Paragraph {
    /// Where the text of a list item starts, when the paragraph is one.
    item_column: Option<usize>,
    last_indent: usize,
    lines: usize,
    /// The last line stands alone (a heading, an underline): nothing joins it.
    closed: bool,
    /// Where it starts in the text written.
    start: usize,
    /// A blank line (or the text's start) is before it.
    after_blank: bool,
}

impl Paragraph {
    /// Sets this paragraph, which a blank line (or the text's end) ends, apart by blank lines
    /// in `out` when it reads as a heading and a blank line is before it too, as the other
    /// kinds set their headings apart. Whether it did.
    fn set_apart(&self, out: &mut String) -> bool {
        let heading = self.after_blank && reads_as_heading(&out[self.start..]);
        if heading && self.start > 0 && !out[..self.start].ends_with("\n\n") {
            out.insert(self.start, '\n');
        }
        heading
    }

    /// Whether a line with `content` at `indent` continues this paragraph.
    fn takes(&self, content: &str, indent: usize) -> bool {
        if self.closed || starts_block(content) || stands_alone(content) {
            return false;
        }
        if indent > self.last_indent {
            return self.item_column == Some(indent);
        }
        indent == self.last_indent || self.lines == 1
    }
}

/// A list item, a quote, a table row, a Markdown heading or a line of two columns starts
/// here.
fn starts_block(content: &str) -> bool {
    matches!(content.chars().next(), Some('#' | '>' | '|'))
        || item_text_column(content).is_some()
        || second_column(content).is_some()
}

/// The most characters of a two-column line's first column.
const FIRST_COLUMN: usize = 40;

/// Where the second column of `content` starts (a byte offset), when it is a line of two
/// columns, as a program's `--help` and a table of codes or settings write them: a term (an
/// option and its argument, `-m, --max-time <seconds>`, of at most four words; or one code
/// word, `2`, `%Z`, `PASS_MAX_DAYS`), a gap of two spaces or a tab, then its text (`Maximum
/// time allowed for transfer`). Words that justified text spaces apart (`Permission  is
/// hereby granted`) are no term.
pub fn second_column(content: &str) -> Option<usize> {
    let Some(gap) = first_gap(content) else {
        return after_options(content);
    };
    let term = &content[..gap];
    let text = content[gap..].trim_start();
    let words = term.split_whitespace().count();
    let option = (is_option(term) || term.starts_with('+')) && words <= 4;
    let code = words == 1 && is_code_word(term);
    let opens = text.starts_with(|c: char| c.is_alphanumeric() || matches!(c, '(' | '[' | '\''));
    let fits = term.chars().count() <= FIRST_COLUMN;
    (fits && (option || code) && opens).then(|| content.len() - text.len())
}

/// Where the first gap of `content` (two spaces or a tab) is that no option follows: wget
/// writes `-r,  --recursive    specify recursive download`.
fn first_gap(content: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let rest = &content[from..];
        let gap = from + rest.find("  ").into_iter().chain(rest.find('\t')).min()?;
        let after = content[gap..].trim_start();
        match after.split_whitespace().next().is_some_and(is_option) {
            true => from = content.len() - after.len(),
            false => return Some(gap),
        }
    }
}

/// Whether `word` opens with a command-line option: `-m,`, `--max-time`, `-1`.
fn is_option(word: &str) -> bool {
    word.starts_with('-')
        && word
            .trim_start_matches('-')
            .starts_with(char::is_alphanumeric)
}

/// Where the text after a line's options starts, when one space sets it apart (curl's
/// `-m, --max-time <fractional seconds> Maximum time allowed for transfer`): past the options
/// (`-m,`, `--max-time`, `--compress[=METHOD]`) and their arguments (`<fractional seconds>`,
/// `FILE`, `[=#]`), at a word in capitals, as such a list opens each text; none when nothing
/// or a word in lower case follows them (a man page's tag, `-b bits`, whose argument is a
/// word and whose text is on the lines after it).
fn after_options(content: &str) -> Option<usize> {
    if !content.split_whitespace().next().is_some_and(is_option) {
        return None;
    }
    let mut depth = 0usize;
    let mut at = 0;
    for word in content.split_inclusive(char::is_whitespace) {
        let bare = word.trim();
        let argument = depth > 0
            || bare.starts_with(['<', '[', '{'])
            || (bare.chars().any(char::is_alphabetic) && !bare.chars().any(char::is_lowercase));
        if !bare.is_empty() && !is_option(bare) && !argument {
            return bare.starts_with(char::is_uppercase).then_some(at);
        }
        depth += bare.matches(['<', '[', '{']).count();
        depth = depth.saturating_sub(bare.matches(['>', ']', '}']).count());
        at += word.len();
    }
    None
}

/// A word written as code or a code is: a number (`2`), a setting's key ([`is_key`]:
/// `UID_MAX`, `max_size`), or a format's directive (`%Z`).
fn is_code_word(word: &str) -> bool {
    word.chars().all(|c| c.is_ascii_digit()) || is_key(word) || word.starts_with('%')
}

/// A line that is a heading or a rule on its own: an underline or rule (`===`, `---`, `* *
/// *`), or a heading in capitals (`TERMS AND CONDITIONS`: four letters or more, none in lower
/// case, and no sentence punctuation at its end, which a wrapped `USA.` has).
fn stands_alone(content: &str) -> bool {
    let rule = content
        .chars()
        .all(|c| matches!(c, '=' | '-' | '*' | '_' | '~' | ' '));
    let letters = content.chars().filter(|c| c.is_alphabetic()).count();
    let capitals = letters >= 4
        && !content.chars().any(char::is_lowercase)
        && !content.ends_with(['.', ',', ';', ':', '!', '?']);
    rule || capitals
}

/// Where the text of a list item starts (after its marker and the spaces after it), when
/// `content` starts with one: `-`, `*`, `+`, `•`, `–` or an enumerator (`1.`, `12)`, `a.`,
/// `(iv)`), then white space.
fn item_text_column(content: &str) -> Option<usize> {
    let marker = marker_len(content)?;
    let rest = &content[marker..];
    let spaces = rest.chars().take_while(|c| *c == ' ' || *c == '\t').count();
    (spaces > 0 && spaces < rest.len()).then(|| content[..marker].chars().count() + spaces)
}

/// The byte length of a list marker at the start of `content`.
fn marker_len(content: &str) -> Option<usize> {
    let first = content.chars().next()?;
    if matches!(first, '-' | '*' | '+' | '•' | '–') {
        return Some(first.len_utf8());
    }
    let (open, body) = match content.strip_prefix('(') {
        Some(body) => (1, body),
        None => (0, content),
    };
    let label = body
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_alphanumeric())
        .last()
        .map(|(i, _)| i + 1)?;
    let word = &body[..label];
    let numeric = word.len() <= 2 && word.bytes().all(|b| b.is_ascii_digit());
    let letter = word.len() == 1 && word.bytes().all(|b| b.is_ascii_lowercase());
    let roman = word.len() <= 4 && word.bytes().all(|b| b"ivx".contains(&b));
    let close = body[label..].chars().next()?;
    let closes = matches!((open, close), (1, ')') | (0, '.' | ')'));
    (closes && (numeric || letter || roman)).then_some(open + label + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A release's heading, an outline's, a FAQ's question and a line at the margin over
    /// lines indented under it are set apart as headings; a short sentence, a heading glued
    /// to the text under it and a lone address are not.
    #[test]
    fn a_heading_between_blank_lines_is_set_apart() {
        let text = "GNU frob NEWS\n\n* Noteworthy changes in release 1.2 (2022-04-07)\n\n\
                    \x20 'frob -l' no longer\n  misreports lengths.\n\n\
                    \x201. Is frob subject to export controls?  What is\n    its ECCN?\n\n\
                    \x20   frob is classified as EAR99.\n\nYes. It is.\n\n\
                    Version 1.1\nfixed the build.\n\nhttps://frob.example/news\n\n\
                    test: test [expr]\n    Evaluate conditional\n    expression.\n";
        assert_eq!(
            join_wrapped(text),
            "GNU frob NEWS\n\n* Noteworthy changes in release 1.2 (2022-04-07)\n\n\
             'frob -l' no longer misreports lengths.\n\n\
             1. Is frob subject to export controls?  What is its ECCN?\n\n\
             frob is classified as EAR99.\nYes. It is.\nVersion 1.1 fixed the build.\n\
             https://frob.example/news\n\ntest: test [expr]\n\nEvaluate conditional expression."
        );
    }

    #[test]
    fn wrapped_paragraphs_become_one_line_each() {
        let text = "                    THE EXAMPLE PUBLIC LICENCE\n\
                    \x20                      Version 2, June 2026\n\
                    \n\
                    \x20 Finally, any free program is threatened constantly by software\n\
                    patents.  To prevent this, we have made it clear that any\n\
                    patent must be licensed for everyone's free use or not licensed at all.\n\
                    \n\
                    \x20 The precise terms follow.\r\n";
        assert_eq!(
            join_wrapped(text),
            "THE EXAMPLE PUBLIC LICENCE\nVersion 2, June 2026\n\
             Finally, any free program is threatened constantly by software patents.  To \
             prevent this, we have made it clear that any patent must be licensed for \
             everyone's free use or not licensed at all.\n\
             The precise terms follow."
        );
    }

    #[test]
    fn items_headings_quotes_and_indented_blocks_break_paragraphs() {
        let text = "Intro text that wraps\nonto a second line:\n\
                    \x20   an indented block\n\
                    \x20   of two lines\n\
                    back at the margin\n\
                    - first item that wraps\n  onto its text column\n\
                    * second item\n\
                    12. numbered item\n\
                    (a) lettered item\n\
                    TERMS AND CONDITIONS\n\
                    Title\n=====\n\
                    > a quote\n| a | row |\n# heading\n\
                    2014 was the year in the\nUSA.\nIt began.";
        assert_eq!(
            join_wrapped(text),
            "Intro text that wraps onto a second line:\n\
             an indented block of two lines\n\
             back at the margin\n\
             - first item that wraps onto its text column\n\
             * second item\n\
             12. numbered item\n\
             (a) lettered item\n\
             TERMS AND CONDITIONS\n\
             Title\n=====\n\
             > a quote\n| a | row |\n# heading\n\
             2014 was the year in the USA. It began."
        );
    }

    /// A line of two columns (an option and its text, a code and its meaning) is a line of
    /// its own; its text's continuation at the second column joins it. Words justified apart
    /// and a sentence's two spaces make no columns.
    #[test]
    fn lines_of_two_columns_stay_apart() {
        let help = "  -A, --catenate   append tar files to\n                   an archive\n\
                    \x20 -c, --create     create a new archive\n\
                    \x20 -r,  --recursive  recurse\n  -l,  --level=N  depth\n\
                    -m, --max-time <seconds> Maximum time allowed\n\
                    \x200  if OK,\n\x202  if serious trouble.\n";
        assert_eq!(
            join_wrapped(help),
            "-A, --catenate   append tar files to an archive\n\
             -c, --create     create a new archive\n\
             -r,  --recursive  recurse\n-l,  --level=N  depth\n\
             -m, --max-time <seconds> Maximum time allowed\n\
             0  if OK,\n2  if serious trouble."
        );
        let curl = "-m, --max-time <fractional seconds> Maximum time allowed";
        assert_eq!(second_column(curl), curl.find("Maximum"));
        assert_eq!(second_column("PASS_WARN_AGE\t7"), Some(14));
        let wget = "-r,  --recursive    specify recursive download";
        assert_eq!(second_column(wget), wget.find("specify"));
        for prose in [
            "Permission  is hereby granted, free of charge",
            "It began.  Then it ended.",
            "--verbose",
            "-b bits",
            "of the  Software",
        ] {
            assert_eq!(second_column(prose), None, "{prose}");
        }
    }

    /// A record keeps a line per field, its wrapped value joined, a description apart from
    /// its synopsis, at each `.` line and at each list item; records stand apart by blank
    /// lines. One field line and prose are no record.
    #[test]
    fn records_keep_a_line_per_field_and_stand_apart() {
        let text = "Intro line.\n\n\
                    Package: xz-utils\nInstalled-Size: 1226\nDepends: libc6 (>= 2.34),\n liblzma5\n\
                    Description: XZ-format compression utilities\n XZ is the successor\n to LZMA.\n\
                    \x20.\n This package provides the tools.\n\n\
                    Package: gzip\nVersion: 1.12-1\nDescription: GNU compression\n\
                    \x20 * gzip: compress\n    files\n  * zcat: show them\n\n\
                    After the records.\n\nNote: one field line\nwraps on.";
        assert_eq!(
            join_wrapped(text),
            "Intro line.\n\nPackage: xz-utils\nInstalled-Size: 1226\n\
             Depends: libc6 (>= 2.34), liblzma5\n\
             Description: XZ-format compression utilities\nXZ is the successor to LZMA.\n\
             This package provides the tools.\n\nPackage: gzip\nVersion: 1.12-1\n\
             Description: GNU compression\n* gzip: compress files\n* zcat: show them\n\n\
             After the records.\nNote: one field line wraps on."
        );
        assert_eq!(field_key("Installed-Size: 1226"), Some(15));
        assert_eq!(field_key("Description:"), Some(12));
        for not_a_field in [
            "http://example.org",
            "note: lower case",
            "Key:value",
            "Two words: x",
        ] {
            assert_eq!(field_key(not_a_field), None, "{not_a_field}");
        }
    }

    /// Fenced code keeps its lines and their indentation; prose around it is joined.
    #[test]
    fn fenced_code_keeps_its_lines() {
        let text = "Run it as\nfollows:\n```sh\n  make \\\n    all\n\n```\nIt builds\neverything.";
        assert_eq!(
            join_wrapped(text),
            "Run it as follows:\n```sh\n  make \\\n    all\n\n```\nIt builds everything."
        );
    }

    #[test]
    fn markers_need_white_space_after_them() {
        assert_eq!(item_text_column("- item"), Some(2));
        assert_eq!(item_text_column("iv.  item"), Some(5));
        assert_eq!(item_text_column("(ii) item"), Some(5));
        for not_an_item in [
            "-item",
            "3.5 V is enough",
            "e.g. this",
            "word. next",
            "-",
            "100. x",
        ] {
            assert_eq!(item_text_column(not_an_item), None, "{not_an_item}");
        }
        assert_eq!(join_wrapped(""), "");
        assert_eq!(join_wrapped("\n\n  \n"), "");
    }
}
