//! A fetched page's bytes to text, or the reason it has none: which kind of document it is
//! (its `Content-Type`, else its first bytes), its encoding (the header's charset, else what
//! [`decode`] reads from the bytes), and its text through the local corpus's readers. HTML
//! goes through Readability ([`dom_smoothie`]) first, so a page's navigation, footer and
//! sidebars do not crowd out its article. The text gets the hygiene of corpus documents:
//! no control characters, a title on one line.
//!
//! Pure work on bytes in memory: no network, no files. A page that gives no text is an
//! `Err` with a short reason for the event log, never a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use dom_smoothie::Readability;
use encoding_rs::Encoding;
use serde::{Deserialize, Serialize};

use super::nesting::{self, Excess};
use crate::search::hit::TITLE_MAX_CHARS;
use crate::search::local::decode::{self, Sniffed};
use crate::search::local::title::first_line_or_name;
use crate::search::local::{html, markdown, paragraphs, pdf, rst};
use crate::text::{one_line, strip_controls};

/// A larger HTML page is read whole with [`html::to_text`] (linear in the page), not given to
/// Readability, which builds a tree and scores it in several passes (a 740 KB page of ordinary
/// sections took 1.6 s in a debug build).
pub const MAX_READABILITY_BYTES: usize = 2 * 1024 * 1024;
/// An HTML page whose elements nest deeper than this is read whole too: Readability's cost
/// grows with the square of the nesting, and its recursion can overflow the stack
/// ([`super::nesting`]). Real pages stay well under it.
pub const MAX_READABILITY_NESTING: usize = 300;
/// An HTML page with more elements than this is read whole too: Readability scores every
/// element in several passes, and a flat page of 29,656 paragraphs (565 KB) took over 4 s.
pub const MAX_READABILITY_ELEMENTS: usize = 20_000;

/// An article with less text than this is Readability's guess on a page where it found none
/// (its own threshold): on such a short page the whole text is safer, and costs little.
const MIN_ARTICLE_CHARS: usize = 500;

/// Archive and compressed types: never documents.
const ARCHIVES: &[&str] = &[
    "application/zip",
    "application/gzip",
    "application/x-gzip",
    "application/x-tar",
    "application/x-bzip2",
    "application/x-xz",
    "application/x-7z-compressed",
    "application/x-rar-compressed",
    "application/vnd.rar",
    "application/zstd",
];

/// What the fetcher got for one URL.
pub struct Body<'a> {
    /// The final URL, after redirects.
    pub url: &'a str,
    /// The `Content-Type` header as sent (may carry `; charset=...`).
    pub content_type: Option<&'a str>,
    /// The body, already content-decoded (gzip etc.).
    pub bytes: &'a [u8],
    /// The fetcher stopped at its byte cap or deadline: this is the page's beginning.
    pub cut: bool,
}

/// The kind of document a page is, named as events and transcripts write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum PageKind {
    Html,
    Pdf,
    Text,
    Markdown,
    /// reStructuredText, read as [`crate::search::local::rst`] reads a corpus's.
    Rst,
}

/// A page's text: one line per paragraph, clean of control characters, never empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageText {
    pub kind: PageKind,
    /// One line, when the page has one.
    pub title: Option<String>,
    pub text: String,
    /// What the event log should say about the reading (a guessed encoding, a cut body).
    pub warnings: Vec<String>,
}

/// The kind of job a parser process reads a page with ([`crate::isolate`]).
pub const PAGE_JOB: &str = "page";

/// A page to read in a parser process: what [`Body`] holds but its bytes, which travel beside.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PageJob {
    pub url: String,
    pub content_type: Option<String>,
    pub cut: bool,
}

impl PageJob {
    /// [`extract`] on this job's page, whose bytes are `bytes`.
    pub fn extract(&self, bytes: &[u8]) -> Result<PageText, String> {
        extract(&Body {
            url: &self.url,
            content_type: self.content_type.as_deref(),
            bytes,
            cut: self.cut,
        })
    }
}

/// The text of a fetched page, or why it gave none: a short reason a user reads in the event
/// log ("an image (image/png), not a document", "a PDF without a text layer", "it has no
/// text").
pub fn extract(body: &Body) -> Result<PageText, String> {
    let (media, charset) = media_type(body.content_type);
    let kind = kind(body, &media)?;
    if kind != PageKind::Pdf && decode::sniff(body.bytes) == Sniffed::Binary {
        return Err(format!(
            "binary data (NUL or control bytes in its first 8 KB) {}, not text",
            served(&media)
        ));
    }
    let mut warnings = Vec::new();
    let mut decoded = || {
        let (source, warning) = match charset {
            Some(encoding) => decode::declared(body.bytes, body.cut, encoding),
            None if kind == PageKind::Html => decode::html(body.bytes, body.cut),
            None => decode::text(body.bytes, body.cut),
        };
        warnings.extend(warning.map(|w| format!("the page {w}")));
        source
    };
    let (title, text) = match kind {
        PageKind::Pdf => pdf_text(body)?,
        PageKind::Markdown => markdown::to_text(&decoded()),
        PageKind::Rst => rst::to_text(&decoded()),
        PageKind::Text => {
            let source = decoded();
            // The title from the lines as written, before paragraphs are joined.
            (title_line(&source), paragraphs::join_wrapped(&source))
        }
        PageKind::Html => {
            let source = decoded();
            html_text(&source, &mut warnings)
        }
    };
    // Icon fonts put private-use characters in pages (a Sphinx theme's `¶` links are U+F0C1):
    // glyphs of one font, not text.
    let text: String = strip_controls(&text)
        .chars()
        .filter(|c| !('\u{E000}'..='\u{F8FF}').contains(c))
        .collect();
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err("it has no text".to_string());
    }
    if body.cut {
        warnings.push(
            "the page was cut at the fetcher's byte cap or deadline: only its beginning is read"
                .to_string(),
        );
    }
    let title = title
        .map(|t| one_line(&t, TITLE_MAX_CHARS))
        .filter(|t| !t.is_empty());
    Ok(PageText {
        kind,
        title,
        text,
        warnings,
    })
}

/// A `Content-Type`'s media type (lower case, without parameters; empty when there is none)
/// and the encoding its `charset` names, when it names one `encoding_rs` knows.
fn media_type(content_type: Option<&str>) -> (String, Option<&'static Encoding>) {
    let mut parts = content_type.unwrap_or_default().split(';');
    let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts.find_map(|param| {
        let (name, value) = param.split_once('=')?;
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| Encoding::for_label(value.as_bytes()))
            .flatten()
    });
    (media, charset)
}

/// The kind of document a page is by its media type, or by its bytes and URL when the type is
/// missing or generic; why it is not a document otherwise.
fn kind(body: &Body, media: &str) -> Result<PageKind, String> {
    let (top, sub) = media.split_once('/').unwrap_or((media, ""));
    let what = match media {
        "text/html" | "application/xhtml+xml" => return Ok(PageKind::Html),
        "application/pdf" | "application/x-pdf" => return Ok(PageKind::Pdf),
        "text/plain" => return Ok(PageKind::Text),
        "text/markdown" | "text/x-markdown" => return Ok(PageKind::Markdown),
        "text/x-rst" | "text/prs.fallenstein.rst" => return Ok(PageKind::Rst),
        "" | "application/octet-stream" | "binary/octet-stream" => return sniffed(body, media),
        // Other text (CSV, source code) reads as plain text.
        _ if top == "text" => return Ok(PageKind::Text),
        _ if top == "image" => "an image",
        _ if top == "audio" => "audio",
        _ if top == "video" => "a video",
        _ if top == "font" || sub.contains("font") => "a font",
        _ if ARCHIVES.contains(&media) => "an archive",
        _ => {
            return Err(format!(
                "of type {media}, which the page reader does not read"
            ));
        }
    };
    Err(format!("{what} ({media}), not a document"))
}

/// The kind of a page whose type says nothing: a PDF or HTML by its first bytes, Markdown by
/// its URL's path, else plain text when the bytes look like text.
fn sniffed(body: &Body, media: &str) -> Result<PageKind, String> {
    let head = body
        .bytes
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(body.bytes);
    let head = head.trim_ascii_start();
    let starts = |prefix: &[u8]| {
        head.get(..prefix.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(prefix))
    };
    if head.starts_with(b"%PDF-") {
        return Ok(PageKind::Pdf);
    }
    if starts(b"<!doctype html") || starts(b"<html") {
        return Ok(PageKind::Html);
    }
    let path = url_path(body.url).to_ascii_lowercase();
    if path.ends_with(".md") || path.ends_with(".markdown") {
        return Ok(PageKind::Markdown);
    }
    if path.ends_with(".rst") || path.ends_with(".rest") {
        return Ok(PageKind::Rst);
    }
    let served = served(media);
    match decode::sniff(body.bytes) {
        Sniffed::Text => Ok(PageKind::Text),
        Sniffed::Script => Err(format!(
            "a script (it starts with `#!`) {served}, not a document"
        )),
        Sniffed::Binary => Err(format!("binary data {served}, not a document")),
    }
}

/// How a page was served, for a reason: `served as text/plain`, `with no Content-Type`.
fn served(media: &str) -> String {
    match media {
        "" => "with no Content-Type".to_string(),
        media => format!("served as {media}"),
    }
}

/// The path of a URL: after the scheme and host, before the query and fragment.
fn url_path(url: &str) -> &str {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    after_scheme.find('/').map_or("", |at| &after_scheme[at..])
}

/// The first line of `text` that reads as a title ([`first_line_or_name`] without a file name
/// to fall back to).
fn title_line(text: &str) -> Option<String> {
    Some(first_line_or_name(text, Path::new(""))).filter(|t| !t.is_empty())
}

/// The text layer of a PDF, or why it has none.
fn pdf_text(body: &Body) -> Result<(Option<String>, String), String> {
    if body.cut {
        return Err("a PDF cut at the byte cap: raise search.read.maxBytes to read it".to_string());
    }
    match pdf::to_text(body.bytes) {
        Ok(text) if text.trim().is_empty() => Err("a PDF without a text layer".to_string()),
        Ok(text) => Ok((title_line(&text), text)),
        Err(e) => Err(format!("a PDF that cannot be read ({e})")),
    }
}

/// An HTML page's main content as text, and its title: Readability's article when it finds
/// one, else the whole page's text (also for a page over [`MAX_READABILITY_BYTES`],
/// [`MAX_READABILITY_NESTING`] or [`MAX_READABILITY_ELEMENTS`]).
fn html_text(source: &str, warnings: &mut Vec<String>) -> (Option<String>, String) {
    let excess = || {
        nesting::excess(
            source.as_bytes(),
            MAX_READABILITY_NESTING,
            MAX_READABILITY_ELEMENTS,
        )
    };
    let too_much = if source.len() > MAX_READABILITY_BYTES {
        Some(format!("is over {} MB", MAX_READABILITY_BYTES >> 20))
    } else {
        match excess() {
            Some(Excess::Depth) => Some(format!(
                "nests its elements over {MAX_READABILITY_NESTING} deep"
            )),
            Some(Excess::Elements) => Some(format!("has over {MAX_READABILITY_ELEMENTS} elements")),
            None => None,
        }
    };
    if let Some(too_much) = too_much {
        warnings.push(format!(
            "the page {too_much}: read whole, its main content not picked out"
        ));
        return html::to_text(source);
    }
    article(source).unwrap_or_else(|| html::to_text(source))
}

/// Readability's article as text (its paragraphs on their own lines, through
/// [`html::to_text`]) and its title; `None` when it finds none, fails, or finds one under
/// [`MIN_ARTICLE_CHARS`].
fn article(source: &str) -> Option<(Option<String>, String)> {
    // A panic in the tree code must not end the task; nothing outlives the call but its result.
    let article = catch_unwind(AssertUnwindSafe(|| {
        Readability::new(source, None, None).ok()?.parse().ok()
    }))
    .ok()??;
    let (heading, text) = html::to_text(&article.content);
    if text.trim().chars().count() < MIN_ARTICLE_CHARS {
        return None;
    }
    let title = Some(article.title)
        .filter(|t| !t.trim().is_empty())
        .or(heading);
    Some((title, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::local::pdf::tests::tiny_pdf;

    fn body<'a>(content_type: Option<&'a str>, bytes: &'a [u8]) -> Body<'a> {
        Body {
            url: "https://example.org/page",
            content_type,
            bytes,
            cut: false,
        }
    }

    fn read(content_type: Option<&str>, bytes: &[u8]) -> PageText {
        extract(&body(content_type, bytes)).expect("text")
    }

    const ARTICLE: &str = "Flow batteries store energy in liquid electrolytes held in \
        external tanks, so their capacity grows with the size of the tanks rather than with \
        the size of the cell stack. This makes them attractive for storing many hours of \
        energy on the grid, where cost per kilowatt-hour matters more than density.";

    /// A news-like page: navigation, a cookie banner, a footer and an article of three
    /// paragraphs, of which Readability keeps the article.
    fn boilerplate_page() -> String {
        let nav: String = ["Home", "World", "Markets", "Opinion", "Subscribe now"]
            .iter()
            .map(|l| format!("<li><a href=\"/{l}\">{l}</a></li>"))
            .collect();
        format!(
            "<!DOCTYPE html><html><head><title>Flow batteries | Example News</title></head>\
             <body><header><nav class=\"menu\"><ul>{nav}</ul></nav></header>\
             <div class=\"cookie-banner\">We use cookies. Accept all cookies.</div>\
             <main><article><h1>Flow batteries</h1><p>{ARTICLE}</p>\
             <p>Vanadium is the most common chemistry, and iron-based designs are cheaper \
             alternatives that researchers are testing at several utilities this year, with \
             results expected to be published soon.</p>\
             <p>Engineers say the main obstacle is the price of the membranes that separate \
             the two electrolytes, which wear out and must be replaced every few years.</p>\
             </article></main>\
             <footer class=\"footer\"><a href=\"/privacy\">Privacy policy</a> \
             <a href=\"/terms\">Terms of use</a> Copyright Example News</footer></body></html>"
        )
    }

    #[test]
    fn readability_keeps_the_article_and_drops_the_navigation() {
        let page = boilerplate_page();
        let text = read(Some("text/html; charset=utf-8"), page.as_bytes());
        assert_eq!(text.kind, PageKind::Html);
        assert!(text.text.contains(ARTICLE), "{}", text.text);
        for boilerplate in ["Subscribe now", "Markets", "Privacy policy", "cookies"] {
            assert!(
                !text.text.contains(boilerplate),
                "{boilerplate}: {}",
                text.text
            );
        }
        let lines: Vec<&str> = text.text.lines().filter(|l| !l.is_empty()).collect();
        assert!(lines.len() >= 3, "paragraphs on their own lines: {lines:?}");
        assert!(text.title.expect("title").contains("Flow batteries"));
        assert!(text.warnings.is_empty(), "{:?}", text.warnings);
    }

    /// On a page too short for an article, Readability's guess would have kept "Home Blog"
    /// alone: the whole text is read (a `<nav>` is left out of any page's text).
    #[test]
    fn a_page_without_an_article_gives_its_whole_text() {
        let page = b"<html><head><title>T</title></head><body><header><a href=/>Home</a> \
                     <a href=/b>Blog</a></header><nav><a href=/c>Contact</a></nav>\
                     <footer>Contact: 5 Main St.</footer></body></html>";
        let text = read(Some("text/html"), page);
        assert_eq!(text.text, "Home Blog\nContact: 5 Main St.");
        assert_eq!(text.title.as_deref(), Some("T"));
    }

    #[test]
    fn a_page_over_the_readability_cap_is_read_whole_with_a_warning() {
        let para = format!("<p>{ARTICLE}</p>");
        let page = format!(
            "<header><a href=/>Home menu</a></header>{}",
            para.repeat(MAX_READABILITY_BYTES / para.len() + 1)
        );
        let text = read(Some("text/html"), page.as_bytes());
        assert!(text.text.starts_with("Home menu\n"), "read whole");
        assert!(
            text.warnings[0].contains("over 2 MB"),
            "{:?}",
            text.warnings
        );
    }

    /// 20,000 nested `<div>`s once overflowed Readability's stack, which aborts the process.
    #[test]
    fn a_deeply_nested_page_is_read_whole_without_readability() {
        let page = format!(
            "<header>Home menu</header>{}<p>Deep text.</p>",
            "<div>".repeat(20_000)
        );
        let text = read(Some("text/html"), page.as_bytes());
        assert_eq!(text.text, "Home menu\nDeep text.");
        assert!(
            text.warnings[0].contains("over 300 deep"),
            "{:?}",
            text.warnings
        );
    }

    #[test]
    fn a_page_of_more_elements_than_the_cap_is_read_whole_with_a_warning() {
        let page = format!(
            "<header>Home menu</header>{}",
            "<p>Flat text.</p>".repeat(MAX_READABILITY_ELEMENTS + 1)
        );
        let text = read(Some("text/html"), page.as_bytes());
        assert!(text.text.starts_with("Home menu\n"), "read whole");
        assert!(
            text.warnings[0].contains("over 20000 elements"),
            "{:?}",
            text.warnings
        );
    }

    #[test]
    fn a_latin1_page_declared_in_the_header_keeps_its_accents() {
        let page = b"<html><head><title>Caf\xe9 cr\xe8me</title></head>\
                     <body><p>Na\xefve r\xe9sum\xe9 \xe0 la fran\xe7aise.</p></body></html>";
        let text = read(Some("text/html; charset=ISO-8859-1"), page);
        assert!(
            text.text
                .contains("Na\u{ef}ve r\u{e9}sum\u{e9} \u{e0} la fran\u{e7}aise."),
            "{}",
            text.text
        );
        assert_eq!(text.title.as_deref(), Some("Caf\u{e9} cr\u{e8}me"));
        assert!(text.warnings.is_empty(), "{:?}", text.warnings);
        // The header wins over a page that claims UTF-8.
        let lying = b"<meta charset=\"utf-8\"><p>Caf\xe9 au lait.</p>";
        let text = read(Some("text/html; charset=\"latin1\""), lying);
        assert_eq!(text.text.trim(), "Caf\u{e9} au lait.");
    }

    #[test]
    fn a_page_declares_its_charset_in_a_meta_tag_without_a_header_charset() {
        let page = b"<html><head><meta charset=\"windows-1252\"><title>x</title></head>\
                     <body><p>Prix : 5 \x80, \x93cit\xe9\x94.</p></body></html>";
        let text = read(Some("text/html"), page);
        assert!(
            text.text
                .contains("Prix : 5 \u{20ac}, \u{201c}cit\u{e9}\u{201d}."),
            "{}",
            text.text
        );
        let utf8 = "<html><head><meta charset=\"utf-8\"></head><body><p>Gr\u{f6}\u{df}e \
                    \u{2014} \u{65e5}\u{672c}</p></body></html>";
        let text = read(Some("text/html"), utf8.as_bytes());
        assert_eq!(
            text.text.trim(),
            "Gr\u{f6}\u{df}e \u{2014} \u{65e5}\u{672c}"
        );
        assert!(text.warnings.is_empty(), "{:?}", text.warnings);
    }

    #[test]
    fn a_pdf_gives_its_text_layer_and_a_cut_or_empty_one_a_reason() {
        let pdf = tiny_pdf(Some("Sodium cells store energy cheaply"));
        let text = read(Some("application/pdf"), &pdf);
        assert_eq!(text.kind, PageKind::Pdf);
        assert!(text.text.contains("Sodium cells store energy cheaply"));
        let cut = Body {
            cut: true,
            ..body(Some("application/pdf"), &pdf)
        };
        let reason = extract(&cut).expect_err("cut");
        assert!(reason.contains("search.read.maxBytes"), "{reason}");
        let scan = tiny_pdf(None);
        assert_eq!(
            extract(&body(Some("application/pdf"), &scan)),
            Err("a PDF without a text layer".to_string())
        );
        let broken = extract(&body(Some("application/pdf"), b"%PDF-1.4 junk"));
        assert!(broken.expect_err("broken").contains("cannot be read"));
    }

    #[test]
    fn images_archives_and_binaries_are_refused_naming_their_type() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(
            extract(&body(Some("image/png"), png)),
            Err("an image (image/png), not a document".to_string())
        );
        assert_eq!(
            extract(&body(Some("application/zip"), b"PK\x03\x04")),
            Err("an archive (application/zip), not a document".to_string())
        );
        let reason = extract(&body(Some("font/woff2"), b"wOF2")).expect_err("font");
        assert!(reason.starts_with("a font (font/woff2)"), "{reason}");
        let reason = extract(&body(Some("application/vnd.ms-excel"), b"x")).expect_err("xls");
        assert!(reason.contains("application/vnd.ms-excel"), "{reason}");
        let reason = extract(&body(Some("text/plain"), png)).expect_err("binary as text");
        assert!(
            reason.contains("binary") && reason.contains("text/plain"),
            "{reason}"
        );
        let reason = extract(&body(None, png)).expect_err("sniffed binary");
        assert!(reason.contains("no Content-Type"), "{reason}");
    }

    #[test]
    fn plain_text_joins_wrapped_lines_into_paragraphs() {
        let text = read(
            Some("text/plain; charset=utf-8"),
            b"Release notes\n\nThe new cells hold more\ncharge than the old ones.\n\n\
              Shipping starts\nin May.\n",
        );
        assert_eq!(text.kind, PageKind::Text);
        assert_eq!(
            text.text,
            "Release notes\n\nThe new cells hold more charge than the old ones.\n\
             Shipping starts in May."
        );
        assert_eq!(text.title.as_deref(), Some("Release notes"));
    }

    #[test]
    fn without_a_type_the_bytes_and_the_url_tell_the_kind() {
        let sniff = |bytes: &[u8], url| {
            let body = Body {
                url,
                ..body(None, bytes)
            };
            extract(&body).map(|t| t.kind)
        };
        let html = b"\xef\xbb\xbf \n<!DOCTYPE HTML><p>Hello there.</p>";
        assert_eq!(sniff(html, "https://a.org/x"), Ok(PageKind::Html));
        assert_eq!(
            sniff(b"<HTML><p>Hi.</p>", "https://a.org/"),
            Ok(PageKind::Html)
        );
        let pdf = tiny_pdf(Some("Sniffed PDF"));
        assert_eq!(
            sniff(&pdf, "https://a.org/download?id=3"),
            Ok(PageKind::Pdf)
        );
        let md = b"# Notes\n\nSome *text*.";
        assert_eq!(
            sniff(md, "https://a.org/README.md?raw=1"),
            Ok(PageKind::Markdown)
        );
        assert_eq!(sniff(md, "https://a.org/notes"), Ok(PageKind::Text));
        let octet = Body {
            url: "https://a.org/f",
            ..body(Some("application/octet-stream"), b"\x7fELF\x02\x01\x01\0")
        };
        assert!(
            extract(&octet)
                .expect_err("elf")
                .contains("application/octet-stream")
        );
        let text = read(Some("text/markdown"), b"# Grid storage\n\nWords *here*.");
        assert_eq!(
            (text.kind, text.title.as_deref()),
            (PageKind::Markdown, Some("Grid storage"))
        );
        assert!(text.text.contains("Words here."), "{}", text.text);
        let rst = b"Grid storage\n============\n\nWords ``here``.\n\n.. toctree::\n\n   intro\n";
        assert_eq!(
            sniff(rst, "https://a.org/docs/usage.rst"),
            Ok(PageKind::Rst)
        );
        let text = read(Some("text/x-rst"), rst);
        assert_eq!(
            (text.kind, text.title.as_deref()),
            (PageKind::Rst, Some("Grid storage"))
        );
        assert_eq!(text.text, "Grid storage\n\nWords here.");
    }

    #[test]
    fn control_characters_are_stripped_and_an_empty_page_refused() {
        let page = "<head><title>Bad\u{1b}]0;owned\u{7} title</title></head>\
                    <p>Visible\u{1b}[31m red\u{1b}[0m text\u{7f}.</p>";
        let text = read(Some("text/html"), page.as_bytes());
        assert_eq!(text.text.trim(), "Visible red text.");
        assert_eq!(text.title.as_deref(), Some("Bad title"));
        let text = read(Some("text/plain"), b"tab\there \x1b[1mbold\x1b[0m\r\n");
        assert_eq!(text.text, "tab\there bold");
        let icon = read(Some("text/plain"), "Options\u{f0c1} and more".as_bytes());
        assert_eq!(icon.text, "Options and more", "an icon font's glyph");
        assert_eq!(
            extract(&body(Some("text/html"), b"<script>x()</script>")),
            Err("it has no text".to_string())
        );
        assert_eq!(
            extract(&body(Some("text/plain"), b" \n\x1b[0m\n")),
            Err("it has no text".to_string())
        );
    }

    #[test]
    fn a_cut_body_is_read_with_a_warning() {
        let cut = Body {
            cut: true,
            ..body(Some("text/plain"), b"The beginning of a long caf\xc3")
        };
        let text = extract(&cut).expect("text");
        assert_eq!(text.text, "The beginning of a long caf");
        assert_eq!(text.warnings.len(), 1, "{:?}", text.warnings);
        assert!(text.warnings[0].contains("cut"), "{:?}", text.warnings);
    }
}
