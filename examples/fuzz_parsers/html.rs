//! HTML, by both paths a page takes: a fetched page through `read::extract::extract` (the
//! nesting estimate, Readability, `search::local::html::to_text`, the text's hygiene) and a
//! corpus file's through `decode::html` and `html::to_text`. Never panics, never overflows the
//! stack, stays within the time and memory bounds; a page's text is trimmed, not empty, free
//! of control and private-use characters, its title one line of at most 300 characters; the
//! visible words of a generated page come out of `to_text` in order, and its `<title>` is the
//! title.
//!
//! The generator is structure-aware: nesting from a few levels to tens of thousands, of
//! ordinary elements and of the ones a byte-level estimate misreads (`<div/>`, which is not
//! self-closing in HTML; `<title>` and `<style>` inside `<svg>` or `<math>`, which are not raw
//! text there), foreign content, raw-text elements, unclosed comments, entities, mixed case.

use researchflow::read::extract::{Body, PageKind, extract};
use researchflow::search::hit::TITLE_MAX_CHARS;
use researchflow::search::local::{decode, html};

use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

/// Pieces that nest: an opening and its end tag (empty when it has none). The last ones are
/// those the nesting estimate reads as not nesting.
const NESTS: &[(&str, &str)] = &[
    ("<div>", "</div>"),
    ("<span>", "</span>"),
    ("<section>", "</section>"),
    ("<b>", "</b>"),
    ("<DIV class=\"x\">", "</DIV>"),
    ("<table><tr><td>", "</td></tr></table>"),
    ("<ul><li>", "</li></ul>"),
    ("<blockquote>", "</blockquote>"),
    ("<div>", ""),
    ("<a href=\"#\">", "</a>"),
    ("<font>", "</font>"),
    ("<div/>", ""),
    ("<span/>", ""),
    ("<section />", ""),
];

/// Openings after which the rest of a page is foreign or raw content, hidden from `to_text`
/// or read by it as text: no words are expected after one.
const FOREIGN: &[&str] = &[
    "<svg><title>",
    "<svg><style>",
    "<math><title>",
    "<math><style>",
    "<svg><desc>",
    "<svg><foreignObject><p>",
    "<math><mi>x</mi><annotation-xml encoding=\"text/html\"><div>",
    "<svg><g><text>",
    "<math><mtext>",
    "<template>",
    "<noscript>",
    "<!--",
    "<script>",
    "<style>",
    "<textarea>",
    "<title>",
    "<xmp>",
    "<iframe>",
    "<noembed>",
    "<noframes>",
    "<plaintext>",
    "<svg>",
    "<object>",
];

/// Content that shows no words (or whose words are not counted on).
const HIDDEN: &[&str] = &[
    "<script>if (a < b && c > d) { x('</div>'); }</script>",
    "<style>p { content: \"<div>\" }</style>",
    "<!-- <div><div> -->",
    "<!---->",
    "<svg><path d=\"M0 0\"/><title>icon</title></svg>",
    "<math><mi>x</mi></math>",
    "<template><div>t</div></template>",
    "<p>a &amp; b &lt;c&gt; &#x1F600; &nbsp;&notin &#0; &#x1b; &#128; &#xD800; &#1114112;</p>",
    "<p>esc\u{1b}[31m red\u{1b}[0m \u{7f}\u{0}\u{85}\u{e000}</p>",
    "<img src=x alt=y><br/><hr>",
    "<select><option>o</select>",
    "<![CDATA[ c ]]>",
];

pub struct HtmlTarget {
    seeds: Vec<Vec<u8>>,
}

impl HtmlTarget {
    pub fn new() -> HtmlTarget {
        let mut seeds: Vec<Vec<u8>> = [
            "<!DOCTYPE html><html><head><title>T</title></head><body><p>Hi.</p></body></html>",
            "<html><body><svg><title><div><div><div>x",
            "<div/><div/><div/><p>x</p>",
            "<math><style><div>a</div></style></math><p>b",
            "<!-- never closed <div>",
            "<p>&amp;&lt;&#0;&#x110000;&notanentity;</p>",
        ]
        .map(|s| s.as_bytes().to_vec())
        .to_vec();
        let mut g = Gen::new(5);
        seeds.extend((0..16).map(|_| valid_page(&mut g).bytes));
        HtmlTarget { seeds }
    }
}

/// How deep a nested section goes: mostly shallow, sometimes past the estimate's limit of
/// 300, rarely tens of thousands (each of those costs seconds when the estimate is fooled).
fn depth(g: &mut Gen) -> usize {
    match g.rng.u16(..10_000) {
        0 => g.log_size(3_000, 60_000),
        1..=10 => g.log_size(300, 3_000),
        11..=500 => g.log_size(50, 300),
        _ => g.rng.usize(1..50),
    }
}

/// A few words, pushed to `expect` when they are visible.
fn words(g: &mut Gen, page: &mut String, expect: Option<&mut Vec<String>>) {
    let words: Vec<String> = (0..g.rng.usize(1..6)).map(|_| g.word()).collect();
    // Spaces around: an inline tag next to a word does not end it.
    page.push_str(&format!(" {} ", words.join(" ")));
    if let Some(expect) = expect {
        expect.extend(words);
    }
}

/// A page of blocks, and the words it shows.
fn valid_page(g: &mut Gen) -> Input {
    let mut page = String::new();
    let mut expect: Vec<String> = Vec::new();
    let mut title = None;
    if g.rng.bool() {
        page.push_str(g.pick(&["<!DOCTYPE html>", "<!doctype HTML>\n"]));
    }
    if g.rng.bool() {
        page.push_str("<html><head>");
        if g.rng.bool() {
            page.push_str("<meta charset=\"utf-8\">");
        }
        if g.rng.bool() {
            page.push_str("<title>");
            let mut t = Vec::new();
            words(g, &mut page, Some(&mut t));
            page.push_str("</title>");
            title = Some(t.join(" "));
        }
        page.push_str(g.pick(&["</head><body>", "<body>", ""]));
    }
    let mut visible = true;
    for _ in 0..g.rng.usize(1..8) {
        block(g, &mut page, &mut expect, &mut visible);
    }
    Input::new(
        page,
        Expect::Words {
            words: expect,
            title,
        },
    )
}

/// One block of a page; `visible` turns false after content that hides what follows.
fn block(g: &mut Gen, page: &mut String, expect: &mut Vec<String>, visible: &mut bool) {
    match g.rng.u8(..10) {
        0..=2 => {
            let open = g.pick(&["<p>", "<P>", "<h2>", "<li>", "<pre>", "<td>", "<Div>"]);
            page.push_str(open);
            words(g, page, (*visible).then_some(&mut *expect));
            if g.rng.bool() {
                page.push_str(&open.replace('<', "</").to_ascii_lowercase());
            }
        }
        3..=5 => {
            let (open, close) = NESTS[g.rng.usize(..NESTS.len())];
            let depth = depth(g);
            // A foreign element around the nesting, read by the estimate as raw text.
            if g.rng.u8(..4) == 0 {
                page.push_str(g.pick(FOREIGN));
                *visible = false;
            }
            page.push_str(&open.repeat(depth));
            page.push_str("<p>");
            words(g, page, (*visible).then_some(&mut *expect));
            page.push_str("</p>");
            if g.rng.bool() {
                page.push_str(&close.repeat(depth));
            }
        }
        6 => page.push_str(g.pick(HIDDEN)),
        7 => {
            page.push_str(g.pick(FOREIGN));
            *visible = false;
            words(g, page, None);
        }
        8 => {
            let text = g.text(60).replace(['<', '&'], " ");
            page.push_str(&format!("<p>{text}</p>"));
        }
        _ => {
            page.push_str("<ul>");
            for _ in 0..g.rng.usize(1..5) {
                page.push_str("<li>");
                words(g, page, (*visible).then_some(&mut *expect));
            }
            page.push_str("</ul>");
        }
    }
}

impl HtmlTarget {
    const TOKENS: &'static [&'static str] = &[
        "<div>",
        "</div>",
        "<div/>",
        "<DIV>",
        "<svg>",
        "</svg>",
        "<math>",
        "</math>",
        "<title>",
        "</title>",
        "<style>",
        "</style>",
        "<script>",
        "</script>",
        "<foreignObject>",
        "</foreignObject>",
        "<desc>",
        "<mi>",
        "<mtext>",
        "<annotation-xml encoding=\"text/html\">",
        "<textarea>",
        "<xmp>",
        "<iframe>",
        "<noscript>",
        "<plaintext>",
        "<template>",
        "<!--",
        "-->",
        "--!>",
        "<!---->",
        "<![CDATA[",
        "]]>",
        "<!doctype html>",
        "<html>",
        "<head>",
        "</head>",
        "<body>",
        "<p>",
        "</p>",
        "<table>",
        "<tr>",
        "<td>",
        "<li>",
        "<ul>",
        "<pre>",
        "<h1>",
        "</h1>",
        "<br/>",
        "<img src=x>",
        "<a href=x>",
        "<select>",
        "<option>",
        "<object>",
        "<frameset>",
        "<b>",
        "<font>",
        "&amp;",
        "&lt;",
        "&#0;",
        "&#x1b;",
        "&#128;",
        "&#xD800;",
        "&#1114112;",
        "&nbsp",
        "&notin;",
        "&",
        "<",
        ">",
        "/>",
        "=\"",
        "'",
        "\0",
        "\u{1b}[31m",
        "\u{e000}",
        "<meta charset=latin1>",
        "<meta charset=\"utf-16\">",
        "<Svg>",
        "<TiTlE>",
        " ",
        "\n",
    ];
}

impl Target for HtmlTarget {
    fn name(&self) -> &'static str {
        "html"
    }

    fn tokens(&self) -> &'static [&'static str] {
        HtmlTarget::TOKENS
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("<div>", "</div>"),
            ("<div/>", ""),
            ("<svg><title>", "</title></svg>"),
            ("<math><style>", ""),
            ("<span>", ""),
            ("<b><i>", "</i></b>"),
            ("<!--", "-->"),
            ("<table>", "</table>"),
        ]
    }

    fn binary(&self) -> bool {
        true
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_page(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let body = Body {
            url: "https://example.org/page",
            content_type: Some("text/html"),
            bytes: &input.bytes,
            cut: false,
        };
        match extract(&body) {
            Ok(page) => clean(&page.text, page.title.as_deref(), page.kind)?,
            Err(why) if why.is_empty() => return Err("an empty reason".into()),
            Err(_) => {}
        }
        let (source, _) = decode::html(&input.bytes, false);
        let (title, text) = html::to_text(&source);
        if let Expect::Words { words, title: want } = &input.expect {
            in_order(words, &text)?;
            if want.is_some() && title != *want {
                return Err(format!("title: {title:?}, not {want:?}"));
            }
        }
        Ok(())
    }
}

/// The promises of a page's text and title.
fn clean(text: &str, title: Option<&str>, kind: PageKind) -> Result<(), String> {
    if kind != PageKind::Html {
        return Err(format!("kind: {kind:?} for text/html"));
    }
    if text.is_empty() || text.trim() != text {
        return Err(format!("text: empty or untrimmed: {}", short(text)));
    }
    let bad = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || ('\u{E000}'..='\u{F8FF}').contains(&c)
    };
    if let Some(c) = text.chars().find(|&c| bad(c)) {
        return Err(format!(
            "control character: {c:?} in the text {}",
            short(text)
        ));
    }
    if let Some(title) = title
        && (title.is_empty()
            || title.contains(|c: char| c.is_control())
            || title.chars().count() > TITLE_MAX_CHARS)
    {
        return Err(format!("title: not one clean line: {}", short(title)));
    }
    Ok(())
}

/// Whether `words` come out in `text` in this order, each a whole word: `lost words` when
/// one is not there even inside another word, `glued words` when all are there but one runs
/// into a neighbour (read as one word, which a search for either cannot find). Both tests
/// match greedily, which finds an order whenever there is one.
pub fn in_order(words: &[String], text: &str) -> Result<(), String> {
    let mut at = 0;
    for (i, word) in words.iter().enumerate() {
        match text[at..].find(word.as_str()) {
            Some(found) => at += found + word.len(),
            None => return Err(missing("lost words", word, i, words.len(), text)),
        }
    }
    let mut got = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty());
    for (i, word) in words.iter().enumerate() {
        if !got.any(|w| w == word) {
            return Err(missing("glued words", word, i, words.len(), text));
        }
    }
    Ok(())
}

fn missing(kind: &str, word: &str, i: usize, n: usize, text: &str) -> String {
    format!(
        "{kind}: `{word}` (word {i} of {n}) in the text {}",
        short(text)
    )
}
