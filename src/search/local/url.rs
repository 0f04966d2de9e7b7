//! `file://` URLs for documents of the corpus, and back: the URL a search result carries is
//! the one [`super::LocalIndex::document`] accepts.
//!
//! Every byte of the path other than an unreserved character (RFC 3986: letters, digits,
//! `-._~`) and `/` is percent-encoded, so spaces, `#`, `?`, `%` and non-ASCII names are safe in
//! Markdown links and reports. Only absolute Unix-style paths are handled; this module does not
//! touch the disk.

use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// What is encoded in a path: everything but the unreserved characters and the separator.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// The `file://` URL of an absolute path given as UTF-8 text (`/a b.md` -> `file:///a%20b.md`).
pub fn file_url(path: &str) -> String {
    format!("file://{}", utf8_percent_encode(path, PATH))
}

/// The path a `file://` URL names (`file:///x` or `file://localhost/x`); `None` for another
/// scheme, another host, or an encoding that is not UTF-8.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let decoded = percent_decode_str(rest).decode_utf8().ok()?;
    Some(Path::new(decoded.as_ref()).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_what_must_be_encoded_and_round_trips() {
        let path = "/data/my notes/50% #1?/été [draft].md";
        let url = file_url(path);
        assert_eq!(
            url,
            "file:///data/my%20notes/50%25%20%231%3F/%C3%A9t%C3%A9%20%5Bdraft%5D.md"
        );
        assert_eq!(path_from_url(&url), Some(PathBuf::from(path)));
        assert_eq!(file_url("/a/b-c_d.e~f.txt"), "file:///a/b-c_d.e~f.txt");
    }

    #[test]
    fn accepts_localhost_and_rejects_other_urls() {
        assert_eq!(
            path_from_url("file://localhost/a/b.md"),
            Some(PathBuf::from("/a/b.md"))
        );
        assert_eq!(path_from_url("https://example.com/a"), None);
        assert_eq!(path_from_url("file://server/a"), None);
        assert_eq!(path_from_url("file:///a/%FF"), None);
    }
}
