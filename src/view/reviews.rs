//! The two reviews in a view: the plan review of every round (its verdicts: their
//! issues from the event log's `plan_review` events, else the latest round's
//! `<stem>.plan-review.json`, and the tasks the review dropped), and the review of the report
//! (`<stem>.review.json`: the verdict, the second opinion's notes, the review's summary,
//! risks, gaps and suggestions, and what failed). Both files are read as JSON values, so a
//! file of another version shows what it holds.

use std::fmt::Write as _;

use serde_json::Value;

use super::events::RunEvents;
use super::html::esc;
use super::report_html::plain;

/// The most issues and dropped tasks listed.
pub const ISSUES_MAX: usize = 500;

/// The plan review section's content: the plan reviews.
pub fn gate_verdicts(events: &RunEvents, file: Option<&Value>) -> String {
    let verdicts: Vec<&Value> = if events.gate_verdicts.is_empty() {
        file.into_iter().collect()
    } else {
        events.gate_verdicts.iter().collect()
    };
    let issues: Vec<(String, &Value)> = verdicts
        .iter()
        .flat_map(|r| {
            let round = text(r.get("round"));
            array(r.get("issues"))
                .iter()
                .map(move |i| (round.clone(), i))
        })
        .collect();
    let mut out = String::new();
    let rounds = verdicts.len();
    let ok = verdicts
        .iter()
        .filter(|r| r["ok"] == Value::Bool(true))
        .count();
    if rounds == 0 {
        return r#"<p class="note">No plan review was recorded.</p>"#.into();
    }
    let _ = write!(
        out,
        "<p>{rounds} round(s) reviewed, {ok} without a blocking issue; {} issue(s).</p>",
        issues.len()
    );
    if !issues.is_empty() {
        out.push_str("<table class=\"issues\"><thead><tr><th>round</th><th>id</th><th>rule</th><th>severity</th><th>where</th><th>message</th></tr></thead><tbody>");
        for (round, i) in issues.iter().take(ISSUES_MAX) {
            let severity = text(i.get("severity"));
            let _ = write!(
                out,
                r#"<tr class="severity-{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                esc(&severity),
                esc(round),
                esc(&text(i.get("id"))),
                esc(&text(i.get("type"))),
                esc(&severity),
                esc(&text(i.get("path"))),
                esc(&text(i.get("message")))
            );
        }
        out.push_str("</tbody></table>");
    }
    if !events.dropped.is_empty() {
        out.push_str("<h3>Dropped tasks</h3><ul class=\"dropped\">");
        for d in events.dropped.iter().take(ISSUES_MAX) {
            let _ = write!(
                out,
                "<li>round {}: <q>{}</q>: {} ({})</li>",
                esc(&text(d.get("round"))),
                esc(&text(d.get("title"))),
                esc(&text(d.get("message"))),
                esc(&text(d.get("reason")))
            );
        }
        out.push_str("</ul>");
    }
    out
}

/// The review of the report's section content, and its verdict (`ok`, `warn`, `block`).
pub fn report_review(review: Option<&Value>) -> (String, Option<String>) {
    let Some(r) = review else {
        return (
            r#"<p class="note">The report was not reviewed (no review file beside the plan).</p>"#
                .into(),
            None,
        );
    };
    let verdict = r
        .get("verdict")
        .and_then(Value::as_str)
        .map(|v| crate::text::one_line(v, 20));
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<p>Verdict: <span class="badge verdict-{v}">{v}</span></p>"#,
        v = esc(verdict.as_deref().unwrap_or("none"))
    );
    if let Some(notes) = r.pointer("/second_opinion/notes").and_then(Value::as_str) {
        out.push_str("<h3>Second opinion</h3>");
        out.push_str(&plain(notes, 20_000));
    }
    if let Some(summary) = r.pointer("/review/summary").and_then(Value::as_str) {
        out.push_str("<h3>Review</h3>");
        out.push_str(&plain(summary, 20_000));
    }
    for (key, title) in [
        ("risks", "Risks"),
        ("gaps", "Gaps"),
        ("suggestions", "Suggestions"),
    ] {
        let items = array(r.pointer(&format!("/review/{key}")));
        if items.is_empty() {
            continue;
        }
        let _ = write!(out, "<h3>{title}</h3><ul>");
        for item in items.iter().take(ISSUES_MAX) {
            let _ = write!(
                out,
                "<li>{}</li>",
                esc(&crate::text::one_line(&text(Some(item)), 2_000))
            );
        }
        out.push_str("</ul>");
    }
    for role in ["review", "second_opinion"] {
        if let Some(error) = r
            .pointer(&format!("/roles/{role}/error"))
            .and_then(Value::as_str)
        {
            let _ = write!(
                out,
                r#"<p class="note">The {role} role failed: {}</p>"#,
                esc(&crate::text::one_line(error, 2_000))
            );
        }
    }
    (out, verdict)
}

/// A JSON value as text: a string as it is, anything else as JSON; nothing for null.
fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn issues_and_the_verdict_are_shown_escaped() {
        let mut events = RunEvents::default();
        events
            .gate_verdicts
            .push(json!({"round": 1, "ok": false, "issues": [
            {"id": "R1-1", "type": "DUPLICATE_TASK", "severity": "block", "path": "tasks[0]",
             "message": "<script>x</script>"}]}));
        let html = gate_verdicts(&events, None);
        assert!(
            html.contains("DUPLICATE_TASK") && html.contains("&lt;script&gt;"),
            "{html}"
        );
        let review = json!({"verdict": "warn", "second_opinion": {"notes": "n <b>"},
            "review": {"summary": "s", "risks": ["r1"], "gaps": [], "suggestions": ["x"]}});
        let (html, verdict) = report_review(Some(&review));
        assert_eq!(verdict.as_deref(), Some("warn"));
        assert!(
            html.contains("verdict-warn")
                && html.contains("n &lt;b&gt;")
                && html.contains("<li>r1</li>")
        );
    }
}
