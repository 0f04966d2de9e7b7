//! `researchflow graph PLAN.json [--format dot|mermaid|svg]`: the plan's graph on stdout for
//! other tools (`dot -Tsvg`, a Markdown page with Mermaid, a browser). The plan is only read,
//! without a lock; one that cannot be read exits 2 naming it.

use crate::cli::{GraphArgs, GraphFormat};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::print_text;
use crate::view::run_files::read_plan;
use crate::view::{Graph, formats, svg};

pub async fn run(args: GraphArgs) -> CommandResult {
    let plan = read_plan(&args.plan).map_err(CommandError::usage)?;
    let graph = Graph::of(&plan);
    let text = match args.format {
        GraphFormat::Dot => formats::dot(&graph),
        GraphFormat::Mermaid => formats::mermaid(&graph),
        GraphFormat::Svg => format!("{}\n", svg::svg(&graph)),
    };
    print_text(&text)?;
    Ok(ExitStatus::Success)
}
