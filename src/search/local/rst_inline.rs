//! reStructuredText inline markup to the text a reader sees: ``` ``literal`` ``` and
//! `` `interpreted` `` text keep their words without the backticks, a role's title stays
//! (`` :ref:`Proxies <proxies>` `` is `Proxies`, `` :func:`~pool.urlopen` `` is `urlopen`), a
//! hyperlink keeps its text (`` `the guide <https://…>`_ `` is `the guide`, `name_` is
//! `name`), `*emphasis*` and `**strong**` lose their stars, a substitution (`|version|`) is
//! replaced by its definition, and footnote and citation references (`[1]_`) are dropped.
//!
//! Markup follows the recognition rules of reStructuredText: a start-string opens after a
//! space or an opening bracket or quote and before a non-space, an end-string closes after a
//! non-space and before a space, a closing bracket or punctuation; anything else is text
//! (`2 * 3 * 4`, `*.txt`). An unmatched start-string is remembered, so a hostile line of
//! a million stars is read in one pass. Pure text work.

use std::collections::HashMap;

/// The text `line` shows, its markup gone and the `substitutions` replaced.
pub fn shown(line: &str, substitutions: &HashMap<String, String>) -> String {
    let mut scan = Scan {
        line,
        out: String::with_capacity(line.len()),
        substitutions,
        unclosed: HashMap::new(),
    };
    scan.run();
    scan.out
}

struct Scan<'a> {
    line: &'a str,
    out: String,
    substitutions: &'a HashMap<String, String>,
    /// For each end-string, a byte offset before which none closes: what a failed search
    /// learned, so that no search runs over the same text twice.
    unclosed: HashMap<&'static str, usize>,
}

impl Scan<'_> {
    fn run(&mut self) {
        let mut at = 0;
        while let Some(c) = self.line[at..].chars().next() {
            at = match self.markup(at, c) {
                Some(next) => next,
                None => {
                    self.out.push(c);
                    at + c.len_utf8()
                }
            };
        }
    }

    /// Reads the markup that starts at `at`, if any: the offset after it.
    fn markup(&mut self, at: usize, c: char) -> Option<usize> {
        let rest = &self.line[at..];
        match c {
            '\\' => Some(self.escape(at)),
            '`' if rest.starts_with("``") => self.span(at, "``", |s, inner| s.out.push_str(inner)),
            '`' => self.interpreted(at, None),
            ':' => self.role(at),
            '*' if rest.starts_with("**") => self.span(at, "**", |s, inner| s.out.push_str(inner)),
            '*' => self.span(at, "*", |s, inner| s.out.push_str(inner)),
            '|' => self.span(at, "|", |s, name| s.substitute(name)),
            '[' => self.reference_mark(at),
            '_' => self.reference_end(at),
            _ => None,
        }
    }

    /// A backslash shows the character after it as itself; a backslash before a space
    /// shows nothing.
    fn escape(&mut self, at: usize) -> usize {
        match self.line[at + 1..].chars().next() {
            Some(c) if c.is_whitespace() => at + 1 + c.len_utf8(),
            Some(c) => {
                self.out.push(c);
                at + 1 + c.len_utf8()
            }
            None => at + 1,
        }
    }

    /// Markup between `delimiter` and the same end-string: its inner text written by `write`.
    fn span(
        &mut self,
        at: usize,
        delimiter: &'static str,
        write: impl FnOnce(&mut Self, &str),
    ) -> Option<usize> {
        if !self.opens(at, delimiter.len()) {
            return None;
        }
        let inner_start = at + delimiter.len();
        let end = self.closing(inner_start, delimiter)?;
        let inner = &self.line[inner_start..end];
        write(self, inner);
        let after = end + delimiter.len();
        Some(after + self.suffix(delimiter, after))
    }

    /// `` `text` `` with its optional role (`:role:` before it, or after it), or a hyperlink
    /// (`` `text <url>`_ ``, `` `text`__ ``): the text shown.
    fn interpreted(&mut self, at: usize, role: Option<&str>) -> Option<usize> {
        if !self.opens(at, 1) {
            return None;
        }
        let end = self.closing(at + 1, "`")?;
        let inner = &self.line[at + 1..end];
        self.out.push_str(&role_text(inner, role));
        Some(end + 1 + self.suffix("`", end + 1))
    }

    /// The length of what may follow the end-string `delimiter` at `after` and still be
    /// markup: a reference's `_` or `__` after a substitution or interpreted text, or the
    /// role after interpreted text (`` `text`:sub: ``).
    fn suffix(&self, delimiter: &str, after: usize) -> usize {
        let rest = &self.line[after..];
        let underscores = rest.bytes().take_while(|&b| b == b'_').count().min(2);
        match delimiter {
            "`" if underscores == 0 => role_name(rest).unwrap_or(0),
            "`" | "|" => underscores,
            _ => 0,
        }
    }

    /// A role before interpreted text (`` :func:`name` ``).
    fn role(&mut self, at: usize) -> Option<usize> {
        let length = role_name(&self.line[at..])?;
        let tick = at + length;
        if !self.line[tick..].starts_with('`') || !self.opens(at, length) {
            return None;
        }
        let role = self.line[at + 1..tick - 1].to_string();
        self.interpreted(tick, Some(&role))
    }

    /// A footnote or citation reference (`[1]_`, `[#note]_`, `[CIT2002]_`): nothing shows of
    /// it, nor of the space before it.
    fn reference_mark(&mut self, at: usize) -> Option<usize> {
        let rest = &self.line[at..];
        let close = rest.find("]_")?;
        let label = &rest[1..close];
        let is_label = !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_alphanumeric() || "#*-_.".contains(c));
        if !is_label || !self.closes(at + close + 2) {
            return None;
        }
        let kept = self.out.trim_end().len();
        self.out.truncate(kept);
        Some(at + close + 2)
    }

    /// The `_` or `__` that ends a reference name (`urllib3_`, `PEP-8_`): not shown. A word
    /// that opens with `_` is a name of code (`__init__`), not a reference.
    fn reference_end(&mut self, at: usize) -> Option<usize> {
        let underscores = self.line[at..].bytes().take_while(|&b| b == b'_').count();
        let word = self
            .out
            .chars()
            .rev()
            .take_while(|&c| c.is_alphanumeric() || "-_.+:".contains(c))
            .last();
        let named =
            word.is_some_and(char::is_alphanumeric) && self.out.ends_with(char::is_alphanumeric);
        (underscores <= 2 && named && self.closes(at + underscores)).then_some(at + underscores)
    }

    fn substitute(&mut self, name: &str) {
        match self.substitutions.get(name) {
            Some(text) => self.out.push_str(text),
            None => self.out.push_str(name),
        }
    }

    /// Whether a start-string of `length` bytes at `at` opens markup: after the line's start,
    /// a space or an opening bracket or quote, and before a non-space.
    fn opens(&self, at: usize, length: usize) -> bool {
        let before = self.line[..at].chars().next_back();
        let after = self.line[at + length..].chars().next();
        before.is_none_or(|c| c.is_whitespace() || "'\"([{<-/:‘“’«¡¿".contains(c))
            && after.is_some_and(|c| !c.is_whitespace())
    }

    /// Whether an end-string that ends before `after` may close there: before the line's end,
    /// a space, a closing bracket or quote, or punctuation.
    fn closes(&self, after: usize) -> bool {
        self.line[after..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || "'\")]}>-/:.,;!?\\’”»".contains(c))
    }

    /// Where the first `delimiter` after `from` that closes markup starts (after a non-space,
    /// before a closing character); remembered when there is none.
    fn closing(&mut self, from: usize, delimiter: &'static str) -> Option<usize> {
        let known = self.unclosed.get(delimiter).copied().unwrap_or(0);
        if known >= self.line.len() {
            return None;
        }
        let start = from.max(known);
        let found = self.line[start..]
            .match_indices(delimiter)
            .map(|(k, _)| start + k)
            .find(|&end| {
                let after = end + delimiter.len();
                end > from
                    && !self.line[..end].ends_with(char::is_whitespace)
                    && self.closes(after + self.suffix(delimiter, after))
                    && (delimiter != "*" || !self.line[after..].starts_with('*'))
            });
        if found.is_none() {
            self.unclosed.insert(delimiter, self.line.len());
        }
        found
    }
}

/// The roles that name an object of code, whose target may name the inventory it is in.
const OBJECTS: &[&str] = &[
    "attr", "class", "const", "data", "exc", "func", "meth", "mod", "obj", "type",
];

/// The length of a role's name with its colons (`:py:func:`), if `text` opens with one.
fn role_name(text: &str) -> Option<usize> {
    let inner = text.strip_prefix(':')?;
    let length = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.+:".contains(c)))
        .unwrap_or(inner.len());
    let name = inner[..length].strip_suffix(':')?;
    (!name.is_empty() && !name.contains("::")).then_some(name.len() + 2)
}

/// What interpreted text shows: a title before its target (`Proxies <proxies>`), else the
/// text, a cross-reference's `~` shortening it to its last name and its `!` dropped.
fn role_text(inner: &str, role: Option<&str>) -> String {
    if let Some(title) = inner
        .strip_suffix('>')
        .and_then(|t| t.rsplit_once('<'))
        .map(|(title, _)| title.trim_end())
        .filter(|title| !title.is_empty())
    {
        return title.to_string();
    }
    let mut target = inner.trim_start_matches('!');
    // An object in another project's inventory (`py3:object`) shows its name.
    if role.is_some_and(|r| OBJECTS.contains(&r.rsplit(':').next().unwrap_or(r))) {
        target = target.rsplit_once(':').map_or(target, |(_, name)| name);
    }
    match (
        role.is_some() || target.starts_with('~'),
        target.strip_prefix('~'),
    ) {
        (true, Some(short)) => short.rsplit('.').next().unwrap_or(short).to_string(),
        _ if inner.starts_with('<') && inner.ends_with('>') => inner[1..inner.len() - 1].into(),
        _ => target.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(line: &str) -> String {
        shown(line, &HashMap::new())
    }

    #[test]
    fn literals_roles_and_links_keep_their_words() {
        for (line, text) in [
            ("Set ``retries`` to ``0``.", "Set retries to 0."),
            ("Call :func:`urlopen` first.", "Call urlopen first."),
            (
                "See :py:meth:`~pool.HTTPConnectionPool.urlopen`.",
                "See urlopen.",
            ),
            ("It is :class:`py3:object` there.", "It is object there."),
            (
                "Read :ref:`the proxy guide <proxies>` now.",
                "Read the proxy guide now.",
            ),
            (
                "Read `the guide <https://example.com/g>`_.",
                "Read the guide.",
            ),
            (
                "Read `the guide`__ and `PEP 8`_.",
                "Read the guide and PEP 8.",
            ),
            ("Use `<https://example.com>`_.", "Use https://example.com."),
            ("Install urllib3_ today.", "Install urllib3 today."),
            (
                "An *emphasised* and **strong** word.",
                "An emphasised and strong word.",
            ),
            ("A `default role` word.", "A default role word."),
            ("A word `after`:sub: it.", "A word after it."),
            (
                "`This article <https://h.me/a>`_ has more.",
                "This article has more.",
            ),
            (
                "the `Brotli <https://pypi.org/Brotli>`_ package",
                "the Brotli package",
            ),
            ("the ``urllib3[brotli]`` extra", "the urllib3[brotli] extra"),
        ] {
            assert_eq!(plain(line), text, "{line}");
        }
    }

    #[test]
    fn text_that_only_looks_like_markup_stays() {
        for line in [
            "2 * 3 * 4 is 24.",
            "Match *.txt and *.md files.",
            "A lone ` backtick and a | bar.",
            "snake_case names and __init__ methods stay whole.",
            "The ratio is 3:1 here.",
            "Key:value pairs.",
        ] {
            assert_eq!(plain(line), line);
        }
    }

    #[test]
    fn footnotes_are_dropped_and_substitutions_replaced() {
        let mut subs = HashMap::new();
        subs.insert("version".to_string(), "2.1".to_string());
        assert_eq!(
            shown("Version |version| is out [1]_. See |missing|.", &subs),
            "Version 2.1 is out. See missing."
        );
        assert_eq!(plain("Escaped \\*stars\\* stay."), "Escaped *stars* stay.");
    }

    /// A line of start-strings that never close is text, read once, not once per
    /// start-string (which, on this line, would not end in the test's time).
    #[test]
    fn unclosed_markup_is_text() {
        let line = "*a ``b `c |d ".repeat(50_000);
        assert_eq!(plain(&line), line);
    }
}
