//! An EXECUTE block's executor call, run and turned into the observation its `done` records:
//! `{executor, command, status, exit_status, output, sources?, search?}`.
//!
//! `exit_status` is the command's for `shell:` (`null` when a signal or the timeout ended it)
//! and 0 or 1 for the other executors (success or failure). A call the runtime cannot run
//! (`shell:` without `--allow-shell`, an executor it has no way to run, a command naming no
//! declared executor, a missing argument) fails the block with a message that says why, and
//! nothing is started. Only an endpoint that cannot be used, or a replay that diverged, stops
//! the run instead ([`Stop`]).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::executors::{Call, ExecutorSet, RUNNABLE, classify};
use super::plan_next::Spent;
use super::shell::run_shell;
use super::sub_agents::{Found, OUTPUT_MAX_CHARS, SubAgents};
use crate::agents::task::TaskError;
use crate::llm::CallObserver;
use crate::plan::NodeId;

/// How `shell:` commands run, when they may.
#[derive(Debug, Clone)]
pub struct ShellOptions {
    pub work_dir: PathBuf,
    pub timeout: Duration,
    /// Bytes kept of stdout and of stderr.
    pub output_cap: usize,
}

/// What runs executor calls.
pub struct Executor<'a> {
    pub executors: &'a ExecutorSet,
    pub research: SubAgents<'a>,
    /// `None` without `--allow-shell`.
    pub shell: Option<ShellOptions>,
}

/// What an executor call observed; `ok` when it succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub ok: bool,
    pub entry: Value,
}

impl Observation {
    fn new(
        executor: &str,
        command: &str,
        ok: bool,
        exit_status: Option<i32>,
        output: String,
    ) -> Self {
        Observation {
            ok,
            entry: json!({
                "executor": executor,
                "command": command,
                "status": if ok { "completed" } else { "failed" },
                "exit_status": exit_status,
                "output": output,
            }),
        }
    }

    fn refused(executor: &str, command: &str, why: String) -> Self {
        Observation::new(executor, command, false, None, why)
    }

    /// The output, for a failed block's result.
    pub fn output(&self) -> &str {
        self.entry
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// The run must stop: an endpoint cannot be used, or a replay diverged.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Stop(pub String);

/// What the call needs besides its command.
pub struct CallSite<'a> {
    pub block: NodeId,
    /// The root's goal: the question the research serves.
    pub question: &'a str,
    /// The parent's `done`, which `summarize` reads.
    pub parent_done: &'a [Value],
    /// The runtime made the call itself (the depth limit): it runs whatever the executors file
    /// declares.
    pub forced: bool,
}

impl Executor<'_> {
    /// Runs `command` for the block at `site`.
    pub async fn run(
        &self,
        command: &str,
        site: &CallSite<'_>,
        spent: &mut Spent,
        observer: &dyn CallObserver,
    ) -> Result<Observation, Stop> {
        let declared = if site.forced {
            &*RUNNABLE
        } else {
            &self.executors.declared
        };
        let call = classify(command, declared);
        let research = match &call {
            Call::Search(q) if !q.is_empty() => {
                self.research
                    .search(site.block, site.question, q, spent, observer)
                    .await
            }
            Call::Summarize(i) if !i.is_empty() => {
                self.research
                    .summarize(
                        site.block,
                        site.question,
                        i,
                        site.parent_done,
                        spent,
                        observer,
                    )
                    .await
            }
            Call::Shell(c) if !c.is_empty() => return Ok(self.shell(command, c).await),
            Call::Search(_) | Call::Summarize(_) | Call::Shell(_) => {
                let why = format!(
                    "`{command}` has nothing after the executor's name: write `<executor>: <argument>`"
                );
                return Ok(Observation::refused(executor_name(&call), command, why));
            }
            Call::Unsupported(id) => {
                let why = format!(
                    "executor `{id}` is declared in `{}` but researchflow runs only `search`, `summarize` and `shell`: nothing was run",
                    self.executors.path.display()
                );
                return Ok(Observation::refused(id, command, why));
            }
            Call::Undeclared => {
                let why = format!(
                    "`{command}` names no executor declared in `{}`: nothing was run",
                    self.executors.path.display()
                );
                return Ok(Observation::refused("unknown", command, why));
            }
        };
        observed(executor_name(&call), command, research)
    }

    async fn shell(&self, command: &str, line: &str) -> Observation {
        let Some(options) = &self.shell else {
            let why = "shell commands are off: researchflow thinkon runs `shell:` only when started with `--allow-shell`; nothing was run".to_string();
            return Observation::refused("shell", command, why);
        };
        match run_shell(line, &options.work_dir, options.timeout, options.output_cap).await {
            Ok(run) => {
                let mut output = run.stdout.clone();
                if !run.stderr.is_empty() {
                    output.push_str(&format!("\n[stderr]\n{}", run.stderr));
                }
                if run.dropped_bytes > 0 {
                    output.push_str(&format!(
                        "\n[{} more bytes of output not kept]",
                        run.dropped_bytes
                    ));
                }
                if run.timed_out {
                    output.push_str(&format!(
                        "\n[stopped after the {} s timeout]",
                        options.timeout.as_secs()
                    ));
                }
                let output =
                    crate::text::truncate(&crate::text::strip_controls(&output), OUTPUT_MAX_CHARS);
                let mut observation =
                    Observation::new("shell", command, run.succeeded(), run.exit_status, output);
                observation.entry["timed_out"] = json!(run.timed_out);
                observation
            }
            Err(e) => Observation::refused("shell", command, format!("cannot start `sh`: {e}")),
        }
    }
}

fn executor_name(call: &Call) -> &str {
    match call {
        Call::Search(_) => "search",
        Call::Summarize(_) => "summarize",
        Call::Shell(_) => "shell",
        Call::Unsupported(id) => id,
        Call::Undeclared => "unknown",
    }
}

/// A research executor's result as an observation; a stopping error stops the run.
fn observed(
    executor: &str,
    command: &str,
    result: Result<Found, TaskError>,
) -> Result<Observation, Stop> {
    match result {
        Ok(found) => {
            let mut observation = Observation::new(executor, command, true, Some(0), found.output);
            if !found.sources.is_empty() {
                observation.entry["sources"] = json!(found.sources);
            }
            if let Some(search) = found.search {
                observation.entry["search"] = json!(search);
            }
            Ok(observation)
        }
        Err(e) if e.is_unusable() || e.is_diverged() => Err(Stop(e.to_string())),
        Err(e) => Ok(Observation::new(
            executor,
            command,
            false,
            Some(1),
            e.to_string(),
        )),
    }
}
