//! HTML to plain text: the visible text of a page (no scripts, styles or markup) with one line
//! per block element, a blank line around a heading or a caption (a paragraph of its own, not
//! the start of the sentence under it), and white space collapsed as a browser shows it (kept
//! in `<pre>`), and its title from `<title>`, else the first heading.
//!
//! The page goes through html5ever's tokenizer only, never a tree builder: one pass over the
//! tokens, each handled in constant time (amortised), so the time is linear in the page
//! whatever its nesting. The tree builder checks the stack of open elements for every start
//! tag, which made 200,000 nested `<div>`s (2.2 MB) take over two minutes. What the tree
//! builder would have added (implied end tags, a `<head>` closed by body content) is followed
//! where it changes the text. This module only converts text; it does not read files, decode
//! bytes or decide the fallback title.

use std::cell::RefCell;

use html5ever::LocalName;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Elements whose content is not text a reader sees.
const HIDDEN: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "iframe", "object",
];

/// What may stand in `<head>`; any other start tag ends it, as the tree builder does.
const HEAD_CONTENT: &[&str] = &[
    "title", "meta", "link", "base", "style", "script", "noscript", "template",
];

/// Elements whose white space is kept.
const PREFORMATTED: &[&str] = &["pre", "listing", "textarea", "plaintext"];

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

const HEADINGS: &[&str] = &["h1", "h2", "h3", "h4", "h5", "h6"];

/// Elements that title what follows them: a paragraph of their own, set apart by blank lines,
/// so that no sentence runs on from one into the text under it ("2.7 Thread Safety" over
/// "libffi is not completely thread-safe.").
const TITLES: &[&str] = &["h1", "h2", "h3", "h4", "h5", "h6", "caption"];

/// The visible text of an HTML page and its title, if it has one.
pub fn to_text(source: &str) -> (Option<String>, String) {
    let page = walk(source);
    (page.title, page.text)
}

/// What one pass over a page gives.
#[derive(Debug)]
struct Page {
    title: Option<String>,
    text: String,
    /// Tokens handled and hidden elements closed: the walk's work, linear in the page (what
    /// the tests check).
    #[cfg(test)]
    steps: usize,
}

fn walk(source: &str) -> Page {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(source));
    let tokenizer = Tokenizer::new(Sink::default(), TokenizerOpts::default());
    // The sink never asks to run a script, so one call reads the whole input.
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let state = tokenizer.sink.state.into_inner();
    let title = state.title.or(state.heading);
    Page {
        title,
        text: state.text.out,
        #[cfg(test)]
        steps: state.steps,
    }
}

#[derive(Default)]
struct Sink {
    state: RefCell<State>,
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut state = self.state.borrow_mut();
        state.steps += 1;
        match token {
            Token::TagToken(tag) => return state.tag(&tag),
            Token::CharacterTokens(text) => state.characters(&text),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// Where the pass is.
#[derive(Default)]
struct State {
    text: Text,
    /// The open hidden elements (indices into [`HIDDEN`]), innermost last, and how many of
    /// each are open, so that an end tag with none open costs nothing.
    hidden: Vec<usize>,
    open: [usize; HIDDEN.len()],
    preformatted: usize,
    title: Option<String>,
    heading: Option<String>,
    capture: Option<Capture>,
    steps: usize,
}

/// Text being collected for the title or the first heading.
struct Capture {
    title: bool,
    text: Text,
}

impl State {
    fn tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        match tag.kind {
            TagKind::StartTag => {
                if self.open[0] > 0 && !HEAD_CONTENT.contains(&name) {
                    self.close_hidden(0);
                }
                self.start(name, tag.self_closing);
                raw_state(&tag.name)
            }
            TagKind::EndTag => {
                self.end(name);
                TokenSinkResult::Continue
            }
        }
    }

    fn start(&mut self, name: &str, self_closing: bool) {
        if let Some(i) = HIDDEN.iter().position(|h| *h == name) {
            if !self_closing {
                self.hidden.push(i);
                self.open[i] += 1;
            }
        } else if PREFORMATTED.contains(&name) {
            self.preformatted += 1;
        }
        if name == "title" && self.title.is_none() && self.capture.is_none() {
            self.capture = Some(Capture::new(true));
        } else if HEADINGS.contains(&name) && self.wants_heading() {
            self.capture = Some(Capture::new(false));
        }
        self.block_edge(name);
    }

    /// A block element starts or ends a line, a title a paragraph.
    fn block_edge(&mut self, name: &str) {
        if !self.hidden.is_empty() {
            return;
        }
        if TITLES.contains(&name) {
            self.text.paragraph();
        } else if BLOCKS.contains(&name) {
            self.text.newline();
        }
    }

    fn end(&mut self, name: &str) {
        if let Some(i) = HIDDEN.iter().position(|h| *h == name) {
            self.close_hidden(i);
        } else if PREFORMATTED.contains(&name) {
            self.preformatted = self.preformatted.saturating_sub(1);
        }
        let closes_capture = match &self.capture {
            Some(c) if c.title => name == "title",
            Some(_) => HEADINGS.contains(&name),
            None => false,
        };
        if closes_capture && let Some(capture) = self.capture.take() {
            let text = capture.text.out.trim().to_string();
            if !text.is_empty() {
                *(if capture.title {
                    &mut self.title
                } else {
                    &mut self.heading
                }) = Some(text);
            }
        }
        self.block_edge(name);
    }

    /// Closes the innermost open hidden element `i` and every one opened inside it.
    fn close_hidden(&mut self, i: usize) {
        if self.open[i] == 0 {
            return;
        }
        while let Some(top) = self.hidden.pop() {
            self.steps += 1;
            self.open[top] -= 1;
            if top == i {
                break;
            }
        }
    }

    fn wants_heading(&self) -> bool {
        self.heading.is_none() && self.capture.is_none() && self.hidden.is_empty()
    }

    fn characters(&mut self, text: &str) {
        if let Some(capture) = self.capture.as_mut()
            && (capture.title || self.hidden.is_empty())
        {
            capture.text.push(text, false);
        }
        if self.hidden.is_empty() {
            self.text.push(text, self.preformatted > 0);
        }
    }
}

impl Capture {
    fn new(title: bool) -> Capture {
        Capture {
            title,
            text: Text::default(),
        }
    }
}

/// How the tokenizer reads the content of an element, as the tree builder would tell it: the
/// text of `<script>` or `<style>` is not markup.
fn raw_state(name: &LocalName) -> TokenSinkResult<()> {
    match &**name {
        "script" => TokenSinkResult::RawData(RawKind::ScriptData),
        "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
            TokenSinkResult::RawData(RawKind::Rawtext)
        }
        "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
        "plaintext" => TokenSinkResult::Plaintext,
        _ => TokenSinkResult::Continue,
    }
}

/// Text as a browser lays it out: runs of white space one space, none at the start of a line,
/// a line break where a block starts or ends; preformatted text as it is.
#[derive(Default)]
struct Text {
    out: String,
    space: bool,
}

impl Text {
    fn push(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            self.out.push_str(text);
            self.space = false;
            return;
        }
        for c in text.chars() {
            if c.is_whitespace() {
                self.space = true;
                continue;
            }
            if self.space && !self.out.is_empty() && !self.out.ends_with('\n') {
                self.out.push(' ');
            }
            self.space = false;
            self.out.push(c);
        }
    }

    fn newline(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.space = false;
    }

    /// Ends the line and leaves one blank line: a paragraph ends here.
    fn paragraph(&mut self) {
        self.newline();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_and_visible_text() {
        let page = "<!doctype html><html><head><title> Solid-state\n batteries </title>\
            <style>p { color: red }</style><script>var hidden = 1 < 2;</script></head>\
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

    /// A heading is a paragraph of its own: a blank line after it, so the sentence under it
    /// (in lower case, as a name can be) is not read on from it.
    #[test]
    fn a_heading_or_a_caption_is_a_paragraph_of_its_own() {
        let (_, text) = to_text(
            "<p>Intro.</p><h2>2.7 Thread Safety</h2><p>libffi is not completely thread-safe.</p>\
             <table><caption>Limits</caption><tr><td>threads</td></tr></table>",
        );
        assert_eq!(
            text,
            "Intro.\n\n2.7 Thread Safety\n\nlibffi is not completely thread-safe.\n\nLimits\n\n\
             threads\n"
        );
    }

    #[test]
    fn title_falls_back_to_the_first_heading() {
        let (title, _) = to_text(
            "<html><body><p>x</p><h2></h2><h2>Sub <i>title</i></h2><h1>Later</h1></body></html>",
        );
        assert_eq!(title.as_deref(), Some("Sub title"));
        assert_eq!(to_text("<p>no heading</p>").0, None);
        let (title, _) = to_text("<svg><title>icon</title></svg><h1>Real</h1>");
        assert_eq!(
            title.as_deref(),
            Some("icon"),
            "a page's first <title> wins"
        );
    }

    /// Source lines wrapped inside a paragraph are one line of text, as a browser shows them;
    /// `<pre>` keeps its lines.
    #[test]
    fn wrapped_source_lines_are_one_line_and_pre_keeps_its_own() {
        let page = "<p>A patent must be licensed\n   for everyone's free use\n\tor not \
                    licensed at all.</p>\n\n<pre>line one\n  line two</pre><div>  next  </div>";
        let (_, text) = to_text(page);
        assert_eq!(
            text,
            "A patent must be licensed for everyone's free use or not licensed at all.\n\
             line one\n  line two\nnext\n"
        );
    }

    #[test]
    fn a_head_without_its_end_tag_ends_where_the_body_starts() {
        let (title, text) = to_text("<head><title>T</title><meta charset=utf-8><p>Body text.");
        assert_eq!(title.as_deref(), Some("T"));
        assert!(text.contains("Body text."), "{text}");
        let (_, text) = to_text("<svg><g><svg></g></svg>hidden</svg></object></svg>shown");
        assert_eq!(text, "shown", "unbalanced end tags close what they can");
    }

    /// The walk's work grows with the page, not with its depth: 200,000 nested `<div>`s (the
    /// tree builder's quadratic case, over two minutes) take the steps 200,000 siblings do.
    #[test]
    fn deep_nesting_takes_linear_work_and_keeps_the_text() {
        let n = 200_000;
        let nested = format!("{}deep{}", "<div>".repeat(n), "</div>".repeat(n));
        let siblings = format!("{}deep", "<div></div>".repeat(n));
        let deep = walk(&nested);
        assert_eq!(deep.text.trim(), "deep");
        let flat = walk(&siblings);
        assert_eq!(flat.text.trim(), "deep");
        assert!(deep.steps <= 2 * n + 10, "{}", deep.steps);
        assert_eq!(deep.steps, flat.steps);
        let hidden = format!("{}x{}shown", "<svg>".repeat(n), "</object>".repeat(n));
        let page = walk(&hidden);
        assert!(page.text.is_empty(), "{}", page.text);
        assert!(page.steps <= 2 * n + 10, "{}", page.steps);
        let closed = format!("{}x{}shown", "<svg>".repeat(n), "</svg>".repeat(n));
        let page = walk(&closed);
        assert_eq!(page.text, "shown");
        assert!(page.steps <= 3 * n + 10, "{}", page.steps);
    }
}
