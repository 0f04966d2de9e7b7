//! PDF text, `search::local::pdf::to_text`: never panics past its own `catch_unwind`, never
//! overflows the stack, stays within the time and memory bounds; a generated well-formed PDF
//! gives its words in page order.
//!
//! The generator builds PDFs object by object (as `tiny_pdf` in `src/search/local/pdf.rs`
//! does, with the cross-reference offsets computed): pages with their own, shared or arrays of
//! content streams, plain or FlateDecode; now and then thousands of pages sharing one stream,
//! a stream that inflates to up to 1 GiB ([`crate::bomb`]), a page tree or an array nested
//! thousands deep; and, breaking the structure, wrong stream lengths, shifted, missing or
//! looping cross-reference tables, wrong sizes and counts, a cut-off file.

use std::sync::OnceLock;

use researchflow::search::local::pdf::to_text;

use crate::bomb::Bomb;
use crate::html::in_order;
use crate::inputs::Gen;
use crate::pdf_gen::valid_pdf;
use crate::target::{Expect, Input, Target};

/// What bombs inflate to: white space, text operators, unbalanced graphics states, arrays,
/// strings and dictionaries that never close.
const BOMB_PATTERNS: &[&[u8]] = &[
    b" ",
    b"BT /F1 12 Tf 72 720 Td (boom) Tj ET\n",
    b"q ",
    b"[",
    b"0 0 m 1 1 l S\n",
    b"(",
    b"<<",
];

pub struct PdfTarget {
    seeds: Vec<Vec<u8>>,
    /// Made on first use: only a worker running this parser needs them.
    bombs: OnceLock<Vec<Bomb>>,
}

impl PdfTarget {
    pub fn new() -> PdfTarget {
        let mut g = Gen::new(6);
        let none = OnceLock::new();
        let seeds = (0..16).map(|_| valid_pdf(&mut g, &none).bytes).collect();
        PdfTarget {
            seeds,
            bombs: OnceLock::new(),
        }
    }
}

impl PdfTarget {
    const TOKENS: &'static [&'static str] = &[
        "%PDF-1.4\n",
        " obj\n",
        "endobj\n",
        "stream\n",
        "\nendstream",
        "<<",
        ">>",
        "[",
        "]",
        "/Type",
        "/Page",
        "/Pages",
        "/Kids",
        "/Count",
        "/Contents",
        "/Length",
        "/Filter",
        "/FlateDecode",
        "/Font",
        "/Resources",
        " 0 R",
        "1 0 obj",
        "xref\n",
        "trailer\n",
        "startxref\n",
        "%%EOF",
        "BT",
        "ET",
        "Tj",
        "TJ",
        "Tf",
        "Td",
        "(",
        ")",
        "\\",
        "<",
        ">",
        "/Size 2147483647",
        "99999999999",
        "-1",
        "0000000000 65535 f \n",
        "/Prev 0",
        "/Root 1 0 R",
        "/Encrypt << /Filter /Standard /V 2 >>",
        "/ObjStm",
        "/XRef",
        "/W [1 8 8]",
        "/Index [0 99999999]",
        "/DecodeParms << /Predictor 12 /Columns 4 >>",
        "/LZWDecode",
        "/ASCIIHexDecode",
        "/ASCII85Decode",
        "/RunLengthDecode",
        "/DCTDecode",
        "/Parent 2 0 R",
        "q",
        "Q",
        "cm",
        "Do",
        "/XObject",
        "/Subtype /Form",
        " ",
        "\n",
        "\0",
    ];
}

impl Target for PdfTarget {
    fn name(&self) -> &'static str {
        "pdf"
    }

    fn tokens(&self) -> &'static [&'static str] {
        PdfTarget::TOKENS
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("[", "]"),
            ("<<", ">>"),
            ("<< /A ", ">>"),
            ("(", ")"),
            ("q ", " Q"),
            ("BT ", " ET"),
        ]
    }

    fn binary(&self) -> bool {
        true
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        self.bombs
            .get_or_init(|| BOMB_PATTERNS.iter().map(|p| Bomb::new(p)).collect());
        valid_pdf(g, &self.bombs)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let got = to_text(&input.bytes);
        if let Expect::Words { words, .. } = &input.expect {
            match &got {
                Ok(text) => in_order(words, text)?,
                Err(e) => return Err(format!("refused: a well-formed PDF: {e}")),
            }
        }
        Ok(())
    }
}
