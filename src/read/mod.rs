//! The page reader: the pages behind web search results, read so the search sub-agent can
//! answer from their text rather than from snippets. [`fetch`] gets a page over HTTP within
//! its bounds ([`guard`] keeps it off private addresses, [`robots`] obeys robots.txt);
//! [`reader`] reads each page once per run or batch; [`extract`] turns a fetched body into
//! text (kind, encoding, main content); [`passages`] cuts pages' text into passages and picks
//! the best ones for a task's queries within a budget; [`jobs`] is what a parser process
//! ([`crate::isolate`]) does with a page or a corpus file.
//!
//! This module imports `http`, `search` (the local corpus's readers and analyzer) and `text`;
//! the agents import it. It holds no logic of its own.

pub mod cache;
pub mod extract;
pub mod fetch;
pub mod guard;
pub mod jobs;
mod nesting;
pub mod page;
pub mod passages;
pub mod reader;
pub mod robots;
