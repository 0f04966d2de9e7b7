//! The tantivy schema of the local index: one tantivy document per corpus file, keyed by its
//! canonical path, with a searchable and stored title and body, and the SHA-256 of the body
//! (stored only: it names the document's text wherever the corpus lies).
//!
//! Title and body are indexed with word positions (the query's adjacent pairs and quoted
//! phrases, [`super::query`]). Changing the schema changes the index format:
//! bump `manifest::VERSION`. This module does not open or write an index.

use tantivy::TantivyDocument;
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};

use sha2::{Digest, Sha256};

use crate::search::hit::TITLE_MAX_CHARS;
use crate::text::analyzer;
use crate::text::{one_line, strip_controls};

/// The fields of the schema.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// The canonical path as one term: the key for updates, deletions and look-ups.
    pub path: Field,
    pub title: Field,
    pub body: Field,
    /// The SHA-256 of the body, in lower-case hex.
    pub sha256: Field,
}

/// A stored document as it comes back from the index.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDoc {
    pub path: String,
    pub title: String,
    pub body: String,
    pub sha256: String,
}

/// The schema of a new index.
pub fn schema() -> Schema {
    let text = TextOptions::default().set_stored().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(analyzer::NAME)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let mut builder = Schema::builder();
    builder.add_text_field("path", STRING | STORED);
    builder.add_text_field("title", text.clone());
    builder.add_text_field("body", text);
    builder.add_text_field("sha256", STORED);
    builder.build()
}

impl Fields {
    /// The fields of an index's schema; an error when the index was not made by [`schema`].
    pub fn of(schema: &Schema) -> tantivy::Result<Fields> {
        Ok(Fields {
            path: schema.get_field("path")?,
            title: schema.get_field("title")?,
            body: schema.get_field("body")?,
            sha256: schema.get_field("sha256")?,
        })
    }

    /// The tantivy document of one corpus file.
    pub fn document(&self, path: &str, title: &str, body: &str) -> TantivyDocument {
        let mut doc = TantivyDocument::default();
        doc.add_text(self.path, path);
        doc.add_text(self.title, title);
        doc.add_text(self.body, body);
        doc.add_text(
            self.sha256,
            format!("{:x}", Sha256::digest(body.as_bytes())),
        );
        doc
    }

    /// The stored fields of a document read back from the index (missing ones are empty).
    /// What leaves the index is clean, whatever a document holds: the title one line without
    /// control characters, the body without them but for newlines and tabs (a terminal escape
    /// in a corpus file must not reach a plan, an event or a report).
    pub fn stored(&self, doc: &TantivyDocument) -> StoredDoc {
        let text = |field: Field| {
            doc.get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        StoredDoc {
            path: text(self.path),
            title: one_line(&text(self.title), TITLE_MAX_CHARS),
            body: strip_controls(&text(self.body)),
            sha256: text(self.sha256),
        }
    }
}
