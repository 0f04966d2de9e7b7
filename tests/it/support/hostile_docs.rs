//! Hostile documents built in code, small on the wire: HTML whose nesting hides from a naive
//! estimate (`<div/>` in HTML, markup in an SVG `<title>`), and PDFs that ask for far more than
//! they weigh: a stream that inflates to hundreds of MB (a deflate stream written by hand, 13
//! bits per 258 bytes), pages that share one huge content stream, a form that draws itself
//! (endless recursion), and a page that draws one form tens of thousands of times (CPU). A
//! server to serve them is [`HostileSite`].

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;

use super::server::{Planned, Recorded, Route, Server};

/// `<div/>` `n` times: in HTML, `n` nested `<div>`s.
pub fn self_closed_divs(n: usize) -> String {
    format!(
        "<html><body><p>Self-closed.</p>{}</body></html>",
        "<div/>".repeat(n)
    )
}

/// `n` nested `<div>`s inside an SVG `<title>`, whose content is HTML.
pub fn divs_in_an_svg_title(n: usize) -> String {
    format!(
        "<html><body><p>In an SVG title.</p><svg><title>{}",
        "<div>".repeat(n)
    )
}

/// A zlib stream of `n` spaces, written by hand (fixed Huffman codes: one literal, then
/// matches of 258 bytes at distance 1), about `n / 160` bytes long.
pub fn zlib_spaces(n: usize) -> Vec<u8> {
    let mut bits = Bits::default();
    bits.value(1, 1); // the last block
    bits.value(1, 2); // fixed Huffman codes
    bits.code(0x30 + u32::from(b' '), 8);
    let matches = n.saturating_sub(1) / 258;
    for _ in 0..matches {
        bits.code(0b1100_0101, 8); // length 258 (code 285)
        bits.code(0, 5); // distance 1
    }
    for _ in 0..n.saturating_sub(1) % 258 {
        bits.code(0x30 + u32::from(b' '), 8);
    }
    bits.code(0, 7); // end of block
    let mut out = vec![0x78, 0x01];
    out.extend(bits.bytes);
    out.extend(adler32_of_spaces(n).to_be_bytes());
    out
}

/// Bits packed as deflate packs them: values from their lowest bit, codes from their highest.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    used: u32,
}

impl Bits {
    fn bit(&mut self, bit: u32) {
        if self.used.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit != 0 {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 1 << (self.used % 8);
        }
        self.used += 1;
    }

    fn value(&mut self, value: u32, len: u32) {
        (0..len).for_each(|i| self.bit((value >> i) & 1));
    }

    fn code(&mut self, code: u32, len: u32) {
        (0..len).rev().for_each(|i| self.bit((code >> i) & 1));
    }
}

/// The Adler-32 checksum of `n` spaces.
fn adler32_of_spaces(n: usize) -> u32 {
    const MOD: u128 = 65521;
    let n = n as u128;
    let a = (1 + 32 * n) % MOD;
    let b = (n + 32 * (n * (n + 1) / 2)) % MOD;
    ((b << 16) | a) as u32
}

/// A PDF of `objects` (numbered from 1; the first is the catalog), with a correct
/// cross-reference table.
pub fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    let trailer = format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    );
    out.extend(trailer.as_bytes());
    out
}

/// A stream object: `dict` entries, then `data` (compressed when `flate`).
pub fn stream(dict: &str, data: &[u8], flate: bool) -> Vec<u8> {
    let filter = if flate { " /Filter /FlateDecode" } else { "" };
    let mut out = format!("<< {dict} /Length {}{filter} >>\nstream\n", data.len()).into_bytes();
    out.extend(data);
    out.extend(b"\nendstream");
    out
}

fn obj(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

/// The catalog and a page tree of `pages` pages, objects 3.. (each a page of `page`'s
/// resources and contents); the caller appends the objects they name from `3 + pages` on.
fn pages(pages: usize, page: &str) -> Vec<Vec<u8>> {
    let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", 3 + i)).collect();
    let mut objects = vec![
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj(&format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            kids.join(" ")
        )),
    ];
    let page = format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] {page} >>");
    objects.extend((0..pages).map(|_| obj(&page)));
    objects
}

const FONT: &str =
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

/// One page whose content stream inflates to `inflated` bytes of spaces.
pub fn inflating_pdf(inflated: usize) -> Vec<u8> {
    let mut objects = pages(1, "/Contents 4 0 R");
    objects.push(stream("", &zlib_spaces(inflated), true));
    pdf(&objects)
}

/// `count` pages that all draw one content stream of `content` bytes (spaces).
pub fn shared_content_pdf(count: usize, content: usize) -> Vec<u8> {
    let shared = 3 + count;
    let mut objects = pages(count, &format!("/Contents {shared} 0 R"));
    objects.push(stream("", &zlib_spaces(content), true));
    pdf(&objects)
}

/// One page that draws a form which draws itself.
pub fn self_drawing_pdf() -> Vec<u8> {
    let mut objects = pages(
        1,
        "/Resources << /XObject << /X0 4 0 R >> >> /Contents 5 0 R",
    );
    objects.push(stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 4 0 R >> >>",
        b"/X0 Do",
        false,
    ));
    objects.push(stream("", b"/X0 Do", false));
    pdf(&objects)
}

/// One page that draws, `draws` times, a form showing `shows` words: work far beyond its size.
pub fn busy_pdf(draws: usize, shows: usize) -> Vec<u8> {
    let mut objects = pages(
        1,
        "/Resources << /XObject << /X0 4 0 R >> /Font << /F1 6 0 R >> >> /Contents 5 0 R",
    );
    let words = "BT /F1 12 Tf 72 720 Td (busy) Tj ET\n".repeat(shows);
    objects.push(stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >>",
        words.as_bytes(),
        false,
    ));
    let page = "/X0 Do\n".repeat(draws);
    objects.push(stream("", &deflate(page.as_bytes()), true));
    objects.push(obj(FONT));
    pdf(&objects)
}

/// One plain page showing `text` (ASCII, no parentheses).
pub fn text_pdf(text: &str) -> Vec<u8> {
    let mut objects = pages(1, "/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R");
    let content = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
    objects.push(stream("", content.as_bytes(), false));
    objects.push(obj(FONT));
    pdf(&objects)
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("in memory");
    encoder.finish().expect("in memory")
}

/// The parser processes (`researchflow parse-worker`) whose parent's environment holds
/// `mark`: those of the runs a test started with that variable.
pub fn parsers_of_marked(mark: &str) -> Vec<u32> {
    let entry = format!("{mark}\0");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains("parse-worker")
        })
        .filter(|pid| {
            let environ = parent_of(*pid)
                .and_then(|parent| std::fs::read(format!("/proc/{parent}/environ")).ok())
                .unwrap_or_default();
            String::from_utf8_lossy(&environ).contains(&entry)
        })
        .collect()
}

/// Whether process `pid` still runs (a zombie has ended).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        !status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

fn parent_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("PPid:"))?;
    line.trim_start_matches("PPid:").trim().parse().ok()
}

/// A site on 127.0.0.1 that serves each of its pages (path, content type, bytes) and 404
/// otherwise, with an empty robots.txt.
pub struct HostileSite {
    server: Server,
}

impl HostileSite {
    pub async fn start(pages: Vec<(&'static str, &'static str, Vec<u8>)>) -> HostileSite {
        let pages: Arc<Vec<(&str, &str, Bytes)>> = Arc::new(
            pages
                .into_iter()
                .map(|(path, kind, bytes)| (path, kind, Bytes::from(bytes)))
                .collect(),
        );
        let route: Route = Arc::new(move |request: &Recorded| {
            let found = pages.iter().find(|(path, _, _)| *path == request.path);
            let (status, kind, body) = match found {
                Some((_, kind, bytes)) => (200, *kind, bytes.clone()),
                None if request.path == "/robots.txt" => (200, "text/plain", Bytes::new()),
                None => (404, "text/plain", Bytes::from_static(b"not found")),
            };
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = StatusCode::from_u16(status).expect("a status");
            response
                .headers_mut()
                .insert("content-type", HeaderValue::from_static(kind));
            Planned::respond(response)
        });
        HostileSite {
            server: Server::start(route).await,
        }
    }

    /// Every request so far, in arrival order.
    pub fn all_requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    /// How many requests asked for `path`.
    pub fn requests(&self, path: &str) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|r| r.path == path)
            .count()
    }

    /// "http://127.0.0.1:PORT<path>".
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url())
    }
}
