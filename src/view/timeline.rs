//! The timeline of a run's tasks, from its event log: one row per node in the order the nodes
//! first started, a bar per attempt from its start to its end (to the log's last time when it
//! has no end), classed by how it ended, on a time axis from the log's first time to its last.
//! Drawn as SVG, like the graph: no script. At most [`MAX_ROWS`] rows; a note says how many
//! more the log holds.

use std::fmt::Write as _;

use chrono::{DateTime, FixedOffset};

use super::events::RunEvents;
use super::html::esc;
use crate::plan::PlanFile;

/// The most rows a timeline draws.
pub const MAX_ROWS: usize = 500;

const LABEL_W: f64 = 230.0;
const CHART_W: f64 = 760.0;
const ROW_H: f64 = 20.0;
const TOP: f64 = 26.0;

/// The timeline section's content: the SVG, or a note when the log has no task.
pub fn timeline(events: &RunEvents, plan: &PlanFile) -> String {
    let (Some(first), Some(last)) = (events.first, events.last) else {
        return r#"<p class="note">No event log with times beside the plan: no timeline.</p>"#
            .into();
    };
    if events.order.is_empty() {
        return r#"<p class="note">The event log holds no task.</p>"#.into();
    }
    let span = ((last - first).num_milliseconds() as f64 / 1000.0).max(0.001);
    let rows: Vec<&String> = events.order.iter().take(MAX_ROWS).collect();
    let height = TOP + rows.len() as f64 * ROW_H + 8.0;
    let width = LABEL_W + CHART_W + 16.0;
    let mut out = String::with_capacity(rows.len() * 400 + 1_000);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="tasks over time, {span:.1} s in all">"#
    );
    axis(span, height, &mut out);
    let x = |t: Option<DateTime<FixedOffset>>| {
        let secs = t.map_or(span, |t| (t - first).num_milliseconds() as f64 / 1000.0);
        LABEL_W + (secs / span).clamp(0.0, 1.0) * CHART_W
    };
    for (i, node) in rows.iter().enumerate() {
        let y = TOP + i as f64 * ROW_H;
        let title = crate::plan::NodeId::parse(node)
            .ok()
            .and_then(|id| plan.node(id))
            .map_or(String::new(), |n| crate::text::one_line(&n.title, 30));
        let _ = write!(
            out,
            r#"<g class="row" data-node="{}"><text class="row-label" x="4" y="{}">{}: {}</text>"#,
            esc(node),
            y + 14.0,
            esc(node),
            esc(&title)
        );
        for a in events.attempts(node) {
            let start = a.started.or(a.ended.map(|e| {
                e - chrono::Duration::milliseconds((a.seconds.unwrap_or(0.0) * 1000.0) as i64)
            }));
            let (x1, x2) = (x(start), x(a.ended));
            let _ = write!(
                out,
                r#"<rect class="bar {}" x="{x1:.1}" y="{}" width="{:.1}" height="{}"><title>{}: {}{}</title></rect>"#,
                a.outcome,
                y + 3.0,
                (x2 - x1).max(2.0),
                ROW_H - 6.0,
                esc(node),
                a.outcome,
                a.seconds.map_or(String::new(), |s| format!(", {s:.1} s"))
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    if events.order.len() > MAX_ROWS {
        let _ = write!(
            out,
            r#"<p class="note">The first {MAX_ROWS} of {} tasks are drawn; the event log holds the rest.</p>"#,
            events.order.len()
        );
    }
    out
}

/// Ticks every "round" number of seconds along the top.
fn axis(span: f64, height: f64, out: &mut String) {
    let step = [
        0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0,
    ]
    .into_iter()
    .find(|s| span / s <= 10.0)
    .unwrap_or(span / 10.0);
    let mut t = 0.0;
    while t <= span + 1e-9 {
        let x = LABEL_W + t / span * CHART_W;
        let _ = write!(
            out,
            r#"<line class="tick" x1="{x:.1}" y1="18" x2="{x:.1}" y2="{height}"/><text class="tick-label" x="{x:.1}" y="12">{}</text>"#,
            if step < 1.0 {
                format!("{t:.1}s")
            } else {
                format!("{t:.0}s")
            }
        );
        t += step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_task_and_a_bar_per_attempt_capped() {
        let mut log = String::from("{\"ts\":\"2026-01-01T10:00:00Z\",\"event\":\"run_started\"}\n");
        for i in 0..(MAX_ROWS + 3) {
            let node = crate::plan::NodeId::from_ordinal(i as u64 + 2).expect("id");
            log.push_str(&format!(
                "{{\"ts\":\"2026-01-01T10:00:01Z\",\"event\":\"task_started\",\"node\":\"{node}\"}}\n\
                 {{\"ts\":\"2026-01-01T10:00:03Z\",\"event\":\"task_completed\",\"node\":\"{node}\",\"seconds\":2.0}}\n"
            ));
        }
        let events = RunEvents::read(log.as_bytes());
        let plan = PlanFile::new("Q", "wf".into(), "t".into());
        let svg = timeline(&events, &plan);
        assert_eq!(svg.matches(r#"<g class="row""#).count(), MAX_ROWS);
        assert_eq!(
            svg.matches(r#"<rect class="bar completed""#).count(),
            MAX_ROWS
        );
        assert!(
            svg.contains("The first 500 of 503 tasks"),
            "{}",
            &svg[svg.len() - 300..]
        );
    }
}
