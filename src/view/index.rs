//! A batch's `DIR/index.html`: one row per question (its status, tokens, time, sources, the
//! review's verdict, what changed since `--previous` when given) with links to its view and its
//! changes file, under counts by status. The batch fills the rows; this file only draws them.
//! Its only links are to files the batch wrote beside it, by name.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::html::{esc, run_state, state_badge};
use super::page::document;

/// What changed for one question since the previous batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeCounts {
    pub sources_new: usize,
    pub sources_gone: usize,
    pub changed: usize,
    pub nodes_new: usize,
    pub nodes_gone: usize,
}

/// One question of the batch.
#[derive(Debug, Clone, Default)]
pub struct IndexRow {
    /// The stem of its files.
    pub name: String,
    pub query: String,
    pub status: String,
    pub tokens: Option<u64>,
    pub seconds: Option<f64>,
    pub sources: Option<usize>,
    pub verdict: Option<String>,
    pub reason: Option<String>,
    /// Whether its report answers the question (`false`: it says its sources do not).
    pub answered: Option<bool>,
    /// What its report's answer says first (its leading statement, as `eval` reads it).
    pub answer: Option<String>,
    /// That answer cites no source, in a report that has sources (the report marks it too).
    pub answer_cites_nothing: bool,
    /// What changed since `--previous`, when both batches answered it.
    pub changes: Option<ChangeCounts>,
    /// The previous batch has a plan for it.
    pub in_previous: bool,
    /// Its view (`<name>.html`) exists.
    pub has_view: bool,
    /// Its changes file (`<name>.changes.md`) exists.
    pub has_changes_file: bool,
}

/// The index page of a batch in `dir_name` (shown, not linked); `previous` names the folder
/// compared with.
pub fn index_page(dir_name: &str, rows: &[IndexRow], previous: Option<&str>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for row in rows {
        *counts.entry(row.state()).or_default() += 1;
    }
    let mut body = String::with_capacity(rows.len() * 600 + 2_000);
    let _ = write!(
        body,
        r#"<header class="top"><h1>Batch {}</h1><p class="meta">{} question(s){}</p></header><main><section id="counts"><h2>Counts</h2><div class="totals">"#,
        esc(dir_name),
        rows.len(),
        previous.map_or(String::new(), |p| format!(" · compared with {}", esc(p)))
    );
    for (status, n) in &counts {
        let _ = write!(
            body,
            r#"<div data-total="{}"><b>{n}</b>{}</div>"#,
            esc(status),
            state_badge(status, "")
        );
    }
    body.push_str(r#"</div></section><section id="questions"><h2>Questions</h2><table class="index"><thead><tr><th>question</th><th>answer</th><th>status</th><th class="num">tokens</th><th class="num">time</th><th class="num">sources</th><th>review</th><th>changes</th><th>files</th></tr></thead><tbody>"#);
    for row in rows {
        row_html(row, previous.is_some(), &mut body);
    }
    body.push_str("</tbody></table></section></main><footer>Written by researchflow batch: one file, no script, nothing loaded from elsewhere.</footer>");
    document(&format!("Batch {dir_name} · researchflow"), &body)
}

fn row_html(row: &IndexRow, compared: bool, out: &mut String) {
    let name = link_name(&row.name);
    let _ = write!(
        out,
        r#"<tr class="question" data-name="{}" data-status="{}" data-state="{}"><td>{}{}</td><td class="answer">{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td><td>{}</td><td>"#,
        esc(&row.name),
        esc(&row.status),
        esc(row.state()),
        esc(&crate::text::one_line(&row.query, 300)),
        row.reason.as_deref().map_or(String::new(), |r| format!(
            r#"<br><span class="note">{}</span>"#,
            esc(&crate::text::one_line(r, 300))
        )),
        answer_cell(row),
        state_badge(row.state(), ""),
        row.tokens.map_or("–".into(), |t| t.to_string()),
        row.seconds.map_or("–".into(), |s| format!("{s:.1} s")),
        row.sources.map_or("–".into(), |s| s.to_string()),
        row.verdict.as_deref().map_or("–".into(), |v| format!(
            r#"<span class="badge verdict-{v}">{v}</span>"#,
            v = esc(v)
        )),
        changes(row, compared),
    );
    if let Some(name) = &name {
        if row.has_view {
            let _ = write!(out, r#"<a class="view" href="{name}.html">view</a> "#);
        }
        if row.has_changes_file {
            let _ = write!(
                out,
                r#"<a class="changes" href="{name}.changes.md">changes</a>"#
            );
        }
    }
    out.push_str("</td></tr>");
}

/// The answer cell: the report's leading statement, or that it states none.
fn answer_cell(row: &IndexRow) -> String {
    match (&row.answer, row.answered) {
        (_, Some(false)) => r#"<span class="note">not stated in the sources</span>"#.into(),
        (Some(answer), _) if !answer.is_empty() => {
            let note = match row.answer_cites_nothing {
                true => r#" <span class="note">cites no source</span>"#,
                false => "",
            };
            format!("{}{note}", esc(&crate::text::one_line(answer, 300)))
        }
        _ => "–".into(),
    }
}

impl IndexRow {
    /// The state it is shown with: its status, or `not_answered` ([`run_state`]).
    fn state(&self) -> &str {
        run_state(&self.status, self.answered)
    }
}

/// The counts of what changed, or why there are none.
fn changes(row: &IndexRow, compared: bool) -> String {
    match row.changes {
        Some(c) if c == ChangeCounts::default() => "no change".into(),
        Some(c) => format!(
            "+{} / −{} sources, {} changed, +{} / −{} directions",
            c.sources_new, c.sources_gone, c.changed, c.nodes_new, c.nodes_gone
        ),
        None if compared && row.in_previous => "not compared: not done".into(),
        None if compared => "not in the previous batch".into(),
        None => "–".into(),
    }
}

/// The question's file stem as a relative link, when it is one the batch writes (letters,
/// digits, `-`, `_`, `.`, not starting with a dot); otherwise no link.
fn link_name(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_link_their_files_and_count_statuses() {
        let rows = vec![
            IndexRow {
                name: "q-one-1234".into(),
                query: "<b>one</b>".into(),
                status: "completed".into(),
                tokens: Some(10),
                answer: Some("Cells last 3000 cycles.".into()),
                answer_cites_nothing: true,
                has_view: true,
                has_changes_file: true,
                changes: Some(ChangeCounts {
                    sources_new: 2,
                    ..ChangeCounts::default()
                }),
                ..IndexRow::default()
            },
            IndexRow {
                name: "../evil".into(),
                query: "two".into(),
                status: "failed".into(),
                has_view: true,
                ..IndexRow::default()
            },
        ];
        let page = index_page("out", &rows, Some("old"));
        assert!(page.contains(r#"<a class="view" href="q-one-1234.html">view</a>"#));
        assert!(page.contains(
            r#"<td class="answer">Cells last 3000 cycles. <span class="note">cites no source</span></td>"#
        ));
        assert!(page.contains(r#"href="q-one-1234.changes.md""#));
        assert!(!page.contains("../evil.html"), "no link outside the folder");
        assert!(page.contains("&lt;b&gt;one") && page.contains("+2 / −0 sources"));
        assert!(page.contains("not in the previous batch"));
        assert!(page.contains(r#"<div data-total="failed"><b>1</b>"#));
    }
}
