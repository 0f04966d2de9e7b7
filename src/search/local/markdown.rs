//! Markdown to plain text: the text a reader sees (no `#`, `*`, link targets or HTML tags; an
//! HTML block's text as a browser shows it) with one line per block, whatever it nests in, a
//! heading set apart by blank lines, and the title from the first level-1 heading.
//!
//! A code block, fenced or indented, stays between fence lines ([`super::fence`]): searchable,
//! never quoted as a sentence. Only what this module fences is fenced: a line of the
//! document's text that would read as a fence (an escaped fence, `` \`\`\` ``, or a code span
//! that opens a line) is escaped ([`fence::Prose`]), lest it pair with a fence of ours and swap
//! prose and code. Front matter (a YAML block between `---` lines) is left out.
//! This module only converts text; it does not read files or decide what a document's title
//! falls back to.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::paragraphs::{line_break, paragraph_break};
use super::{fence, html};

/// The plain text of a Markdown document and its first level-1 heading, if any.
pub fn to_text(source: &str) -> (Option<String>, String) {
    let reader = read(source);
    (reader.title, reader.text)
}

/// The document read: its text, the document's own lines that read as fences escaped.
fn read(source: &str) -> Reader {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut reader = Reader {
        text: String::with_capacity(source.len()),
        ..Reader::default()
    };
    for event in Parser::new_ext(source, options) {
        reader.event(event);
    }
    reader.prose.end(&mut reader.text);
    reader
}

/// The text read so far and where in the document the reader is.
#[derive(Default)]
struct Reader {
    text: String,
    /// Where the document's own text written since the last block starts.
    prose: fence::Prose,
    /// The byte ranges of the blocks fenced, an HTML block's included (what the tests find
    /// again with [`fence::byte_spans`]).
    #[cfg(test)]
    fenced: Vec<std::ops::Range<usize>>,
    title: Option<String>,
    /// The first level-1 heading, while it is read.
    heading: Option<String>,
    in_metadata: bool,
    /// The code block being read.
    code: Option<String>,
    /// The HTML block being read.
    html: Option<String>,
}

impl Reader {
    fn event(&mut self, event: Event) {
        match event {
            Event::Text(t) if self.code.is_some() => self.code.get_or_insert_default().push_str(&t),
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) | Event::Code(t) if !self.in_metadata => self.push(&t),
            Event::SoftBreak => self.push(" "),
            // A hard break ends the line; in a heading's title it is a space.
            Event::HardBreak => {
                self.text.push('\n');
                if let Some(h) = self.heading.as_mut() {
                    h.push(' ');
                }
            }
            Event::Html(t) => self.html.get_or_insert_default().push_str(&t),
            Event::Rule => line_break(&mut self.text),
            Event::InlineHtml(tag) if breaks_a_line(&tag) => self.push(" "),
            _ => {}
        }
    }

    /// Text the reader sees, in the body and in the heading being read.
    fn push(&mut self, t: &str) {
        self.text.push_str(t);
        if let Some(h) = self.heading.as_mut() {
            h.push_str(t);
        }
    }

    /// A block starts a line of its own: a tight list item has no paragraph around its text,
    /// so its sub-list, or a quote in it, would otherwise run on from its last word.
    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::CodeBlock(_) => self.code = Some(String::new()),
            Tag::MetadataBlock(_) => self.in_metadata = true,
            Tag::Heading { level, .. } => {
                paragraph_break(&mut self.text);
                if level == HeadingLevel::H1 && self.title.is_none() {
                    self.heading = Some(String::new());
                }
            }
            Tag::Paragraph
            | Tag::BlockQuote(_)
            | Tag::List(_)
            | Tag::Item
            | Tag::Table(_)
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => line_break(&mut self.text),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::MetadataBlock(_) => self.in_metadata = false,
            TagEnd::HtmlBlock => self.end_html(),
            TagEnd::Heading(_) => {
                if let Some(h) = self.heading.take().map(|h| h.trim().to_string()) {
                    self.title = Some(h).filter(|h| !h.is_empty());
                }
                paragraph_break(&mut self.text);
            }
            TagEnd::Paragraph
            | TagEnd::Item
            | TagEnd::BlockQuote(_)
            | TagEnd::TableRow
            | TagEnd::TableHead => self.text.push('\n'),
            TagEnd::TableCell => self.text.push(' '),
            _ => {}
        }
    }

    /// The code block read, between fence lines, after the document's text before it is
    /// escaped.
    fn end_code(&mut self) {
        let code = self.code.take().unwrap_or_default();
        let _block = self.prose.fence(&mut self.text, &code);
        #[cfg(test)]
        if !_block.is_empty() {
            self.fenced.push(_block);
        }
    }

    /// An HTML block's text as a browser shows it (`<p align="center">`, `<summary>`), on
    /// lines of its own; a comment, a script or tags alone show nothing. Its fences are the
    /// HTML reader's (its `<pre>`), its text escaped by that reader: it is set apart as it is.
    fn end_html(&mut self) {
        let (_, shown) = html::to_text(&self.html.take().unwrap_or_default());
        let shown = shown.trim();
        if !shown.is_empty() {
            let _block = self.prose.push_set_apart(&mut self.text, shown);
            #[cfg(test)]
            for span in fence::byte_spans(&self.text[_block.clone()]) {
                self.fenced
                    .push(_block.start + span.start.._block.start + span.end);
            }
        }
    }
}

/// Whether an inline HTML tag (`<br>`, `<p>`, `</td>`) breaks the text where a browser shows
/// it, so the words on its two sides are two; `<b>` and `<span>` break nothing.
fn breaks_a_line(tag: &str) -> bool {
    const BREAKS: &[&str] = &[
        "br",
        "p",
        "div",
        "li",
        "ul",
        "ol",
        "dd",
        "dt",
        "td",
        "th",
        "tr",
        "table",
        "hr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "pre",
        "section",
        "details",
        "summary",
    ];
    let name = tag
        .trim_start_matches('<')
        .trim_start_matches('/')
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    BREAKS.iter().any(|b| b.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_words_and_drops_the_markup() {
        let source = "---\ntitle: front matter\n---\n\n## Intro\n\n# The *Real* Title\n\nSome **bold** text with a [link](https://example.com) and `code`.\n\n- item one\n- item two\n\n| a | b |\n|---|---|\n| c | d |\n";
        let (title, text) = to_text(source);
        assert_eq!(title.as_deref(), Some("The Real Title"));
        assert!(
            text.contains("Some bold text with a link and code."),
            "{text}"
        );
        assert!(text.contains("item one\nitem two"), "{text}");
        assert!(text.contains("Intro\n"), "{text}");
        for markup in ["**", "](", "#", "front matter", "|"] {
            assert!(!text.contains(markup), "{markup} left in {text}");
        }
    }

    #[test]
    fn a_heading_is_a_paragraph_of_its_own() {
        let (_, text) = to_text("Intro.\n## 2.7 Thread Safety\nlibffi is not thread-safe.\n");
        assert_eq!(
            text,
            "Intro.\n\n2.7 Thread Safety\n\nlibffi is not thread-safe.\n"
        );
    }

    /// Code, fenced or indented, is set apart between fence lines of its own, never run into
    /// the sentence before or after it.
    #[test]
    fn code_blocks_are_fenced() {
        let (_, text) = to_text(
            "Flush it:\n\n```python\nlogger.info(\"Flushed.\")\n```\n\n    cache.flush()\n\n\
             Writes wait.\n",
        );
        assert_eq!(
            text,
            "Flush it:\n```\nlogger.info(\"Flushed.\")\n```\n```\ncache.flush()\n```\n\
             Writes wait.\n"
        );
    }

    /// The words of `text`, as the fuzzer reads them: split at anything not a letter or digit.
    fn words(text: &str) -> Vec<&str> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect()
    }

    /// Each block starts a line of its own, whatever it is nested in: a tight list item's text
    /// never runs into its sub-item's, nor into a quote, heading, code block or table inside
    /// it (the fuzzer found `- one` over `  - two` read as "onetwo").
    #[test]
    fn no_block_boundary_glues_two_words() {
        for (source, want) in [
            ("- one\n  - two\n", &["one", "two"][..]),
            (
                "- one\n  - two\n    - three\n- four\n",
                &["one", "two", "three", "four"],
            ),
            ("1. one\n   1. two\n", &["one", "two"]),
            ("* one\n  + two\n", &["one", "two"]),
            ("- one\n  > two\n", &["one", "two"]),
            ("> one\n> - two\n>   - three\n", &["one", "two", "three"]),
            ("- one\n  # two\n", &["one", "two"]),
            ("- one\n  ```\n  two\n  ```\n", &["one", "two"]),
            ("- one\n  ***\n  two\n", &["one", "two"]),
            ("- one\n\n  two\n  - three\n", &["one", "two", "three"]),
            (
                "| one | two |\n|---|---|\n| three | four |\n",
                &["one", "two", "three", "four"],
            ),
            (
                "one<br>two<br/>three<p>four</p>",
                &["one", "two", "three", "four"],
            ),
            (
                "one\n<div>\n\ntwo\n\n</div>\n\nthree\n",
                &["one", "two", "three"],
            ),
        ] {
            let (_, text) = to_text(source);
            assert_eq!(words(&text), want, "{source:?} read as {text:?}");
        }
        // Words of one word stay whole: inline markup that is no break splits nothing.
        let (_, text) = to_text("fr<b>ob</b>nicate and **ne**ver");
        assert_eq!(words(&text), ["frobnicate", "and", "never"], "{text:?}");
    }

    /// An HTML block's visible text is read as a browser shows it, a line of its own; its
    /// comments, scripts and tags are not.
    #[test]
    fn an_html_block_keeps_its_visible_text() {
        let (_, text) = to_text(
            "Intro\n<p align=\"center\">Fast <b>safe</b> search</p>\n\n\
             <details>\n<summary>Install notes</summary>\n\nRun it once.\n\n</details>\n\n\
             <!-- hidden remark -->\n<script>alert(1)</script>\n\nAfter.\n",
        );
        assert_eq!(
            words(&text),
            [
                "Intro", "Fast", "safe", "search", "Install", "notes", "Run", "it", "once", "After"
            ],
            "{text:?}"
        );
    }

    /// A heading's lines, a Setext heading's or one with a hard break, are words apart in the
    /// title as in the text.
    #[test]
    fn a_title_over_two_lines_keeps_its_words_apart() {
        let (title, text) = to_text("Write\ncache\n=====\n\nbody\n");
        assert_eq!(title.as_deref(), Some("Write cache"));
        assert_eq!(words(&text), ["Write", "cache", "body"]);
        let (title, _) = to_text("Write\\\ncache\n=====\n");
        assert_eq!(title.as_deref(), Some("Write cache"));
    }

    #[test]
    fn no_level_one_heading_means_no_title() {
        assert_eq!(to_text("## Only a sub-heading\n\ntext").0, None);
        assert_eq!(to_text("#\n\ntext").0, None);
    }

    /// A line of the document's text made of backticks (an escaped fence, a code span that
    /// opens a line) is escaped: it stays prose, and the code after it is what is fenced. An
    /// HTML block's `<pre>` keeps its fences.
    #[test]
    fn backticks_in_the_prose_fence_nothing() {
        let reader = read(
            "Write a fence as\n\n\\`\\`\\`\n\n```` ``` ```` opens one too.\n\n\
             ```python\nx = 1\n```\n\n<pre>y</pre>\n\nAfter.\n",
        );
        assert_eq!(
            reader.text,
            "Write a fence as\n\\```\n\\``` opens one too.\n```\nx = 1\n```\n\
             ```\ny\n```\nAfter.\n"
        );
        let code = std::ops::Range { start: 3, end: 6 };
        let pre = std::ops::Range { start: 6, end: 9 };
        assert_eq!(fence::spans(reader.text.lines()), [code, pre]);
        assert_eq!(fence::byte_spans(&reader.text), reader.fenced);
        // The text of a tight list item runs on after a blank code block: its line is read
        // whole.
        let item = read("- ``\n  ```\n  ```\n  `\n\n```\nz\n```\n");
        assert_eq!(item.text, "\\```\n```\nz\n```\n");
        assert_eq!(fence::byte_spans(&item.text), item.fenced);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 200,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Any soup of lines of Markdown (fences and runs of backticks, escaped or in code
        /// spans, lists, quotes, indented code, HTML with `<pre>`) reads without a panic, and
        /// what a reader of its text takes for code ([`fence::spans`]) is exactly what it
        /// fenced: every fence closed, and no line of its prose a fence.
        #[test]
        fn any_markdown_fences_only_its_code(
            lines in proptest::collection::vec(
                "(- |> |    |  |1\\. )?(`{3,4}[a-z]{0,3}|~~~|\\\\`\\\\`\\\\`|`{1,4}[a-z ]{0,3}`{1,4}|<pre>[a-z`\n]{0,5}</pre>|<div>|</div>|[a-z `*_#<>\\\\-]{0,10})",
                0..40,
            )
        ) {
            let source = lines.join("\n");
            let reader = read(&source);
            proptest::prop_assert_eq!(
                fence::byte_spans(&reader.text),
                reader.fenced.clone(),
                "{:?} gave {:?}",
                source,
                reader.text
            );
            let stray = fence::stray_fence(&reader.text, &reader.fenced);
            proptest::prop_assert!(stray.is_none(), "{source:?} gave {:?}", reader.text);
        }
    }
}
