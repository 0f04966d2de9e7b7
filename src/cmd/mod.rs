//! One file per subcommand, each an `async fn run(args, ...) -> CommandResult`; `dispatch.rs`
//! picks one, `options.rs` turns command-line types into the plain options of lower layers,
//! and `output.rs` prints data on stdout.

pub mod batch;
pub mod diff;
pub mod dispatch;
pub mod doctor;
pub mod options;
pub mod output;
pub mod plan;
pub mod plan_file;
pub mod research;
pub mod review;
pub mod runner;
pub mod thinkon;
pub mod validate;
pub mod workflow;

pub use dispatch::run;
pub use options::log_config;
