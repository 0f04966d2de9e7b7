//! The shell of every page a view writes: one HTML document with its stylesheet inline and a
//! Content-Security-Policy that allows nothing but that stylesheet (by its hash): no script
//! of any kind, no load from anywhere (no image, font, frame or fetch), no form, no `<base>`.
//! So even markup that escaped our escaping could not run or call out, and the file reads the
//! same offline, from disk or as an email attachment.

use std::io::Read;
use std::path::Path;
use std::sync::LazyLock;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::html::esc;

/// The mark of every page researchflow writes, in its head: what `view --out` looks for
/// before it replaces a file ([`is_ours`]).
const GENERATOR: &str = "<meta name=\"generator\" content=\"researchflow\">";

/// Whether `head`, the start of a file, is a page researchflow wrote: an HTML document with
/// its mark.
pub fn is_ours(head: &str) -> bool {
    head.starts_with("<!DOCTYPE html>\n") && head.contains(GENERATOR)
}

/// Whether `path` is a regular file (not a link to one) that is a page researchflow wrote,
/// read as far as its head.
pub fn is_ours_at(path: &Path) -> bool {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(HEAD_BYTES).read_to_end(&mut bytes));
    read.is_ok() && is_ours(&String::from_utf8_lossy(&bytes))
}

/// How much of a file [`is_ours_at`] reads: the mark is in the page's head.
const HEAD_BYTES: u64 = 4096;

/// The page's only stylesheet.
pub const STYLE: &str = include_str!("style.css");

/// The Content-Security-Policy of every page: the stylesheet's hash is its only permission.
pub static CSP: LazyLock<String> = LazyLock::new(|| {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src 'none'; script-src 'none'; \
         base-uri 'none'; form-action 'none'"
    )
});

/// A whole document titled `title` around `body` (HTML already made safe by its makers).
pub fn document(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + 1_024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(&format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n",
        esc(&CSP)
    ));
    out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(GENERATOR);
    out.push('\n');
    out.push_str(&format!("<title>{}</title>\n", esc(title)));
    out.push_str("<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(body);
    out.push_str("\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_forbids_scripts_and_loads_and_allows_only_our_style() {
        let page = document("<t>", "<p>x</p>");
        assert!(page.contains("default-src &#39;none&#39;; style-src &#39;sha256-"));
        assert!(page.contains("script-src &#39;none&#39;"));
        assert!(page.contains("<title>&lt;t&gt;</title>"));
        // The stylesheet is the one the hash names, byte for byte.
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
        assert!(!STYLE.contains("</style"));
        assert!(is_ours(&page));
        assert!(!is_ours("<p>researchflow</p>"));
    }
}
