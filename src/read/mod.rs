//! The page reader: the pages behind web search results, read so the search sub-agent can
//! answer from their text rather than from snippets. [`extract`] turns a fetched body into
//! text (kind, encoding, main content); [`passages`] cuts pages' text into passages and picks
//! the best ones for a task's queries within a budget.
//!
//! This module imports `search` (the local corpus's readers and analyzer) and `text`; the
//! agents import it. It holds no logic of its own.

pub mod extract;
mod nesting;
pub mod passages;
