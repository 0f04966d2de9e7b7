//! Markdown for text that models, search providers and plan files wrote, as the report and the
//! review's meeting notes show it: such text may try to act as links, code, HTML or our own
//! structure, so it is escaped or defused here. Only `http(s)` and `mailto` links survive in
//! prose; everything else is plain text. Control characters are the caller's to strip first
//! ([`crate::text::strip_controls`], [`crate::text::one_line`]), or [`prose`] and [`inline`] do
//! it. This module knows no document: it only makes pieces safe.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::{one_line, strip_controls, truncate};

/// Text on one line of at most `max_chars` characters, no controls, with Markdown escaped: a
/// list entry or a title that cannot be a link, code, HTML or a line of ours.
pub fn inline(text: &str, max_chars: usize) -> String {
    escape_markdown(&one_line(text, max_chars))
}

/// Free text (a model's notes) cut to `max_chars`, as a block quote: no controls, no raw HTML
/// (`<` and `>` escaped, which also ends autolinks), links only to web addresses, and every
/// line inside the quote, so nothing in it can end the quote or start a section of ours.
pub fn prose(text: &str, max_chars: usize) -> String {
    let text = truncate(strip_controls(text).trim(), max_chars);
    if text.is_empty() {
        return "> *(empty)*\n".to_string();
    }
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '<' | '>') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    let defanged = defang_links(&escaped);
    let mut out = String::with_capacity(defanged.len() + 16);
    for line in defanged.lines() {
        if line.trim().is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `text` with the characters that would make Markdown links, code or HTML of it escaped.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '[' | ']' | '<' | '>' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A URL as a link destination: characters that would end it early are percent-encoded.
pub fn link_target(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            ' ' => out.push_str("%20"),
            c => out.push(c),
        }
    }
    out
}

/// Text for inside a code span: one line, backticks replaced so the span cannot end early.
pub fn code_text(text: &str) -> String {
    one_line(text, usize::MAX).replace('`', "'")
}

/// Markdown links whose target is not `http(s)` or `mailto` (`[x](javascript:...)`,
/// `<data:...>`, `[x]: file:...`) turned into plain text, by one space or backslash that a
/// reader barely notices.
pub fn defang_links(body: &str) -> String {
    static INLINE: LazyLock<Regex> = LazyLock::new(|| {
        // Literal patterns: compiling them cannot fail.
        Regex::new(r"\]\(\s*<?\s*([A-Za-z][A-Za-z0-9+.\-]*):").expect("valid regex")
    });
    static AUTO: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}):").expect("valid regex"));
    static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^( {0,3})\[([^\]\n]+)\]:\s*<?\s*([A-Za-z][A-Za-z0-9+.\-]*):")
            .expect("valid regex")
    });
    let web = |scheme: &str| {
        matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "mailto"
        )
    };
    let text = INLINE.replace_all(body, |c: &regex::Captures<'_>| {
        let whole = &c[0];
        if web(&c[1]) {
            whole.to_string()
        } else {
            format!("] ({}", &whole[2..])
        }
    });
    let text = AUTO.replace_all(&text, |c: &regex::Captures<'_>| {
        if web(&c[1]) {
            c[0].to_string()
        } else {
            format!("\\{}", &c[0])
        }
    });
    DEFINITION
        .replace_all(&text, |c: &regex::Captures<'_>| {
            if web(&c[3]) {
                c[0].to_string()
            } else {
                format!("{}\\{}", &c[1], &c[0][c[1].len()..])
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_text_is_one_escaped_line() {
        assert_eq!(
            inline("a\n## [x](javascript:y) <b>`c`\u{1b}[2J", 100),
            r"a ## \[x\](javascript:y) \<b\>\`c\`"
        );
        assert_eq!(inline("abcdef", 4), "abc…");
    }

    #[test]
    fn prose_is_quoted_without_html_controls_or_other_links() {
        let text = prose(
            "Fine.\n\n# Forged heading\n<script>x</script> [a](javascript:b) [w](https://w.test)\u{7}",
            1000,
        );
        assert_eq!(
            text,
            "> Fine.\n>\n> # Forged heading\n> \\<script\\>x\\</script\\> [a] (javascript:b) [w](https://w.test)\n"
        );
        assert_eq!(prose(" \u{1b}[0m ", 10), "> *(empty)*\n");
    }
}
