//! `researchflow man [--out-dir DIR]`: the manual pages, generated from the command-line types
//! (clap_mangen), so they say exactly what `--help` says. Without `--out-dir`, `researchflow.1`
//! on stdout (`researchflow man | man -l -`); with it, `researchflow.1` and one page per
//! command (`researchflow-workflow.1`, `researchflow-validate-plan.1`, ...) written into DIR,
//! and their paths printed as JSON.

use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, print_json, print_own_text};

pub async fn run(args: ManArgs) -> CommandResult {
    let command = Cli::command();
    let Some(dir) = args.out_dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command)
            .render(&mut page)
            .map_err(CommandError::failure)?;
        print_own_text(&String::from_utf8_lossy(&page))?;
        return Ok(ExitStatus::Success);
    };
    let cannot = |e: std::io::Error| {
        CommandError::usage(anyhow::anyhow!(
            "cannot write the manual pages into `{}`: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(&dir).map_err(cannot)?;
    clap_mangen::generate_to(command, &dir).map_err(cannot)?;
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .map_err(cannot)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("researchflow") && n.ends_with(".1"))
        })
        .map(|p| absolute(&p))
        .collect();
    pages.sort();
    print_json(&serde_json::json!({ "pages": pages }))?;
    Ok(ExitStatus::Success)
}
