//! How deeply a YAML text nests, found in one linear pass before the YAML parser sees it: the
//! parser takes time that grows much faster than the input with nesting (100,000 `[` took 19 s),
//! so a document nested beyond [`MAX_DEPTH`] is refused first.
//!
//! The pass counts block nesting (indentation levels and `- ` / `? ` / `: ` indicators that
//! open a collection on the same line) plus flow nesting (`[` and `{` outside quoted strings,
//! comments and block scalars). It is an estimate that errs on the high side only for text no
//! one writes (a plain scalar full of brackets); it never parses anything. A second, blind
//! pass counts brackets and indicators inside strings and comments too, with a limit 16 times
//! higher: a quote the first pass mistook for the start of a string (`'` opening a line of a
//! multi-line plain scalar) cannot hide deep nesting from it.

/// The deepest nesting accepted. Real step plans, atom registries and executor lists stay
/// under 15.
pub const MAX_DEPTH: usize = 64;

/// How much higher the blind pass's limit is.
const BLIND_FACTOR: usize = 16;

/// Where the text first nests deeper than allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based line number.
    pub line: usize,
    pub depth: usize,
    /// The limit that was crossed.
    pub max: usize,
}

/// What is open at the end of a line and carries over to the next.
#[derive(Default)]
struct Scan {
    /// Quotes, comments and block scalars are ignored: everything counts.
    blind: bool,
    /// Indentation of every open block collection.
    indents: Vec<usize>,
    /// Open flow collections and the block depth they started from.
    flow: usize,
    flow_base: usize,
    /// An open quoted scalar (`'` or `"`).
    quote: Option<char>,
    /// Inside a block scalar (`|`, `>`): lines indented deeper than this are text.
    block_scalar: Option<usize>,
}

/// `Err` at the first line where `text` nests deeper than `max`.
pub fn check(text: &str, max: usize) -> Result<(), TooDeep> {
    scan(text, max, false)?;
    scan(text, max.saturating_mul(BLIND_FACTOR), true)
}

fn scan(text: &str, max: usize, blind: bool) -> Result<(), TooDeep> {
    let mut scan = Scan {
        blind,
        ..Scan::default()
    };
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        scan.line(line, max).map_err(|depth| TooDeep {
            line: i + 1,
            depth,
            max,
        })?;
    }
    Ok(())
}

impl Scan {
    /// Scans one line; `Err(depth)` when it goes beyond `max`.
    fn line(&mut self, line: &str, max: usize) -> Result<(), usize> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        if let Some(parent) = self.block_scalar {
            if content.trim().is_empty() || indent > parent {
                return Ok(());
            }
            self.block_scalar = None;
        }
        if self.quote.is_none() && self.flow == 0 {
            if content.trim().is_empty() || (content.starts_with('#') && !self.blind) {
                return Ok(());
            }
            return self.block_line(indent, content, max);
        }
        self.chars(content, None, max)
    }

    /// A line in block context: its indentation level, the indicators opening collections on
    /// it, then its characters.
    fn block_line(&mut self, indent: usize, content: &str, max: usize) -> Result<(), usize> {
        let mut content = content;
        if indent == 0 && (content.starts_with("---") || content.starts_with("...")) {
            self.indents.clear();
            content = content[3..].trim_start();
        }
        while self.indents.last().is_some_and(|&open| open > indent) {
            self.indents.pop();
        }
        if self.indents.last() != Some(&indent) {
            self.indents.push(indent);
        }
        let mut depth = self.indents.len();
        loop {
            let rest = content.trim_start();
            let opens = ["- ", "? ", ": "].iter().any(|p| rest.starts_with(p))
                || matches!(rest, "-" | "?" | ":");
            if !opens {
                content = rest;
                break;
            }
            depth += 1;
            content = &rest[1..];
        }
        if depth > max {
            return Err(depth);
        }
        self.chars(content, Some(depth), max)?;
        if !self.blind && self.quote.is_none() && self.flow == 0 && opens_block_scalar(content) {
            self.block_scalar = Some(indent);
        }
        Ok(())
    }

    /// Quotes, comments and flow brackets of `content`. `block` is the depth of the line when
    /// it is in block context at its start.
    fn chars(&mut self, content: &str, block: Option<usize>, max: usize) -> Result<(), usize> {
        let mut chars = content.chars().peekable();
        // The last character that was not white space: tells a node's first character from
        // one inside a plain scalar (`it's`, `a[1]`).
        let mut prev: Option<char> = None;
        let mut after_space = true;
        while let Some(c) = chars.next() {
            if let Some(q) = self.quote.filter(|_| !self.blind) {
                match c {
                    '\\' if q == '"' => {
                        chars.next();
                    }
                    '\'' if q == '\'' && chars.peek() == Some(&'\'') => {
                        chars.next();
                    }
                    c if c == q => self.quote = None,
                    _ => {}
                }
                prev = Some(c);
                after_space = false;
                continue;
            }
            let starts_node = match (self.flow, prev) {
                (_, None) => true,
                (0, Some(p)) => matches!(p, '-' | '?' | ':'),
                (_, Some(p)) => matches!(p, '[' | '{' | ',' | ':'),
            };
            match c {
                '#' if after_space && !self.blind => return Ok(()),
                '"' | '\'' if starts_node && !self.blind => self.quote = Some(c),
                '[' | '{' if self.flow > 0 || starts_node => {
                    if self.flow == 0 {
                        self.flow_base = block.unwrap_or(self.indents.len());
                    }
                    self.flow += 1;
                    if self.flow_base + self.flow > max {
                        return Err(self.flow_base + self.flow);
                    }
                }
                ']' | '}' if self.flow > 0 => self.flow -= 1,
                _ => {}
            }
            after_space = c.is_whitespace();
            if !after_space {
                prev = Some(c);
            }
        }
        Ok(())
    }
}

/// Whether a block-context line ends with a block scalar header (`key: |`, `- >-`, `|2`),
/// comments aside.
fn opens_block_scalar(content: &str) -> bool {
    let code = match content.find(" #") {
        Some(at) => &content[..at],
        None => content,
    };
    let head = code
        .trim_end()
        .trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
    let Some(before) = head.strip_suffix('|').or_else(|| head.strip_suffix('>')) else {
        return false;
    };
    before.is_empty() || before.ends_with([' ', ':', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_error(text: &str) -> Option<TooDeep> {
        check(text, MAX_DEPTH).err()
    }

    #[test]
    fn a_hundred_thousand_brackets_are_refused_on_line_one() {
        let text = "[".repeat(100_000);
        assert_eq!(
            depth_error(&text),
            Some(TooDeep {
                line: 1,
                depth: MAX_DEPTH + 1,
                max: MAX_DEPTH
            })
        );
        let text = format!("a: 1\nb:\n  c: {}", "{x: ".repeat(100_000));
        assert_eq!(depth_error(&text).map(|e| e.line), Some(3));
    }

    #[test]
    fn deep_indentation_and_compact_sequences_count() {
        let mut nested = String::new();
        for level in 0..70 {
            nested.push_str(&format!("{}k{level}:\n", "  ".repeat(level)));
        }
        assert_eq!(depth_error(&nested).map(|e| e.line), Some(65));
        let dashes = format!("{}x\n", "- ".repeat(100));
        assert_eq!(depth_error(&dashes).map(|e| e.line), Some(1));
    }

    #[test]
    fn ordinary_documents_pass() {
        let ten = "target: t\nplan:\n  steps:\n    - id: s\n      inputs:\n        a:\n          b:\n            c: [1, {d: [2, 3]}]\n";
        assert_eq!(check(ten, 10), Ok(()));
        assert_eq!(check(ten, 9).err().map(|e| e.line), Some(8));
        let text = "a: \"[[[[[[[[[[\"\nb: 'it''s [[[[[[[[[['\nc: it's [x]\n# [[[[[[[[[[\nd: |\n  [[[[[[[[[[\n  {{{{{{{{{{\ne: [1, 2] # [[[[[[[[[[\n";
        assert_eq!(check(text, 3), Ok(()));
    }

    #[test]
    fn brackets_inside_plain_words_do_not_open_collections() {
        assert_eq!(check("a: x[1][2][3][4]\n", 2), Ok(()));
        assert_eq!(check("a: [b[, c]\n", 2).err().map(|e| e.depth), Some(3));
    }

    #[test]
    fn a_quote_that_opens_no_string_hides_nothing() {
        // Line 2 continues a plain scalar: its quote opens no string in YAML.
        let text = format!("a: x\n  'y\nb: {}\n", "[".repeat(100_000));
        let err = depth_error(&text).expect("refused");
        assert_eq!((err.line, err.max), (3, MAX_DEPTH * BLIND_FACTOR));
    }

    #[test]
    fn quoted_strings_may_span_lines() {
        let text = "a: \"first [[[[\n  second \\\" [[[[\"\nb: [1]\n";
        assert_eq!(check(text, 2), Ok(()));
    }
}
