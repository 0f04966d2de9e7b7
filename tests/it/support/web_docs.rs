//! The fixture pages of `fixtures/web/` (real public documents, see its README for where each
//! came from and its licence) and what a test may assert about each: its title, one fact
//! sentence that stands only deep in its body, and the useless snippet a search result gives
//! for it. [`WebSite`](super::web_site::WebSite) serves them under `/docs/<name>`. This module
//! reads the files; it serves nothing.

use std::path::PathBuf;

use super::fixtures::fixture;

/// One fixture page.
#[derive(Clone, Copy, Debug)]
pub struct Doc {
    /// File name in `fixtures/web/`, and the last segment of its URL (`/docs/<name>`).
    pub name: &'static str,
    /// The `Content-Type` the site serves it with.
    pub content_type: &'static str,
    /// The page's own title (`<title>`, or the document's heading).
    pub title: &'static str,
    /// A sentence of the body, past its first 300 characters of text and not in its title.
    /// Compare after collapsing runs of whitespace to one space: the files wrap lines.
    pub fact: &'static str,
    /// What a search engine would show for it: says nothing of the fact.
    pub snippet: &'static str,
}

impl Doc {
    /// `/docs/<name>`
    pub fn path(&self) -> String {
        format!("/docs/{}", self.name)
    }

    /// The file in `fixtures/web/`.
    pub fn file(&self) -> PathBuf {
        fixture("web").join(self.name)
    }

    /// The file's bytes, as served (the Latin-1 page stays Latin-1).
    pub fn bytes(&self) -> Vec<u8> {
        let file = self.file();
        std::fs::read(&file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()))
    }
}

/// A Sphinx manual page (Read the Docs theme: sidebar, breadcrumbs, footer), UTF-8 with
/// `<meta charset="utf-8">`; served gzip-compressed to a client that accepts it.
pub const QEMU_NBD: &str = "qemu-nbd.html";
/// A Texinfo manual chapter with its navigation header and footer, UTF-8 declared by
/// `<meta http-equiv="Content-Type">`. The page `/slow` trickles and `/moved` leads to.
pub const LIBFFI_CLOSURES: &str = "libffi-closure-api.html";
/// A chapter of the French Debian FAQ, stored in ISO-8859-1 (transcoded from UTF-8).
pub const FAQ_FR_LATIN1: &str = "debian-faq-redistributing.fr.html";
/// A 17-page specification typeset by pdfTeX, with a text layer.
pub const MIME_SPEC_PDF: &str = "shared-mime-info-spec.pdf";
/// The GNU GPL version 3, plain text.
pub const GPL3_TXT: &str = "gpl-3.txt";

/// Every fixture page, in the order the site's search results list them.
pub const DOCS: &[Doc] = &[
    Doc {
        name: QEMU_NBD,
        content_type: "text/html; charset=utf-8",
        title: "QEMU Disk Network Block Device Server — QEMU Debian 1:10.0.2+ds-2+deb13u1~bpo12+1 documentation",
        fact: "Set the timeout for a client to successfully complete its handshake to N seconds (default 10), or 0 for no limit.",
        snippet: "QEMU documentation.",
    },
    Doc {
        name: LIBFFI_CLOSURES,
        content_type: "text/html; charset=utf-8",
        title: "The Closure API (libffi: the portable foreign function interface library)",
        fact: "This function is deprecated, as it cannot handle the need for separate writable and executable addresses.",
        snippet: "libffi manual page.",
    },
    Doc {
        name: FAQ_FR_LATIN1,
        content_type: "text/html; charset=iso-8859-1",
        title: "Chapitre 14. Distribuer Debian GNU/Linux dans un produit commercial",
        fact: "Cela n'est pas nouveau, des logiciels libres et des logiciels commerciaux sont maintenant distribués sur le même CD-ROM par beaucoup de fabricants.",
        snippet: "La FAQ Debian.",
    },
    Doc {
        name: MIME_SPEC_PDF,
        content_type: "application/pdf",
        title: "Shared MIME-info Database",
        fact: "All text/* types are subclasses of text/plain.",
        snippet: "PDF document.",
    },
    Doc {
        name: GPL3_TXT,
        content_type: "text/plain; charset=utf-8",
        title: "GNU GENERAL PUBLIC LICENSE Version 3, 29 June 2007",
        fact: "You may charge any price or no price for each copy that you convey, and you may offer support or warranty protection for a fee.",
        snippet: "License text.",
    },
];

/// The fixture page called `name` (one of the constants above).
pub fn doc(name: &str) -> &'static Doc {
    DOCS.iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no fixture page `{name}` in fixtures/web/"))
}

/// `text` with every run of whitespace made one space, trimmed: how facts are compared.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
