//! The old names of our environment variables. Every variable researchflow reads is named
//! `RESEARCHFLOW_...`; the few that had other names before (`AGENT_CONFIG`, `PLAN_PATH`,
//! `WORKFLOW_MAX_ROUNDS`, ...) are still read, as aliases, and the new name wins when both are
//! set. [`ENV_ALIASES`] is the one list of them: [`parse`] applies it to the clap command
//! where the arguments are parsed, so nothing else in the crate knows an old name.
//!
//! clap takes one `env` per argument, read when the argument is built; an alias in use simply
//! becomes the argument's `env` for this parse. The process environment is never changed.

use std::ffi::OsStr;

use clap::{Command, CommandFactory, FromArgMatches};

use super::Cli;

/// Each variable's new name and its old names, the preferred first: the first one set is read
/// when the new name is not. The book's tables list them (`docs/src/cli.md`).
pub const ENV_ALIASES: &[(&str, &[&str])] = &[
    ("RESEARCHFLOW_CONFIG", &["AGENT_CONFIG"]),
    // `PLAN_PATH` won over `PLAN_FILE` when both were set, and still does.
    ("RESEARCHFLOW_PLAN_FILE", &["PLAN_PATH", "PLAN_FILE"]),
    ("RESEARCHFLOW_LOG_FULL", &["PLANNING_LOG_FULL"]),
    (
        "RESEARCHFLOW_LOG_SHOW_INSTRUCTIONS",
        &["PLANNING_LOG_SHOW_INSTR"],
    ),
    ("RESEARCHFLOW_MAX_ROUNDS", &["WORKFLOW_MAX_ROUNDS"]),
    ("RESEARCHFLOW_CONCURRENCY", &["WORKFLOW_CONCURRENCY"]),
];

/// Parses the process's arguments as [`clap::Parser::parse`] does (exiting on an error or on
/// `--help`), reading an old variable name for each argument whose new one is not set.
pub fn parse() -> Cli {
    let mut matches = command().get_matches();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|err| err.format(&mut command()).exit())
}

/// The command line's definition, with the aliases in use applied.
fn command() -> Command {
    with_aliases(Cli::command(), &|name| std::env::var_os(name).is_some())
}

/// `cmd` and its subcommands, each argument whose variable is unset reading the first of its
/// old names that `is_set` (clap reads the value when `env` is given).
fn with_aliases(cmd: Command, is_set: &dyn Fn(&str) -> bool) -> Command {
    cmd.mut_args(
        |arg| match arg.get_env().and_then(|name| alias_in_use(name, is_set)) {
            Some(old) => arg.env(old),
            None => arg,
        },
    )
    .mut_subcommands(|sub| with_aliases(sub, is_set))
}

/// The old name to read for the variable `name`: none when `name` itself is set, has no old
/// name, or none of its old names is set.
fn alias_in_use(name: &OsStr, is_set: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    let (new, olds) = ENV_ALIASES.iter().find(|(new, _)| name == *new)?;
    if is_set(new) {
        return None;
    }
    olds.iter().copied().find(|old| is_set(old))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variable any argument reads, with the argument's id, through every subcommand.
    fn variables(cmd: &Command, out: &mut Vec<(String, String)>) {
        for arg in cmd.get_arguments() {
            if let Some(env) = arg.get_env() {
                let env = env.to_string_lossy().into_owned();
                out.push((env, arg.get_id().to_string()));
            }
        }
        for sub in cmd.get_subcommands() {
            variables(sub, out);
        }
    }

    fn all_variables(cmd: &Command) -> Vec<(String, String)> {
        let mut out = Vec::new();
        variables(cmd, &mut out);
        out
    }

    #[test]
    fn every_variable_a_flag_reads_is_ours_by_its_prefix() {
        for (env, id) in all_variables(&Cli::command()) {
            assert!(
                env.starts_with("RESEARCHFLOW_"),
                "`{id}` reads `{env}`: name it `RESEARCHFLOW_...` (and keep `{env}` in ENV_ALIASES)"
            );
        }
    }

    #[test]
    fn every_alias_belongs_to_a_variable_a_flag_reads() {
        let read: Vec<String> = all_variables(&Cli::command())
            .into_iter()
            .map(|(env, _)| env)
            .collect();
        for (new, olds) in ENV_ALIASES {
            assert!(read.iter().any(|e| e == new), "no flag reads `{new}`");
            assert!(!olds.is_empty(), "`{new}` has no old name");
            for old in *olds {
                assert!(!old.starts_with("RESEARCHFLOW_"), "`{old}` is a new name");
            }
        }
    }

    /// The variable each argument reads once the aliases are applied, with `set` the names
    /// set in the environment.
    fn applied(set: &[&str]) -> Vec<(String, String)> {
        let is_set = |name: &str| set.contains(&name);
        all_variables(&with_aliases(Cli::command(), &is_set))
    }

    fn reads(applied: &[(String, String)], id: &str) -> Vec<String> {
        applied
            .iter()
            .filter(|(_, arg)| arg == id)
            .map(|(env, _)| env.clone())
            .collect()
    }

    #[test]
    fn an_old_name_is_read_only_when_the_new_one_is_unset() {
        let old = applied(&["WORKFLOW_MAX_ROUNDS"]);
        assert!(
            reads(&old, "max_rounds")
                .iter()
                .all(|e| e == "WORKFLOW_MAX_ROUNDS")
        );
        let both = applied(&["WORKFLOW_MAX_ROUNDS", "RESEARCHFLOW_MAX_ROUNDS"]);
        assert!(
            reads(&both, "max_rounds")
                .iter()
                .all(|e| e == "RESEARCHFLOW_MAX_ROUNDS")
        );
        let neither = applied(&[]);
        assert!(
            reads(&neither, "max_rounds")
                .iter()
                .all(|e| e == "RESEARCHFLOW_MAX_ROUNDS")
        );
    }

    #[test]
    fn the_first_old_name_set_is_read() {
        assert_eq!(reads(&applied(&["PLAN_FILE"]), "file"), ["PLAN_FILE"]);
        assert_eq!(
            reads(&applied(&["PLAN_FILE", "PLAN_PATH"]), "file"),
            ["PLAN_PATH"]
        );
    }

    #[test]
    fn the_config_file_is_read_from_its_old_name() {
        let config = reads(&applied(&["AGENT_CONFIG"]), "config");
        assert!(!config.is_empty());
        assert!(config.iter().all(|e| e == "AGENT_CONFIG"), "{config:?}");
    }
}
