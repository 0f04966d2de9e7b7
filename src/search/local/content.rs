//! A corpus file's content up to a cap: its bytes as they are on disk, or decompressed when
//! its name ends in `.gz` (most of the documentation a Debian system installs is:
//! `changelog.Debian.gz`, `README.md.gz`). The cap bounds what is decompressed, not what is
//! read from disk, so a small file that inflates to gigabytes (a gzip bomb) costs no more
//! memory or time than a file of the cap's size; the caller reads such a file in part, as it
//! does a large one. Reads one file; never writes.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use super::decode::{self, SNIFF_BYTES, Sniffed};

/// What was read of a file.
#[derive(Debug)]
pub struct Content {
    /// At most the cap's bytes (decompressed when `gzip`).
    pub bytes: Vec<u8>,
    /// The file's size on disk.
    pub size: u64,
    /// Content is left beyond the cap: the document can only be read in part.
    pub more: bool,
    /// The file is gzip-compressed and `bytes` are what it holds.
    pub gzip: bool,
}

/// Why a file's content could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Opening or reading the file failed (permissions, I/O): worth trying again later.
    Io(std::io::Error),
    /// The file is not valid gzip: it stays so until it changes.
    Gzip(std::io::Error),
}

/// Whether the file's name says it is gzip-compressed (`.gz`, any case).
pub fn is_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// The name the file's content goes by: without `.gz` for a compressed file
/// (`README.md.gz` holds `README.md`), else the path itself.
pub fn content_name(path: &Path) -> PathBuf {
    if is_gzip(path) {
        path.with_extension("")
    } else {
        path.to_path_buf()
    }
}

/// At most `cap` bytes of the content of the file at `path`. With `sniff_first`, content
/// whose first bytes are not document text is read no further.
pub fn read(path: &Path, cap: u64, sniff_first: bool) -> Result<Content, ReadError> {
    let file = File::open(path).map_err(ReadError::Io)?;
    let size = file.metadata().map_err(ReadError::Io)?.len();
    if !is_gzip(path) {
        let bytes = read_up_to(file, cap, size, sniff_first).map_err(ReadError::Io)?;
        return Ok(Content {
            bytes,
            size,
            more: size > cap,
            gzip: false,
        });
    }
    // One byte over the cap tells whether more is left, without decompressing it.
    let decoder = MultiGzDecoder::new(BufReader::new(file));
    let mut bytes =
        read_up_to(decoder, cap.saturating_add(1), 0, sniff_first).map_err(|e| match e.kind() {
            ErrorKind::InvalidData | ErrorKind::InvalidInput | ErrorKind::UnexpectedEof => {
                ReadError::Gzip(e)
            }
            _ => ReadError::Io(e),
        })?;
    let more = bytes.len() as u64 > cap;
    bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    Ok(Content {
        bytes,
        size,
        more,
        gzip: true,
    })
}

/// At most `cap` bytes of `reader` (`size_hint`: how many it may hold, 0 when unknown).
fn read_up_to(
    reader: impl Read,
    cap: u64,
    size_hint: u64,
    sniff_first: bool,
) -> std::io::Result<Vec<u8>> {
    let mut reader = reader.take(cap);
    let first = if sniff_first { SNIFF_BYTES as u64 } else { cap };
    let mut bytes = Vec::with_capacity(usize::try_from(size_hint.min(first)).unwrap_or(0));
    (&mut reader).take(first).read_to_end(&mut bytes)?;
    if sniff_first && decode::sniff(&bytes) == Sniffed::Text {
        reader.read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).expect("gzip");
        encoder.finish().expect("gzip")
    }

    #[test]
    fn a_gzip_file_is_read_decompressed_and_bounded_by_the_cap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notes.TXT.GZ");
        std::fs::write(&path, gzip(b"Threads are safe.")).expect("write");
        let content = read(&path, 1024, false).expect("read");
        assert_eq!(content.bytes, b"Threads are safe.");
        assert!(content.gzip && !content.more);
        assert_eq!(content_name(&path), dir.path().join("notes.TXT"));

        // 100 MB of zeros in about 100 KB: only the cap is ever decompressed.
        let bomb = dir.path().join("bomb.txt.gz");
        std::fs::write(&bomb, gzip(&vec![0u8; 100 << 20])).expect("write");
        let content = read(&bomb, 4096, false).expect("read");
        assert_eq!(content.bytes.len(), 4096);
        assert!(content.more);
    }

    #[test]
    fn a_file_that_is_not_gzip_is_a_gzip_error_and_a_missing_one_an_io_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("broken.gz");
        std::fs::write(&path, b"\x1f\x8b\x08\0not gzip at all").expect("write");
        assert!(matches!(read(&path, 1024, false), Err(ReadError::Gzip(_))));
        let plain = dir.path().join("plain.gz");
        std::fs::write(&plain, b"plain text, not compressed").expect("write");
        assert!(matches!(read(&plain, 1024, false), Err(ReadError::Gzip(_))));
        let gone = dir.path().join("gone.gz");
        assert!(matches!(read(&gone, 1024, false), Err(ReadError::Io(_))));
    }

    #[test]
    fn a_plain_file_is_read_up_to_the_cap_and_says_when_more_is_left() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.txt");
        std::fs::write(&path, b"0123456789").expect("write");
        let content = read(&path, 4, false).expect("read");
        assert_eq!((content.bytes.as_slice(), content.size), (&b"0123"[..], 10));
        assert!(content.more && !content.gzip);
    }
}
