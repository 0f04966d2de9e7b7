//! reStructuredText to plain text, as Sphinx or docutils would show it: one line per block,
//! a section title set apart by blank lines (the first one the document's title), inline
//! markup read as [`super::rst_inline`] reads it.
//!
//! What is not prose is fenced ([`super::fence`]): a literal block (after `::`), a doctest
//! (`>>>`), the body of a code directive (`code-block`, `doctest`, `math`, ...) and the
//! signature an object directive describes (`.. function:: urlopen(url)`, `.. option:: -v`),
//! whose body is prose. A version directive reads as Sphinx shows it ("New in version 2.0: ...",
//! "Changed in version 2.1: ..."), which the offline engine knows is no answer. An admonition
//! (`note`, `warning`, ...) is its text; a table (grid, simple, `csv-table`, `list-table`) a line
//! per row; a field (`:param timeout: ...`) and a definition list's term keep their names.
//! Comments, hyperlink targets, substitution definitions and what only builds a site
//! (`toctree`, `image`, `autoclass`, `include`, ...) show nothing.
//!
//! Nesting deeper than [`MAX_DEPTH`] is read as plain lines, so a hostile document cannot
//! make the reader recurse without bound. Pure text work: this module does not read files.

use std::collections::HashMap;

use super::paragraphs::{line_break, paragraph_break};
use super::{fence, rst_inline};

/// How deep blocks are read inside one another; deeper ones are plain lines.
const MAX_DEPTH: usize = 24;

/// Directives whose body is code (`code-block`, `doctest`, ...).
const CODE: &[&str] = &[
    "code",
    "code-block",
    "code-cell",
    "console",
    "doctest",
    "ipython",
    "jupyter-execute",
    "math",
    "parsed-literal",
    "productionlist",
    "prompt",
    "sourcecode",
    "testcleanup",
    "testcode",
    "testoutput",
    "testsetup",
];

/// Directives that describe an object: their argument is its signature, their body prose.
const SIGNATURES: &[&str] = &[
    "attribute",
    "class",
    "classmethod",
    "cmdoption",
    "confval",
    "data",
    "decorator",
    "describe",
    "envvar",
    "event",
    "exception",
    "function",
    "method",
    "object",
    "option",
    "property",
    "setting",
    "staticmethod",
];

/// Directives that show nothing a reader reads: their argument is a path, a name or a
/// setting, their body (if any) a list of names or markup for another writer.
const UNSHOWN: &[&str] = &[
    "codeauthor",
    "contents",
    "currentmodule",
    "default-role",
    "graphviz",
    "highlight",
    "image",
    "include",
    "index",
    "inheritance-diagram",
    "literalinclude",
    "meta",
    "moduleauthor",
    "raw",
    "role",
    "sectionauthor",
    "sectnum",
    "tabularcolumns",
    "toctree",
];

/// Directives whose argument is no text but whose body is (a figure's caption, a module's
/// description, what `only` keeps).
const BODY_ONLY: &[&str] = &[
    "compound",
    "container",
    "figure",
    "hlist",
    "ifconfig",
    "module",
    "only",
    "rst-class",
    "tabs",
];

/// Directives whose argument is a title over their body.
const TITLED: &[&str] = &[
    "admonition",
    "dropdown",
    "rubric",
    "sidebar",
    "tab",
    "table",
    "topic",
];

/// The version notes and what Sphinx shows for each.
const VERSIONS: &[(&str, &str)] = &[
    ("versionadded", "New in version"),
    ("versionchanged", "Changed in version"),
    ("deprecated", "Deprecated since version"),
    ("versionremoved", "Removed in version"),
];

/// The plain text of a reStructuredText document and its first section title, if any.
pub fn to_text(source: &str) -> (Option<String>, String) {
    let reader = read(source);
    (reader.title, reader.text)
}

/// The document read: its text, the document's own lines that read as fences escaped.
fn read(source: &str) -> Reader {
    let lines: Vec<String> = source.lines().map(expand_tabs).collect();
    let mut reader = Reader {
        substitutions: substitutions(&lines),
        ..Reader::default()
    };
    reader.blocks(&lines, 0);
    reader.prose.end(&mut reader.text);
    reader
}

#[derive(Default)]
struct Reader {
    text: String,
    /// Where the document's own text written since the last fenced block starts.
    prose: fence::Prose,
    title: Option<String>,
    /// `|name|` and the text it is replaced by.
    substitutions: HashMap<String, String>,
    /// The byte ranges of the blocks fenced (what the tests find again with
    /// [`fence::byte_spans`]).
    #[cfg(test)]
    fenced: Vec<std::ops::Range<usize>>,
}

impl Reader {
    /// Reads `lines` (their block's indentation removed) block by block.
    fn blocks(&mut self, lines: &[String], depth: usize) {
        if depth >= MAX_DEPTH {
            for line in lines.iter().filter(|l| !l.trim().is_empty()) {
                self.line(line.trim());
            }
            return;
        }
        let mut at = 0;
        while at < lines.len() {
            at = match lines[at].trim().is_empty() {
                true => at + 1,
                false => self.block(lines, at, depth),
            };
        }
    }

    /// Reads the block that starts at line `at`: the index of the line after it.
    fn block(&mut self, lines: &[String], at: usize, depth: usize) -> usize {
        let line = &lines[at];
        if indent(line) > 0 {
            // A block quote: its text, its indentation aside.
            let end = body_end(lines, at);
            self.blocks(&dedent(&lines[at..end], None), depth + 1);
            return end;
        }
        if let Some(end) = self.section(lines, at) {
            return end;
        }
        if line == ".." || line.starts_with(".. ") {
            return self.explicit(lines, at, depth);
        }
        if let Some(end) = self.table(lines, at) {
            return end;
        }
        if let Some(end) = self.item(lines, at, depth) {
            return end;
        }
        self.paragraph(lines, at, depth)
    }

    /// A section title, over- and underlined or underlined, or a transition (a line of
    /// punctuation alone): the index of the line after it.
    fn section(&mut self, lines: &[String], at: usize) -> Option<usize> {
        let next = lines.get(at + 1);
        if let Some(mark) = adornment(&lines[at]) {
            let title = next.filter(|t| !t.trim().is_empty() && adornment(t).is_none());
            return match (title, lines.get(at + 2)) {
                (Some(title), Some(under)) if adornment(under) == Some(mark) => {
                    self.heading(title.trim());
                    Some(at + 3)
                }
                _ if next.is_none_or(|l| l.trim().is_empty()) => Some(at + 1),
                _ => None,
            };
        }
        let under = next?;
        adornment(under)?;
        let title = lines[at].trim();
        let long_enough = under.chars().count() >= title.chars().count().min(4);
        long_enough.then(|| {
            self.heading(title);
            at + 2
        })
    }

    /// An explicit markup block (`.. ` and the lines indented under it): a directive, a
    /// footnote or citation, or what shows nothing (a comment, a target, a substitution).
    fn explicit(&mut self, lines: &[String], at: usize, depth: usize) -> usize {
        let end = body_end(lines, at + 1);
        let first = lines[at][2..].trim();
        let body = dedent(&lines[at + 1..end], None);
        if let Some((name, argument)) = directive_name(first) {
            self.directive(name, argument, &body, depth);
        } else if let Some(note) = footnote(first) {
            self.blocks(&prepend(note, body), depth + 1);
        }
        end
    }

    /// A directive: `name` (any case, its domain aside: `py:function` is `function`), the
    /// `argument` on its first line and the `body` indented under it.
    fn directive(&mut self, name: &str, argument: &str, body: &[String], depth: usize) {
        let name = name.to_ascii_lowercase();
        let (domain, base) = match name.rsplit_once(':') {
            Some((domain, base)) => (Some(domain), base),
            None => (None, name.as_str()),
        };
        let parts = Parts::of(argument, body);
        if let Some((_, label)) = VERSIONS.iter().find(|(v, _)| *v == base) {
            self.version(label, &parts, depth);
        } else if CODE.contains(&base) {
            self.code(&[parts.head, parts.content].concat());
        } else if base.starts_with("auto") || UNSHOWN.contains(&base) {
            // Builds the site, shows no text.
        } else if BODY_ONLY.contains(&base) {
            self.blocks(&parts.content, depth + 1);
        } else if SIGNATURES.contains(&base) || domain.is_some() {
            self.code(&parts.arguments());
            self.blocks(&parts.content, depth + 1);
        } else if base == "csv-table" {
            self.csv_table(&parts);
        } else if base == "list-table" {
            self.set_apart(&parts.argument);
            self.list_table(&parts.content);
        } else if TITLED.contains(&base) {
            self.set_apart(&parts.arguments().join(" "));
            self.blocks(&parts.content, depth + 1);
        } else {
            // An admonition (`note`, `warning`, ...) or a directive this reader does not know:
            // what follows its name is its text.
            self.blocks(&parts.text(), depth + 1);
        }
    }

    /// A version note as Sphinx shows it: "Changed in version 2.1: " and its text, or "New in
    /// version 2.0." alone.
    fn version(&mut self, label: &str, parts: &Parts, depth: usize) {
        let (number, said) = parts
            .argument
            .split_once(' ')
            .map_or((parts.argument.as_str(), ""), |(n, s)| (n, s.trim()));
        let mut text = parts.text_after(said);
        match text.iter_mut().find(|l| !l.trim().is_empty()) {
            Some(first) => *first = format!("{label} {number}: {}", first.trim_start()),
            None => text = vec![format!("{label} {number}.")],
        }
        self.blocks(&text, depth + 1);
    }

    /// A list item, a field (`:timeout: 30`) or an option (`-v, --verbose  Say more.`): its
    /// text, the field's name or the option before it. The index of the line after it.
    fn item(&mut self, lines: &[String], at: usize, depth: usize) -> Option<usize> {
        let line = &lines[at];
        let end = body_end(lines, at + 1);
        let rest = &lines[at + 1..end];
        if let Some((text_at, column)) = list_marker(line) {
            let enumerated = !line.starts_with(['-', '*', '+', '•', '‣', '⁃']);
            let next = lines.get(at + 1);
            let ends = next.is_none_or(|l| indent(l) > 0 || l.trim().is_empty());
            if enumerated && !ends && next.is_some_and(|l| list_marker(l).is_none()) {
                return None;
            }
            line_break(&mut self.text);
            let body = prepend(&line[text_at..], dedent(rest, Some(column)));
            self.blocks(&body, depth + 1);
            return Some(end);
        }
        let (label, text) = match field(line) {
            Some((name, text)) => (format!("{name}:"), text),
            None => option_item(line, rest).map(|(options, text)| (options.to_string(), text))?,
        };
        self.labelled(&label, &prepend(text, dedent(rest, None)), depth);
        Some(end)
    }

    /// A field's or an option's body, its first paragraph on the line of its `label`.
    fn labelled(&mut self, label: &str, body: &[String], depth: usize) {
        let length = paragraph_length(body, 0);
        let (text, literal) = paragraph_text(&body[..length]);
        self.line(format!("{label} {text}").trim());
        let next = match literal {
            true => self.literal(body, length),
            false => length,
        };
        self.blocks(&body[next..], depth + 1);
    }

    /// A paragraph, a definition list's item, a doctest or a line block.
    fn paragraph(&mut self, lines: &[String], at: usize, depth: usize) -> usize {
        let length = paragraph_length(lines, at);
        let end = at + length;
        let line = &lines[at];
        if line.starts_with(">>>") {
            self.code(&lines[at..end]);
            return end;
        }
        if line == "|" || line.starts_with("| ") {
            return self.line_block(lines, at);
        }
        if length == 1 && lines.get(end).is_some_and(|l| indent(l) > 0) {
            // A term, set apart over the definition indented under it, as a heading is.
            let definition_end = body_end(lines, end);
            self.set_apart(line);
            self.blocks(&dedent(&lines[end..definition_end], None), depth + 1);
            return definition_end;
        }
        let (text, literal) = paragraph_text(&lines[at..end]);
        self.line(&text);
        match literal {
            true => self.literal(lines, end),
            false => end,
        }
    }

    /// The literal block after a paragraph that ends in `::`, indented or quoted (each line
    /// opens with the same punctuation), fenced: the index of the line after it.
    fn literal(&mut self, lines: &[String], from: usize) -> usize {
        let Some(start) = (from..lines.len()).find(|&k| !lines[k].trim().is_empty()) else {
            return lines.len();
        };
        let line = &lines[start];
        if indent(line) > 0 {
            let end = body_end(lines, start);
            self.code(&dedent(&lines[start..end], None));
            return end;
        }
        let Some(quote) = line.chars().next().filter(char::is_ascii_punctuation) else {
            return start;
        };
        let length = lines[start..]
            .iter()
            .take_while(|l| l.starts_with(quote))
            .count();
        self.code(&lines[start..start + length]);
        start + length
    }

    /// Lines that each start with `|`, as written, an indented one continuing the one above.
    fn line_block(&mut self, lines: &[String], at: usize) -> usize {
        let end = (at..lines.len())
            .find(|&k| lines[k].trim().is_empty())
            .unwrap_or(lines.len());
        let mut shown: Vec<String> = Vec::new();
        for line in &lines[at..end] {
            match line.strip_prefix('|') {
                Some(text) => shown.push(text.trim().to_string()),
                None => {
                    if let Some(last) = shown.last_mut() {
                        last.push(' ');
                        last.push_str(line.trim());
                    }
                }
            }
        }
        for line in shown {
            self.line(&line);
        }
        end
    }
}

/// Tables: a line per row, its cells' text between spaces, as the other readers write them.
impl Reader {
    /// A grid or simple table that starts at line `at`: the index of the line after it.
    fn table(&mut self, lines: &[String], at: usize) -> Option<usize> {
        let line = &lines[at];
        let grid = line.starts_with('+')
            && line.ends_with('+')
            && line.len() > 2
            && line.chars().all(|c| "+-=".contains(c));
        if grid {
            return Some(self.grid_table(lines, at));
        }
        let columns = simple_columns(line)?;
        // It ends with a border before a blank line (or the end); a border without one is
        // text. Looking no further than that blank line keeps a hostile run of borders linear.
        let end = (at + 1..lines.len())
            .find(|&k| lines[k].trim().is_empty())
            .unwrap_or(lines.len());
        let closed = end > at + 1 && simple_columns(&lines[end - 1]).is_some();
        closed.then(|| self.simple_table(&lines[..end], at, &columns))
    }

    /// A grid table: its columns are where its first border has a `+`.
    fn grid_table(&mut self, lines: &[String], at: usize) -> usize {
        let edges: Vec<usize> = lines[at]
            .chars()
            .enumerate()
            .filter(|(_, c)| *c == '+')
            .map(|(k, _)| k)
            .collect();
        let end = (at..lines.len())
            .find(|&k| !lines[k].starts_with(['+', '|']))
            .unwrap_or(lines.len());
        let mut row = vec![String::new(); edges.len() - 1];
        for line in &lines[at + 1..end] {
            if line.starts_with('+') {
                self.row(&row);
                row.iter_mut().for_each(String::clear);
                continue;
            }
            let chars: Vec<char> = line.chars().collect();
            for (cell, pair) in row.iter_mut().zip(edges.windows(2)) {
                let text: String = chars
                    .get(pair[0] + 1..pair[1].min(chars.len()))
                    .unwrap_or_default()
                    .iter()
                    .collect();
                push_word(cell, text.trim().trim_matches('|').trim());
            }
        }
        self.row(&row);
        end
    }

    /// A simple table, from its border at `at` to the end of `lines`: columns under runs of
    /// `=`, a row whose first cell is blank continuing the one above.
    fn simple_table(&mut self, lines: &[String], at: usize, columns: &[usize]) -> usize {
        let mut row: Vec<String> = Vec::new();
        for line in &lines[at + 1..] {
            let rule = line.chars().all(|c| c == '=' || c == '-' || c == ' ');
            if line.trim().is_empty() || rule {
                continue;
            }
            let chars: Vec<char> = line.chars().collect();
            let cell = |k: usize| -> String {
                let from = columns[k].min(chars.len());
                let to = columns
                    .get(k + 1)
                    .map_or(chars.len(), |&c| c.min(chars.len()));
                chars[from..to]
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_string()
            };
            if !cell(0).is_empty() {
                self.row(&row);
                row = vec![String::new(); columns.len()];
            }
            for (k, text) in row.iter_mut().enumerate() {
                push_word(text, &cell(k));
            }
        }
        self.row(&row);
        lines.len()
    }

    /// A `csv-table`: its title, its `:header:` row, then a line per row of its body.
    fn csv_table(&mut self, parts: &Parts) {
        self.set_apart(&parts.argument);
        if let Some(header) = parts.option("header") {
            self.row(&csv_cells(header));
        }
        let mut row = String::new();
        let mut quotes = 0;
        for line in parts.content.iter().filter(|l| !l.trim().is_empty()) {
            push_word(&mut row, line.trim());
            quotes += line.matches('"').count();
            if quotes % 2 == 0 {
                self.row(&csv_cells(&row));
                row.clear();
            }
        }
        self.row(&csv_cells(&row));
    }

    /// A `list-table`: a bullet list of rows, each a bullet list of cells.
    fn list_table(&mut self, content: &[String]) {
        for row in list_items(content) {
            let cells: Vec<String> = list_items(&row).iter().map(|cell| joined(cell)).collect();
            self.row(&cells);
        }
    }

    fn row(&mut self, cells: &[String]) {
        let cells: Vec<&str> = cells
            .iter()
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .collect();
        self.line(&cells.join(" "));
    }
}

/// Writing the text.
impl Reader {
    /// A line of prose, its markup read.
    fn line(&mut self, text: &str) {
        let shown = rst_inline::shown(text.trim(), &self.substitutions);
        if shown.trim().is_empty() {
            return;
        }
        line_break(&mut self.text);
        self.text.push_str(shown.trim());
        self.text.push('\n');
    }

    /// A section title, set apart; the first one is the document's title.
    fn heading(&mut self, text: &str) {
        let shown = rst_inline::shown(text, &self.substitutions);
        if self.title.is_none() && !shown.trim().is_empty() {
            self.title = Some(shown.trim().to_string());
        }
        self.set_apart(text);
    }

    /// A title over a block (a topic's, a table's): a paragraph of its own.
    fn set_apart(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        paragraph_break(&mut self.text);
        self.line(text);
        paragraph_break(&mut self.text);
    }

    /// Code, between fence lines.
    fn code(&mut self, lines: &[String]) {
        let _block = self.prose.fence(&mut self.text, &lines.join("\n"));
        #[cfg(test)]
        if !_block.is_empty() {
            self.fenced.push(_block);
        }
    }
}

/// A directive's parts: the argument on its first line, the lines under it up to the first
/// blank one (the argument's continuation, or an admonition's first paragraph), its options
/// (`:linenos:`, `:header: "a", "b"`) and its content, after the first blank line.
#[derive(Default)]
struct Parts {
    argument: String,
    head: Vec<String>,
    options: Vec<(String, String)>,
    content: Vec<String>,
}

impl Parts {
    fn of(argument: &str, body: &[String]) -> Parts {
        let blank = body
            .iter()
            .position(|l| l.trim().is_empty())
            .unwrap_or(body.len());
        let mut parts = Parts {
            argument: argument.to_string(),
            content: body.get(blank + 1..).unwrap_or_default().to_vec(),
            ..Parts::default()
        };
        for line in &body[..blank] {
            match (field(line), parts.options.last_mut()) {
                (Some((name, value)), _) => parts.options.push((name.into(), value.into())),
                (None, Some((_, value))) if indent(line) > 0 => push_word(value, line.trim()),
                (None, _) => parts.head.push(line.clone()),
            }
        }
        parts
    }

    fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The argument with its continuation lines.
    fn arguments(&self) -> Vec<String> {
        prepend(&self.argument, self.head.clone())
    }

    /// What follows an admonition's name: its first line, the lines under it, then its
    /// content.
    fn text(&self) -> Vec<String> {
        self.text_after(&self.argument)
    }

    /// `first`, the head's lines, then the content after a blank line.
    fn text_after(&self, first: &str) -> Vec<String> {
        let mut text = prepend(first, self.head.clone());
        text.push(String::new());
        text.extend(self.content.iter().cloned());
        text
    }
}

/// `line` with tabs expanded to the next multiple of eight columns, as reStructuredText
/// reads them, and no trailing space.
fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => {
                let width = out.chars().count();
                out.extend(std::iter::repeat_n(' ', 8 - width % 8));
            }
            _ => out.push(c),
        }
    }
    out.truncate(out.trim_end().len());
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The index of the first line from `from` on that is at the margin: where a block indented
/// under a line ends.
fn body_end(lines: &[String], from: usize) -> usize {
    (from..lines.len())
        .find(|&k| !lines[k].trim().is_empty() && indent(&lines[k]) == 0)
        .unwrap_or(lines.len())
}

/// `lines` without their first `column` spaces (their common indentation when `None`).
fn dedent(lines: &[String], column: Option<usize>) -> Vec<String> {
    let common = || {
        lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indent(l))
            .min()
            .unwrap_or(0)
    };
    let by = column.unwrap_or_else(common);
    lines
        .iter()
        .map(|l| l[indent(l).min(by)..].to_string())
        .collect()
}

/// `first` (when it is not blank) then `rest`.
fn prepend(first: &str, rest: Vec<String>) -> Vec<String> {
    match first.trim().is_empty() {
        true => rest,
        false => std::iter::once(first.trim().to_string())
            .chain(rest)
            .collect(),
    }
}

/// The lines' text on one line.
fn joined(lines: &[String]) -> String {
    let words: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    words.join(" ")
}

fn push_word(to: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !to.is_empty() {
        to.push(' ');
    }
    to.push_str(text);
}

/// The punctuation a title is over- or underlined with, when `line` is three or more of it.
fn adornment(line: &str) -> Option<char> {
    let first = line.chars().next()?;
    let all = line.chars().all(|c| c == first);
    (first.is_ascii_punctuation() && all && line.len() >= 3).then_some(first)
}

/// How many lines from `at` make a paragraph: up to a blank or an indented line.
fn paragraph_length(lines: &[String], at: usize) -> usize {
    lines[at..]
        .iter()
        .take_while(|l| !l.trim().is_empty() && (indent(l) == 0))
        .count()
}

/// A paragraph's lines on one line, and whether it announces a literal block: its final `::`
/// is shown as `:` after a word, as nothing after a space or alone.
fn paragraph_text(lines: &[String]) -> (String, bool) {
    let text = joined(lines);
    if text == "::" {
        return (String::new(), true);
    }
    if let Some(before) = text.strip_suffix(" ::") {
        return (before.to_string(), true);
    }
    match text.strip_suffix("::") {
        Some(before) => (format!("{before}:"), true),
        None => (text, false),
    }
}

/// A directive's name and argument, when `text` (after `.. `) is one: `name:: argument`.
fn directive_name(text: &str) -> Option<(&str, &str)> {
    let (name, argument) = text.split_once("::")?;
    let named = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_:.+".contains(c));
    let spaced = argument.is_empty() || argument.starts_with(char::is_whitespace);
    (named && spaced).then(|| (name, argument.trim()))
}

/// A footnote's or citation's text, when `text` (after `.. `) is one: `[1] text`.
fn footnote(text: &str) -> Option<&str> {
    let (label, note) = text.strip_prefix('[')?.split_once(']')?;
    let labelled = !label.is_empty()
        && label
            .chars()
            .all(|c| c.is_alphanumeric() || "#*-_.".contains(c));
    labelled.then_some(note.trim())
}

/// A field's name and the text after it, when `line` opens with one (`:timeout: 30`).
fn field(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix(':')?;
    let close = rest
        .match_indices(':')
        .map(|(k, _)| k)
        .find(|&k| rest[k + 1..].is_empty() || rest[k + 1..].starts_with(' '))?;
    let name = &rest[..close];
    // `:func:`name`: text` opens with a role, not a field.
    let named =
        !name.is_empty() && !name.starts_with(' ') && !name.ends_with(' ') && !name.contains(":`");
    named.then(|| (name, rest[close + 1..].trim()))
}

/// An option list's item: the options (`-v, --verbose`) and the text after them, two spaces
/// or more apart, or the description under them.
fn option_item<'a>(line: &'a str, rest: &[String]) -> Option<(&'a str, &'a str)> {
    let dashes = line.trim_start_matches('-');
    let dashed = (1..=2).contains(&(line.len() - dashes.len()))
        && dashes.starts_with(|c: char| c.is_ascii_alphanumeric());
    if !dashed {
        return None;
    }
    match line.find("  ") {
        Some(gap) => Some((&line[..gap], line[gap..].trim())),
        None if !rest.is_empty() => Some((line, "")),
        None => None,
    }
}

/// Where a list item's text starts in `line` (the byte and the column), when `line` opens
/// with a bullet (`-`, `*`, `+`, `•`) or an enumerator (`1.`, `2)`, `(a)`, `#.`, `iv.`) and a
/// space, or is one alone.
fn list_marker(line: &str) -> Option<(usize, usize)> {
    let marker_end = match line.chars().next()? {
        c @ ('-' | '*' | '+' | '•' | '‣' | '⁃') => c.len_utf8(),
        '(' => 1 + enumerator(&line[1..])? + 1,
        _ => enumerator(line)? + 1,
    };
    let marker = line.get(..marker_end)?;
    let closed = match line.as_bytes()[0] {
        b'(' => marker.ends_with(')'),
        c if c.is_ascii_alphanumeric() || c == b'#' => marker.ends_with(['.', ')']),
        _ => true,
    };
    let after = &line[marker_end..];
    if !closed || !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let text_at = marker_end + indent(after);
    Some((text_at, line[..text_at].chars().count()))
}

/// The length of an enumerator at the start of `text`: digits, `#`, a letter, or a Roman
/// numeral.
fn enumerator(text: &str) -> Option<usize> {
    let length = text
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '#')
        .unwrap_or(text.len());
    let word = &text[..length];
    let numbered = !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()) && length <= 9;
    let single = word == "#" || (length == 1 && word.bytes().all(|b| b.is_ascii_alphabetic()));
    let roman = (1..=4).contains(&length) && word.chars().all(|c| "ivxlcdm".contains(c));
    (numbered || single || roman).then_some(length)
}

/// The columns of a simple table, when `line` is its border: runs of `=` apart, two or more.
fn simple_columns(line: &str) -> Option<Vec<usize>> {
    if !line.starts_with('=') || !line.chars().all(|c| c == '=' || c == ' ') {
        return None;
    }
    let starts: Vec<usize> = line
        .chars()
        .enumerate()
        .filter(|&(k, c)| c == '=' && (k == 0 || line.as_bytes()[k - 1] == b' '))
        .map(|(k, _)| k)
        .collect();
    (starts.len() >= 2).then_some(starts)
}

/// The items of a bullet list, each its text and the lines under it, their indentation aside.
fn list_items(lines: &[String]) -> Vec<Vec<String>> {
    let mut items = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let end = body_end(lines, at + 1);
        if let Some((text_at, column)) = list_marker(&lines[at]).filter(|_| indent(&lines[at]) == 0)
        {
            items.push(prepend(
                &lines[at][text_at..],
                dedent(&lines[at + 1..end], Some(column)),
            ));
        }
        at = end;
    }
    items
}

/// The cells of a row of comma-separated values, their quotes gone (`""` is a quote).
fn csv_cells(row: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The substitutions the document defines (`.. |name| replace:: text`): an image shows
/// nothing.
fn substitutions(lines: &[String]) -> HashMap<String, String> {
    let mut found = HashMap::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(".. |") else {
            continue;
        };
        let Some((name, definition)) = rest.split_once('|') else {
            continue;
        };
        let definition = definition.trim();
        if let Some(text) = definition.strip_prefix("replace::") {
            let more = &lines[at + 1..continuation_end(lines, at + 1, indent(line))];
            found.insert(name.to_string(), joined(&prepend(text, more.to_vec())));
        } else if definition.starts_with("image::") {
            found.insert(name.to_string(), String::new());
        }
    }
    found
}

/// The most lines a substitution's definition runs on for.
const DEFINITION_LINES: usize = 16;

/// The index of the first line from `from` on that is blank or indented `margin` or less,
/// [`DEFINITION_LINES`] on at most.
fn continuation_end(lines: &[String], from: usize, margin: usize) -> usize {
    let last = lines.len().min(from + DEFINITION_LINES);
    (from..last)
        .find(|&k| lines[k].trim().is_empty() || indent(&lines[k]) <= margin)
        .unwrap_or(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(source: &str) -> String {
        to_text(source).1
    }

    /// Titles are set apart, the first is the document's; a transition shows nothing; an
    /// underline shorter than its title and than four characters is text, as docutils reads it.
    #[test]
    fn titles_are_set_apart_and_the_first_is_the_documents() {
        let (title, text) = to_text(
            "=========\nThe Guide\n=========\n\nIntro text.\n\nSetup\n-----\n\nRun it.\n\n----\n\n\
             Short\n=====\n\nEnd.\n\nToo short\n===\n",
        );
        assert_eq!(title.as_deref(), Some("The Guide"));
        assert_eq!(
            text,
            "The Guide\n\nIntro text.\n\nSetup\n\nRun it.\n\nShort\n\nEnd.\nToo short ===\n"
        );
    }

    #[test]
    fn wrapped_lines_join_and_markup_is_read() {
        assert_eq!(
            text("Set ``retries`` with\n:func:`configure` (see `the guide\n<https://x.org>`_).\n"),
            "Set retries with configure (see the guide).\n"
        );
    }

    /// A literal block (after `::`, indented or quoted), a doctest and a code directive are
    /// fenced, never run into a sentence; the `::` reads as a colon after a word, as nothing
    /// after a space.
    #[test]
    fn literal_blocks_doctests_and_code_are_fenced() {
        let source = "Run this::\n\n    pip install x\n\nOr this ::\n\n    make\n\n\
                      ::\n\n> quoted\n> literal\n\n>>> print(1)\n1\n\n\
                      .. code-block:: python\n   :linenos:\n\n   x = 1\n\nDone.\n";
        assert_eq!(
            text(source),
            "Run this:\n```\npip install x\n```\nOr this\n```\nmake\n```\n\
             ```\n> quoted\n> literal\n```\n```\n>>> print(1)\n1\n```\n```\nx = 1\n```\nDone.\n"
        );
    }

    /// Version notes read as Sphinx shows them, with their text; an object's signature is
    /// fenced and its description is prose; an admonition is its text.
    #[test]
    fn directives_read_as_sphinx_shows_them() {
        let source = ".. function:: urlopen(url, timeout=3)\n\n   Opens *url*.\n\n\
                      \x20  .. versionadded:: 2.0\n\n\
                      \x20  .. versionchanged:: 2.1 The timeout is\n      in seconds.\n\n\
                      \x20  .. deprecated:: 3.0\n\n\
                      .. note:: Pools are\n   reused.\n\n\
                      .. warning::\n\n   Never share one.\n\n\
                      .. option:: -v, --verbose\n\n   Say more.\n";
        assert_eq!(
            text(source),
            "```\nurlopen(url, timeout=3)\n```\nOpens url.\nNew in version 2.0.\n\
             Changed in version 2.1: The timeout is in seconds.\n\
             Deprecated since version 3.0.\nPools are reused.\nNever share one.\n\
             ```\n-v, --verbose\n```\nSay more.\n"
        );
    }

    #[test]
    fn what_builds_the_site_shows_nothing() {
        let source = ".. _proxies:\n\n.. toctree::\n   :maxdepth: 2\n\n   intro\n\n\
                      .. image:: logo.png\n   :alt: Logo\n\n.. a comment\n   over two lines\n\n\
                      .. autoclass:: Pool\n   :members:\n\n.. |ver| replace:: 2.1\n\n\
                      .. moduleauthor:: Someone\n\nVersion |ver| is out [#]_.\n\n\
                      .. [#] Since May.\n";
        assert_eq!(text(source), "Version 2.1 is out.\nSince May.\n");
    }

    /// A list item, a field and an option are a line each, their names kept; a term is set
    /// apart over its definition, as a heading is; items nest.
    #[test]
    fn lists_fields_options_and_definitions() {
        let source = "- one\n  continued\n- two\n\n  * nested\n\n1. first\n2. second\n\n\
                      :timeout: 30 seconds\n:retries:\n   3\n\n\
                      -v, --verbose  Say more.\n--level N\n   Set the level.\n\n\
                      threads\n   The number of threads.\n\n   Default: 4\n";
        assert_eq!(
            text(source),
            "one continued\ntwo\nnested\nfirst\nsecond\ntimeout: 30 seconds\nretries: 3\n\
             -v, --verbose Say more.\n--level N Set the level.\n\nthreads\n\n\
             The number of threads.\nDefault: 4\n"
        );
    }

    /// A line that opens with a number or a role is no item or field.
    #[test]
    fn a_sentence_that_opens_like_markup_is_a_sentence() {
        assert_eq!(
            text("2019. That year\nit shipped.\n\n:func:`run`: starts it.\n"),
            "2019. That year it shipped.\nrun: starts it.\n"
        );
    }

    #[test]
    fn tables_are_a_line_per_row() {
        let grid = "+------+---------+\n| Name | Default |\n+======+=========+\n\
                    | size | 10      |\n+------+---------+\n| max  | wrapped |\n|      | cell    |\n\
                    +------+---------+\n";
        assert_eq!(text(grid), "Name Default\nsize 10\nmax wrapped cell\n");
        let simple = "=====  =======\nName   Default\n=====  =======\nsize   10\nmax    20\n\
                      \x20      more\n=====  =======\n\nAfter.\n";
        assert_eq!(text(simple), "Name Default\nsize 10\nmax 20 more\nAfter.\n");
        let csv = ".. csv-table:: Limits\n   :header: \"Name\", \"Default\"\n\n   \
                   size, \"10, or 20\"\n   max, 30\n";
        assert_eq!(
            text(csv),
            "Limits\n\nName Default\nsize 10, or 20\nmax 30\n"
        );
        let list = ".. list-table::\n\n   * - size\n     - 10\n   * - max\n     - 20\n";
        assert_eq!(text(list), "size 10\nmax 20\n");
    }

    /// Nesting a hostile document deeper than [`MAX_DEPTH`] is read as plain lines, its
    /// words kept, without recursing further.
    #[test]
    fn deep_nesting_is_bounded() {
        let source: String = (0..2000)
            .map(|k| format!("{}- level {k}\n\n", " ".repeat(2 * k)))
            .collect();
        let text = text(&source);
        assert!(
            text.contains("level 0\n") && text.contains("level 1999"),
            "{text}"
        );
    }

    /// Every line cut anywhere, and lines that open like markup and stop short, read without
    /// a panic: a corpus file is untrusted.
    #[test]
    fn any_prefix_of_a_document_reads() {
        let source = "=====\nTitle\n=====\n\n(1) one\n#. two\n12\n(a\n:field: x\n:\n\
                      -v  verbose\n--\n+--+--+\n| a|b |\n+==+\n=== ===\na   b\n=== ===\n\
                      .. |s| replace:: t\n.. code-block::\n.. [1\n.. note::\n   ``x`` *y* \\\n\
                      `z <u>`_ [2]_ |s|_ :r:`w` é\t•\n| line\n>>> x\n::\n\n    lit\n";
        for (at, _) in source.char_indices() {
            let _ = to_text(&source[..at]);
        }
        for line in [
            "12", "(1", "(a", "#", "1.", "a)", "-", "+", ":a:", ":a", "..", ".. ::",
        ] {
            let _ = to_text(line);
        }
    }

    /// Runs of table borders with no end, and a staircase of substitutions, are read in one
    /// pass each (a search to the document's end from each line would not end in the test's
    /// time): a border without a closing one is text.
    #[test]
    fn hostile_runs_are_read_once() {
        let borders = "=== ===\na b\n".repeat(30_000);
        assert!(to_text(&borders).1.starts_with("=== === a b === ==="));
        let stairs: String = (0..10_000)
            .map(|k| format!("{}.. |s{k}| replace:: x\n", " ".repeat(k % 2000)))
            .collect();
        let _ = to_text(&stairs);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 300,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Any soup of lines of reStructuredText (titles and their adornments, directives and
        /// their options, lists, fields, options, tables, literal blocks, inline markup cut
        /// short, at any indentation) reads without a panic, into text no more than a few
        /// times as long, and what a reader of its text takes for code ([`fence::spans`]) is
        /// exactly what it fenced: every fence closed, and no line of its prose a fence.
        #[test]
        fn any_rst_reads_and_fences_only_code(
            lines in proptest::collection::vec(
                "( {0,6})(=+|-+|\\.\\. [a-z-]{0,8}::? ?[a-z0-9 ]{0,6}|:[a-z]{0,4}:? ?[a-z`]{0,4}|[-*+#(]?[0-9a-z]{0,2}[.)]? [a-z`*|_\\[\\]<> -]{0,12}|\\+[-=+]{0,6}|\\| [a-z|]{0,6}|>>> [a-z]{0,3}|`{1,4}[a-z :]{0,4}`{0,4}_{0,2}|[a-z ]{0,6}::?|\t[a-z]{0,3})",
                0..40,
            )
        ) {
            let source = lines.join("\n");
            let reader = read(&source);
            let text = &reader.text;
            proptest::prop_assert!(text.len() <= 8 * source.len() + 64, "{source:?} gave {text:?}");
            proptest::prop_assert_eq!(
                fence::byte_spans(text),
                reader.fenced.clone(),
                "{:?} gave {:?}",
                source,
                text
            );
            let stray = fence::stray_fence(text, &reader.fenced);
            proptest::prop_assert!(stray.is_none(), "{source:?} gave {text:?}");
        }
    }

    /// The document's own text that reads as a fence is escaped: only the reader's blocks
    /// are code.
    #[test]
    fn only_code_is_fenced() {
        let reader = read("A line:\n\n```\n\nnot code\n\n::\n\n    code\n");
        assert_eq!(reader.fenced.len(), 1, "{}", reader.text);
        assert_eq!(
            fence::byte_spans(&reader.text),
            reader.fenced,
            "{}",
            reader.text
        );
    }
}
