//! `researchflow eval`'s scoring side: the question set with its gold answers (`set.rs`), each
//! question's scores (`score.rs`), and here the evaluation as a whole: the totals over the
//! questions, the comparison with an earlier evaluation (`--previous`), the `eval.json` file
//! and the Markdown table. Running the questions is the batch's (`cmd/eval.rs` drives it);
//! nothing here touches a network or a model.

pub mod score;
pub mod set;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use score::{Ran, Score, score};
pub use set::{Gold, SetError};

/// The evaluation's file in its out-dir.
pub const FILE_NAME: &str = "eval.json";

/// A whole evaluation, as `eval.json` holds it and `--json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The question set's path.
    pub set: String,
    pub totals: EvalTotals,
    pub questions: Vec<Score>,
    /// The out-dir of the evaluation compared with (`--previous`); `null` without one.
    #[serde(default)]
    pub previous: Option<String>,
    /// What got better or worse since it, question by question; empty without one.
    #[serde(default)]
    pub changes: Vec<Change>,
}

/// The figures over every question of the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalTotals {
    pub questions: usize,
    /// Questions whose run left a report to score.
    pub scored: usize,
    /// Questions whose report says its sources do not answer (right for a question without a
    /// gold answer).
    #[serde(default)]
    pub not_answered: usize,
    /// Questions whose report holds a gold answer (or says it found none, when the corpus
    /// has none).
    pub answer_matches: usize,
    /// `answer_matches` over `questions`.
    pub answer_match: f64,
    /// Mean token F1 over every question.
    pub f1: f64,
    /// Mean citation precision over the questions whose report cites a source.
    pub citation_precision: Option<f64>,
    /// Mean evidence recall over the questions with gold evidence.
    pub evidence_recall: Option<f64>,
    /// Supported over cited claims, summed over every report.
    pub supported_claims: Option<f64>,
    pub claims_cited: usize,
    pub claims_supported: usize,
    pub tokens: u64,
    pub seconds: f64,
}

impl EvalTotals {
    /// The totals of `scores`.
    pub fn of(scores: &[Score]) -> EvalTotals {
        let mean = |values: Vec<f64>| {
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let answer_matches = scores.iter().filter(|s| s.answer_match).count();
        let claims_cited = scores.iter().map(|s| s.claims_cited).sum();
        let claims_supported = scores.iter().map(|s| s.claims_supported).sum();
        EvalTotals {
            questions: scores.len(),
            scored: scores.iter().filter(|s| s.reported).count(),
            not_answered: scores.iter().filter(|s| s.answered == Some(false)).count(),
            answer_matches,
            answer_match: ratio(answer_matches, scores.len()).unwrap_or(0.0),
            f1: mean(scores.iter().map(|s| s.f1).collect()).unwrap_or(0.0),
            citation_precision: mean(scores.iter().filter_map(|s| s.citation_precision).collect()),
            evidence_recall: mean(scores.iter().filter_map(|s| s.evidence_recall).collect()),
            supported_claims: ratio(claims_supported, claims_cited),
            claims_cited,
            claims_supported,
            tokens: scores.iter().map(|s| s.tokens).sum(),
            seconds: scores.iter().map(|s| s.seconds).sum(),
        }
    }
}

/// How one question moved since the previous evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub id: String,
    /// `better`, `worse`, `mixed`, `same`, or `new` (the previous evaluation lacks it).
    pub verdict: String,
    /// Each figure that moved, as `name: old -> new`.
    pub moved: Vec<String>,
}

/// Each question of `now` against the same id in `before`.
pub fn compare(before: &Evaluation, now: &[Score]) -> Vec<Change> {
    now.iter()
        .map(
            |new| match before.questions.iter().find(|old| old.id == new.id) {
                None => Change {
                    id: new.id.clone(),
                    verdict: "new".into(),
                    moved: Vec::new(),
                },
                Some(old) => change(old, new),
            },
        )
        .collect()
}

fn change(old: &Score, new: &Score) -> Change {
    let as_number = |b: bool| f64::from(u8::from(b));
    let figures = [
        (
            "answer",
            Some(as_number(old.answer_match)),
            Some(as_number(new.answer_match)),
        ),
        ("f1", Some(old.f1), Some(new.f1)),
        ("precision", old.citation_precision, new.citation_precision),
        ("recall", old.evidence_recall, new.evidence_recall),
        ("supported", old.supported_claims, new.supported_claims),
    ];
    let (mut up, mut down, mut moved) = (false, false, Vec::new());
    for (name, was, is) in figures {
        // Figures are kept whole; they move only when they move as the table shows them, so
        // an older `eval.json` (rounded to 3 places) compares with a new one as it should.
        let (was, is) = (was.map(shown_value), is.map(shown_value));
        if was == is {
            continue;
        }
        // A figure that appears or vanishes (a report that now cites nothing) is shown, but
        // is neither better nor worse by itself: the answer and recall say whether citing
        // nothing was right.
        if let (Some(w), Some(i)) = (was, is) {
            up |= i > w;
            down |= i < w;
        }
        moved.push(format!("{name}: {} -> {}", shown(was), shown(is)));
    }
    let verdict = match (up, down) {
        (true, true) => "mixed",
        (true, false) => "better",
        (false, true) => "worse",
        (false, false) => "same",
    };
    Change {
        id: new.id.clone(),
        verdict: verdict.into(),
        moved,
    }
}

/// Reads the `eval.json` of an earlier evaluation's out-dir.
pub fn read_previous(dir: &Path) -> Result<Evaluation, String> {
    let path = dir.join(FILE_NAME);
    let text = crate::files::read_bounded(&path, crate::files::DEFAULT_MAX_BYTES)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "`{}` is not an evaluation written by `researchflow eval`: {e}",
            path.display()
        )
    })
}

/// The evaluation as a Markdown table: one row per question, then the totals.
pub fn markdown(eval: &Evaluation) -> String {
    let with_changes = eval.previous.is_some();
    let mut out = String::from(
        "| id | status | answer | F1 | citation precision | evidence recall | supported claims | tokens | seconds |",
    );
    out.push_str(if with_changes {
        " vs previous |\n"
    } else {
        "\n"
    });
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|");
    out.push_str(if with_changes { "---|\n" } else { "\n" });
    for s in &eval.questions {
        out.push_str(&format!(
            "| {} | {} | {} | {:.3} | {} | {} | {} | {} | {:.1} |",
            crate::markdown::inline(&s.id, 60).replace('|', "\\|"),
            shown_status(s),
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
        "| **total** | {} of {} scored{} | {} of {} | {:.3} | {} | {} | {} | {} | {:.1} |",
        t.scored,
        t.questions,
        match t.not_answered {
            0 => String::new(),
            n => format!(", {n} not answered"),
        },
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
    out.push('\n');
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

fn shown(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.3}"))
}

/// A figure as the table shows it (3 places), for comparisons.
fn shown_value(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(id: &str, matched: bool, f1: f64, precision: Option<f64>) -> Score {
        Score {
            id: id.into(),
            status: "completed".into(),
            reported: true,
            answered: Some(true),
            answer_match: matched,
            f1,
            citation_precision: precision,
            evidence_recall: precision.map(|_| 1.0),
            supported_claims: Some(1.0),
            claims_cited: 2,
            claims_supported: 2,
            cited: Vec::new(),
            tokens: 5,
            seconds: 0.5,
        }
    }

    #[test]
    fn totals_average_where_a_figure_is_defined() {
        let scores = [
            scored("a", true, 1.0, Some(1.0)),
            scored("b", false, 0.5, Some(0.5)),
            scored("c", true, 0.0, None),
        ];
        let t = EvalTotals::of(&scores);
        assert_eq!((t.questions, t.scored, t.answer_matches), (3, 3, 2));
        assert_eq!(t.answer_match, 2.0 / 3.0);
        assert_eq!(t.f1, 0.5);
        assert_eq!(t.citation_precision, Some(0.75), "c cites nothing");
        assert_eq!(
            (t.claims_cited, t.claims_supported, t.supported_claims),
            (6, 6, Some(1.0))
        );
        assert_eq!((t.tokens, t.seconds), (15, 1.5));
    }

    #[test]
    fn changes_name_what_moved() {
        let before = Evaluation {
            set: "s".into(),
            totals: EvalTotals::of(&[]),
            questions: vec![
                scored("a", false, 0.2, Some(1.0)),
                scored("b", true, 1.0, Some(1.0)),
            ],
            previous: None,
            changes: Vec::new(),
        };
        let now = [
            scored("a", true, 0.4, Some(1.0)),
            scored("b", true, 1.0, Some(0.5)),
            scored("c", true, 1.0, None),
        ];
        let changes = compare(&before, &now);
        assert_eq!(changes[0].verdict, "better");
        assert_eq!(
            changes[0].moved,
            ["answer: 0.000 -> 1.000", "f1: 0.200 -> 0.400"]
        );
        assert_eq!(changes[1].verdict, "worse");
        assert_eq!(changes[2].verdict, "new");
        let table = markdown(&Evaluation {
            set: "s".into(),
            totals: EvalTotals::of(&now),
            questions: now.to_vec(),
            previous: Some("old".into()),
            changes,
        });
        assert!(table.contains("| a | completed | yes | 0.400 |"), "{table}");
        assert!(table.contains("1 better, 1 worse, 0 mixed |"), "{table}");
    }
}
