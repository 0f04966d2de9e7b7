//! The validators behind `researchflow validate`: one per contract, all reporting through
//! [`crate::diagnostics::Diagnostics`]. Declarations only; each file holds one concept.
//!
//! - [`steps`]: step plans (docs/SPEC.md, "Step plans") against an atom registry ([`atoms`]),
//!   with [`step_refs`] (`${step_id.outputs.name}`) and [`graph`] (dependency order, cycles);
//!   its shape rules are in `steps_shape`, its reference and dependency rules in `steps_deps`.
//! - [`plan_next`]: the Thinkon plan-next answer (docs/SPEC.md, "Plan-next answers (Thinkon)"),
//!   with [`plan_next_schema`] (the embedded JSON Schema), [`words`] (ordering and guessing
//!   words), [`executors`] and [`plan_next_context`] (depth and failed attempts); its checks
//!   are in `plan_next_shape` (one field at a time) and `plan_next_rules` (what the plan type,
//!   executors and context require).
//! - [`plan_file`]: integrity of a researchflow plan file.
//! - [`review`] and [`second_opinion`]: the two answers of the review stage (docs/SPEC.md, "The
//!   review of a report"), which the stage itself checks with the same code; [`answer`] reads
//!   an answer file.
//! - [`document`] reads JSON or YAML (bounded: [`yaml_depth`] refuses deep nesting first);
//!   [`json_path`] and [`describe`] format paths and values.

pub mod answer;
pub mod atoms;
pub mod describe;
pub mod document;
pub mod executors;
pub mod graph;
pub mod json_path;
pub mod plan_file;
pub mod plan_next;
pub mod plan_next_context;
pub mod plan_next_schema;
pub mod review;
pub mod second_opinion;
pub mod step_refs;
pub mod steps;
pub mod words;
pub mod yaml_depth;

// The phases of the validators above, split by concern; not part of the API.
mod plan_next_rules;
mod plan_next_shape;
mod steps_deps;
mod steps_shape;

pub use atoms::{AtomError, AtomRegistry};
pub use document::DocumentError;
pub use executors::{Executors, ExecutorsError};
pub use plan_file::validate_plan_file;
pub use plan_next::{validate_plan_next, validate_plan_next_text};
pub use plan_next_context::{ContextError, PlanNextContext};
pub use review::{ReviewAnswer, check_review, validate_review_text};
pub use second_opinion::{
    SecondOpinion, Verdict, check_second_opinion, validate_second_opinion_text,
};
pub use steps::validate_steps;
