//! How a Thinkon run ended, and `result.md`: the root's result, or, when a budget stopped the
//! run first, what exists, marked partial.
//!
//! Statuses are honest: `completed` only when the root returned a result, `partial` when a
//! limit stopped planning before that, `failed` when the root failed, `interrupted` on Ctrl-C
//! or SIGTERM.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::block::{Block, BlockStatus, goal_text};
use super::plan_next::Spent;
use super::tree::{BlockCounts, Tree};
use crate::markdown::{defang_links, escape_raw_html};
use crate::plan::Source;
use crate::report::{no_file_links, source_entry};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum ThinkonStatus {
    Completed,
    Partial,
    Failed,
    Interrupted,
}

impl ThinkonStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What a run reports at its end.
#[derive(Debug, Clone)]
pub struct ThinkonSummary {
    pub status: ThinkonStatus,
    /// Why it ended short of `completed`.
    pub reason: Option<String>,
    pub root: String,
    /// `result.md`, when it was written.
    pub result: Option<PathBuf>,
    pub blocks: BlockCounts,
    /// This invocation's model calls and tokens.
    pub spent: Spent,
}

/// `result.md` of a finished root, with the sources its tree's searches found.
pub fn result_document(goal: &str, root: &Block, tree: &Tree) -> String {
    let result = safe(root.result.as_deref().unwrap_or(""));
    let text = match root.status {
        BlockStatus::Completed => format!("# {}\n\n{result}\n", one_line(goal)),
        _ => format!(
            "# {}\n\n**The goal was not reached: the root block failed.**\n\n{result}\n",
            one_line(goal)
        ),
    };
    text + &sources_section(tree)
}

/// Model text as `result.md` shows it: no control characters, no link to anything but the
/// web, no raw HTML (as the workflow's report).
fn safe(text: &str) -> String {
    escape_raw_html(&defang_links(&crate::text::strip_controls(text.trim())))
}

/// `## Sources`: every source an executor observed, once, in tree order; only web URLs are
/// links.
fn sources_section(tree: &Tree) -> String {
    let mut seen: Vec<Source> = Vec::new();
    for block in tree.subtree(&Tree::root_id()) {
        let found = block
            .done
            .iter()
            .filter_map(|d| d.get("sources").and_then(Value::as_array))
            .flatten();
        for s in found {
            let url = s.get("url").and_then(Value::as_str).unwrap_or("").trim();
            if url.is_empty() || seen.iter().any(|k| k.url == url) {
                continue;
            }
            let title = s.get("title").and_then(Value::as_str).unwrap_or("");
            seen.push(Source::new(url, title));
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    let mut text = String::from("\n## Sources\n\n");
    for (i, source) in seen.iter().enumerate() {
        text.push_str(&source_entry(i + 1, source, &no_file_links));
    }
    text
}

/// `result.md` when a limit stopped the run: every result the tree holds, in tree order.
pub fn partial_document(goal: &str, reason: &str, tree: &Tree) -> String {
    let mut text = format!(
        "# {}\n\n**Partial result: {reason}.** The tree is unfinished; running `researchflow thinkon` again on the same folder continues it.\n",
        one_line(goal)
    );
    let mut any = false;
    for block in tree.subtree(&Tree::root_id()) {
        if let Some(result) = block
            .result
            .as_deref()
            .filter(|_| block.status.is_finished())
        {
            any = true;
            let level = "#".repeat((block.depth as usize + 2).min(6));
            text.push_str(&format!(
                "\n{level} {} ({})\n\n{}\n",
                one_line(&goal_text(&block.goal)),
                block.status.as_str(),
                safe(result)
            ));
        }
    }
    if !any {
        text.push_str("\nNo block had returned a result yet.\n");
    }
    text + &sources_section(tree)
}

/// The longest `error` kept on a block.
const ERROR_MAX_CHARS: usize = 500;

/// Fails `block` for `why`: `error` holds it on one line, and its result lists what it had
/// done.
pub fn fail(block: &mut Block, why: &str) {
    block.error = Some(crate::text::one_line(why, ERROR_MAX_CHARS));
    let result = listing(block, why);
    block.finish(BlockStatus::Failed, result);
}

/// What a block without a reflection returns: its `done`, listed.
pub fn listing(block: &Block, why: &str) -> String {
    let done = super::context::render_done(&block.done, 1_000);
    let done = if done.trim().is_empty() {
        "nothing".to_string()
    } else {
        done.trim().to_string()
    };
    super::reflect::sections(&[why, "", "", ""]) + &format!("\nWhat was done:\n\n{done}\n")
}

fn one_line(text: &str) -> String {
    crate::text::one_line(text, 200)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Summaries store these names: they must never change.
    #[test]
    fn every_thinkon_status_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<ThinkonStatus>(),
            "completed partial failed interrupted"
        );
    }

    #[test]
    fn a_partial_document_lists_what_returned() {
        let mut root = Block::new("a".into(), None, 0, json!("Root"));
        root.children = vec!["b".into(), "c".into()];
        let mut b = Block::new("b".into(), Some("a".into()), 1, json!("Step one"));
        b.finish(
            BlockStatus::Completed,
            "### Completion\nDone, see [here](javascript:alert(1)) <img src=x onerror=y>.".into(),
        );
        let c = Block::new("c".into(), Some("a".into()), 1, json!("Step two"));
        b.done = vec![json!({"status": "completed", "sources": [
            {"url": "https://x.test/1", "title": "One [a](javascript:x)"},
            {"url": "javascript:alert(1)", "title": "Bad"},
            {"url": "https://x.test/1", "title": "Again"}
        ]})];
        let tree = Tree::new(vec![root, b, c]);
        let text = partial_document("Root", "the block budget (3) was reached", &tree);
        assert!(
            text.ends_with("## Sources\n\n- [1] [One \\[a\\](javascript:x)](https://x.test/1)\n- [2] Bad (`javascript:alert(1)`)\n"),
            "{text}"
        );
        assert!(
            text.starts_with("# Root\n\n**Partial result: the block budget (3) was reached.**")
        );
        assert!(
            text.contains("\n### Step one (completed)\n\n### Completion\nDone, see "),
            "{text}"
        );
        assert!(text.contains("[here] (javascript:"), "{text}");
        assert!(text.contains(" \\<img src=x onerror=y>."), "{text}");
        assert!(!text.contains("Step two"));
    }
}
