//! PDFs built object by object for the PDF fuzz target (as `tiny_pdf` in
//! `src/search/local/pdf.rs` does, with the cross-reference offsets computed), and the words
//! each well-formed one shows: see [`crate::pdf`] for what is generated and why.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::OnceLock;

use flate2::Compression;
use flate2::write::ZlibEncoder;

use crate::bomb::{Bomb, CHUNK};
use crate::inputs::Gen;
use crate::target::{Expect, Input};

/// The objects of a PDF, numbered from 1.
#[derive(Default)]
struct Objects(Vec<Vec<u8>>);

impl Objects {
    fn add(&mut self, body: Vec<u8>) -> usize {
        self.0.push(body);
        self.0.len()
    }

    fn reserve(&mut self) -> usize {
        self.add(Vec::new())
    }

    fn set(&mut self, id: usize, body: Vec<u8>) {
        self.0[id - 1] = body;
    }
}

/// How the cross-reference table is written.
#[derive(Clone, Copy, PartialEq)]
enum Xref {
    Right,
    Shifted,
    Missing,
    WrongSize,
    StartxrefWrong,
    LoopingPrev,
    Cut,
}

/// A page's content stream: its operators and the words they show, on lines from `line` down
/// (a page's streams go on down the page, as in a real file; each page starts at the top).
fn content(g: &mut Gen, words: &mut Vec<String>, line: &mut usize) -> String {
    let mut ops = String::new();
    for _ in 0..g.rng.usize(1..4) {
        let shown: Vec<String> = (0..g.rng.usize(1..6)).map(|_| g.word()).collect();
        let y = 720usize.saturating_sub(20 * *line);
        *line += 1;
        let string = shown.join(" ");
        let string = if g.rng.u8(..4) == 0 {
            format!(
                "<{}>",
                string
                    .bytes()
                    .map(|b| format!("{b:02X}"))
                    .collect::<String>()
            )
        } else {
            format!("({string})")
        };
        let _ = writeln!(ops, "BT /F1 12 Tf 72 {y} Td {string} Tj ET");
        words.extend(shown);
    }
    ops
}

/// A stream object holding `data`; `clean` turns false when its length is wrong.
fn stream(
    g: &mut Gen,
    objects: &mut Objects,
    data: &[u8],
    filter: &str,
    clean: &mut bool,
) -> usize {
    let length = match g.rng.u8(..20) {
        0 => {
            *clean = false;
            g.pick(&["0", "-1", "99999999999", "2147483648", "1.5", "/Name"])
                .to_string()
        }
        1 => {
            *clean = false;
            (data.len() as i64 + g.rng.i64(-20..20)).to_string()
        }
        2 => format!("{} 0 R", objects.add(data.len().to_string().into_bytes())),
        _ => data.len().to_string(),
    };
    let mut body = format!("<< /Length {length}{filter} >>\nstream\n").into_bytes();
    body.extend_from_slice(data);
    body.extend_from_slice(b"\nendstream");
    objects.add(body)
}

/// A content stream, compressed or not.
fn content_stream(g: &mut Gen, objects: &mut Objects, ops: &str, clean: &mut bool) -> usize {
    if g.rng.bool() {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::fast());
        // Writing into a vector cannot fail.
        let _ = z.write_all(ops.as_bytes());
        let data = z.finish().unwrap_or_default();
        let filter = g.pick(&[" /Filter /FlateDecode", " /Filter [/FlateDecode]"]);
        stream(g, objects, &data, filter, clean)
    } else {
        stream(g, objects, ops.as_bytes(), "", clean)
    }
}

/// A bomb stream: `CHUNK`s of one pattern, up to 1 GiB, most far smaller.
fn bomb_stream(g: &mut Gen, objects: &mut Objects, bombs: &[Bomb]) -> usize {
    let bomb = &bombs[g.rng.usize(..bombs.len())];
    let chunks = g.log_size(1, (1 << 30) / CHUNK);
    let mut clean = true;
    stream(
        g,
        objects,
        &bomb.zlib(chunks),
        " /Filter /FlateDecode",
        &mut clean,
    )
}

/// How many pages: a few, now and then thousands (sharing one stream).
fn page_count(g: &mut Gen) -> usize {
    if g.rng.u16(..150) == 0 {
        g.log_size(50, 3_000)
    } else {
        g.rng.usize(1..5)
    }
}

/// Something nested deep in a page's dictionary: arrays or dictionaries, closed or not.
fn nested(g: &mut Gen, clean: &mut bool) -> String {
    // A reader may refuse an object nested hundreds deep (a defence against exactly this),
    // and with it the page: only the bounds hold there.
    let depth = if g.rng.u16(..200) == 0 {
        *clean = false;
        g.log_size(100, 20_000)
    } else {
        g.rng.usize(1..20)
    };
    let (open, close) = *g.pick(&[&("[", "]"), &("<< /A ", ">>"), &("[<< /K ", ">>]")]);
    let mut out = format!(" /Extra {}1", open.repeat(depth));
    if g.rng.u8(..4) == 0 {
        *clean = false;
    } else {
        out.push_str(&close.repeat(depth));
    }
    out
}

/// A PDF from objects, and whether it is well-formed enough to read back its words.
pub fn valid_pdf(g: &mut Gen, bombs: &OnceLock<Vec<Bomb>>) -> Input {
    let mut objects = Objects::default();
    let mut clean = true;
    let mut words = Vec::new();
    let catalog = objects.reserve();
    let root = objects.reserve();
    let font = objects.add(
        g.pick(&[
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding /MacRomanEncoding >>",
        ])
        .as_bytes()
        .to_vec(),
    );
    let pages = page_count(g);
    let bomb = bombs.get().filter(|_| g.rng.u16(..800) == 0);
    let shared = if let Some(bombs) = bomb {
        clean = false;
        Some(bomb_stream(g, &mut objects, bombs))
    } else if pages > 4 || g.rng.u8(..5) == 0 {
        let ops = content(g, &mut words, &mut 0);
        Some(content_stream(g, &mut objects, &ops, &mut clean))
    } else {
        None
    };
    let shared_words = words.clone();
    words.clear();
    let mut kids = Vec::new();
    for page in 0..pages {
        let mut line = 0;
        let contents = match shared {
            Some(id) => {
                if page < 4 {
                    words.extend(shared_words.iter().cloned());
                }
                format!("{id} 0 R")
            }
            None if g.rng.u8(..4) == 0 => {
                let ids: Vec<String> = (0..g.rng.usize(1..4))
                    .map(|_| {
                        let ops = content(g, &mut words, &mut line);
                        format!("{} 0 R", content_stream(g, &mut objects, &ops, &mut clean))
                    })
                    .collect();
                format!("[{}]", ids.join(" "))
            }
            None => {
                let ops = content(g, &mut words, &mut line);
                format!("{} 0 R", content_stream(g, &mut objects, &ops, &mut clean))
            }
        };
        let extra = if g.rng.u8(..8) == 0 {
            nested(g, &mut clean)
        } else {
            String::new()
        };
        kids.push(objects.add(
            format!(
                "<< /Type /Page /Parent {{parent}} /MediaBox [0 0 612 792] /Contents {contents} \
                 /Resources << /Font << /F1 {font} 0 R >> >>{extra} >>"
            )
            .into_bytes(),
        ));
    }
    page_tree(g, &mut objects, root, &kids);
    objects.set(
        catalog,
        format!("<< /Type /Catalog /Pages {root} 0 R >>").into_bytes(),
    );
    let xref = xref_style(g, &mut clean);
    let bytes = write(g, &objects, catalog, xref);
    let expect = if clean {
        Expect::Words { words, title: None }
    } else {
        Expect::Nothing
    };
    Input { bytes, expect }
}

/// How the cross-reference table is written: right three times in four.
fn xref_style(g: &mut Gen, clean: &mut bool) -> Xref {
    if g.rng.u8(..4) == 0 {
        *clean = false;
        *g.pick(&[
            &Xref::Shifted,
            &Xref::Missing,
            &Xref::WrongSize,
            &Xref::StartxrefWrong,
            &Xref::LoopingPrev,
            &Xref::Cut,
        ])
    } else {
        Xref::Right
    }
}

/// The page tree: the pages under the root, or (now and then) under a chain of `/Pages`
/// nodes up to thousands deep. Each page's `{parent}` is filled in.
fn page_tree(g: &mut Gen, objects: &mut Objects, root: usize, kids: &[usize]) {
    let depth = match g.rng.u8(..50) {
        0 => g.log_size(2, 5_000),
        1..=5 => 2,
        _ => 1,
    };
    let count = kids.len();
    let mut parent = root;
    let mut chain = vec![root];
    for _ in 1..depth {
        chain.push(objects.reserve());
    }
    for (i, &node) in chain.iter().enumerate() {
        let up = if i == 0 {
            String::new()
        } else {
            format!(" /Parent {parent} 0 R")
        };
        let below = match chain.get(i + 1) {
            Some(next) => format!("{next} 0 R"),
            None => kids
                .iter()
                .map(|k| format!("{k} 0 R"))
                .collect::<Vec<_>>()
                .join(" "),
        };
        objects.set(
            node,
            format!("<< /Type /Pages{up} /Kids [{below}] /Count {count} >>").into_bytes(),
        );
        parent = node;
    }
    for &kid in kids {
        let body = String::from_utf8_lossy(&objects.0[kid - 1])
            .replace("{parent}", &format!("{parent} 0 R"));
        objects.set(kid, body.into_bytes());
    }
}

/// The file: header, objects, cross-reference table and trailer, written as `xref` says.
fn write(g: &mut Gen, objects: &Objects, catalog: usize, xref: Xref) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.0.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(body);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let at = pdf.len();
    let size = match xref {
        Xref::WrongSize => g.pick(&["0", "1", "2147483647", "99999999999"]).to_string(),
        _ => (objects.0.len() + 1).to_string(),
    };
    if xref != Xref::Missing {
        pdf.extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
        let shift = if xref == Xref::Shifted {
            g.rng.usize(1..40)
        } else {
            0
        };
        for offset in offsets {
            pdf.extend_from_slice(format!("{:010} 00000 n \n", offset + shift).as_bytes());
        }
    }
    let prev = if xref == Xref::LoopingPrev {
        format!(" /Prev {at}")
    } else {
        String::new()
    };
    let startxref = if xref == Xref::StartxrefWrong {
        g.rng.usize(..at + 100)
    } else {
        at
    };
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {size} /Root {catalog} 0 R{prev} >>\nstartxref\n{startxref}\n%%EOF\n"
        )
        .as_bytes(),
    );
    if xref == Xref::Cut {
        pdf.truncate(g.rng.usize(..pdf.len()));
    }
    pdf
}
