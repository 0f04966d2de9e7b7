//! A watch folder's `index.html`: every question of the questions file as a row, its status
//! in the newest run, then one cell per kept run (newest first) with its status there and
//! how many changes it had since the run it was compared with, the changes worth telling
//! marked, each linked to that run's changes file and report. Drawn from the runs' records
//! by `watch`; one file, no script, nothing loaded from elsewhere.

use std::fmt::Write;

use super::html::{esc, state_badge};
use super::page::document;

/// One question's history.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionHistory {
    pub name: String,
    pub query: String,
    /// One per run of [`history_page`]'s `runs`, in that order; `None` where the run did not
    /// have the question.
    pub cells: Vec<Option<HistoryCell>>,
}

/// One question in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryCell {
    pub status: String,
    /// How many changes since the run it was compared with; `None` when it was compared with
    /// none.
    pub changes: Option<usize>,
    /// Whether one of them is worth telling (`--notify-on`).
    pub worth_telling: bool,
    /// Its changes file, relative to the page, when there is one.
    pub changes_file: Option<String>,
    /// Its report, relative to the page.
    pub report: Option<String>,
}

/// The page of the watch folder `dir_name` over `runs` (names, newest first).
pub fn history_page(dir_name: &str, runs: &[String], questions: &[QuestionHistory]) -> String {
    let mut body = String::with_capacity(questions.len() * runs.len() * 200 + 2_000);
    let _ = write!(
        body,
        r#"<header class="top"><h1>Watch {}</h1><p class="meta">{} question(s) · {} run(s) kept</p></header><main><section id="history"><h2>History</h2><table class="index"><thead><tr><th>question</th><th>now</th>"#,
        esc(dir_name),
        questions.len(),
        runs.len()
    );
    for run in runs {
        let _ = write!(body, "<th>{}</th>", esc(run));
    }
    body.push_str("</tr></thead><tbody>");
    for q in questions {
        let now = q.cells.first().and_then(Option::as_ref);
        let _ = write!(
            body,
            r#"<tr data-question="{}"><td title="{}">{}</td><td>{}</td>"#,
            esc(&q.name),
            esc(&q.query),
            esc(&q.name),
            state_badge(now.map_or("pending", |c| c.status.as_str()), "")
        );
        for cell in &q.cells {
            body.push_str(&cell_html(cell.as_ref()));
        }
        body.push_str("</tr>");
    }
    body.push_str("</tbody></table></section></main><footer>Written by researchflow watch: one file, no script, nothing loaded from elsewhere.</footer>");
    document(&format!("Watch {dir_name} · researchflow"), &body)
}

fn cell_html(cell: Option<&HistoryCell>) -> String {
    let Some(cell) = cell else {
        return "<td></td>".into();
    };
    let changes = match cell.changes {
        None => "first run".to_string(),
        Some(0) => "no change".to_string(),
        Some(n) if cell.worth_telling => format!("<b>{n} change(s)</b>"),
        Some(n) => format!("{n} change(s)"),
    };
    let changes = match &cell.changes_file {
        Some(file) => format!(r#"<a href="{}">{changes}</a>"#, esc(file)),
        None => changes,
    };
    let report = cell.report.as_ref().map_or(String::new(), |r| {
        format!(r#" · <a href="{}">report</a>"#, esc(r))
    });
    format!(
        r#"<td data-changes="{}">{} {changes}{report}</td>"#,
        cell.changes.map_or(String::new(), |n| n.to_string()),
        state_badge(&cell.status, "")
    )
}
