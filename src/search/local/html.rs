//! HTML to plain text: the visible text of a page (no scripts, styles or markup) with one line
//! per block element, and its title from `<title>`, else the first heading.
//!
//! The page is parsed with `scraper` (html5ever), which accepts any input; the tree is walked
//! with an explicit stack, so deeply nested pages cannot overflow the call stack. This module
//! only converts text; it does not read files or decide the fallback title.

use scraper::{Html, Node, Selector};

/// Elements whose content is not text a reader sees.
const HIDDEN: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "iframe", "object",
];

/// Elements that start a new line of text.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// The visible text of an HTML page and its title, if it has one.
pub fn to_text(source: &str) -> (Option<String>, String) {
    let document = Html::parse_document(source);
    let title =
        first_text(&document, "title").or_else(|| first_text(&document, "h1, h2, h3, h4, h5, h6"));
    (title, visible_text(&document))
}

/// The trimmed, white-space-collapsed text of the first element matching `selector`.
fn first_text(document: &Html, selector: &str) -> Option<String> {
    // The selectors are constants of this file; one that does not parse finds nothing.
    let selector = Selector::parse(selector).ok()?;
    document.select(&selector).find_map(|element| {
        let text = element.text().collect::<String>();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        (!text.is_empty()).then_some(text)
    })
}

/// Every text node outside [`HIDDEN`] elements, with a line break around [`BLOCKS`].
fn visible_text(document: &Html) -> String {
    let mut text = String::new();
    // (node, children already pushed): a node is visited once on the way down and once up.
    let mut stack = vec![(document.tree.root(), false)];
    while let Some((node, done)) = stack.pop() {
        let element = match node.value() {
            Node::Text(t) => {
                text.push_str(t);
                continue;
            }
            Node::Element(e) => Some(e.name()),
            Node::Document | Node::Fragment => None,
            _ => continue,
        };
        if element.is_some_and(|name| HIDDEN.contains(&name)) {
            continue;
        }
        if element.is_some_and(|name| BLOCKS.contains(&name)) && !text.ends_with('\n') {
            text.push('\n');
        }
        if !done {
            stack.push((node, true));
            let children: Vec<_> = node.children().collect();
            stack.extend(children.into_iter().rev().map(|child| (child, false)));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_and_visible_text() {
        let page = "<!doctype html><html><head><title> Solid-state\n batteries </title>\
            <style>p { color: red }</style><script>var hidden = 1;</script></head>\
            <body><h1>Heading</h1><p>First <b>para</b>graph.</p><p>Second &amp; last.</p>\
            <ul><li>one</li><li>two</li></ul></body></html>";
        let (title, text) = to_text(page);
        assert_eq!(title.as_deref(), Some("Solid-state batteries"));
        assert!(text.contains("First paragraph."), "{text}");
        assert!(text.contains("Second & last."), "{text}");
        assert!(text.contains("one\ntwo"), "{text}");
        assert!(
            !text.contains("hidden") && !text.contains("color"),
            "{text}"
        );
        assert!(!text.contains('<'), "{text}");
    }

    #[test]
    fn title_falls_back_to_the_first_heading() {
        let (title, _) =
            to_text("<html><body><p>x</p><h2>Sub <i>title</i></h2><h1>Later</h1></body></html>");
        assert_eq!(title.as_deref(), Some("Sub title"));
        assert_eq!(to_text("<p>no heading</p>").0, None);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let page = format!("{}deep{}", "<div>".repeat(3_000), "</div>".repeat(3_000));
        assert!(to_text(&page).1.contains("deep"));
    }
}
