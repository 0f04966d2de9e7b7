//! How deeply an HTML page's elements nest, and how many there are, estimated in one linear pass
//! over its tags before any tree is built. Readability's work grows with the square of the nesting
//! (in a debug build, 1,000 nested `<div>`s took 3 s and 2,000 took 13 s) and its recursion
//! overflowed a 2 MB thread stack at 20,000, which aborts the whole process; and it scores
//! every element in several passes. A page that nests deeper, or holds more elements, than a
//! real one does is read without it.
//!
//! html5ever's tokenizer reads the tags, comments and the text of scripts and styles as the
//! parser behind Readability does; its tree builder is not used, since it checks the stack of
//! open elements for every start tag. What is left here is the tree builder's part that a page
//! could use to hide its nesting. The estimate counts start tags not yet closed by an end tag of
//! the same name, leaving out elements that never nest on their own (void elements; those whose
//! end tag the parser implies, like `<p>` and `<li>`). A stray end tag closes nothing, as in a
//! browser. A self-closed tag (`<path/>`) closes itself only in foreign content (SVG, MathML),
//! since `<div/>` opens a `<div>` in HTML; `<title>` and `<style>` hold raw text only in HTML,
//! not in an `<svg>`; an HTML tag such as `<div>` in an `<svg>` leaves it, and the content of an
//! integration point (`<foreignObject>`, SVG's `<title>`, MathML's `<mi>`) is HTML again. An
//! estimate that errs, errs deep: a page read whole loses only its main-content selection (a
//! CDATA section is read as HTML reads it, up to the first `>`, for that reason).

use std::cell::RefCell;
use std::collections::HashMap;

use html5ever::LocalName;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Elements that never deepen the tree by themselves: void elements, and elements whose end
/// tag may be left out because the next one of their kind (or their parent's end) closes them.
const NOT_NESTING: &[&str] = &[
    "area", "base", "basefont", "bgsound", "body", "br", "caption", "col", "colgroup", "dd", "dt",
    "embed", "frame", "head", "hr", "html", "img", "input", "keygen", "li", "link", "meta",
    "optgroup", "option", "p", "param", "rb", "rp", "rt", "rtc", "source", "tbody", "td", "tfoot",
    "th", "thead", "tr", "track", "wbr",
];

/// The roots of foreign content.
const FOREIGN_ROOTS: &[&str] = &["svg", "math"];

/// Foreign elements whose content is HTML again (HTML integration points and MathML text
/// integration points).
#[rustfmt::skip]
const INTEGRATION_POINTS: &[&str] = &[
    "foreignobject", "desc", "title", "annotation-xml", "mi", "mo", "mn", "ms", "mtext",
];

/// HTML start tags that end foreign content where they appear (the HTML standard's list for
/// "in foreign content"; `<font>` too, with some attributes: [`breaks_out`]).
#[rustfmt::skip]
const BREAKOUT: &[&str] = &[
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
    "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu",
    "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strike", "strong", "sub",
    "sup", "table", "tt", "u", "ul", "var",
];

/// How the tokenizer reads the content of an element whose content is text, not markup, up to
/// its end tag (in HTML content), as the tree builder tells it.
fn raw_text(name: &str) -> Option<RawKind> {
    match name {
        "title" | "textarea" => Some(RawKind::Rcdata),
        "script" => Some(RawKind::ScriptData),
        "iframe" | "noembed" | "noframes" | "style" | "xmp" => Some(RawKind::Rawtext),
        _ => None,
    }
}

/// Whether a start tag in foreign content ends it.
fn breaks_out(tag: &Tag) -> bool {
    BREAKOUT.contains(&&*tag.name)
        || (&*tag.name == "font"
            && (tag.attrs.iter()).any(|a| matches!(&*a.name.local, "color" | "face" | "size")))
}

/// Where the estimate is: in HTML content, or in foreign content, by the elements that moved
/// it between them (a foreign root enters foreign content, an integration point in it leaves
/// it), each until its end tag.
#[derive(Default)]
struct Content {
    switches: Vec<(LocalName, bool)>,
}

impl Content {
    fn foreign(&self) -> bool {
        self.switches.last().is_some_and(|(_, foreign)| *foreign)
    }

    /// A start tag moves the estimate (unless it closes itself in foreign content, and so
    /// holds nothing); whether its element is a foreign one.
    fn start(&mut self, tag: &Tag) -> bool {
        if self.foreign() && breaks_out(tag) {
            while self.foreign() {
                self.switches.pop();
            }
        }
        let root = FOREIGN_ROOTS.contains(&&*tag.name);
        let foreign = self.foreign() || root;
        if !tag.self_closing {
            if !self.foreign() && root {
                self.switches.push((tag.name.clone(), true));
            } else if self.foreign() && INTEGRATION_POINTS.contains(&&*tag.name) {
                self.switches.push((tag.name.clone(), false));
            }
        }
        foreign
    }

    fn end(&mut self, name: &LocalName) {
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
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(&String::from_utf8_lossy(page)));
    let estimate = Estimate {
        max_depth,
        max_elements,
        ..Estimate::default()
    };
    let tokenizer = Tokenizer::new(Sink(RefCell::new(estimate)), TokenizerOpts::default());
    // The sink pauses the tokenizer (as for a script) only at an excess, where the reading
    // stops; `end` is not called, as what it flushes holds no start tag.
    let _ = tokenizer.feed(&input);
    tokenizer.sink.0.into_inner().excess
}

/// The estimate so far: the open elements by name, and what they add up to.
#[derive(Default)]
struct Estimate {
    max_depth: usize,
    max_elements: usize,
    open: HashMap<LocalName, usize>,
    depth: usize,
    elements: usize,
    content: Content,
    excess: Option<Excess>,
}

impl Estimate {
    fn start(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        self.elements += 1;
        if self.elements > self.max_elements {
            return self.stop(Excess::Elements);
        }
        let foreign = self.content.start(tag);
        if foreign && tag.self_closing {
            return TokenSinkResult::Continue;
        }
        if let Some(kind) = raw_text(&tag.name).filter(|_| !foreign) {
            return TokenSinkResult::RawData(kind);
        }
        if !NOT_NESTING.contains(&&*tag.name) {
            *self.open.entry(tag.name.clone()).or_default() += 1;
            self.depth += 1;
            if self.depth > self.max_depth {
                return self.stop(Excess::Depth);
            }
        }
        TokenSinkResult::Continue
    }

    fn end(&mut self, name: &LocalName) {
        self.content.end(name);
        if let Some(count) = self.open.get_mut(name).filter(|c| **c > 0) {
            *count -= 1;
            self.depth -= 1;
        }
    }

    fn stop(&mut self, excess: Excess) -> TokenSinkResult<()> {
        self.excess = Some(excess);
        TokenSinkResult::Script(())
    }
}

struct Sink(RefCell<Estimate>);

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut estimate = self.0.borrow_mut();
        match token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => estimate.start(&tag),
            Token::TagToken(tag) => {
                estimate.end(&tag.name);
                TokenSinkResult::Continue
            }
            _ => TokenSinkResult::Continue,
        }
    }
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

    /// Each of these hid its `<section>`s or `<g>`s from the hand-written tag scanner this
    /// module had: an empty comment it read to the page's end, a `/` it took for a
    /// self-closing one (in an unquoted or a quoted attribute value), and a `<font>` that
    /// leaves the SVG only with some attributes.
    #[test]
    fn tags_are_read_as_the_parser_reads_them() {
        let sections = "<section>".repeat(400);
        assert_eq!(depth(&format!("<!-->{sections}")), 400);
        assert_eq!(depth(&format!("<!--->{sections}")), 400);
        assert_eq!(depth(&("<svg>".to_string() + &"<g d=a/>".repeat(400))), 401);
        assert_eq!(
            depth(&("<svg>".to_string() + &"<g t='/>'>".repeat(400))),
            401
        );
        let font = "<svg><font color=red>".to_string() + &"<section/>".repeat(400);
        assert_eq!(depth(&font), 402, "an HTML `<font>` after the SVG");
        let svg_font = "<svg><font>".to_string() + &"<section/>".repeat(400);
        assert_eq!(depth(&svg_font), 2, "an SVG `<font>`");
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
