//! HTML to plain text: the visible text of a page (no scripts, styles or markup) with one line
//! per block element, a blank line around a heading or a caption (a paragraph of its own, not
//! the start of the sentence under it), and white space collapsed as a browser shows it (kept
//! in `<pre>`), and its title from `<title>`, else the first heading.
//!
//! What a person does not read as prose is set apart or left out ([`super::html_roles`] says
//! which is which): code (`<pre>`, and what a class calls code) and signatures (Sphinx's
//! `<dt class="sig">`, Texinfo's definitions) go between fence lines ([`super::fence`]), where
//! they stay searchable but are never quoted as a sentence; navigation (`<nav>`, Sphinx's
//! `related` bar and sidebar, Texinfo's `Next:` header) and permalink marks (`¶`) are left
//! out. A `<pre>` that no class calls code and that reads as prose (a mail kept as typed) is
//! prose, its wrapped lines joined. Only what this module fences is fenced: a line of the
//! page's own text that would read as a fence (literal backticks) is escaped
//! ([`fence::escape_fences`]), lest it pair with a fence of ours and swap prose and code.
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

use super::html_layout::{BLOCKS, TITLES, Text};
use super::{fence, html_roles, paragraphs};

/// Elements whose content is not text a reader sees.
const HIDDEN: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "iframe", "object", "nav",
];

/// What may stand in `<head>`; any other start tag ends it, as the tree builder does.
const HEAD_CONTENT: &[&str] = &[
    "title", "meta", "link", "base", "style", "script", "noscript", "template",
];

/// Elements whose white space is kept.
const PREFORMATTED: &[&str] = &["pre", "listing", "textarea", "plaintext"];

const HEADINGS: &[&str] = &["h1", "h2", "h3", "h4", "h5", "h6"];

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
    /// The byte ranges of the blocks the walk fenced, fences included (what the tests find
    /// again with [`fence::spans`]).
    #[cfg(test)]
    fenced: Vec<std::ops::Range<usize>>,
}

fn walk(source: &str) -> Page {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(source));
    let tokenizer = Tokenizer::new(Sink::default(), TokenizerOpts::default());
    // The sink never asks to run a script, so one call reads the whole input.
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let mut state = tokenizer.sink.state.into_inner();
    state.finish_block();
    state.prose.end(&mut state.text.out);
    let title = state.title.or(state.heading);
    Page {
        title,
        text: state.text.out,
        #[cfg(test)]
        steps: state.steps,
        #[cfg(test)]
        fenced: state.fenced,
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
            Token::CommentToken(text) => state.texinfo |= text.contains("GNU Texinfo"),
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
    /// A navigation bar or a permalink being left out, up to its end.
    left_out: Option<Region>,
    /// A `<div>` whose class says code: a `<pre>` in it is code.
    code_context: Option<Region>,
    /// Code or a signature being read, to be fenced at its end.
    block: Option<Block>,
    /// The page's own text written since the last fence, escaped at the next fence or at the
    /// end ([`fence::Prose`]).
    prose: fence::Prose,
    /// The blocks fenced so far ([`Page::fenced`]).
    #[cfg(test)]
    fenced: Vec<std::ops::Range<usize>>,
    /// For each open `<dl>`, whether its terms are signatures.
    lists: Vec<bool>,
    /// The page says Texinfo made it (its comment `Created by GNU Texinfo`, or its generator).
    texinfo: bool,
    title: Option<String>,
    heading: Option<String>,
    capture: Option<Capture>,
    steps: usize,
}

/// An element read up to its end tag: its name, and how many elements of that name are open
/// inside it (their end tags are not its own).
struct Region {
    name: String,
    depth: usize,
}

impl Region {
    fn new(name: &str) -> Region {
        Region {
            name: name.to_string(),
            depth: 0,
        }
    }

    fn open(&mut self, name: &str) {
        if name == self.name {
            self.depth += 1;
        }
    }

    /// Counts an end tag: whether it ends the region.
    fn close(&mut self, name: &str) -> bool {
        if name != self.name {
            return false;
        }
        match self.depth.checked_sub(1) {
            Some(depth) => {
                self.depth = depth;
                false
            }
            None => true,
        }
    }
}

/// Code or a signature whose text starts at `start` in the text: fenced at its end, unless
/// nothing says it is code (`code` false: a bare `<pre>`) and it reads as prose.
struct Block {
    region: Region,
    start: usize,
    code: bool,
    /// Whether any text came in it yet.
    written: bool,
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
                self.texinfo |= html_roles::made_by_texinfo(tag);
                match self.left_out.as_mut() {
                    Some(region) => region.open(name),
                    None if self.hidden.is_empty()
                        && !tag.self_closing
                        && html_roles::is_left_out(tag, self.texinfo) =>
                    {
                        self.left_out = Some(Region::new(name));
                    }
                    None => self.start(tag),
                }
                raw_state(&tag.name)
            }
            TagKind::EndTag => {
                match self.left_out.as_mut() {
                    Some(region) => {
                        if region.close(name) {
                            self.left_out = None;
                        }
                    }
                    None => self.end(name),
                }
                TokenSinkResult::Continue
            }
        }
    }

    fn start(&mut self, tag: &Tag) {
        let name: &str = &tag.name;
        if let Some(i) = HIDDEN.iter().position(|h| *h == name) {
            if !tag.self_closing {
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
        // A term ends where the next term or its definition starts, its end tag or not.
        if matches!(name, "dt" | "dd") {
            self.end_signature();
        }
        match name {
            "dl" => self.lists.push(html_roles::lists_signatures(tag)),
            "div" => match self.code_context.as_mut() {
                Some(context) => context.open(name),
                None if html_roles::is_code(tag) => self.code_context = Some(Region::new(name)),
                None => {}
            },
            _ => {}
        }
        self.block_edge(name);
        self.open_block(tag);
    }

    /// Starts reading code or a signature at `tag`, or counts `tag` in the one being read.
    fn open_block(&mut self, tag: &Tag) {
        let name: &str = &tag.name;
        if let Some(block) = self.block.as_mut() {
            block.region.open(name);
            // `<pre><code>`: code by its markup.
            let markup = matches!(name, "code" | "kbd" | "samp");
            if block.region.name == "pre" && !block.written && markup {
                block.code = true;
            }
            return;
        }
        if !self.hidden.is_empty() {
            return;
        }
        let in_signatures = self.lists.last() == Some(&true);
        let code = match name {
            "pre" => self.code_context.is_some() || html_roles::is_code(tag),
            "dt" if html_roles::is_signature(tag, in_signatures) => true,
            _ => return,
        };
        self.block = Some(Block {
            region: Region::new(name),
            start: self.text.out.len(),
            code,
            written: false,
        });
    }

    /// Ends the signature being read, if one is.
    fn end_signature(&mut self) {
        if self.block.as_ref().is_some_and(|b| b.region.name == "dt") {
            self.finish_block();
        }
    }

    /// Sets the block read apart: between fences, or as prose when nothing says it is code
    /// and it reads as prose.
    fn finish_block(&mut self) {
        let Some(block) = self.block.take() else {
            return;
        };
        let body = self.text.out.split_off(block.start);
        if !block.code && fence::reads_as_prose(&body) {
            self.text.out.push_str(&paragraphs::join_wrapped(&body));
            self.text.newline();
        } else {
            let _block = self.prose.fence(&mut self.text.out, &body);
            #[cfg(test)]
            if !_block.is_empty() {
                self.fenced.push(_block);
            }
        }
        self.text.space = false;
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
        if let Some(context) = self.code_context.as_mut()
            && context.close(name)
        {
            self.code_context = None;
        }
        if name == "dl" {
            self.end_signature();
            self.lists.pop();
        }
        if let Some(block) = self.block.as_mut()
            && block.region.close(name)
        {
            self.finish_block();
        }
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
        // A permalink's mark (`¶`, or the icon font's glyph a Sphinx theme uses for it).
        if self.left_out.is_some() || matches!(text.trim(), "\u{b6}" | "\u{f0c1}") {
            return;
        }
        if let Some(capture) = self.capture.as_mut()
            && (capture.title || self.hidden.is_empty())
        {
            capture.text.push(text, false);
        }
        if self.hidden.is_empty() {
            self.text.push(text, self.preformatted > 0);
            if let Some(block) = self.block.as_mut() {
                block.written |= !text.trim().is_empty();
            }
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
    /// `<pre>` keeps its lines, between fences.
    #[test]
    fn wrapped_source_lines_are_one_line_and_pre_keeps_its_own() {
        let page = "<p>A patent must be licensed\n   for everyone's free use\n\tor not \
                    licensed at all.</p>\n\n<pre>line one\n  line two</pre><div>  next  </div>";
        let (_, text) = to_text(page);
        assert_eq!(
            text,
            "A patent must be licensed for everyone's free use or not licensed at all.\n\
             ```\nline one\n  line two\n```\nnext\n"
        );
    }

    /// A page of Python's library reference as Sphinx writes it: the navigation bar and the
    /// sidebar are left out, and the `¶` links; the code block and the signature are fenced,
    /// each on lines of its own; the prose keeps its sentences whole.
    #[test]
    fn sphinx_code_and_signatures_are_fenced_and_navigation_left_out() {
        let page = r##"<div class="related" role="navigation"><h3>Navigation</h3><ul>
            <li><a href="mailbox.html">next</a> |</li></ul></div>
            <div class="body" role="main"><h1>json — JSON<a class="headerlink" href="#m">¶</a></h1>
            <p>Encoding with sorted keys:</p>
            <div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span>
<span class="n">json</span>.dumps({"c": 0}, sort_keys=True)
</pre></div></div>
            <dl class="py function"><dt class="sig sig-object py" id="json.dumps"><span class="pre">json.</span><span class="pre">dumps</span>(<em>obj</em>, <em>*</em>, <em>sort_keys=False</em>)<a class="headerlink" href="#json.dumps">¶</a></dt>
            <dd><p>Serialize <em>obj</em> to a JSON formatted str.</p>
            <div class="versionadded"><p><span class="versionmodified added">New in version 3.5.</span></p></div>
            </dd></dl>
            <dl class="function"><dt id="json.load">json.load(fp)</dt><dd><p>Deserialize fp.</p></dd></dl>
            </div><div class="sphinxsidebar" role="navigation"><h4>Previous topic</h4></div>"##;
        let (title, text) = to_text(page);
        assert_eq!(title.as_deref(), Some("json — JSON"));
        assert_eq!(
            text,
            "json — JSON\n\nEncoding with sorted keys:\n\
             ```\njson.dumps({\"c\": 0}, sort_keys=True)\n```\n\
             ```\njson.dumps(obj, *, sort_keys=False)\n```\n\
             Serialize obj to a JSON formatted str.\nNew in version 3.5.\n\
             ```\njson.load(fp)\n```\nDeserialize fp.\n"
        );
    }

    /// A Texinfo page: the `Next:` header is left out, the definition's signature (its `¶`
    /// anchor left out) and the example are fenced; a plain definition list is prose. Another
    /// generator's `header` (Doxygen's title) is kept.
    #[test]
    fn texinfo_examples_and_definitions_are_fenced_and_its_header_left_out() {
        let doxygen = "<div class=\"header\"><div class=\"title\">Frob Class Reference</div></div>";
        assert_eq!(to_text(doxygen).1, "Frob Class Reference\n");
        let page = "<!-- Created by GNU Texinfo 6.8 --><div class=\"header\"><p>Next: <a href=\"b.html\">Simple Example</a>, \
            Up: <a href=\"u.html\">Using libffi</a></p></div><hr>\
            <h3 class=\"section\">2.1 The Basics</h3>\
            <dl class=\"def\"><dt id=\"index-ffi_005fcall\"><span class=\"category\">Function: \
            </span><span><strong>void</strong> <em>ffi_call (ffi_cif *<var>cif</var>)</em>\
            <a href='#index-ffi_005fcall' class='copiable-anchor'> &para;</a></span></dt>\
            <dd><p>This calls the function.</p></dd></dl>\
            <div class=\"example\"><pre class=\"example\">ffi_call(&amp;cif, puts, &amp;rc, values);\n\
            </pre></div><dl><dt>nargs</dt><dd>The number of arguments.</dd></dl>";
        let (_, text) = to_text(page);
        assert_eq!(
            text,
            "2.1 The Basics\n\n```\nFunction: void ffi_call (ffi_cif *cif)\n```\n\
             This calls the function.\n```\nffi_call(&cif, puts, &rc, values);\n```\n\
             nargs\nThe number of arguments.\n"
        );
    }

    /// A `<pre>` no class calls code is prose when it reads as prose (a mail kept as typed, its
    /// lines joined), code otherwise; `<pre><code>` is code whatever it reads like.
    #[test]
    fn a_bare_pre_that_reads_as_prose_is_prose() {
        let mail = "<pre>Dear all, the meeting moves to Thursday this week\nand starts at ten in \
                    the morning, as before.\n\nPlease tell me if that does not suit you.</pre>";
        assert_eq!(
            to_text(mail).1,
            "Dear all, the meeting moves to Thursday this week and starts at ten in the \
             morning, as before.\nPlease tell me if that does not suit you.\n"
        );
        let code = "<pre><code>Dear all, the meeting moves to Thursday this week and starts \
                    at ten.</code></pre>";
        assert!(to_text(code).1.starts_with("```\n"), "{}", to_text(code).1);
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
        // Inside code or navigation, the nesting is counted, never searched.
        let code = format!(
            "<div class=highlight><pre>{}x{}</pre></div>shown",
            "<div>".repeat(n),
            "</div>".repeat(n)
        );
        let page = walk(&code);
        assert_eq!(page.text, "```\nx\n```\nshown");
        assert!(page.steps <= 2 * n + 10, "{}", page.steps);
        let nav = format!(
            "<div class=related>{}x{}</div>shown",
            "<div>".repeat(n),
            "</div>".repeat(n)
        );
        assert_eq!(walk(&nav).text, "shown");
        // A highlighted block is a tag per word: each costs the same, however long the block.
        let spans = format!("<pre>{}</pre>", "<span>x</span>".repeat(n));
        let page = walk(&spans);
        assert_eq!(page.text.len(), n + "```\n\n```\n".len());
        assert!(page.steps <= 3 * n + 10, "{}", page.steps);
    }

    /// A line of the page's prose made of backticks (in a paragraph about Markdown, after a
    /// stray `</pre>`) is escaped: it stays prose, and the code after it is what is fenced.
    #[test]
    fn backticks_in_the_prose_fence_nothing() {
        let page = walk(
            "<p>Markdown opens a code block with<br>```<br>and closes it the same way.</p>\
             <pre class=\"highlight\">x = 1</pre><p>After the code.</p>",
        );
        assert_eq!(
            page.text,
            "Markdown opens a code block with\n\\```\nand closes it the same way.\n\
             ```\nx = 1\n```\nAfter the code.\n"
        );
        let pre = std::ops::Range { start: 3, end: 6 };
        assert_eq!(fence::spans(page.text.lines()), vec![pre]);
        assert_eq!(fence::byte_spans(&page.text), page.fenced);
        // What a random seed of the property test below found: a stray `</pre>`.
        assert_eq!(walk("<code></pre>```` ").text, "\\````");
        // In a bare `<pre>` read as code, a line of backticks is code: the fence outgrows it.
        let bare = walk("<p>`</p><p>``</p><pre>```\nx\n```</pre>");
        assert_eq!(bare.text, "`\n``\n````\n```\nx\n```\n````\n");
        assert_eq!(fence::byte_spans(&bare.text), bare.fenced);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 300,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Any soup of the tags and classes this module acts on, balanced or not, and of text
        /// with backticks (runs of three as well, which make a line look like a fence), reads
        /// without a panic, and what a reader of its text takes for code ([`fence::spans`]) is
        /// exactly what it fenced: every fence closed, and no line of its prose a fence.
        #[test]
        fn any_tag_soup_reads_without_a_panic(
            tags in proptest::collection::vec(
                "<(/?)(pre|div|dt|dd|dl|a|nav|code|p|h2|script)( class=\"(highlight|sig|def|related|headerlink|header|py function|example)\")?>|[a-z \n¶`]{0,8}|`{3,4}|<!-- GNU Texinfo -->",
                0..40,
            )
        ) {
            let source = tags.concat();
            let page = walk(&source);
            proptest::prop_assert_eq!(
                fence::byte_spans(&page.text), page.fenced.clone(), "{:?} gave {:?}", source, page.text
            );
            let stray = fence::stray_fence(&page.text, &page.fenced);
            proptest::prop_assert!(stray.is_none(), "{source:?} gave {:?}", page.text);
        }
    }
}
