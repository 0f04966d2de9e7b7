//! The text layer of a PDF, through `pdf-extract`. A PDF without one (a scan) gives empty
//! text, which the caller turns into a warning.
//!
//! `pdf-extract` can panic on malformed files; the panic is caught here and becomes an error
//! message, so one broken PDF never takes down an index update. This module does not read files
//! or choose titles.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The text of a PDF held in memory, or why it could not be read.
pub fn to_text(bytes: &[u8]) -> Result<String, String> {
    // Nothing outlives the call but its result, so a panic cannot leave shared state broken.
    match catch_unwind(AssertUnwindSafe(|| {
        pdf_extract::extract_text_from_mem(bytes)
    })) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the PDF reader failed".to_string())),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal valid PDF whose one page shows `text` (ASCII, no parentheses or backslashes)
    /// with the standard Helvetica font, or shows nothing when `text` is `None`. Offsets in the
    /// cross-reference table are computed, so the file is well-formed.
    pub(crate) fn tiny_pdf(text: Option<&str>) -> Vec<u8> {
        let content = match text {
            Some(t) => format!("BT /F1 12 Tf 72 720 Td ({t}) Tj ET"),
            None => String::new(),
        };
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
             /Resources << /Font << /F1 5 0 R >> >> >>"
                .to_string(),
            format!(
                "<< /Length {} >>\nstream\n{content}\nendstream",
                content.len()
            ),
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
                .to_string(),
        ];
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
