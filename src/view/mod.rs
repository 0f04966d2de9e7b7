//! What a person looks at instead of JSON: a run as one self-contained HTML file (the report,
//! the plan as an SVG graph, each node's details, a timeline from the event log, the reviews,
//! the totals), a batch's index of its questions, and the plan graph as DOT or Mermaid for
//! other tools. It only reads a run's files and writes HTML or text; it never changes a plan.
//!
//! Everything taken from a plan, a report, an event log or a search result is text: escaped
//! by `html.rs`, linked only to web addresses or the run's corpus, in a page whose
//! Content-Security-Policy forbids scripts and every load from elsewhere (`page.rs`). See
//! ARCHITECTURE.md.

pub mod details;
pub mod events;
pub mod formats;
pub mod graph;
pub mod history;
pub mod html;
pub mod index;
pub mod out;
pub mod page;
pub mod report_html;
pub mod reviews;
pub mod run_files;
pub mod run_page;
pub mod svg;
pub mod timeline;

pub use graph::Graph;
pub use html::Links;
pub use index::{ChangeCounts, IndexRow, index_page};
pub use run_files::{RunFiles, ViewError};
pub use run_page::write_view;
