//! A batch's end in a few lines for a person at a terminal (`batch` and `eval` print it on a
//! stdout that is one; scripts get JSON): its questions counted by status, the time and
//! tokens spent, the questions that ended short and why, and where its files are. It only
//! reads the manifest.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::{ItemStatus, Manifest, Question};
use crate::progress::state::{clock, grouped};

/// The most questions named with why they ended short; the manifest has them all.
const SHORT_NAMED: usize = 5;

/// Questions counted by status, in the statuses' order (`completed` first).
pub fn counts(manifest: &Manifest, questions: &[Question]) -> BTreeMap<ItemStatus, usize> {
    let mut counts = BTreeMap::new();
    for item in questions.iter().filter_map(|q| manifest.item(&q.id)) {
        *counts.entry(item.status).or_default() += 1;
    }
    counts
}

/// The summary: a line of counts, time and tokens; a line per question that ended short
/// (the first [`SHORT_NAMED`]); then `files`, each `(what, path)` on a line of its own.
pub fn summary(
    manifest: &Manifest,
    questions: &[Question],
    took: Duration,
    files: &[(&str, String)],
) -> String {
    let mut counted: Vec<String> = counts(manifest, questions)
        .iter()
        .map(|(status, n)| format!("{n} {}", status.as_str()))
        .collect();
    let items = || questions.iter().filter_map(|q| manifest.item(&q.id));
    let unanswered = items().filter(|item| item.is_unanswered()).count();
    if unanswered > 0 {
        counted.push(format!("{unanswered} not answered"));
    }
    let tokens: u64 = questions
        .iter()
        .filter_map(|q| manifest.item(&q.id)?.totals.as_ref())
        .map(|t| t.tokens.total_tokens)
        .sum();
    let mut out = format!(
        "{} question{}: {} · {} · {} tokens\n",
        questions.len(),
        if questions.len() == 1 { "" } else { "s" },
        counted.join(", "),
        clock(took),
        grouped(tokens)
    );
    let short: Vec<_> = items()
        .filter(|item| !item.is_done() || item.is_unanswered())
        .collect();
    for item in short.iter().take(SHORT_NAMED) {
        let why = match item.reason.as_deref() {
            Some(why) => why,
            None if item.is_unanswered() => {
                "not answered: its report says its sources do not answer"
            }
            None => "no reason recorded",
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "  {} `{}`: {}",
            item.status.as_str(),
            crate::text::one_line(&item.id, 80),
            crate::text::one_line(why, 160)
        );
    }
    if short.len() > SHORT_NAMED {
        let _ = writeln!(
            out,
            "  and {} more: see the manifest",
            short.len() - SHORT_NAMED
        );
    }
    let width = files.iter().map(|(what, _)| what.len()).max().unwrap_or(0);
    for (what, path) in files {
        let _ = writeln!(out, "{what:<width$}  {path}");
    }
    out
}

/// Where a batch's reports are, as one path with the question's name in angle brackets.
pub fn reports_in(dir: &Path) -> String {
    format!("{}/<name>.report.md", crate::output::absolute(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Item;
    use crate::batch::questions::{QuestionLine, questions};

    fn item(id: &str, status: ItemStatus, reason: Option<&str>) -> Item {
        Item {
            id: id.into(),
            query: format!("{id}?"),
            status,
            plan_file: format!("/b/{id}.json"),
            report: None,
            totals: None,
            reason: reason.map(str::to_string),
            review: None,
            answered: None,
        }
    }

    #[test]
    fn the_summary_counts_names_what_ended_short_and_says_where_the_files_are() {
        let entries = (1..=8)
            .map(|n| QuestionLine {
                line: n,
                id: Some(format!("q{n}")),
                query: format!("Q{n}?"),
            })
            .collect();
        let qs = questions("q.txt", entries).expect("questions");
        let mut manifest = Manifest::default();
        for (n, q) in qs.iter().enumerate() {
            manifest.put(match n {
                0 => item(&q.id, ItemStatus::Completed, None),
                1 => item(&q.id, ItemStatus::Partial, Some("the budget")),
                _ => item(&q.id, ItemStatus::Failed, Some("HTTP 500\nboom")),
            });
        }
        let text = summary(
            &manifest,
            &qs,
            Duration::from_secs(75),
            &[
                ("manifest", "/b/batch.json".into()),
                ("index", "/b/index.html".into()),
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "8 questions: 1 completed, 1 partial, 6 failed · 1m15s · 0 tokens"
        );
        assert_eq!(lines[1], "  failed `q3`: HTTP 500 boom");
        assert_eq!(lines[6], "  and 1 more: see the manifest");
        assert_eq!(lines[7], "manifest  /b/batch.json");
        assert_eq!(lines[8], "index     /b/index.html");
        assert_eq!(lines.len(), 9);
    }
}
