//! The evaluation as Markdown: one row per question (its leading statement's verdict first,
//! then whether a gold answer is anywhere in the report, then the other figures), the totals,
//! and below the table the strict figures, over every question and without the traps.

use super::score::Score;
use super::{Change, Evaluation};

/// The evaluation as a Markdown table: one row per question, then the totals; then the
/// strict figures.
pub fn markdown(eval: &Evaluation) -> String {
    let with_changes = eval.previous.is_some();
    let mut out = String::from(
        "| id | status | leading statement | gold anywhere | F1 | citation precision | evidence recall | supported claims | tokens | seconds |",
    );
    out.push_str(if with_changes {
        " vs previous |\n"
    } else {
        "\n"
    });
    out.push_str("|---|---|---|---|---:|---:|---:|---:|---:|---:|");
    out.push_str(if with_changes { "---|\n" } else { "\n" });
    for s in &eval.questions {
        out.push_str(&format!(
            "| {}{} | {} | {} | {} | {:.3} | {} | {} | {} | {} | {:.1} |",
            crate::markdown::inline(&s.id, 60).replace('|', "\\|"),
            if s.trap { " (trap)" } else { "" },
            shown_status(s),
            s.verdict.map_or("-", |v| v.as_str()),
            if s.answer_match { "yes" } else { "no" },
            s.f1,
            shown(s.citation_precision),
            shown(s.evidence_recall),
            claims(s.supported_claims, s.claims_supported, s.claims_cited),
            s.tokens,
            s.seconds,
        ));
        if with_changes {
            let change = eval.changes.iter().find(|c| c.id == s.id);
            out.push_str(&format!(" {} |", change.map_or(String::new(), described)));
        }
        out.push('\n');
    }
    let t = &eval.totals;
    out.push_str(&format!(
        "| **total** | {} of {} scored{} | {} right, {} wrong, {} abstained | {} of {} | {:.3} | {} | {} | {} | {} | {:.1} |",
        t.scored,
        t.questions,
        match t.not_answered {
            0 => String::new(),
            n => format!(", {n} not answered"),
        },
        t.strict.right,
        t.strict.wrong,
        t.strict.abstained,
        t.answer_matches,
        t.questions,
        t.f1,
        shown(t.citation_precision),
        shown(t.evidence_recall),
        claims(t.supported_claims, t.claims_supported, t.claims_cited),
        t.tokens,
        t.seconds,
    ));
    if with_changes {
        let count = |v: &str| eval.changes.iter().filter(|c| c.verdict == v).count();
        out.push_str(&format!(
            " {} better, {} worse, {} mixed |",
            count("better"),
            count("worse"),
            count("mixed")
        ));
    }
    out.push_str(&format!(
        "\n\nLeading statements: {}; a gold answer anywhere in the report: {} of {}.\n",
        t.strict.described(),
        t.answer_matches,
        t.questions
    ));
    if let Some(plain) = &t.strict_without_traps {
        out.push_str(&format!(
            "Without the {} traps: {}.\n",
            t.questions - plain.questions,
            plain.described()
        ));
    }
    out
}

/// A question's state in the table: its status, or `not answered` when its report says its
/// sources do not answer.
fn shown_status(s: &Score) -> &str {
    match s.answered {
        Some(false) => "not answered",
        _ => &s.status,
    }
}

fn described(change: &Change) -> String {
    match change.moved.is_empty() {
        true => change.verdict.clone(),
        false => format!("{} ({})", change.verdict, change.moved.join(", ")),
    }
}

fn claims(share: Option<f64>, supported: usize, cited: usize) -> String {
    match share {
        Some(share) => format!("{supported} of {cited} ({:.0}%)", share * 100.0),
        None => "-".into(),
    }
}

/// A figure as the table shows it: 3 places, `-` when it is not defined.
pub(super) fn shown(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.3}"))
}
