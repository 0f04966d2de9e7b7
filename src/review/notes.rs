//! `<out>.review.md`: the review's meeting notes, for a person: the verdict and what it means,
//! the second opinion's notes, the review's summary, risks, gaps and suggestions, and any role
//! that failed.
//!
//! Everything the models wrote is text to show, never markup to follow: list entries are one
//! escaped line each ([`crate::markdown::inline`]); the summary and the notes are quoted line by
//! line with raw HTML escaped and only web links kept ([`crate::markdown::prose`]); no control
//! character reaches the file.

use super::record::{ReviewRecord, RoleRecord};
use crate::markdown::{code_text, inline, prose};
use crate::text::strip_controls;
use crate::validate::Verdict;

/// The longest list entry shown, in characters.
pub const ENTRY_MAX_CHARS: usize = 600;
/// The longest summary or notes shown, in characters.
pub const PROSE_MAX_CHARS: usize = 4_000;

/// The meeting notes of `record` as Markdown.
pub fn render(record: &ReviewRecord) -> String {
    let mut out = format!(
        "# Review of the report\n\n- question: {}\n- report: `{}`\n- plan: `{}` (workflow `{}`)\n- reviewed: {}; review by `{}`, second opinion by `{}`\n",
        inline(&record.question, usize::MAX),
        code_text(&record.report),
        code_text(&record.plan_file),
        code_text(&record.workflow_id),
        code_text(&record.reviewed_at),
        code_text(&record.roles.review.model),
        code_text(&record.roles.second_opinion.model),
    );
    out.push_str(&verdict_section(record));
    out.push_str(&review_section(record));
    let failed: Vec<(&str, &RoleRecord)> = [
        ("review", &record.roles.review),
        ("second opinion", &record.roles.second_opinion),
    ]
    .into_iter()
    .filter(|(_, r)| r.error.is_some())
    .collect();
    if !failed.is_empty() {
        out.push_str("\n## What failed\n\n");
        for (name, role) in failed {
            let error = role.error.as_deref().unwrap_or_default();
            out.push_str(&format!(
                "- the {name}: {}\n",
                inline(error, ENTRY_MAX_CHARS)
            ));
        }
    }
    // Every piece was cleaned on its own; this is the last word on what reaches a terminal.
    strip_controls(&out)
}

fn verdict_section(record: &ReviewRecord) -> String {
    let Some(opinion) = &record.second_opinion else {
        return "\n## Verdict: none\n\nThe second opinion failed (below), so there is no verdict.\n"
            .to_string();
    };
    let meaning = match opinion.verdict {
        Verdict::Ok => "The report can be used as it is.",
        Verdict::Warn => "The report is usable with the caveats below.",
        Verdict::Block => "The report is not to be used as it stands.",
    };
    let verdict = record.verdict.unwrap_or(opinion.verdict);
    let meaning = match (&record.verdict_note, verdict) {
        (Some(note), _) => format!("{}\n\nThe verdict was {note}.", meaning_of(verdict)),
        (None, _) => meaning.to_string(),
    };
    format!(
        "\n## Verdict: {}\n\n{meaning}\n\n### Second opinion (ok: {}, verdict: {})\n\n{}",
        verdict.as_str(),
        opinion.ok,
        opinion.verdict.as_str(),
        prose(&opinion.notes, PROSE_MAX_CHARS)
    )
}

fn meaning_of(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Ok => "The report can be used as it is.",
        Verdict::Warn => "The report is usable with the caveats below.",
        Verdict::Block => "The report is not to be used as it stands.",
    }
}

fn review_section(record: &ReviewRecord) -> String {
    let Some(review) = &record.review else {
        return "\n## Review\n\nThe review failed (below).\n".to_string();
    };
    let mut out = format!(
        "\n## Review (ok: {})\n\n{}",
        review.ok,
        prose(&review.summary, PROSE_MAX_CHARS)
    );
    for (heading, items) in [
        ("Risks", &review.risks),
        ("Gaps", &review.gaps),
        ("Suggestions", &review.suggestions),
    ] {
        out.push_str(&format!("\n### {heading}\n\n"));
        if items.is_empty() {
            out.push_str("- none named\n");
        }
        for item in items {
            out.push_str(&format!("- {}\n", inline(item, ENTRY_MAX_CHARS)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::record::Roles;
    use crate::usage::Usage;
    use crate::validate::{ReviewAnswer, SecondOpinion};

    fn role(model: &str, error: Option<&str>) -> RoleRecord {
        RoleRecord {
            model: model.into(),
            calls: 1,
            usage: Usage::default(),
            error: error.map(str::to_string),
            diagnostics: None,
        }
    }

    fn record() -> ReviewRecord {
        ReviewRecord {
            version: 1,
            reviewed_at: "2026-01-01T00:00:00Z".into(),
            workflow_id: "wf-1".into(),
            question: "Which cells last?".into(),
            plan_file: "runs/p.json".into(),
            report: "runs/p.report.md".into(),
            verdict: Some(Verdict::Block),
            verdict_note: None,
            review: Some(ReviewAnswer {
                ok: false,
                summary: "Thin.\n\n## Forged <img src=x onerror=y>".into(),
                risks: vec!["[1] is a [blog](javascript:evil)\n- forged line".into()],
                gaps: vec![],
                suggestions: vec!["Cite a survey `now`".into()],
            }),
            second_opinion: Some(SecondOpinion {
                ok: false,
                verdict: Verdict::Block,
                notes: "Misleading \u{1b}]0;x\u{7}claims.".into(),
            }),
            roles: Roles {
                review: role("m1", None),
                second_opinion: role("m2", None),
            },
        }
    }

    #[test]
    fn the_notes_hold_the_verdict_risks_gaps_and_suggestions_escaped() {
        let text = render(&record());
        assert!(
            text.contains("\n## Verdict: block\n\nThe report is not to be used"),
            "{text}"
        );
        assert!(
            text.contains(
                "### Second opinion (ok: false, verdict: block)\n\n> Misleading claims.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("> ## Forged \\<img src=x onerror=y\\>\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "### Risks\n\n- \\[1\\] is a \\[blog\\](javascript:evil) - forged line\n"
            ),
            "{text}"
        );
        assert!(text.contains("### Gaps\n\n- none named\n"), "{text}");
        assert!(
            text.contains("### Suggestions\n\n- Cite a survey \\`now\\`\n"),
            "{text}"
        );
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(!text.contains("What failed"));
    }

    #[test]
    fn a_failed_role_is_said_and_there_is_no_verdict_without_the_second_opinion() {
        let mut r = record();
        r.second_opinion = None;
        r.verdict = None;
        r.roles.second_opinion = role("m2", Some("HTTP 500 <b>"));
        let text = render(&r);
        assert!(text.contains("## Verdict: none"), "{text}");
        assert!(
            text.contains("## What failed\n\n- the second opinion: HTTP 500 \\<b\\>\n"),
            "{text}"
        );
    }
}
