//! The text layer of a PDF, through `pdf-extract`. A PDF without one (a scan) gives empty
//! text, which the caller turns into a warning.
//!
//! A few hundred KB of PDF can ask for gigabytes: a compressed stream that inflates to 1 GiB of
//! spaces, or 2,000 pages that all draw one 64 MB content stream. Before any text is read, the
//! streams the text reader would inflate are inflated here, within [`MAX_INFLATED_BYTES`] for
//! the whole file, and the content the pages give it is added up, a shared stream once per
//! page, within [`MAX_PAGE_CONTENT_BYTES`]; a PDF past either is refused, naming the cap.
//! What is left (a form that draws itself, an LZW bomb) is bounded by the parser process that
//! runs this ([`crate::isolate`]).
//!
//! `pdf-extract` can panic on malformed files; the panic is caught here and becomes an error
//! message, so one broken PDF never takes down an index update. This module does not read files
//! or choose titles.

use std::cell::RefCell;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use flate2::read::{DeflateDecoder, ZlibDecoder};
use pdf_extract::{
    Document, MediaBox, Object, OutputDev, OutputError, PlainTextOutput, Stream, Transform,
};

/// The most bytes a PDF's compressed streams may inflate to, all together.
pub const MAX_INFLATED_BYTES: usize = 128 * 1024 * 1024;
/// The most content a PDF's pages may give the text reader, all together.
pub const MAX_PAGE_CONTENT_BYTES: usize = 128 * 1024 * 1024;

/// The text of a PDF held in memory, or why it could not be read.
pub fn to_text(bytes: &[u8]) -> Result<String, String> {
    // Nothing outlives the call but its result, so a panic cannot leave shared state broken.
    match catch_unwind(AssertUnwindSafe(|| read(bytes))) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the PDF reader failed".to_string())),
    }
}

/// The text of the PDF `bytes`, within the caps.
fn read(bytes: &[u8]) -> Result<String, String> {
    let mut doc = Document::load_mem(bytes).map_err(|e| e.to_string())?;
    if doc.is_encrypted() {
        // An empty user password opens most "protected" PDFs (printing or copying barred).
        doc.decrypt("").map_err(|e| e.to_string())?;
    }
    inflate_streams(&mut doc)?;
    page_content_within_cap(&doc)?;
    let text = Shared::default();
    let mut writer = text.clone();
    let mut pages = PageBreaks {
        inner: PlainTextOutput::new(&mut writer as &mut dyn std::io::Write),
        text: text.clone(),
    };
    pdf_extract::output_doc(&doc, &mut pages).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&text.0.borrow()).into_owned())
}

/// The text as the reader writes it, shared with [`PageBreaks`], which ends each page.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `pdf-extract`'s plain text with a line break after every page: without one, the last line
/// of a page and the first of the next ran together ("Slide oneSlide two") when they stood at
/// the same height.
struct PageBreaks<'a> {
    inner: PlainTextOutput<&'a mut dyn std::io::Write>,
    text: Shared,
}

impl OutputDev for PageBreaks<'_> {
    fn begin_page(
        &mut self,
        page: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.inner.begin_page(page, media_box, art_box)
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()?;
        self.text.0.borrow_mut().push(b'\n');
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.inner.begin_word()
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }
}

/// Inflates every Flate stream but images (which the text reader never inflates), in place
/// where nothing else decodes it, within [`MAX_INFLATED_BYTES`] in all.
fn inflate_streams(doc: &mut Document) -> Result<(), String> {
    let mut room = MAX_INFLATED_BYTES;
    for object in doc.objects.values_mut() {
        let Object::Stream(stream) = object else {
            continue;
        };
        let filters = stream.filters().unwrap_or_default();
        let image = stream
            .dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .is_ok_and(|s| s == b"Image");
        if image || filters.first() != Some(&&b"FlateDecode"[..]) {
            continue;
        }
        let plain = inflate(&stream.content, room).ok_or_else(|| {
            format!(
                "its compressed streams inflate to over {} MB",
                MAX_INFLATED_BYTES >> 20
            )
        })?;
        room -= plain.len();
        if filters.len() == 1 && !has_predictor(stream) {
            stream.set_plain_content(plain);
        }
    }
    Ok(())
}

/// Whether a stream's decoding parameters ask for a predictor after inflating.
fn has_predictor(stream: &Stream) -> bool {
    stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .and_then(|p| p.get(b"Predictor"))
        .and_then(Object::as_i64)
        .is_ok_and(|p| p > 1)
}

/// What `input` inflates to, as `lopdf` reads it (what came before an error is kept; a broken
/// zlib header is read as raw deflate); `None` when that is more than `room` bytes.
fn inflate(input: &[u8], room: usize) -> Option<Vec<u8>> {
    let limit = room as u64 + 1;
    let mut output = Vec::new();
    let _ = ZlibDecoder::new(input).take(limit).read_to_end(&mut output);
    if output.is_empty() && input.len() > 2 {
        let _ = DeflateDecoder::new(&input[2..])
            .take(limit)
            .read_to_end(&mut output);
    }
    (output.len() <= room).then_some(output)
}

/// Refuses a PDF whose pages give the text reader more than [`MAX_PAGE_CONTENT_BYTES`] of
/// content, a stream shared by many pages counted once for each.
fn page_content_within_cap(doc: &Document) -> Result<(), String> {
    let mut total = 0usize;
    for page in doc.get_pages().into_values() {
        for id in doc.get_page_contents(page) {
            let stream = doc.get_object(id).and_then(Object::as_stream);
            total = total.saturating_add(stream.map_or(0, |s| s.content.len()));
        }
        if total > MAX_PAGE_CONTENT_BYTES {
            return Err(format!(
                "its pages hold over {} MB of content to read",
                MAX_PAGE_CONTENT_BYTES >> 20
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal valid PDF whose one page shows `text` (ASCII, no parentheses or backslashes)
    /// with the standard Helvetica font, or shows nothing when `text` is `None`. Offsets in the
    /// cross-reference table are computed, so the file is well-formed.
    pub(crate) fn tiny_pdf(text: Option<&str>) -> Vec<u8> {
        pages_pdf(&[text])
    }

    /// A PDF of one page per entry of `texts`, each showing its text (or nothing) at the same
    /// place, with the standard Helvetica font.
    fn pages_pdf(texts: &[Option<&str>]) -> Vec<u8> {
        let font = 3 + 2 * texts.len();
        let kids: Vec<String> = (0..texts.len())
            .map(|i| format!("{} 0 R", 3 + 2 * i))
            .collect();
        let mut objects = vec![
            "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
            format!(
                "<< /Type /Pages /Kids [{}] /Count {} >>",
                kids.join(" "),
                texts.len()
            ),
        ];
        for (i, text) in texts.iter().enumerate() {
            let content = match text {
                Some(t) => format!("BT /F1 12 Tf 72 720 Td ({t}) Tj ET"),
                None => String::new(),
            };
            objects.push(format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R \
                 /Resources << /Font << /F1 {font} 0 R >> >> >>",
                4 + 2 * i
            ));
            objects.push(format!(
                "<< /Length {} >>\nstream\n{content}\nendstream",
                content.len()
            ));
        }
        objects.push(
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
                .to_string(),
        );
        let mut pdf = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(pdf.len());
            pdf.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
        }
        let xref = pdf.len();
        pdf.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
        );
        for offset in offsets {
            pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        pdf
    }

    /// Found by the fuzzer: two pages whose lines stand at the same height ran together.
    #[test]
    fn each_page_ends_its_line() {
        let text = to_text(&pages_pdf(&[Some("Slide one"), Some("Slide two")])).expect("reads");
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines, ["Slide one", "Slide two"], "{text:?}");
    }

    /// The inflate bound, as the caps use it: what fits is given whole, more is `None`.
    #[test]
    fn inflating_stops_past_its_room() {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&[b' '; 10_000]).expect("in memory");
        let zlib = encoder.finish().expect("in memory");
        assert_eq!(inflate(&zlib, 10_000).map(|v| v.len()), Some(10_000));
        assert_eq!(inflate(&zlib, 9_999), None);
        assert_eq!(inflate(b"not zlib at all", 100), Some(Vec::new()));
    }

    #[test]
    fn reads_the_text_layer() {
        let text = to_text(&tiny_pdf(Some("Sodium cells store energy cheaply"))).expect("reads");
        assert!(
            text.contains("Sodium cells store energy cheaply"),
            "{text:?}"
        );
    }

    #[test]
    fn a_pdf_without_text_gives_blank_text() {
        let text = to_text(&tiny_pdf(None)).expect("reads");
        assert!(text.trim().is_empty(), "{text:?}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(to_text(b"%PDF-1.4\nnot really a pdf").is_err());
        assert!(to_text(b"").is_err());
    }
}
