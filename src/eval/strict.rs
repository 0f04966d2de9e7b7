//! The strict totals of an evaluation: what the leading statements ([`super::leading`]) add
//! up to. Stated-answer precision is right over stated (right + wrong): how far a reader can
//! trust an answer the report gives; coverage is right over the answerable questions; abstention
//! is the share of the questions without an answer whose report abstained. A question whose run
//! left no report counts in the denominators of coverage and abstention, and states nothing.

use serde::{Deserialize, Serialize};

use super::score::Score;
use crate::agents::leading::Verdict;

/// The leading statements' figures over a set of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Strict {
    pub questions: usize,
    /// Questions with a gold answer.
    pub answerable: usize,
    /// Questions whose corpus has no answer.
    pub unanswerable: usize,
    /// Leading statements that hold a gold answer.
    pub right: usize,
    /// Leading statements that state something else (any statement, on an unanswerable
    /// question).
    pub wrong: usize,
    /// Reports that abstained.
    pub abstained: usize,
    /// Of them, on the unanswerable questions.
    pub abstained_unanswerable: usize,
    /// `right` over `right + wrong`; `null` when nothing was stated.
    pub precision: Option<f64>,
    /// `right` over `answerable`; `null` without an answerable question.
    pub coverage: Option<f64>,
    /// `abstained_unanswerable` over `unanswerable`; `null` without an unanswerable question.
    pub abstention: Option<f64>,
}

impl Strict {
    /// The figures of `scores`.
    pub fn of<'a>(scores: impl IntoIterator<Item = &'a Score>) -> Strict {
        let mut t = Strict::default();
        for s in scores {
            t.questions += 1;
            match s.unanswerable {
                true => t.unanswerable += 1,
                false => t.answerable += 1,
            }
            match s.verdict {
                Some(Verdict::Right) => t.right += 1,
                Some(Verdict::Wrong) => t.wrong += 1,
                Some(Verdict::Abstained) => {
                    t.abstained += 1;
                    t.abstained_unanswerable += usize::from(s.unanswerable);
                }
                None => {}
            }
        }
        let share = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
        t.precision = share(t.right, t.right + t.wrong);
        t.coverage = share(t.right, t.answerable);
        t.abstention = share(t.abstained_unanswerable, t.unanswerable);
        t
    }

    /// One line: precision, coverage and abstention, each with its counts.
    pub fn described(&self) -> String {
        let figure = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.3}"));
        format!(
            "stated-answer precision {} ({} right of {} stated), coverage {} ({} of {} answerable), abstention {} ({} of {} unanswerable)",
            figure(self.precision),
            self.right,
            self.right + self.wrong,
            figure(self.coverage),
            self.right,
            self.answerable,
            figure(self.abstention),
            self.abstained_unanswerable,
            self.unanswerable,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(verdict: Option<Verdict>, unanswerable: bool) -> Score {
        Score {
            id: "q".into(),
            status: "completed".into(),
            reported: verdict.is_some(),
            answered: None,
            unanswerable,
            trap: false,
            leading_statement: None,
            verdict,
            gold_anywhere: true,
            answer_match: true,
            f1: 0.0,
            citation_precision: None,
            evidence_recall: None,
            supported_claims: None,
            claims_cited: 0,
            claims_supported: 0,
            cited: Vec::new(),
            tokens: 0,
            seconds: 0.0,
        }
    }

    #[test]
    fn precision_counts_what_was_stated_and_coverage_every_answerable_question() {
        use Verdict::*;
        let scores = [
            score(Some(Right), false),
            score(Some(Right), false),
            score(Some(Wrong), false),
            score(Some(Abstained), false),
            score(None, false),
            score(Some(Wrong), true),
            score(Some(Abstained), true),
            score(Some(Abstained), true),
        ];
        let t = Strict::of(&scores);
        assert_eq!((t.questions, t.answerable, t.unanswerable), (8, 5, 3));
        assert_eq!(
            (t.right, t.wrong, t.abstained, t.abstained_unanswerable),
            (2, 2, 3, 2)
        );
        assert_eq!(
            t.precision,
            Some(0.5),
            "a stated answer to an unanswerable question is wrong"
        );
        assert_eq!(
            t.coverage,
            Some(0.4),
            "a question without a report is not covered"
        );
        assert_eq!(t.abstention, Some(2.0 / 3.0));
        assert_eq!(
            t.described(),
            "stated-answer precision 0.500 (2 right of 4 stated), coverage 0.400 (2 of 5 answerable), abstention 0.667 (2 of 3 unanswerable)"
        );
        let none = Strict::of(&[]);
        assert_eq!(
            (none.precision, none.coverage, none.abstention),
            (None, None, None)
        );
    }
}
