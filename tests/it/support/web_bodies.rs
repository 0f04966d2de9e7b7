//! The bodies of [`WebSite`](super::web_site::WebSite) that are made rather than read: a page
//! that trickles ([`trickle`]), a 20 MiB page streamed block by block and never held whole
//! ([`huge`]), a real PNG image, an empty ZIP archive, gzip compression and ETags. Routing and
//! headers stay in `web_site.rs`.

use std::convert::Infallible;
use std::io::Write;
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures_util::stream::{self, StreamExt};
use sha2::{Digest, Sha256};

/// Bytes of the slow page sent at once, with the headers.
pub const SLOW_HEAD_BYTES: usize = 1024;
/// Bytes of the slow page sent each second after its head.
pub const SLOW_BYTES_PER_SEC: usize = 100;
/// Length of `/huge`: 20 MiB.
pub const HUGE_BYTES: u64 = 20 * 1024 * 1024;
/// The first line of `/huge`; everything after it is filler.
pub const HUGE_FIRST_SENTENCE: &str =
    "The huge page opens with this sentence about the lighthouse keeper of Port Aubrac.";

/// `/huge` is sent in blocks of this size (one chunk each).
const HUGE_BLOCK: usize = 64 * 1024;
/// A filler line; 64 bytes, so a block holds whole lines.
const FILLER_LINE: &str = "Filler of the huge page; nothing here is worth reading. .......\n";
const _: () = assert!(HUGE_BLOCK.is_multiple_of(FILLER_LINE.len()));
/// The smallest valid ZIP archive: an end-of-central-directory record and no entry.
pub const EMPTY_ZIP: &[u8] = b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";

/// `page`'s first [`SLOW_HEAD_BYTES`] at once, then [`SLOW_BYTES_PER_SEC`] a second until
/// its end (over a minute for a page of 8 KiB).
pub fn trickle(page: Bytes) -> Body {
    let split = SLOW_HEAD_BYTES.min(page.len());
    let head = page.slice(..split);
    let rest = page.slice(split..);
    let trickled = stream::unfold(rest, |mut rest| async move {
        if rest.is_empty() {
            return None;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let chunk = rest.split_to(SLOW_BYTES_PER_SEC.min(rest.len()));
        Some((Ok::<Bytes, Infallible>(chunk), rest))
    });
    Body::from_stream(stream::once(async move { Ok(head) }).chain(trickled))
}

/// [`HUGE_BYTES`] of plain text, made block by block as the client reads (chunked, no
/// `Content-Length`): [`HUGE_FIRST_SENTENCE`], then filler lines.
pub fn huge() -> Body {
    let filler = Bytes::from(FILLER_LINE.repeat(HUGE_BLOCK / FILLER_LINE.len()));
    let mut first = format!("{HUGE_FIRST_SENTENCE}\n").into_bytes();
    first.extend_from_slice(&filler[..HUGE_BLOCK - first.len()]);
    let first = Bytes::from(first);
    let blocks = HUGE_BYTES / HUGE_BLOCK as u64;
    let stream = stream::iter(0..blocks).map(move |i| {
        Ok::<Bytes, Infallible>(if i == 0 {
            first.clone()
        } else {
            filler.clone()
        })
    });
    Body::from_stream(stream)
}

/// A 16x16 RGB gradient, encoded as PNG.
pub fn png_image() -> Bytes {
    let (width, height) = (16u32, 16u32);
    let pixels: Vec<u8> = (0..height)
        .flat_map(|y| (0..width).flat_map(move |x| [(x * 16) as u8, (y * 16) as u8, 128]))
        .collect();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Encoding a fixed image into memory cannot fail but by a bug of this function.
    let mut writer = encoder.write_header().expect("png header");
    writer.write_image_data(&pixels).expect("png data");
    writer.finish().expect("png end");
    Bytes::from(out)
}

/// `bytes` compressed with gzip.
pub fn gzip(bytes: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    encoder.write_all(bytes).expect("gzip into memory");
    Bytes::from(encoder.finish().expect("gzip into memory"))
}

/// A strong ETag for `bytes`: the quoted first 16 hex digits of their SHA-256.
pub fn etag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}
