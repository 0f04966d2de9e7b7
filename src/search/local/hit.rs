//! What the local index gives back: a search result ([`LocalHit`]) and a whole stored document
//! ([`Document`]), both naming the file by its `file://` URL and its canonical path; a result
//! also by its place in the corpus ([`InCorpus`]), which a moved corpus keeps.
//!
//! Plain data; the conversion to the providers' common [`SearchHit`] lives here so the search
//! client needs no knowledge of local results.

use std::path::PathBuf;

use crate::in_corpus::InCorpus;
use crate::search::SearchHit;

/// One document that matches a query.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalHit {
    /// `file://` URL of the canonical path.
    pub url: String,
    pub title: String,
    /// A few plain-text sentences around the best match (about 200-600 characters).
    pub passage: String,
    /// The canonical, absolute path.
    pub path: PathBuf,
    /// Its path inside the corpus and the hash of its text.
    pub in_corpus: InCorpus,
    /// BM25 score; higher is better, comparable only within one query.
    pub score: f32,
}

impl LocalHit {
    /// The hit in the shape every search provider returns (the passage is the snippet).
    pub fn to_search_hit(&self) -> SearchHit {
        SearchHit {
            title: self.title.clone(),
            url: self.url.clone(),
            snippet: self.passage.clone(),
            in_corpus: Some(self.in_corpus.clone()),
        }
    }
}

/// One indexed document with its full text (as indexed: plain text, at most 2 MB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub url: String,
    pub title: String,
    pub path: PathBuf,
    pub text: String,
}
