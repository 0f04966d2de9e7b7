//! `researchflow validate`: read the documents, run one validator, print its diagnostics.
//!
//! Diagnostics go to stdout (pretty JSON, or one line per finding with `--format text`); the
//! exit status is 0 when the document is valid and 1 when it is not. A file that cannot be
//! read or parsed, and an atom registry, executors file or context that is malformed, end the
//! command with exit 2 and a one-line message naming the file. This module holds no rule.

use std::path::Path;

use crate::cli::{OutputFormat, ValidateArgs, ValidateCommand};
use crate::diagnostics::Diagnostics;
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{StdoutError, print_json, print_text};
use crate::validate::{
    AtomRegistry, Executors, PlanNextContext, document, validate_plan_file,
    validate_plan_next_text, validate_review_text, validate_second_opinion_text, validate_steps,
};

/// The executors file `validate plan-next` reads when `--executors` is not given.
pub const DEFAULT_EXECUTORS: &str = ".thinkon/executors/executors.yaml";

pub async fn run(args: ValidateArgs) -> CommandResult {
    let diagnostics = match &args.target {
        ValidateCommand::Steps { file, atoms } => {
            let doc = document::read_document(file).map_err(CommandError::usage)?;
            let registry = AtomRegistry::load(atoms).map_err(CommandError::usage)?;
            validate_steps(&doc, &registry)
        }
        ValidateCommand::PlanNext {
            file,
            executors,
            context,
        } => {
            // The answer is read as text: text around the JSON object is a finding
            // (INVALID_JSON), not an input error.
            let text = document::read_text(file).map_err(CommandError::usage)?;
            // The planner's executors live in `.thinkon/executors/executors.yaml` of
            // the working folder; with none anywhere, only `shell: ...` is valid.
            let default = Path::new(DEFAULT_EXECUTORS);
            let executors = executors
                .as_deref()
                .or_else(|| default.exists().then_some(default))
                .map(Executors::load)
                .transpose()
                .map_err(CommandError::usage)?;
            let context = context
                .as_deref()
                .map(PlanNextContext::load)
                .transpose()
                .map_err(CommandError::usage)?;
            validate_plan_next_text(&text, executors.as_ref(), context.as_ref())
        }
        ValidateCommand::Plan { file } => {
            let doc = document::read_document(file).map_err(CommandError::usage)?;
            validate_plan_file(&doc)
        }
        // Answers are read as text, as plan-next's are: text around the object is a finding.
        ValidateCommand::Review { file } => {
            validate_review_text(&document::read_text(file).map_err(CommandError::usage)?)
        }
        ValidateCommand::SecondOpinion { file } => {
            validate_second_opinion_text(&document::read_text(file).map_err(CommandError::usage)?)
        }
    };
    print(&diagnostics, args.format)?;
    Ok(if diagnostics.is_valid() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

fn print(d: &Diagnostics, format: OutputFormat) -> Result<(), StdoutError> {
    match format {
        OutputFormat::Json => print_json(d),
        OutputFormat::Text => print_text(&d.to_text()),
    }
}
