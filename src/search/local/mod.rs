//! The local-corpus search engine: full-text search (tantivy, BM25) over a folder of Markdown,
//! reStructuredText, text, HTML, PDF documents and man pages, with an index kept in a cache
//! folder and updated incrementally.
//!
//! [`LocalIndex::open`] walks the corpus, re-reads only the files that were added or changed
//! since the last open, and returns the index with an [`IndexReport`] (counts and warnings: a
//! file that cannot be indexed is a warning, never a failure). [`LocalIndex::search`] returns
//! one [`LocalHit`] per document with its best passage; [`LocalIndex::document`] and
//! [`LocalIndex::documents`] give the stored full text for an extractive summariser.
//!
//! The API is synchronous (tantivy is): async callers wrap it in `spawn_blocking`. This module
//! never writes inside the corpus, never prints, and knows nothing of the config, the CLI or the
//! plan file; see `ARCHITECTURE.md` for where search sits in a workflow step.

pub mod chunks;
pub mod content;
pub mod decode;
pub mod error;
pub mod extract;
pub mod fence;
pub mod hit;
pub mod html;
pub mod html_layout;
pub mod html_roles;
pub mod index;
pub mod inspect;
pub mod location;
pub mod man;
pub mod manifest;
pub mod markdown;
pub mod paragraphs;
pub mod passage;
pub mod pdf;
pub mod query;
pub mod rank;
pub mod report;
pub mod roff;
pub mod rst;
pub mod rst_inline;
pub mod schema;
pub mod title;
pub mod update;
pub mod url;
pub mod vectors;
pub mod walk;

pub use error::LocalSearchError;
pub use hit::{Document, LocalHit};
pub use index::LocalIndex;
pub use location::default_index_dir;
pub use report::IndexReport;
