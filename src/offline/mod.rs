//! The offline engine (`workflow --offline`, or `"engine": "offline"`): research over a local
//! corpus with no model and no network. A deterministic planner (`facets.rs`) and sub-agents that
//! quote, never write (`quotes.rs`), built on sentence splitting ([`crate::text::sentences`]), what
//! may be quoted (`units.rs`: a leaning sentence with the one it follows from; never code, a
//! signature, navigation or a version note, `prose.rs`), relevance with maximal marginal relevance
//! (`select.rs`) and the final report's answer and findings (`answer.rs`, reading the question with
//! `question.rs`; a broad comparison aspect by aspect with `compare.rs`; the figure or name asked
//! for with `span.rs`; whether a sentence states what is asked, `stated.rs`, with its subject,
//! `subject.rs`, its kind of figure, `kinds.rs`, and the form of its answer, `form.rs`; the
//! default a sentence gives an option, `defaults.rs`; what a
//! document is called where its text does not say it, `names.rs`). They plug into the same workflow
//! engine as the LLM planner and agents, so the plan file, info blocks, sources, events and report
//! are the same.

pub mod answer;
pub mod compare;
pub mod defaults;
pub mod facets;
pub mod form;
pub mod kinds;
pub mod names;
pub mod prose;
pub mod question;
pub mod quotes;
pub mod select;
pub mod span;
pub mod stated;
pub mod subject;
pub mod units;

pub use facets::OfflinePlanner;
pub use quotes::{OFFLINE_NOTICE, OfflineAgents};
