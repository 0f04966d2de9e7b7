//! One corpus file to a title and plain text, or to the reason it is skipped: the kinds of
//! document the index knows (by extension), the size caps, binary detection, lenient UTF-8
//! decoding and the title rules shared by every kind.
//!
//! Every problem becomes a warning naming the file and saying what to do, never an error: one
//! bad file must not stop the index. This module reads one file at a time and never writes.

use std::io::Read;
use std::path::Path;

use super::{html, markdown, pdf};

/// Indexed text is cut at this many bytes (a larger document is indexed in part, with a
/// warning), which bounds the index and the passages' cost.
pub const MAX_TEXT_BYTES: usize = 2 * 1024 * 1024;
/// HTML is read up to this many bytes: markup makes pages several times larger than their text.
const MAX_HTML_BYTES: u64 = 8 * 1024 * 1024;
/// A larger PDF is skipped: it must be read whole, and its text would be cut anyway.
const MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;
/// A NUL byte in this many first bytes marks a binary file.
const SNIFF_BYTES: usize = 8 * 1024;
/// A first line up to this many characters can be a title.
const MAX_TITLE_CHARS: usize = 120;

/// The kinds of document the index reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Markdown,
    Text,
    Html,
    Pdf,
}

impl Kind {
    /// The kind of a file by its extension (any case); `None` for a file the index ignores.
    pub fn of(path: &Path) -> Option<Kind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(Kind::Markdown),
            "txt" => Some(Kind::Text),
            "html" | "htm" => Some(Kind::Html),
            "pdf" => Some(Kind::Pdf),
            _ => None,
        }
    }
}

/// A document ready to index, with the warnings its reading raised (e.g. its text was cut).
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    pub title: String,
    pub text: String,
    pub warnings: Vec<String>,
}

/// What reading one file gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Indexed(Extracted),
    /// Not indexable as it is (empty, binary, a scanned PDF): remembered until the file changes.
    Skipped(String),
    /// Could not be read (permissions, I/O): tried again on the next open.
    Unreadable(String),
}

/// Reads the file at `path` as a document of `kind`.
pub fn extract(path: &Path, kind: Kind) -> Outcome {
    let shown = path.display().to_string();
    let cap = match kind {
        Kind::Markdown | Kind::Text => MAX_TEXT_BYTES as u64,
        Kind::Html => MAX_HTML_BYTES,
        Kind::Pdf => MAX_PDF_BYTES + 1,
    };
    let (bytes, size) = match read_capped(path, cap) {
        Ok(read) => read,
        Err(e) => {
            return Outcome::Unreadable(format!(
                "skipped `{shown}`: cannot read it ({e}): check its permissions"
            ));
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Outcome::Skipped(format!("skipped `{shown}`: it is empty"));
    }
    let mut warnings = Vec::new();
    let (title, text) = match kind {
        Kind::Pdf if size > MAX_PDF_BYTES => {
            return Outcome::Skipped(format!(
                "skipped `{shown}`: PDFs over {} MB are not indexed: split it or export its text",
                MAX_PDF_BYTES >> 20
            ));
        }
        Kind::Pdf => match pdf::to_text(&bytes) {
            Ok(text) if text.trim().is_empty() => {
                return Outcome::Skipped(format!(
                    "skipped `{shown}`: the PDF has no text layer (a scan?): run OCR on it to index it"
                ));
            }
            Ok(text) => (None, text),
            Err(e) => {
                return Outcome::Skipped(format!(
                    "skipped `{shown}`: the PDF cannot be read ({e}): export it again or as text"
                ));
            }
        },
        _ if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) => {
            return Outcome::Skipped(format!(
                "skipped `{shown}`: it looks binary (NUL bytes in its first 8 KB), not text"
            ));
        }
        _ => {
            let source = decode(bytes, size > cap, &shown, &mut warnings);
            match kind {
                Kind::Markdown => markdown::to_text(&source),
                Kind::Html => html::to_text(&source),
                _ => (None, source),
            }
        }
    };
    let read_in_part = kind != Kind::Pdf && size > cap;
    let text = cap_text(text, size, read_in_part, &shown, &mut warnings);
    if text.trim().is_empty() {
        return Outcome::Skipped(format!("skipped `{shown}`: it has no text"));
    }
    let title = match (title, kind) {
        (Some(title), _) => title,
        (None, Kind::Markdown | Kind::Html) => file_name(path),
        (None, _) => first_line_or_name(&text, path),
    };
    Outcome::Indexed(Extracted {
        title,
        text,
        warnings,
    })
}

/// At most `cap` bytes of the file, and the file's size.
fn read_capped(path: &Path, cap: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(size.min(cap) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok((bytes, size))
}

/// The bytes as text: invalid UTF-8 is replaced (with a warning); a character cut by the read
/// cap at the very end is dropped silently.
fn decode(bytes: Vec<u8>, cut: bool, shown: &str, warnings: &mut Vec<String>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let utf8 = e.utf8_error();
            let mut bytes = e.into_bytes();
            if cut && utf8.error_len().is_none() {
                bytes.truncate(utf8.valid_up_to());
                return String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            }
            warnings.push(format!(
                "`{shown}` is not valid UTF-8: read with replacement characters; save it as UTF-8"
            ));
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

/// `text` cut to [`MAX_TEXT_BYTES`] on a character boundary, with a warning when it was
/// longer or the file (of `size` bytes) was only `read_in_part`.
fn cap_text(
    mut text: String,
    size: u64,
    read_in_part: bool,
    shown: &str,
    warnings: &mut Vec<String>,
) -> String {
    let too_long = text.len() > MAX_TEXT_BYTES;
    if too_long {
        let mut at = MAX_TEXT_BYTES;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
    if too_long || read_in_part {
        warnings.push(format!(
            "`{shown}` is {:.1} MB: only its beginning is indexed (up to {} MB of text): split it to index the rest",
            size as f64 / (1024.0 * 1024.0),
            MAX_TEXT_BYTES >> 20
        ));
    }
    text
}

/// The first non-empty line when it is short enough to be a title, else the file name.
fn first_line_or_name(text: &str, path: &Path) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .filter(|l| l.chars().count() <= MAX_TITLE_CHARS)
        .map(str::to_string)
        .unwrap_or_else(|| file_name(path))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    }

    fn indexed(outcome: Outcome) -> Extracted {
        match outcome {
            Outcome::Indexed(doc) => doc,
            other => panic!("not indexed: {other:?}"),
        }
    }

    fn skipped(outcome: Outcome) -> String {
        match outcome {
            Outcome::Skipped(warning) => warning,
            other => panic!("not skipped: {other:?}"),
        }
    }

    #[test]
    fn kinds_by_extension_in_any_case() {
        assert_eq!(Kind::of(Path::new("a/b.MD")), Some(Kind::Markdown));
        assert_eq!(Kind::of(Path::new("b.markdown")), Some(Kind::Markdown));
        assert_eq!(Kind::of(Path::new("b.Htm")), Some(Kind::Html));
        assert_eq!(Kind::of(Path::new("b.txt")), Some(Kind::Text));
        assert_eq!(Kind::of(Path::new("b.pdf")), Some(Kind::Pdf));
        assert_eq!(Kind::of(Path::new("b.rs")), None);
        assert_eq!(Kind::of(Path::new("README")), None);
    }

    #[test]
    fn markdown_title_is_the_first_heading_else_the_file_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = indexed(extract(
            &write(dir.path(), "a.md", b"intro\n\n# Grid storage\n\nText."),
            Kind::Markdown,
        ));
        assert_eq!(doc.title, "Grid storage");
        assert!(doc.text.contains("Text.") && doc.warnings.is_empty());
        let doc = indexed(extract(
            &write(dir.path(), "notes.md", b"## Sub\n\nText."),
            Kind::Markdown,
        ));
        assert_eq!(doc.title, "notes.md");
    }

    #[test]
    fn text_title_is_a_short_first_line_else_the_file_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = indexed(extract(
            &write(dir.path(), "a.txt", b"\n  Field notes  \nBody."),
            Kind::Text,
        ));
        assert_eq!(doc.title, "Field notes");
        let long = format!("{}\nBody.", "word ".repeat(40));
        let doc = indexed(extract(
            &write(dir.path(), "long.txt", long.as_bytes()),
            Kind::Text,
        ));
        assert_eq!(doc.title, "long.txt");
    }

    #[test]
    fn html_is_reduced_to_text_with_its_title() {
        let dir = tempfile::tempdir().expect("tempdir");
        let page = b"<html><head><title>Page title</title></head><body><p>Visible words.</p><script>no()</script></body></html>";
        let doc = indexed(extract(&write(dir.path(), "p.html", page), Kind::Html));
        assert_eq!(doc.title, "Page title");
        assert!(
            doc.text.contains("Visible words.") && !doc.text.contains("no()"),
            "{}",
            doc.text
        );
    }

    #[test]
    fn empty_binary_and_unreadable_files_are_skipped_with_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let w = skipped(extract(&write(dir.path(), "empty.txt", b""), Kind::Text));
        assert!(w.contains("empty.txt") && w.contains("empty"), "{w}");
        skipped(extract(
            &write(dir.path(), "blank.md", b" \n\t\n"),
            Kind::Markdown,
        ));
        let w = skipped(extract(
            &write(dir.path(), "bin.txt", b"abc\0\x01\x02def"),
            Kind::Text,
        ));
        assert!(w.contains("binary"), "{w}");
        skipped(extract(
            &write(dir.path(), "only-markup.html", b"<script>x()</script>"),
            Kind::Html,
        ));
        match extract(&dir.path().join("gone.txt"), Kind::Text) {
            Outcome::Unreadable(w) => {
                assert!(w.contains("gone.txt") && w.contains("cannot read"), "{w}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn invalid_utf8_is_read_lossily_with_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = indexed(extract(
            &write(dir.path(), "latin1.txt", b"caf\xe9 au lait"),
            Kind::Text,
        ));
        assert_eq!(doc.text, "caf\u{fffd} au lait");
        assert_eq!(doc.warnings.len(), 1);
        assert!(doc.warnings[0].contains("latin1.txt") && doc.warnings[0].contains("UTF-8"));
    }

    #[test]
    fn a_large_file_is_indexed_in_part_with_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        // 5 MB of two-byte characters, so the cut falls inside one: no UTF-8 warning for it.
        let text = "é".repeat(5 * 1024 * 1024 / 2 + 1);
        let doc = indexed(extract(
            &write(dir.path(), "big.txt", text.as_bytes()),
            Kind::Text,
        ));
        assert!(doc.text.len() <= MAX_TEXT_BYTES && doc.text.len() > MAX_TEXT_BYTES - 4);
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert!(
            doc.warnings[0].contains("5.0 MB") && doc.warnings[0].contains("beginning"),
            "{:?}",
            doc.warnings
        );
    }

    #[test]
    fn pdf_text_layer_is_indexed_and_a_pdf_without_one_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let with = pdf::tests::tiny_pdf(Some("Flow batteries suit the grid"));
        let doc = indexed(extract(&write(dir.path(), "paper.pdf", &with), Kind::Pdf));
        assert!(
            doc.text.contains("Flow batteries suit the grid"),
            "{:?}",
            doc.text
        );
        assert_eq!(doc.title, "Flow batteries suit the grid");
        let w = skipped(extract(
            &write(dir.path(), "scan.pdf", &pdf::tests::tiny_pdf(None)),
            Kind::Pdf,
        ));
        assert!(w.contains("scan.pdf") && w.contains("no text layer"), "{w}");
        let w = skipped(extract(
            &write(dir.path(), "broken.pdf", b"%PDF-1.4 garbage"),
            Kind::Pdf,
        ));
        assert!(w.contains("cannot be read"), "{w}");
    }
}
