//! The view of one run (`researchflow view`, and `<stem>.html` beside every report): a header
//! with the question and how the run ended, then the totals, the report, the plan graph, the
//! timeline, each node's details and the reviews, as sections of one page ([`super::page`]).
//!
//! A large plan still gives a usable file: the nodes' texts share [`TEXT_TOTAL`] characters
//! (each overview or analysis at least [`TEXT_MIN`], at most [`TEXT_MAX`]), their details start
//! collapsed beyond [`OPEN_MAX_NODES`] nodes, the timeline draws at most
//! [`super::timeline::MAX_ROWS`] tasks, the report is cut at [`REPORT_MAX_CHARS`], and each
//! cut says so on the page.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::details::{DetailOptions, node_details};
use super::graph::{Graph, STATUS_COLORS};
use super::html::{Links, NOT_ANSWERED, esc, run_state, state_badge};
use super::page::document;
use super::reviews::{gate_verdicts, report_review};
use super::run_files::{RunFiles, ViewError};
use super::{report_html, svg, timeline};

/// The characters all nodes' texts share in a view.
pub const TEXT_TOTAL: usize = 2_000_000;
/// The fewest characters of a node's overview or analysis shown, however large the plan.
pub const TEXT_MIN: usize = 200;
/// The most characters of a node's overview or analysis shown.
pub const TEXT_MAX: usize = 20_000;
/// Plans with at most this many nodes show their details open.
pub const OPEN_MAX_NODES: usize = 20;
/// The most characters of the report rendered.
pub const REPORT_MAX_CHARS: usize = 1_000_000;

/// Reads the run of `plan_path` and writes its view to `out`, atomically. Returns `out`.
/// `links` without a corpus link into the one the plan records, when there is one.
pub fn write_view(plan_path: &Path, out: &Path, links: &Links) -> Result<PathBuf, ViewError> {
    let files = RunFiles::load(plan_path)?;
    let links = links.clone().or_recorded(files.plan.corpus.as_deref());
    let html = render(&files, &links);
    crate::atomic::write(out, html.as_bytes()).map_err(|source| ViewError::Write {
        path: out.display().to_string(),
        source,
    })?;
    Ok(out.to_path_buf())
}

/// The whole page of a run.
pub fn render(files: &RunFiles, links: &Links) -> String {
    let plan = &files.plan;
    let question = crate::text::one_line(plan.question(), 300);
    let n = plan.nodes.len().max(1);
    let options = DetailOptions {
        open: n <= OPEN_MAX_NODES,
        text_max: (TEXT_TOTAL / n).clamp(TEXT_MIN, TEXT_MAX),
    };
    let mut body = String::with_capacity(64 * 1024 + plan.nodes.len() * 2_048);
    header(files, &question, &mut body);
    body.push_str(r##"<nav class="toc"><a href="#totals">Totals</a><a href="#report">Report</a><a href="#graph">Graph</a><a href="#timeline">Timeline</a><a href="#nodes">Nodes</a><a href="#reviews">Reviews</a></nav><main>"##);
    section("totals", "Totals", &totals(files), &mut body);
    let report = match &files.report {
        Some(text) => format!(
            r#"<div class="report">{}</div>"#,
            report_html::render(text, REPORT_MAX_CHARS, links)
        ),
        None => r#"<p class="note">No report beside the plan yet.</p>"#.to_string(),
    };
    section("report", "Report", &report, &mut body);
    let graph = Graph::of(plan);
    let drawing = format!(
        r#"<div class="scroll graph">{}</div>{}"#,
        svg::svg(&graph),
        legend()
    );
    section("graph", "Plan graph", &drawing, &mut body);
    let tl = format!(
        r#"<div class="scroll">{}</div>"#,
        timeline::timeline(&files.events, plan)
    );
    section("timeline", "Timeline", &tl, &mut body);
    let mut nodes = String::with_capacity(plan.nodes.len() * 2_048);
    if !options.open {
        let _ = write!(
            nodes,
            r#"<p class="note">{} nodes: each one's details are collapsed (click to open); texts are cut to {} characters.</p>"#,
            plan.nodes.len(),
            options.text_max
        );
    }
    for node in &plan.nodes {
        nodes.push_str(&node_details(node, &files.events, links, options));
    }
    section("nodes", "Nodes", &nodes, &mut body);
    let (review, _) = report_review(files.review.as_ref());
    let reviews = format!(
        "<h3>Plan review</h3>{}<h3>Review of the report</h3>{}",
        gate_verdicts(&files.events, files.plan_review.as_ref()),
        review
    );
    section("reviews", "Reviews", &reviews, &mut body);
    body.push_str("</main><footer>");
    for note in &files.notes {
        let _ = write!(body, "<p class=\"note\">{}</p>", esc(note));
    }
    body.push_str("Written by researchflow view: one file, no script, nothing loaded from elsewhere.</footer>");
    document(&format!("{question} · researchflow"), &body)
}

fn section(id: &str, title: &str, content: &str, out: &mut String) {
    let _ = write!(
        out,
        r#"<section id="{id}"><h2>{}</h2>{content}</section>"#,
        esc(title)
    );
}

/// The question, the run's status and reason, and its files.
fn header(files: &RunFiles, question: &str, out: &mut String) {
    let plan = &files.plan;
    let state = plan
        .outcome
        .as_ref()
        .map_or("not finished", |o| run_state(&o.status, o.answered));
    let _ = write!(
        out,
        r#"<header class="top"><h1>{}</h1><p class="meta">{badge} · workflow <code>{}</code> · plan <code>{}</code>"#,
        esc(question),
        esc(&plan.workflow_id),
        esc(&files
            .plan_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()),
        badge = state_badge(state, r#" id="run-status""#),
    );
    if let Some(finished) = plan.outcome.as_ref().map(|o| &o.finished_at) {
        let _ = write!(out, " · finished {}", esc(finished));
    }
    out.push_str("</p>");
    if state == NOT_ANSWERED {
        let status = plan.outcome.as_ref().map_or("", |o| o.status.as_str());
        let _ = write!(
            out,
            r#"<p class="meta" id="not-answered">The run ended <code>{}</code>, but its report says its sources do not answer the question.</p>"#,
            esc(status)
        );
    }
    if let Some(reason) = plan.outcome.as_ref().and_then(|o| o.reason.as_deref()) {
        let _ = write!(
            out,
            r#"<p class="meta">{}</p>"#,
            esc(&crate::text::one_line(reason, 1_000))
        );
    }
    out.push_str("</header>");
}

/// The run's totals: the nodes by status and their sources from the plan, then what
/// `run_finished` counted (rounds, retries, tokens, seconds) when the log has it.
fn totals(files: &RunFiles) -> String {
    let plan = &files.plan;
    let mut cells: Vec<(String, String)> = vec![("nodes".into(), plan.nodes.len().to_string())];
    for (status, _, _) in STATUS_COLORS {
        let count = plan
            .nodes
            .iter()
            .filter(|n| n.status.as_str() == status)
            .count();
        cells.push((status.into(), count.to_string()));
    }
    let urls: HashSet<&str> = plan
        .nodes
        .iter()
        .flat_map(|n| n.sources.iter().map(|s| s.url.as_str()))
        .collect();
    cells.push(("sources".into(), urls.len().to_string()));
    let plan_tokens: u64 = plan
        .nodes
        .iter()
        .filter_map(|n| n.usage.map(|u| u.total_tokens))
        .sum();
    let totals = files.events.finished.as_ref().and_then(|f| f.get("totals"));
    let number = |key: &str| totals.and_then(|t| t.get(key)).filter(|v| v.is_number());
    cells.push((
        "tokens".into(),
        number("total_tokens").map_or(plan_tokens.to_string(), Value::to_string),
    ));
    for key in ["rounds", "retries", "seconds"] {
        if let Some(v) = number(key) {
            let shown = v
                .as_f64()
                .filter(|_| key == "seconds")
                .map_or(v.to_string(), |s| format!("{s:.1}"));
            cells.push((key.into(), shown));
        }
    }
    let mut out = String::from(r#"<div class="totals">"#);
    for (name, value) in cells {
        let _ = write!(
            out,
            r#"<div data-total="{n}"><b>{}</b><span>{n}</span></div>"#,
            esc(&value),
            n = esc(&name)
        );
    }
    out.push_str("</div>");
    out
}

/// What the graph's colours and marks mean.
fn legend() -> String {
    let mut out = String::from(r#"<p class="legend">"#);
    for (status, _, _) in STATUS_COLORS {
        let _ = write!(
            out,
            r#"<span class="badge status-{status}">{status}</span>"#
        );
    }
    out.push_str(
        " a column per batch, arrows from a task's inputs (<code>p_node</code>) to it; \
         the final summary has a double border. Click a node for its details.</p>",
    );
    out
}
