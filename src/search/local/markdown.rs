//! Markdown to plain text: the text a reader sees (no `#`, `*`, link targets or HTML tags) with
//! one line per block, a heading set apart by blank lines, and the title from the first
//! level-1 heading.
//!
//! A code block, fenced or indented, stays between fence lines ([`super::fence`]): searchable,
//! never quoted as a sentence. Front matter (a YAML block between `---` lines) is left out.
//! This module only converts text; it does not read files or decide what a document's title
//! falls back to.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::fence;

/// The plain text of a Markdown document and its first level-1 heading, if any.
pub fn to_text(source: &str) -> (Option<String>, String) {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let mut text = String::with_capacity(source.len());
    let mut title: Option<String> = None;
    let mut heading: Option<String> = None;
    let mut in_metadata = false;
    // The code block being read.
    let mut code: Option<String> = None;
    for event in Parser::new_ext(source, options) {
        match event {
            Event::Text(t) if code.is_some() => code.get_or_insert_default().push_str(&t),
            Event::Start(Tag::CodeBlock(_)) => code = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => {
                fence::push_fenced(&mut text, &code.take().unwrap_or_default());
            }
            Event::Start(Tag::MetadataBlock(_)) => in_metadata = true,
            Event::End(TagEnd::MetadataBlock(_)) => in_metadata = false,
            Event::Start(Tag::Heading { level, .. }) => {
                paragraph_break(&mut text);
                if level == HeadingLevel::H1 && title.is_none() {
                    heading = Some(String::new());
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(h) = heading.take().map(|h| h.trim().to_string()) {
                    title = Some(h).filter(|h| !h.is_empty());
                }
                paragraph_break(&mut text);
            }
            Event::Text(t) | Event::Code(t) if !in_metadata => {
                text.push_str(&t);
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::SoftBreak => text.push(' '),
            Event::HardBreak | Event::Rule => text.push('\n'),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::BlockQuote(_)
                | TagEnd::TableRow
                | TagEnd::TableHead,
            ) => text.push('\n'),
            Event::End(TagEnd::TableCell) => text.push(' '),
            _ => {}
        }
    }
    (title, text)
}

/// Ends the line and leaves one blank line, around a heading: it is a paragraph of its own,
/// never the start of the sentence under it ("2.7 Thread Safety" over "libffi is not...").
fn paragraph_break(text: &mut String) {
    if text.is_empty() {
        return;
    }
    while !text.ends_with("\n\n") {
        text.push('\n');
    }
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

    #[test]
    fn no_level_one_heading_means_no_title() {
        assert_eq!(to_text("## Only a sub-heading\n\ntext").0, None);
        assert_eq!(to_text("#\n\ntext").0, None);
    }
}
