//! `researchflow eval`'s scoring side: the question set with its gold answers (`set.rs`), each
//! question's scores (`score.rs`), its leading statement right, wrong or abstained
//! (`leading.rs`, where the leading statement is defined), the strict totals (`strict.rs`), the
//! warning for a set whose evidence names no document of the corpus (`evidence.rs`), the
//! Markdown table (`table.rs`), and here the evaluation as a whole: the totals over the
//! questions, the comparison with an earlier evaluation (`--previous`) and the `eval.json`
//! file. Running the questions is the batch's (`cmd/eval.rs` drives it); nothing here touches
//! a network or a model.

pub mod evidence;
pub mod score;
pub mod set;
pub mod strict;
pub mod table;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::agents::leading::Verdict;
pub use score::{Ran, Score, Written, score, score_written};
pub use set::{Gold, SetError};
pub use strict::Strict;
pub use table::markdown;

use table::shown;

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
    /// What may make the figures meaningless (a set whose evidence names no document of the
    /// corpus), as printed on stderr.
    #[serde(default)]
    pub warnings: Vec<String>,
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
    /// Questions whose report holds a gold answer anywhere, Findings included (or says it
    /// found none, when the corpus has none).
    #[serde(default)]
    pub gold_anywhere: usize,
    /// The same as `gold_anywhere`, under the name older evaluations gave it.
    pub answer_matches: usize,
    /// `answer_matches` over `questions`.
    pub answer_match: f64,
    /// What the leading statements add up to: stated-answer precision, coverage, abstention.
    #[serde(default)]
    pub strict: Strict,
    /// The same without the questions the set marks as traps; `null` when it marks none.
    #[serde(default)]
    pub strict_without_traps: Option<Strict>,
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
        let traps = scores.iter().any(|s| s.trap);
        EvalTotals {
            questions: scores.len(),
            scored: scores.iter().filter(|s| s.reported).count(),
            not_answered: scores.iter().filter(|s| s.answered == Some(false)).count(),
            gold_anywhere: answer_matches,
            answer_matches,
            answer_match: ratio(answer_matches, scores.len()).unwrap_or(0.0),
            strict: Strict::of(scores),
            strict_without_traps: traps.then(|| Strict::of(scores.iter().filter(|s| !s.trap))),
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
    // The leading statement's verdict first; an older evaluation has none.
    if let (Some(was), Some(is)) = (old.verdict, new.verdict)
        && was != is
    {
        up |= is.rank() > was.rank();
        down |= is.rank() < was.rank();
        moved.push(format!("leading: {} -> {}", was.as_str(), is.as_str()));
    }
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
            unanswerable: false,
            trap: false,
            leading_statement: None,
            verdict: None,
            gold_anywhere: matched,
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
            warnings: Vec::new(),
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
            warnings: Vec::new(),
        });
        assert!(
            table.contains("| a | completed | - | yes | 0.400 |"),
            "{table}"
        );
        assert!(table.contains("1 better, 1 worse, 0 mixed |"), "{table}");
    }

    fn judged(id: &str, verdict: Verdict, unanswerable: bool, trap: bool) -> Score {
        Score {
            verdict: Some(verdict),
            unanswerable,
            trap,
            ..scored(id, verdict == Verdict::Right, 0.0, None)
        }
    }

    /// A leading statement that turns from wrong to an abstention is better, from right to
    /// wrong worse, even when the gold is still somewhere in the report; the table shows each
    /// verdict, the totals and the figures without the traps.
    #[test]
    fn verdicts_are_compared_and_totalled_with_and_without_traps() {
        use Verdict::*;
        let before = [
            judged("a", Wrong, false, false),
            judged("b", Right, false, true),
            judged("c", Wrong, true, true),
        ];
        let mut now = [
            judged("a", Abstained, false, false),
            judged("b", Wrong, false, true),
            judged("c", Abstained, true, true),
        ];
        now[1].answer_match = true;
        let old = Evaluation {
            set: "s".into(),
            totals: EvalTotals::of(&before),
            questions: before.to_vec(),
            previous: None,
            changes: Vec::new(),
            warnings: Vec::new(),
        };
        let changes = compare(&old, &now);
        assert_eq!(
            (changes[0].verdict.as_str(), changes[0].moved.as_slice()),
            (
                "better",
                ["leading: wrong -> abstained".to_string()].as_slice()
            )
        );
        assert_eq!(changes[1].verdict, "worse", "{:?}", changes[1]);
        assert_eq!(changes[1].moved[0], "leading: right -> wrong");
        let totals = EvalTotals::of(&now);
        assert_eq!(
            (
                totals.strict.right,
                totals.strict.wrong,
                totals.strict.abstained
            ),
            (0, 1, 2)
        );
        assert_eq!(totals.strict.abstention, Some(1.0));
        let plain = totals
            .strict_without_traps
            .clone()
            .expect("b and c are traps");
        assert_eq!(
            (plain.questions, plain.abstained, plain.precision),
            (1, 1, None)
        );
        assert_eq!(EvalTotals::of(&before[..1]).strict_without_traps, None);
        let table = markdown(&Evaluation {
            set: "s".into(),
            totals,
            questions: now.to_vec(),
            previous: None,
            changes: Vec::new(),
            warnings: Vec::new(),
        });
        assert!(
            table.contains("| b (trap) | completed | wrong | yes |"),
            "{table}"
        );
        assert!(
            table.contains("| 0 right, 1 wrong, 2 abstained | 1 of 3 |"),
            "{table}"
        );
        assert!(
            table.contains("Leading statements: stated-answer precision 0.000 (0 right of 1 stated), coverage 0.000 (0 of 2 answerable), abstention 1.000 (1 of 1 unanswerable); a gold answer anywhere in the report: 1 of 3.\n"),
            "{table}"
        );
        assert!(
            table.contains("Without the 2 traps: stated-answer precision - (0 right of 0 stated), coverage 0.000 (0 of 1 answerable), abstention - (0 of 0 unanswerable).\n"),
            "{table}"
        );
    }
}
