//! `researchflow completions bash|zsh|fish|powershell`: the shell's completion script on
//! stdout, generated from the command-line types (clap_complete), so it knows every command
//! and flag of this build. Install it as the shell says (`researchflow completions bash >
//! ~/.local/share/bash-completion/completions/researchflow`).

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, CompletionShell, CompletionsArgs};
use crate::exit::{CommandResult, ExitStatus};
use crate::output::print_own_text;

pub async fn run(args: CompletionsArgs) -> CommandResult {
    let shell = match args.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
        CompletionShell::Powershell => Shell::PowerShell,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "researchflow", &mut script);
    print_own_text(&String::from_utf8_lossy(&script))?;
    Ok(ExitStatus::Success)
}
