//! [`ReadPage`]: a page as the reader made it (its final URL, kind, title, text and why it
//! stops early), as the passages are cut from it, the cache keeps it and the transcript
//! records it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::extract::PageKind;

/// A page as read: the text the passages are cut from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadPage {
    /// Where the text came from, after redirects.
    pub url: String,
    pub kind: PageKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub text: String,
    /// Why the page stops early (the byte cap, the deadline, the text cap), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// The body's length as read, decoded of its content encoding.
    pub bytes: u64,
}

/// A page, or why it was not read.
pub type PageResult = Result<Arc<ReadPage>, String>;
