//! One corpus file to a title and plain text, or to the reason it is skipped: the kinds of
//! document the index knows (by name, a compressed one by its name without `.gz`), the size
//! caps, binary detection, decoding ([`super::decode`]), the paragraphs of plain text
//! ([`super::paragraphs`]: one line each, as the other kinds give their blocks), man pages
//! ([`super::man`]: roff, read as `man` shows it) and the title rules shared by every kind
//! ([`super::title`]). [`type_label`] names a file's type for the count of what the index
//! skipped.
//!
//! Every problem becomes a warning naming the file and saying what to do, never an error: one
//! bad file must not stop the index. This module reads one file at a time and never writes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::content::{self, Content, ReadError};
use super::decode::{self, Sniffed};
use super::report::Steps;
use super::title::{file_name, first_line_or_name};
use super::{html, man, markdown, paragraphs, pdf, rst};
use crate::isolate::{JobError, Parsing};

/// Indexed text is cut at this many bytes (a larger document is indexed in part, with a
/// warning), which bounds the index and the passages' cost.
pub const MAX_TEXT_BYTES: usize = 2 * 1024 * 1024;
/// HTML is read up to this many bytes: markup makes pages several times larger than their text.
const MAX_HTML_BYTES: u64 = 8 * 1024 * 1024;
/// A larger PDF is skipped: it must be read whole, and its text would be cut anyway.
const MAX_PDF_BYTES: u64 = 64 * 1024 * 1024;

/// Names of plain-text files that source trees and systems ship without a telling extension,
/// or with one that is not a kind (`COPYING.LESSER`, `README.Debian`).
const PLAIN_NAMES: &[&str] = &[
    "authors",
    "changelog",
    "changes",
    "contributing",
    "contributors",
    "copying",
    "copyright",
    "credits",
    "history",
    "install",
    "licence",
    "license",
    "news",
    "notice",
    "readme",
    "thanks",
    "todo",
];

/// The kinds of document the index reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Markdown,
    /// reStructuredText (`.rst`, `.rest`), as Sphinx shows it.
    Rst,
    Text,
    Html,
    Pdf,
    /// A file whose name gives no kind (`LICENSE`, `GPL-3`, `Apache-2.0`, `COPYING.LESSER`):
    /// plain text when its content is text, else not a document, ignored without a warning.
    /// A man page whose section is a number alone (`ls.1`) is one of these: its content says
    /// it is roff.
    Plain,
    /// A man page by its name's section with a suffix (`Algorithm::Diff.3pm`, `CA.pl.1ssl`):
    /// read as roff when it is, else as [`Kind::Plain`].
    Man,
}

impl Kind {
    /// The kind of a file by its name: its extension (any case), else [`Kind::Plain`] when it
    /// has none, only a version number for one (`Apache-2.0`), or a well-known plain-text
    /// name; `None` for a file the index ignores (`photo.jpg`, `main.rs`). A compressed file
    /// is of the kind its name without `.gz` gives (`README.md.gz` is Markdown).
    pub fn of(path: &Path) -> Option<Kind> {
        if content::is_gzip(path) {
            return Kind::of(&content::content_name(path));
        }
        let name = path.file_name()?.to_str()?;
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            return Some(Kind::Plain);
        };
        match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Kind::Markdown),
            "rst" | "rest" => Some(Kind::Rst),
            "txt" => Some(Kind::Text),
            "html" | "htm" => Some(Kind::Html),
            "pdf" => Some(Kind::Pdf),
            _ if ext.bytes().all(|b| b.is_ascii_digit()) => Some(Kind::Plain),
            _ if is_man_section(ext) => Some(Kind::Man),
            _ => {
                let stem = name
                    .split('.')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                PLAIN_NAMES.contains(&stem.as_str()).then_some(Kind::Plain)
            }
        }
    }
}

/// A man page's section with its suffix (`3pm`, `1ssl`, `3perl`, `1p`): a digit from 1 to 9,
/// then up to five letters or digits, at least one a letter.
fn is_man_section(ext: &str) -> bool {
    let mut chars = ext.chars();
    chars.next().is_some_and(|c| ('1'..='9').contains(&c))
        && (2..=6).contains(&ext.len())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && ext.bytes().any(|b| b.is_ascii_lowercase())
}

/// A file's type as a person names it, for the count of skipped files: its extension in lower
/// case after any version numbers (`libffi.so.8` is `.so`), with the one before `.gz`
/// (`.tar.gz`); `no extension` for a name without one.
pub fn type_label(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut extensions: Vec<&str> = name.split('.').skip(1).collect();
    while extensions
        .last()
        .is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()))
    {
        extensions.pop();
    }
    match extensions.as_slice() {
        [.., inner, "gz"] if !inner.is_empty() => format!(".{inner}.gz"),
        [.., last] if !last.is_empty() => format!(".{last}"),
        _ => "no extension".to_string(),
    }
}

/// A document ready to index, with the warnings its reading raised (e.g. its text was cut).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extracted {
    pub title: String,
    pub text: String,
    pub warnings: Vec<String>,
}

/// What reading one file gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Extraction {
    Indexed(Extracted),
    /// Not indexable as it is (empty, binary, a scanned PDF, broken gzip): remembered until
    /// the file changes.
    Skipped(String),
    /// Not a document (a binary or a script whose name gives no kind): remembered until the
    /// file changes, without a warning, like a file of an ignored kind.
    Ignored,
    /// Could not be read (permissions, I/O): tried again on the next open.
    Unreadable(String),
}

/// The kind of job a parser process reads a corpus file with ([`crate::isolate`]).
pub const FILE_JOB: &str = "file";

/// A corpus file to read in a parser process, which opens it itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileJob {
    pub path: PathBuf,
    pub kind: Kind,
}

/// How corpus files are read: where they are parsed, and how long one may take there.
#[derive(Debug, Clone)]
pub struct Reading {
    pub parsing: Parsing,
    pub timeout: Duration,
    /// Told of each file read and chunk embedded as the index opens.
    pub steps: Steps,
}

impl Reading {
    /// In this process, for callers whose corpus is trusted (tests, benchmarks).
    pub fn in_process() -> Reading {
        Reading {
            parsing: Parsing::InProcess,
            timeout: Duration::from_secs(30),
            steps: Steps::default(),
        }
    }

    /// The file at `path` read as [`extract`] reads it, in a parser process: one that crashes,
    /// runs out of time or of memory there is skipped with the cause (and tried again when it
    /// changes); one no parser could be asked about is tried again on the next open.
    pub fn extract(&self, path: &Path, kind: Kind) -> Extraction {
        let job = FileJob {
            path: path.to_path_buf(),
            kind,
        };
        let shown = path.display();
        match self
            .parsing
            .run(FILE_JOB, &job, &[], self.timeout, || extract(path, kind))
        {
            Ok(extraction) => extraction,
            Err(JobError::Document(cause)) => Extraction::Skipped(format!(
                "skipped `{shown}`: {cause}: convert it to text or remove it from the corpus"
            )),
            Err(JobError::Unavailable(cause)) => {
                Extraction::Unreadable(format!("skipped `{shown}` for now: {cause}"))
            }
        }
    }
}

/// Reads the file at `path` as a document of `kind` (decompressed when its name ends in `.gz`).
pub fn extract(path: &Path, kind: Kind) -> Extraction {
    let shown = path.display().to_string();
    let cap = match kind {
        Kind::Markdown | Kind::Rst | Kind::Text | Kind::Plain | Kind::Man => MAX_TEXT_BYTES as u64,
        Kind::Html => MAX_HTML_BYTES,
        Kind::Pdf => MAX_PDF_BYTES,
    };
    let plain = matches!(kind, Kind::Plain | Kind::Man);
    let read = match content::read(path, cap, plain) {
        Ok(read) => read,
        Err(ReadError::Io(e)) => {
            return Extraction::Unreadable(format!(
                "skipped `{shown}`: cannot read it ({e}): check its permissions"
            ));
        }
        Err(ReadError::Gzip(e)) => {
            return Extraction::Skipped(format!(
                "skipped `{shown}`: it is not valid gzip ({e}): decompress it or fix its name"
            ));
        }
    };
    if read.bytes.iter().all(u8::is_ascii_whitespace) {
        return Extraction::Skipped(format!("skipped `{shown}`: it is empty"));
    }
    // The name the content goes by: a title falls back to `README.md`, not `README.md.gz`.
    let named = content::content_name(path);
    let mut warnings = Vec::new();
    let (title, text) = match (kind, decode::sniff(&read.bytes)) {
        (Kind::Pdf, _) => match pdf_text(&read, &shown) {
            Ok(text) => (None, text),
            Err(skipped) => return skipped,
        },
        (Kind::Plain | Kind::Man, Sniffed::Binary | Sniffed::Script) => {
            return Extraction::Ignored;
        }
        (_, Sniffed::Binary) => {
            return Extraction::Skipped(format!(
                "skipped `{shown}`: it looks binary (NUL or control bytes in its first 8 KB), not text"
            ));
        }
        _ => {
            let (source, warning) = match kind {
                Kind::Html => decode::html(&read.bytes, read.more),
                _ => decode::text(&read.bytes, read.more),
            };
            warnings.extend(warning.map(|w| format!("`{shown}` {w}")));
            match kind {
                Kind::Markdown => markdown::to_text(&source),
                Kind::Rst => rst::to_text(&source),
                Kind::Html => html::to_text(&source),
                // A page that only names another (`.so man1/bzip2.1`) is an alias.
                _ if plain && man::is_alias(&source) => return Extraction::Ignored,
                _ if plain && man::is_roff(&source) => man::to_text(&source),
                // The title from the lines as written, before paragraphs are joined.
                _ => (
                    Some(first_line_or_name(&source, &named)),
                    paragraphs::join_wrapped(&source),
                ),
            }
        }
    };
    let text = cap_text(text, &read, kind != Kind::Pdf, &shown, &mut warnings);
    if text.trim().is_empty() {
        return Extraction::Skipped(format!("skipped `{shown}`: it has no text"));
    }
    let title = match (title, kind) {
        (Some(title), _) => title,
        (None, Kind::Markdown | Kind::Rst | Kind::Html) => file_name(&named),
        (None, _) => first_line_or_name(&text, &named),
    };
    Extraction::Indexed(Extracted {
        title,
        text,
        warnings,
    })
}

/// The text layer of a PDF, or why it is skipped.
fn pdf_text(read: &Content, shown: &str) -> Result<String, Extraction> {
    if read.more {
        let holds = if read.gzip { "holds" } else { "is" };
        return Err(Extraction::Skipped(format!(
            "skipped `{shown}`: it {holds} a PDF over {} MB, which is not indexed: split it or \
             export its text",
            MAX_PDF_BYTES >> 20
        )));
    }
    match pdf::to_text(&read.bytes) {
        Ok(text) if text.trim().is_empty() => Err(Extraction::Skipped(format!(
            "skipped `{shown}`: the PDF has no text layer (a scan?): run OCR on it to index it"
        ))),
        Ok(text) => Ok(text),
        Err(e) => Err(Extraction::Skipped(format!(
            "skipped `{shown}`: the PDF cannot be read ({e}): export it again or as text"
        ))),
    }
}

/// `text` cut to [`MAX_TEXT_BYTES`] on a character boundary, with a warning when it was
/// longer or (with `cut_by_read`) when the file's content was read only up to its cap.
fn cap_text(
    mut text: String,
    read: &Content,
    cut_by_read: bool,
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
    if too_long || (cut_by_read && read.more) {
        // A compressed file's size is what it holds, known up to the cap.
        let held = mb(read.bytes.len() as u64);
        let what = match (read.gzip, read.more) {
            (true, true) => format!("holds over {held:.1} MB once decompressed"),
            (true, false) => format!("holds {held:.1} MB once decompressed"),
            (false, _) => format!("is {:.1} MB", mb(read.size)),
        };
        warnings.push(format!(
            "`{shown}` {what}: only its beginning is indexed (up to {} MB of text): split it to index the rest",
            MAX_TEXT_BYTES >> 20
        ));
    }
    text
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::local::decode::SNIFF_BYTES;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    }

    fn indexed(extraction: Extraction) -> Extracted {
        match extraction {
            Extraction::Indexed(doc) => doc,
            other => panic!("not indexed: {other:?}"),
        }
    }

    fn skipped(extraction: Extraction) -> String {
        match extraction {
            Extraction::Skipped(warning) => warning,
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
        assert_eq!(Kind::of(Path::new("usage.RST")), Some(Kind::Rst));
        assert_eq!(Kind::of(Path::new("index.rest")), Some(Kind::Rst));
        assert_eq!(Kind::of(Path::new("b.rs")), None);
        assert_eq!(Kind::of(Path::new("photo.JPG")), None);
    }

    #[test]
    fn a_compressed_file_is_of_the_kind_its_name_without_gz_gives() {
        assert_eq!(
            Kind::of(Path::new("changelog.Debian.gz")),
            Some(Kind::Plain)
        );
        assert_eq!(Kind::of(Path::new("README.md.gz")), Some(Kind::Markdown));
        assert_eq!(Kind::of(Path::new("faq.HTML.GZ")), Some(Kind::Html));
        assert_eq!(Kind::of(Path::new("archive.tar.gz")), None);
    }

    #[test]
    fn a_type_label_is_the_extension_a_person_names() {
        for (name, label) in [
            ("logo.PNG", ".png"),
            ("libffi.so.8", ".so"),
            ("libc.so.6.0.1", ".so"),
            ("archive.tar.gz", ".tar.gz"),
            ("data.gz", ".gz"),
            ("tool", "no extension"),
            ("Apache-2.0", "no extension"),
        ] {
            assert_eq!(type_label(Path::new(name)), label, "{name}");
        }
    }

    /// A compressed document is read decompressed; its fallback title is its name without
    /// `.gz`; one that is not gzip is skipped with a warning saying so.
    #[test]
    fn a_gzip_document_is_read_decompressed() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("tempdir");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"## Calls\n\nA foreign function interface.\n")
            .expect("gzip");
        let bytes = gz.finish().expect("gzip");
        let doc = indexed(extract(
            &write(dir.path(), "README.md.gz", &bytes),
            Kind::Markdown,
        ));
        assert_eq!(doc.title, "README.md");
        assert!(
            doc.text.contains("A foreign function interface."),
            "{}",
            doc.text
        );
        let w = skipped(extract(
            &write(dir.path(), "NEWS.gz", b"not gzip"),
            Kind::Plain,
        ));
        assert!(w.contains("NEWS.gz") && w.contains("not valid gzip"), "{w}");
    }

    /// A man page is read as roff, by its content: `ls.1.gz` (a plain-text candidate by its
    /// name) and `Algorithm::Diff.3pm.gz` (a man page by its name) alike; an alias
    /// (`.so man1/bzip2.1`) is no document; a licence whose name looks like a section
    /// (`LGPL-2.1`) is plain text.
    #[test]
    fn man_pages_are_read_as_roff_and_aliases_ignored() {
        use std::io::Write;
        assert_eq!(Kind::of(Path::new("ls.1.gz")), Some(Kind::Plain));
        for name in ["Algorithm::Diff.3pm.gz", "CA.pl.1ssl", "ls.1p"] {
            assert_eq!(Kind::of(Path::new(name)), Some(Kind::Man), "{name}");
        }
        assert_eq!(Kind::of(Path::new("LGPL-2.1")), Some(Kind::Plain));
        assert_eq!(Kind::of(Path::new("model.3ds")), Some(Kind::Man));
        let dir = tempfile::tempdir().expect("tempdir");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(
            b".TH LS 1\n.SH NAME\nls \\- list directory contents\n.SH DESCRIPTION\n\
              List information about the FILEs.\n.TP\n\\fB\\-a\\fR\ndo not ignore entries.\n",
        )
        .expect("gzip");
        let doc = indexed(extract(
            &write(dir.path(), "ls.1.gz", &gz.finish().expect("gzip")),
            Kind::Plain,
        ));
        assert_eq!(doc.title, "ls - list directory contents");
        assert!(
            doc.text
                .contains("List information about the FILEs.\n```\n-a\n```\n"),
            "{}",
            doc.text
        );
        let alias = write(dir.path(), "bunzip2.1", b".so man1/bzip2.1\n");
        assert_eq!(extract(&alias, Kind::Plain), Extraction::Ignored);
        let notes = write(dir.path(), "notes.3pm", b"Plain notes, not roff.\n");
        assert_eq!(
            indexed(extract(&notes, Kind::Man)).text,
            "Plain notes, not roff."
        );
    }

    #[test]
    fn names_without_a_kind_are_plain_text_candidates() {
        for name in [
            "README",
            "LICENSE",
            "LICENSE-MIT",
            "GPL-3",
            "Apache-2.0",
            "LGPL-2.1",
            "COPYING.LESSER",
            "README.Debian",
            "Makefile",
        ] {
            assert_eq!(Kind::of(Path::new(name)), Some(Kind::Plain), "{name}");
        }
        assert_eq!(Kind::of(Path::new("archive.tar")), None);
        assert_eq!(Kind::of(Path::new("licenses.json")), None);
    }

    /// `/usr/share/common-licenses` and every source tree: text files without an extension
    /// are indexed with their first line as title; binaries and scripts among them are not
    /// documents and raise no warning; a Latin-1 one is read as Latin-1.
    #[test]
    fn plain_files_are_sniffed_text_indexed_binaries_and_scripts_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let license = b"                    GNU GENERAL PUBLIC LICENSE\n\
                       Version 3, 29 June 2007\n\nEveryone is permitted to copy it.\n";
        let doc = indexed(extract(&write(dir.path(), "GPL-3", license), Kind::Plain));
        assert_eq!(doc.title, "GNU GENERAL PUBLIC LICENSE");
        assert!(doc.text.contains("permitted to copy") && doc.warnings.is_empty());
        let mut elf = b"\x7fELF\x02\x01\x01\0".to_vec();
        elf.extend(std::iter::repeat_n(b'x', 3 * SNIFF_BYTES));
        let binary = write(dir.path(), "tool", &elf);
        assert_eq!(extract(&binary, Kind::Plain), Extraction::Ignored);
        let script = write(
            dir.path(),
            "configure",
            b"#!/bin/sh\necho configuring the build.\n",
        );
        assert_eq!(extract(&script, Kind::Plain), Extraction::Ignored);
        let doc = indexed(extract(
            &write(
                dir.path(),
                "NOTICE",
                b"Copyright \xa9 2024 Ren\xe9e M\xfcller.\n",
            ),
            Kind::Plain,
        ));
        assert_eq!(
            doc.text.trim(),
            "Copyright \u{a9} 2024 Ren\u{e9}e M\u{fc}ller."
        );
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        let w = skipped(extract(&write(dir.path(), "notes.txt", &elf), Kind::Text));
        assert!(
            w.contains("binary"),
            "a .txt says it is text: binary is a warning: {w}"
        );
    }

    /// A page in ISO-8859-1 or Windows-1252 that says so reads as it is, not with replacement
    /// characters.
    #[test]
    fn an_html_page_is_read_in_the_charset_it_declares() {
        let dir = tempfile::tempdir().expect("tempdir");
        let page = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; \
                     charset=iso-8859-1\"><title>Caf\xe9 cr\xe8me</title></head>\
                     <body><p>Na\xefve \x93quotes\x94 cost 5 \x80.</p></body></html>";
        let doc = indexed(extract(&write(dir.path(), "latin.html", page), Kind::Html));
        assert_eq!(doc.title, "Caf\u{e9} cr\u{e8}me");
        assert!(
            doc.text
                .contains("Na\u{ef}ve \u{201c}quotes\u{201d} cost 5 \u{20ac}."),
            "{}",
            doc.text
        );
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        assert!(!doc.text.contains('\u{fffd}'));
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
            Extraction::Unreadable(w) => {
                assert!(w.contains("gone.txt") && w.contains("cannot read"), "{w}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_that_is_not_utf8_is_read_as_latin1_with_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let doc = indexed(extract(
            &write(dir.path(), "latin1.txt", b"caf\xe9 au lait"),
            Kind::Text,
        ));
        assert_eq!(doc.text, "caf\u{e9} au lait");
        assert_eq!(doc.warnings.len(), 1);
        assert!(doc.warnings[0].contains("latin1.txt") && doc.warnings[0].contains("Latin-1"));
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
