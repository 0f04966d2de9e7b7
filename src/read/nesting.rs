//! How deeply an HTML page's elements nest, and how many there are, estimated in one linear pass
//! over its bytes before any tree is built. Readability's work grows with the square of the nesting
//! (in a debug build, 1,000 nested `<div>`s took 3 s and 2,000 took 13 s) and its recursion
//! overflowed a 2 MB thread stack at 20,000, which aborts the whole process; and it scores
//! every element in several passes. A page that nests deeper, or holds more elements, than a
//! real one does is read without it.
//!
//! The estimate counts start tags not yet closed by an end tag of the same name, leaving out
//! elements that never nest on their own (void elements; those whose end tag the parser implies,
//! like `<p>` and `<li>`), comments and the content of scripts and styles. A stray end tag closes
//! nothing, as in a browser. It follows the parser where a page could fool it: a self-closed tag
//! (`<path/>`) closes itself only in foreign content (SVG, MathML), since `<div/>` opens a `<div>`
//! in HTML; `<title>` and `<style>` hold raw text only in HTML, not in an `<svg>`; an HTML tag such
//! as `<div>` in an `<svg>` leaves it, and the content of an integration point (`<foreignObject>`,
//! SVG's `<title>`, MathML's `<mi>`) is HTML again. An estimate that errs, errs deep: a page read
//! whole loses only its main-content selection. Pure byte work: no tree, no decoding.

use std::collections::HashMap;

/// Elements that never deepen the tree by themselves: void elements, and elements whose end
/// tag may be left out because the next one of their kind (or their parent's end) closes them.
const NOT_NESTING: &[&str] = &[
    "area", "base", "basefont", "bgsound", "body", "br", "caption", "col", "colgroup", "dd", "dt",
    "embed", "frame", "head", "hr", "html", "img", "input", "keygen", "li", "link", "meta",
    "optgroup", "option", "p", "param", "rb", "rp", "rt", "rtc", "source", "tbody", "td", "tfoot",
    "th", "thead", "tr", "track", "wbr",
];

/// Elements whose content is text, not markup, up to their end tag (in HTML content).
const RAW_TEXT: &[&str] = &[
    "iframe", "noembed", "noframes", "script", "style", "textarea", "title", "xmp",
];

/// The roots of foreign content.
const FOREIGN_ROOTS: &[&str] = &["svg", "math"];

/// Foreign elements whose content is HTML again (HTML integration points and MathML text
/// integration points).
const INTEGRATION_POINTS: &[&str] = &[
    "foreignobject",
    "desc",
    "title",
    "annotation-xml",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
];

/// HTML start tags that end foreign content where they appear (the HTML standard's list for
/// "in foreign content"; `<font>` leaves it only with some attributes, and is left out).
const BREAKOUT: &[&str] = &[
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

/// Where the estimate is: in HTML content, or in foreign content, by the elements that moved
/// it between them (a foreign root enters foreign content, an integration point in it leaves
/// it), each until its end tag.
#[derive(Default)]
struct Content {
    switches: Vec<(String, bool)>,
}

impl Content {
    fn foreign(&self) -> bool {
        self.switches.last().is_some_and(|(_, foreign)| *foreign)
    }

    /// A start tag `name` (not self-closed in foreign content) moves the estimate; whether
    /// the element itself is a foreign one (then it holds no raw text).
    fn start(&mut self, name: &str) -> bool {
        if self.foreign() && BREAKOUT.contains(&name) {
            while self.foreign() {
                self.switches.pop();
            }
        }
        let foreign = self.foreign() || FOREIGN_ROOTS.contains(&name);
        if !self.foreign() && FOREIGN_ROOTS.contains(&name) {
            self.switches.push((name.to_string(), true));
        } else if self.foreign() && INTEGRATION_POINTS.contains(&name) {
            self.switches.push((name.to_string(), false));
        }
        foreign
    }

    fn end(&mut self, name: &str) {
        if self.switches.last().is_some_and(|(open, _)| open == name) {
            self.switches.pop();
        }
    }
}

/// What makes a page too much for a tree-building reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excess {
    /// Its elements nest deeper than the limit.
    Depth,
    /// It has more elements than the limit.
    Elements,
}

/// Whether `page`'s elements nest more than `max_depth` deep or number more than
/// `max_elements` (start tags); stops reading at the first element past either.
pub fn excess(page: &[u8], max_depth: usize, max_elements: usize) -> Option<Excess> {
    let mut open: HashMap<String, usize> = HashMap::new();
    let mut elements = 0usize;
    let mut content = Content::default();
    let mut depth = 0;
    let mut at = 0;
    while let Some(lt) = find(page, at, b"<") {
        let rest = &page[lt + 1..];
        at = lt + 1;
        if rest.starts_with(b"!--") {
            at = find(page, lt + 4, b"-->").map_or(page.len(), |end| end + 3);
        } else if let Some(after) = rest.strip_prefix(b"/") {
            let name = name(after);
            content.end(&name);
            if let Some(count) = open.get_mut(&name).filter(|c| **c > 0) {
                *count -= 1;
                depth -= 1;
            }
        } else if rest.first().is_some_and(u8::is_ascii_alphabetic) {
            let name = name(rest);
            let Some(gt) = find(page, at, b">") else {
                break;
            };
            at = gt + 1;
            elements += 1;
            if elements > max_elements {
                return Some(Excess::Elements);
            }
            let self_closed = page[gt - 1] == b'/'
                && (content.foreign() || FOREIGN_ROOTS.contains(&name.as_str()))
                && !(content.foreign() && BREAKOUT.contains(&name.as_str()));
            if self_closed {
                continue;
            }
            let foreign = content.start(&name);
            if !foreign && RAW_TEXT.contains(&name.as_str()) {
                at = raw_text_end(page, at, &name);
            } else if !NOT_NESTING.contains(&name.as_str()) {
                *open.entry(name).or_default() += 1;
                depth += 1;
                if depth > max_depth {
                    return Some(Excess::Depth);
                }
            }
        }
    }
    None
}

/// The tag name at the start of `bytes`, lower case.
fn name(bytes: &[u8]) -> String {
    let len = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'-'))
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..len]).to_ascii_lowercase()
}

/// Where the raw text that starts at `from` ends: at its element's end tag (`</script`, any
/// case), else at the end of the page.
fn raw_text_end(page: &[u8], from: usize, name: &str) -> usize {
    let mut at = from;
    while let Some(lt) = find(page, at, b"</") {
        let tag = &page[lt + 2..];
        if tag.len() >= name.len() && tag[..name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return lt;
        }
        at = lt + 2;
    }
    page.len()
}

/// The first place at or after `from` where `needle` occurs.
fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| from + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(page: &str) -> usize {
        (0..)
            .find(|&limit| excess(page.as_bytes(), limit, usize::MAX).is_none())
            .expect("some depth")
    }

    #[test]
    fn elements_are_counted_by_their_start_tags() {
        let flat = "<p>one</p>".repeat(50);
        assert_eq!(excess(flat.as_bytes(), 300, 50), None);
        assert_eq!(excess(flat.as_bytes(), 300, 49), Some(Excess::Elements));
        let deep = "<div>".repeat(20);
        assert_eq!(excess(deep.as_bytes(), 10, 1000), Some(Excess::Depth));
    }

    #[test]
    fn nesting_is_counted_by_open_elements() {
        assert_eq!(depth("<p>text</p>"), 0);
        assert_eq!(depth("<div><div><span>a</span></div><div>b</div></div>"), 3);
        assert_eq!(depth(&"<div>".repeat(50)), 50, "unclosed elements nest");
        assert_eq!(depth(&"<section>x</section>".repeat(500)), 1);
        assert_eq!(depth("<DIV><Div></div></DIV>"), 2, "any case");
    }

    #[test]
    fn implied_void_and_self_closed_elements_do_not_nest() {
        let list = "<ul>".to_string() + &"<li>item<p>para<br><img src=x/>".repeat(100) + "</ul>";
        assert_eq!(depth(&list), 1);
        assert_eq!(depth("<svg><g><path d=\"M0 0\"/><path/></g></svg>"), 2);
        assert_eq!(
            depth(&"<svg/>".repeat(50)),
            0,
            "a foreign root closes itself"
        );
    }

    /// A tester crashed the process with these: `<div/>` is an open `<div>` in HTML, and an
    /// SVG `<title>` holds markup, not raw text.
    #[test]
    fn self_closed_html_tags_and_svg_titles_do_not_hide_nesting() {
        assert_eq!(depth(&"<div/>".repeat(400)), 400);
        let svg_title = "<html><body><svg><title>".to_string() + &"<div>".repeat(400);
        assert_eq!(depth(&svg_title), 402);
        assert_eq!(
            depth("<svg><style><g><g></g></g></style></svg>"),
            4,
            "markup in SVG style"
        );
        let breakout = "<svg><g>".to_string() + &"<div/>".repeat(400);
        assert!(depth(&breakout) >= 400, "an HTML tag leaves the SVG");
        let back = "<svg><foreignObject>".to_string() + &"<span/>".repeat(400);
        assert!(depth(&back) >= 400, "HTML again in an integration point");
        assert_eq!(
            depth("<svg></svg><style><div></style>"),
            1,
            "HTML after the SVG"
        );
    }

    #[test]
    fn stray_end_tags_close_nothing() {
        assert_eq!(depth(&"<div></span>".repeat(40)), 40);
        assert_eq!(depth("</div></div><div>"), 1);
    }

    #[test]
    fn comments_and_scripts_are_not_markup() {
        let script = "<script>var s = '<div><div><div>';</script><div>x</div>";
        assert_eq!(depth(script), 1);
        assert_eq!(depth("<STYLE>a<b>c</style ><b>x</b>"), 1);
        assert_eq!(depth("<!-- <div><div> --><div></div>"), 1);
        assert_eq!(depth("<script>never closed <div><div>"), 0);
        assert_eq!(depth("a < b and c<"), 0);
    }
}
