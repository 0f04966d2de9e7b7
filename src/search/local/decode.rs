//! A file's bytes to text: whether they are text at all, and in which encoding.
//!
//! - Binary: a NUL byte, or more than one byte in twenty that is a control character other
//!   than white space and escape, in the first [`SNIFF_BYTES`] (after a byte order mark,
//!   since UTF-16 text is full of NULs). A file whose name gives no kind is also not a
//!   document when it starts with `#!` (a script).
//! - Encoding: a byte order mark (UTF-8, UTF-16) first; for HTML, then the charset the page
//!   declares in its first [`PRESCAN_BYTES`] (`<meta charset=...>`, or `<meta http-equiv=
//!   "Content-Type" content="...; charset=...">`, as browsers read it, through `encoding_rs`);
//!   then UTF-8 when the bytes are valid UTF-8; else Windows-1252 (the superset of Latin-1
//!   that browsers use for it), with a warning, since that is a guess. A charset the transport
//!   declares (a web page's `Content-Type`, [`declared`]) comes right after the byte order mark.
//!
//! A character cut by the read cap at the very end is dropped silently. Pure byte work: no
//! files, no markup.

use std::sync::LazyLock;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use regex::bytes::Regex;

/// How much of a file tells whether it is text.
pub const SNIFF_BYTES: usize = 8 * 1024;
/// How much of an HTML page is searched for its declared charset.
pub const PRESCAN_BYTES: usize = 4 * 1024;

/// What the first bytes of a file say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Text,
    Binary,
    /// Text starting with `#!`: a program, not a document.
    Script,
}

/// What the first bytes of a file (at most [`SNIFF_BYTES`] are looked at) say it is.
pub fn sniff(head: &[u8]) -> Sniffed {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if let Some((encoding, _)) = Encoding::for_bom(head)
        && encoding != UTF_8
    {
        return Sniffed::Text;
    }
    let controls = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1b))
        .count();
    if head.contains(&0) || controls * 20 > head.len() {
        Sniffed::Binary
    } else if head.starts_with(b"#!") {
        Sniffed::Script
    } else {
        Sniffed::Text
    }
}

/// Text in the encoding its bytes show, and a warning when that was a guess or the bytes are
/// not valid in it. `cut`: the bytes are the beginning of a longer file.
pub fn text(bytes: &[u8], cut: bool) -> (String, Option<String>) {
    decode(bytes, cut, None)
}

/// An HTML page's text, in the charset it declares when it declares one.
pub fn html(bytes: &[u8], cut: bool) -> (String, Option<String>) {
    decode(bytes, cut, declared_charset(bytes))
}

/// Text in the encoding a transport declared (an HTTP `Content-Type` charset), which wins over
/// the page's own `<meta>`; a byte order mark still wins over both, as browsers read it.
pub fn declared(bytes: &[u8], cut: bool, encoding: &'static Encoding) -> (String, Option<String>) {
    decode(bytes, cut, Some(encoding))
}

fn decode(
    bytes: &[u8],
    cut: bool,
    declared: Option<&'static Encoding>,
) -> (String, Option<String>) {
    let (encoding, bytes) = match Encoding::for_bom(bytes) {
        Some((encoding, bom)) => (Some(encoding), &bytes[bom..]),
        None => (declared, bytes),
    };
    let encoding = match encoding {
        Some(encoding) => encoding,
        None => match utf8(bytes, cut) {
            Some(text) => return (text, None),
            None => {
                let (text, _) = WINDOWS_1252.decode_without_bom_handling(bytes);
                let warning = "is not valid UTF-8: read as Latin-1 (Windows-1252); if it is in \
                               another encoding, save it as UTF-8";
                return (text.into_owned(), Some(warning.to_string()));
            }
        },
    };
    if encoding == UTF_8
        && let Some(text) = utf8(bytes, cut)
    {
        return (text, None);
    }
    let (text, errors) = encoding.decode_without_bom_handling(bytes);
    let warning = errors.then(|| {
        format!(
            "is not valid {}: read with replacement characters; save it as UTF-8",
            encoding.name()
        )
    });
    (text.into_owned(), warning)
}

/// The bytes as UTF-8, less a character that the read cap cut at the very end; `None` when
/// they are not UTF-8.
fn utf8(bytes: &[u8], cut: bool) -> Option<String> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text.to_string()),
        Err(e) if cut && e.error_len().is_none() => {
            Some(String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned())
        }
        Err(_) => None,
    }
}

/// The encoding a page declares in a `<meta>` tag of its first [`PRESCAN_BYTES`], as the
/// encoding standard reads labels (`latin1` and `iso-8859-1` are Windows-1252, a UTF-16
/// label on an ASCII-compatible page is UTF-8); `None` without a known label.
pub fn declared_charset(page: &[u8]) -> Option<&'static Encoding> {
    static META: LazyLock<Option<Regex>> = LazyLock::new(|| {
        // A constant pattern; `None` (never declared) if it did not compile.
        Regex::new(r#"(?i-u)<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([a-z0-9_:.+\-]+)"#).ok()
    });
    let head = &page[..page.len().min(PRESCAN_BYTES)];
    let label = META.as_ref()?.captures(head)?.get(1)?;
    Encoding::for_label(label.as_bytes()).map(Encoding::output_encoding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_binary_and_scripts_are_told_apart() {
        assert_eq!(
            sniff(b"GNU GENERAL PUBLIC LICENSE\n\tVersion 3\x0c\r\n"),
            Sniffed::Text
        );
        assert_eq!(sniff(b"caf\xe9 au lait"), Sniffed::Text);
        assert_eq!(sniff(b"\x1b[1mbold\x1b[0m terminal capture"), Sniffed::Text);
        assert_eq!(sniff(b"\x7fELF\x02\x01\x01\0\0\0"), Sniffed::Binary);
        assert_eq!(
            sniff(b"abc\x01\x02\x03\x04def"),
            Sniffed::Binary,
            "controls"
        );
        assert_eq!(sniff(b"#!/bin/sh\necho hi\n"), Sniffed::Script);
        let utf16: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain("Hi".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(sniff(&utf16), Sniffed::Text, "NULs of UTF-16");
        let late_nul = [b"a".repeat(SNIFF_BYTES), vec![0]].concat();
        assert_eq!(
            sniff(&late_nul),
            Sniffed::Text,
            "only the head is looked at"
        );
    }

    #[test]
    fn utf8_bom_utf16_and_latin1_text() {
        assert_eq!(text("café".as_bytes(), false), ("café".to_string(), None));
        assert_eq!(text(b"\xef\xbb\xbfcaf\xc3\xa9", false).0, "café");
        let utf16: Vec<u8> = [0xfe, 0xff]
            .into_iter()
            .chain("café".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(text(&utf16, false), ("café".to_string(), None));
        let (latin1, warning) = text(b"caf\xe9 \x93quoted\x94", false);
        assert_eq!(latin1, "café \u{201c}quoted\u{201d}");
        assert!(warning.expect("a guess").contains("Latin-1"));
        let cut = &"aé".as_bytes()[..2];
        assert_eq!(text(cut, true), ("a".to_string(), None), "a cut character");
    }

    #[test]
    fn html_declares_its_charset_in_either_meta_form() {
        let page = b"<html><head><meta charset=\"ISO-8859-1\"><title>Caf\xe9</title>";
        assert_eq!(
            html(page, false),
            (
                "<html><head><meta charset=\"ISO-8859-1\"><title>Café</title>".to_string(),
                None
            )
        );
        let page =
            b"<meta http-equiv='Content-Type' content='text/html; charset=windows-1252'>\x80 5";
        assert_eq!(
            html(page, false).0,
            "<meta http-equiv='Content-Type' content='text/html; charset=windows-1252'>€ 5"
        );
        assert_eq!(
            declared_charset(b"<META CHARSET=latin1>"),
            Some(WINDOWS_1252)
        );
        assert_eq!(
            declared_charset(b"<meta charset=\"utf-16le\">"),
            Some(UTF_8)
        );
        assert_eq!(declared_charset(b"<meta charset=\"klingon\">"), None);
        assert_eq!(declared_charset(b"<p>charset=latin1</p>"), None);
        let late = [vec![b' '; PRESCAN_BYTES], b"<meta charset=latin1>".to_vec()].concat();
        assert_eq!(declared_charset(&late), None);
        let (text, warning) = html(b"<meta charset=utf-8>caf\xe9", false);
        assert_eq!(text, "<meta charset=utf-8>caf\u{fffd}");
        assert!(warning.expect("invalid").contains("UTF-8"));
        assert_eq!(
            html(b"<p>caf\xc3\xa9</p>", false),
            ("<p>café</p>".to_string(), None)
        );
    }

    #[test]
    fn a_transport_charset_wins_over_the_page_but_not_over_a_bom() {
        assert_eq!(
            declared(b"<meta charset=utf-8>caf\xe9", false, WINDOWS_1252),
            ("<meta charset=utf-8>café".to_string(), None)
        );
        assert_eq!(
            declared(b"\xef\xbb\xbfcaf\xc3\xa9", false, WINDOWS_1252),
            ("café".to_string(), None)
        );
        let (text, warning) = declared(b"caf\xe9", false, UTF_8);
        assert_eq!(text, "caf\u{fffd}");
        assert!(warning.expect("invalid").contains("UTF-8"));
    }
}
