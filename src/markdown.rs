//! Markdown for text that models, search providers and plan files wrote, as the report and the
//! review's meeting notes show it: such text may try to act as links, code, HTML or our own
//! structure, so it is escaped or defused here. Only `http(s)` and `mailto` links survive in
//! prose; everything else is plain text. Control characters are the caller's to strip first
//! ([`crate::text::strip_controls`], [`crate::text::one_line`]), or [`prose`] and [`inline`] do
//! it. This module knows no document: it only makes pieces safe.

use std::ops::Range;
use std::sync::LazyLock;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use regex::Regex;

use crate::text::sentences::split_sentences;
use crate::text::{one_line, strip_controls, truncate, words};

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

/// Markdown a model wrote, shown as it wrote it but with no raw HTML: every `<` outside code
/// spans and code blocks gets a backslash (unless one already escapes it), so `<script>` or
/// `<img onerror=...>` reads as written and no viewer runs it, while headings, lists,
/// emphasis, code (where `<` is harmless and a backslash would show) and links stay. Control
/// characters are the caller's to strip first.
pub fn escape_raw_html(markdown: &str) -> String {
    let code: Vec<std::ops::Range<usize>> = Parser::new(markdown)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Code(_) | Event::Start(Tag::CodeBlock(_)) => Some(range),
            _ => None,
        })
        .collect();
    let mut out = String::with_capacity(markdown.len() + 16);
    let mut code = code.iter().peekable();
    let mut backslashes = 0;
    for (at, c) in markdown.char_indices() {
        // The ranges come in document order and do not overlap.
        while code.next_if(|r| r.end <= at).is_some() {}
        let in_code = code.peek().is_some_and(|r| r.contains(&at));
        if c == '<' && !in_code && backslashes % 2 == 0 {
            out.push('\\');
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        out.push(c);
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

/// The most passes [`without_images`] makes: each removes every image the parser finds, and
/// only an image whose alternative text holds another, or one a removal makes of the text
/// around it, needs another pass.
const IMAGE_PASSES: usize = 8;

/// `markdown` with every image (`![alt](url)`, `![alt][ref]`, whatever its target) replaced by
/// its alternative text as written: a viewer loads an image as soon as it shows the page,
/// telling its server whatever the URL holds, so text that models and pages wrote shows none,
/// in the report as in the view. Code keeps what it shows. Text that still makes an image
/// after [`IMAGE_PASSES`] passes has every `![` escaped.
pub fn without_images(markdown: &str) -> String {
    let mut text = markdown.to_string();
    for _ in 0..IMAGE_PASSES {
        let images = image_spans(&text);
        if images.is_empty() {
            return text;
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (image, alt) in images {
            out.push_str(&text[at..image.start]);
            out.push_str(&text[alt]);
            at = image.end;
        }
        out.push_str(&text[at..]);
        text = out;
    }
    match image_spans(&text).is_empty() {
        true => text,
        false => text.replace("![", "!\\["),
    }
}

/// An image's place in the text, and its alternative text's.
type ImageSpan = (Range<usize>, Range<usize>);

/// Where each outermost image of `markdown` stands, and its alternative text as written, as a
/// viewer with GitHub's extensions finds them (footnotes above all: an image in a footnote's
/// text is shown), else as one with none does (`![^1](url)` is an image there). Nothing that
/// hides text from the parser (math, metadata blocks) which another viewer would show.
fn image_spans(markdown: &str) -> Vec<ImageSpan> {
    let github = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let spans = spans_with(markdown, github);
    match spans.is_empty() {
        true => spans_with(markdown, Options::empty()),
        false => spans,
    }
}

/// [`image_spans`] as a parser with `options` finds them.
fn spans_with(markdown: &str, options: Options) -> Vec<ImageSpan> {
    let mut spans = Vec::new();
    let mut open: Option<(Range<usize>, Option<Range<usize>>)> = None;
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(markdown, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Image { .. }) => {
                depth += 1;
                if depth == 1 {
                    open = Some((range, None));
                    continue;
                }
            }
            Event::End(TagEnd::Image) => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some((image, alt)) = open.take()
                {
                    spans.push((image.clone(), alt.unwrap_or(image.start..image.start)));
                    continue;
                }
            }
            _ => {}
        }
        if let Some((_, alt)) = open.as_mut().filter(|_| depth > 0) {
            let start = alt.as_ref().map_or(range.start, |a| a.start);
            *alt = Some(start..range.end.max(alt.as_ref().map_or(0, |a| a.end)));
        }
    }
    spans
}

/// Markdown links whose target is not `http(s)` or `mailto` (`[x](javascript:...)`,
/// `<data:...>`, `[x]: file:...`) turned into plain text, by one space or backslash that a
/// reader barely notices, and every image into its alternative text ([`without_images`]).
pub fn defang_links(body: &str) -> String {
    let body = &without_images(body);
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

/// A heading line's level and text (`## Answer` is 2 and `Answer`).
pub fn heading(line: &str) -> Option<(usize, &str)> {
    let line = line.trim_start();
    let level = line.chars().take_while(|&c| c == '#').count();
    let text = &line[level..];
    (level > 0 && (text.is_empty() || text.starts_with(' '))).then(|| (level, text.trim()))
}

/// The lines of a report's answer: under the first heading of level 2 or deeper that has the
/// word `answer` (`## Answer`, `## Short answer`), up to the next heading of its level or
/// higher; the whole body without one.
pub fn answer_section(body: &str) -> Vec<&str> {
    let lines: Vec<&str> = body.lines().collect();
    let is_answer = |text: &str| words(text).split(' ').any(|w| w == "answer");
    let start = lines.iter().enumerate().find_map(|(i, line)| {
        heading(line)
            .filter(|&(level, text)| level >= 2 && is_answer(text))
            .map(|(level, _)| (i + 1, level))
    });
    let Some((start, level)) = start else {
        return lines;
    };
    let end = lines[start..]
        .iter()
        .position(|line| heading(line).is_some_and(|(l, _)| l <= level))
        .map_or(lines.len(), |n| start + n);
    lines[start..end].to_vec()
}

/// Characters of code and data (JSON, assignments, markup) that prose seldom holds.
const CODE_MARKS: &[char] = &['{', '}', '=', '<', '>', '"', '_', ';', '|', '\\'];

/// Whether `markdown` states something in prose: a paragraph or list item outside code blocks,
/// not code or data by its look (more than two of its characters, and a twentieth or more, are
/// [`CODE_MARKS`]), with a sentence that has a word and ends as a sentence ends (`.`, `!`, `?`,
/// `。`, `！`, `？`, before any citation marks). Headings, inline code and HTML are not prose.
pub fn has_prose(markdown: &str) -> bool {
    let (mut text, mut in_code) = (String::new(), false);
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) if !in_code => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            Event::End(TagEnd::Paragraph | TagEnd::Item) if is_prose(&text) => return true,
            Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::Heading(_)) => text.clear(),
            _ => {}
        }
    }
    is_prose(&text)
}

/// Whether a paragraph's `text` is prose ([`has_prose`]).
fn is_prose(text: &str) -> bool {
    let marks = text.chars().filter(|c| CODE_MARKS.contains(c)).count();
    let shown = text.chars().filter(|c| !c.is_whitespace()).count();
    let ends = |s: &&str| {
        let end = s.trim_end_matches(|c: char| {
            c.is_ascii_digit() || c.is_whitespace() || "[]()*\"'\u{201d}\u{2019}".contains(c)
        });
        end.ends_with(['.', '!', '?', '。', '！', '？']) && end.chars().any(char::is_alphabetic)
    };
    (marks <= 2 || marks * 20 < shown) && split_sentences(text).iter().any(ends)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a Markdown parser finds raw HTML in `markdown`.
    fn has_raw_html(markdown: &str) -> bool {
        Parser::new(markdown).any(|e| matches!(e, Event::Html(_) | Event::InlineHtml(_)))
    }

    #[test]
    fn raw_html_becomes_text_and_code_stays_as_written() {
        let hostile = [
            "a <script>alert(1)</script> b",
            "<img src=x onerror=alert(1)>",
            "<div>\n\nblock\n\n</div>",
            "\\<b>escaped backslash, raw tag</b>",
            "<!-- comment --> <?php x ?> <![CDATA[x]]>",
            "> quoted <iframe src=javascript:x>\n- item <a href=x>y</a>",
        ];
        for text in hostile {
            assert!(has_raw_html(text), "{text}");
            let escaped = escape_raw_html(text);
            assert!(!has_raw_html(&escaped), "{text:?} -> {escaped:?}");
        }
        assert_eq!(
            escape_raw_html("x <script> and \\<b> and \\\\<i>"),
            "x \\<script> and \\<b> and \\\\\\<i>"
        );
        let code = "`Vec<u8>` and\n\n```\nlet v: Vec<u8>;\n```\n\n    indented <b>\n";
        assert_eq!(escape_raw_html(code), code);
        assert_eq!(
            escape_raw_html("## Title\n\n- **bold** [1]"),
            "## Title\n\n- **bold** [1]"
        );
    }

    /// The targets of the images a parser finds in `markdown`.
    fn images(markdown: &str) -> Vec<String> {
        Parser::new_ext(markdown, Options::all())
            .filter_map(|e| match e {
                Event::Start(Tag::Image { dest_url, .. }) => Some(dest_url.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_image_becomes_its_alternative_text_and_code_stays() {
        let cases = [
            ("a ![chart](http://x.test/c.png?d=1) b", "a chart b"),
            ("![*bold* alt](<http://x.test/a b.png> \"t\")", "*bold* alt"),
            (
                "x ![ref][r] y\n\n[r]: http://x.test/r.png\n",
                "x ref y\n\n[r]: http://x.test/r.png\n",
            ),
            ("![![in](http://x.test/1)](http://x.test/2)", "in"),
            ("![](http://x.test/empty.png)!", "!"),
            (
                "`![c](http://x.test/c)` and\n\n    ![i](http://x.test/i)\n",
                "`![c](http://x.test/c)` and\n\n    ![i](http://x.test/i)\n",
            ),
            (
                "note[^1]\n\n[^1]: ![f](http://x.test/f.png)\n",
                "note[^1]\n\n[^1]: f\n",
            ),
            ("a ![^1](http://x.test/n.png) b", "a ^1 b"),
            (
                "| a |\n|---|\n| ![t](http://x.test/t) |\n",
                "| a |\n|---|\n| t |\n",
            ),
            (
                "[link](https://x.test) stays",
                "[link](https://x.test) stays",
            ),
        ];
        for (markdown, expected) in cases {
            let out = without_images(markdown);
            assert_eq!(out, expected, "{markdown:?}");
            assert_eq!(images(&out), Vec::<String>::new(), "{markdown:?}");
        }
        // A removal that makes an image of the text around it is undone by the next pass.
        let made = "!![[x](http://x.test/a)](http://x.test/b)";
        assert_eq!(images(&without_images(made)), Vec::<String>::new());
        let deep = format!("{}x{}", "![".repeat(40), "](http://x.test/p)".repeat(40));
        assert_eq!(images(&without_images(&deep)), Vec::<String>::new());
        assert_eq!(
            images(&defang_links("![a](https://x.test/a.png)")),
            Vec::<String>::new()
        );
    }

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

    #[test]
    fn prose_is_a_sentence_outside_code_and_data() {
        assert!(has_prose("LFP cells reach about 170 Wh/kg [1]."));
        assert!(has_prose("## Answer\n\n- Yes, they do [2].\n"));
        assert!(has_prose("Cells store energy."));
        assert!(has_prose("固态电池更安全。"));
        assert!(has_prose("He said \"yes\" twice."));
        assert!(has_prose("## Answer\n\nLFP cells reach **170 Wh/kg** [1]."));
        // What SmolLM2 135M wrote as a final report (llama.cpp, 2026-12-05): a label, a code
        // block, then a Python list outside it.
        let smollm2 = "- e:battery, summary \n```python\nlist_of_lists = [\n  {\"id\": 1}\n]\n```\n\
                       list_of_lists = [\n    {\n        \"id\": 3,\n        \"label\":\"How do \
                       solid-state batteries compare to lithium ion batteries?\",\n    }\n]\n```\n";
        assert!(!has_prose(smollm2));
        assert!(!has_prose(
            "## Solid-state batteries compare well.\n\n`x = 1;`"
        ));
        assert!(!has_prose("```\nThis is only code.\n```"));
        assert!(!has_prose("- LFP\n- NMC\n"));
        assert!(has_prose("Yes."));
    }
}
