//! `researchflow schema plan|config|questions`: the JSON Schema of a plan file, of the config
//! file, or of one JSON line of a batch's questions file, pretty-printed on stdout. Each is
//! generated from the types researchflow reads the document with (schemars), so it says what
//! this build accepts. `agent.config.example.json` names the config's with `$schema`.

use crate::cli::{SchemaArgs, SchemaDocument};
use crate::exit::{CommandResult, ExitStatus};
use crate::output::print_own_text;
use crate::plan::PlanFile;

pub async fn run(args: SchemaArgs) -> CommandResult {
    let schema = match args.document {
        SchemaDocument::Plan => {
            let mut schema = schemars::schema_for!(PlanFile);
            schema.insert("title".into(), "researchflow plan file".into());
            schema
        }
        SchemaDocument::Config => crate::settings::config_schema::schema(),
        SchemaDocument::Questions => crate::batch::questions::json_line_schema(),
    };
    // A `Schema` is a JSON value: printing it cannot fail.
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    print_own_text(&text)?;
    Ok(ExitStatus::Success)
}
