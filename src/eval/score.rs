//! Scoring one question's run against its gold: whether its leading statement is right, wrong
//! or an abstention ([`super::leading`]), whether the report holds a gold answer anywhere, the
//! token F1 of its opening paragraph against the best gold answer, which of the sources it
//! cites are gold evidence (precision) and which gold evidence it cites (recall), the share
//! of its cited claims their sources support, and what it cost. Plain functions of the plan,
//! the report and the gold: scoring again from the same files gives the same figures.
//!
//! Text is compared normalised: lower case, every run of characters other than letters and
//! digits one space. A question without an answer in the corpus is matched when its report
//! says it found none (one of [`crate::agents::quality::NO_ANSWER`]). Evidence is a corpus file name (matched
//! against the last segment of a `file://` source) or a URL (matched without its scheme's
//! case, `#fragment` or trailing `/`).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::set::Gold;
use crate::agents::claims::{cited_numbers, claim_text, counts};
use crate::agents::leading::{Verdict, disowned, leading_statement, verdict};
use crate::agents::quality::says_no_answer;
use crate::plan::PlanFile;
use crate::plan::footer::without_footer;
use crate::text::words;

/// The status of a question that was not run.
pub const NOT_RUN: &str = "not run";

/// How one question scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub id: String,
    /// How its run ended (`completed`, `partial`, ...), or `not run`.
    pub status: String,
    /// Whether its run left a report to score (without one, every figure is zero).
    pub reported: bool,
    /// Whether the report answers (`false`: it says its sources do not), as the run recorded
    /// it; `null` without a report, or from an older evaluation.
    #[serde(default)]
    pub answered: Option<bool>,
    /// Whether its gold has no answer (the corpus does not answer it).
    #[serde(default)]
    pub unanswerable: bool,
    /// Whether the set marks it as a trap (`"trap": true`).
    #[serde(default)]
    pub trap: bool,
    /// What the report's answer says first ([`super::leading`]); `null` without a report.
    #[serde(default)]
    pub leading_statement: Option<String>,
    /// Whether that statement is right, wrong or an abstention; `null` without a report, or
    /// from an older evaluation.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// A gold answer is somewhere in the report, Findings included (for a question without
    /// one: the report says it found none).
    #[serde(default)]
    pub gold_anywhere: bool,
    /// The same as `gold_anywhere`, under the name older evaluations gave it.
    pub answer_match: bool,
    pub f1: f64,
    /// Of the sources the report cites, the share that are gold evidence; `null` when it
    /// cites none.
    pub citation_precision: Option<f64>,
    /// Of the gold evidence, the share the report cites; `null` without gold evidence.
    pub evidence_recall: Option<f64>,
    /// Of the report's cited claims, the share their sources support; `null` without one.
    pub supported_claims: Option<f64>,
    pub claims_cited: usize,
    pub claims_supported: usize,
    /// What the report cites, as evidence keys (file names, or URLs).
    pub cited: Vec<String>,
    pub tokens: u64,
    pub seconds: f64,
}

/// One question's run, as scoring reads it.
pub struct Ran<'a> {
    pub status: &'a str,
    /// Its plan and report, when it wrote a report.
    pub wrote: Option<(&'a PlanFile, &'a str)>,
    pub tokens: u64,
    pub seconds: f64,
}

/// A report another system wrote (`eval --reports`), with what its run recorded.
pub struct Written<'a> {
    pub status: &'a str,
    /// The report, when the run left one.
    pub report: Option<&'a str>,
    pub tokens: u64,
    pub seconds: f64,
    /// The address of a site serving the corpus (`http://127.0.0.1:8080/`): a page under it
    /// is the corpus file its last path segment names.
    pub site: Option<&'a str>,
}

/// What scoring reads of a report, whoever wrote it.
struct Read {
    body: String,
    /// The evidence keys of the sources it cites.
    cited: BTreeSet<String>,
    /// Its cited claims, and how many of them their sources support.
    claims: (usize, usize),
    /// Whether the run recorded an answer (`None`: it recorded nothing).
    answered: Option<bool>,
}

/// Scores `gold` against its run (`None`: not run); a run that left no report scores
/// nothing but what it spent.
pub fn score(gold: &Gold, ran: Option<Ran<'_>>) -> Score {
    let (status, tokens, seconds) = ran
        .as_ref()
        .map_or((NOT_RUN, 0, 0.0), |r| (r.status, r.tokens, r.seconds));
    let read = ran.and_then(|r| r.wrote).map(|(plan, report)| {
        let body = body(report);
        let claims = plan.final_node().map_or(&[][..], |n| n.claims.as_slice());
        Read {
            cited: cited_keys(plan, &body),
            claims: counts(claims),
            answered: plan.outcome.as_ref().and_then(|o| o.answered),
            body,
        }
    });
    scored(gold, status, read, tokens, seconds)
}

/// Scores `gold` against a report another system wrote: the same figures, its sources the
/// addresses it links ([`linked_keys`]), its answer as its text states it (no claims are
/// checked; a report whose opening notice disowns it, [`disowned`], answered nothing).
pub fn score_written(gold: &Gold, written: &Written<'_>) -> Score {
    let read = written.report.map(|report| {
        let body = body(report);
        Read {
            cited: linked_keys(report, written.site),
            claims: (0, 0),
            // A report that says at its top it is no answer answered nothing.
            answered: disowned(&body).then_some(false),
            body,
        }
    });
    scored(gold, written.status, read, written.tokens, written.seconds)
}

fn scored(gold: &Gold, status: &str, read: Option<Read>, tokens: u64, seconds: f64) -> Score {
    let Some(Read {
        body,
        cited,
        claims: (claims_cited, claims_supported),
        answered,
    }) = read
    else {
        return Score {
            id: gold.id.clone(),
            status: status.into(),
            reported: false,
            answered: None,
            unanswerable: gold.unanswerable(),
            trap: gold.trap,
            leading_statement: None,
            verdict: None,
            gold_anywhere: false,
            answer_match: false,
            f1: 0.0,
            citation_precision: None,
            evidence_recall: None,
            supported_claims: None,
            claims_cited: 0,
            claims_supported: 0,
            cited: Vec::new(),
            tokens,
            seconds,
        };
    };
    // Citation markers are not words of the answer.
    let said = words(&claim_text(&body));
    let (answer_match, f1) = match gold.unanswerable() {
        true => {
            let says_none = says_no_answer(&body);
            (says_none, if says_none { 1.0 } else { 0.0 })
        }
        false => {
            let opening = words(&claim_text(&opening(&body)));
            let found = gold
                .answers
                .iter()
                .any(|a| contains_words(&said, &words(a)));
            let f1 = gold
                .answers
                .iter()
                .map(|a| token_f1(&opening, &words(a)))
                .fold(0.0, f64::max);
            (found, f1)
        }
    };
    let evidence: Vec<BTreeSet<String>> = gold
        .evidence
        .iter()
        .map(|e| e.alternatives().iter().map(|a| evidence_key(a)).collect())
        .collect();
    let is_evidence = |c: &String| evidence.iter().any(|e| e.contains(c));
    let hits = cited.iter().filter(|c| is_evidence(c)).count();
    let found = evidence
        .iter()
        .filter(|e| cited.iter().any(|c| e.contains(c)))
        .count();
    let leading = leading_statement(&body);
    Score {
        id: gold.id.clone(),
        status: status.to_string(),
        reported: true,
        answered,
        unanswerable: gold.unanswerable(),
        trap: gold.trap,
        verdict: Some(verdict(&leading, &gold.answers, answered)),
        leading_statement: Some(leading),
        gold_anywhere: answer_match,
        answer_match,
        f1,
        citation_precision: share(hits, cited.len()),
        evidence_recall: share(found, evidence.len()),
        supported_claims: share(claims_supported, claims_cited),
        claims_cited,
        claims_supported,
        cited: cited.into_iter().collect(),
        tokens,
        seconds,
    }
}

/// The report's body: its footer and the sources list we append left out.
fn body(report: &str) -> String {
    let text = without_footer(report);
    let end = ["\n## Sources consulted\n", "\n## Sources\n"]
        .iter()
        .filter_map(|h| text.rfind(h))
        .min()
        .unwrap_or(text.len());
    text[..end].to_string()
}

/// The report's first paragraph of answer: past its title, the claims line, notices and
/// headings.
fn opening(body: &str) -> String {
    let is_meta = |p: &str| {
        let p = p.trim_start();
        p.starts_with('#') || p.starts_with('>') || p.starts_with('_') || p.starts_with('*')
    };
    body.split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !is_meta(p))
        .unwrap_or("")
        .to_string()
}

/// The evidence keys of the sources `body` cites (`[n]` is the final node's `sources[n-1]`).
fn cited_keys(plan: &PlanFile, body: &str) -> BTreeSet<String> {
    let sources = plan.final_node().map_or(&[][..], |n| n.sources.as_slice());
    cited_numbers(body)
        .into_iter()
        .filter_map(|n| sources.get(n.checked_sub(1)?))
        .map(|s| evidence_key(&s.url))
        .collect()
}

/// The key an evidence item or a source URL is compared by: a corpus file's name, or a web
/// URL without `#fragment` and trailing `/`, lower case.
pub fn evidence_key(item: &str) -> String {
    let item = item.trim();
    match item.strip_prefix("file://") {
        Some(path) => {
            let name = path.rsplit('/').next().unwrap_or(path);
            percent_encoding::percent_decode_str(name)
                .decode_utf8_lossy()
                .into_owned()
        }
        None if item.contains("://") => {
            let bare = item.split('#').next().unwrap_or(item);
            bare.trim_end_matches('/').to_lowercase()
        }
        None => item.to_string(),
    }
}

/// Addresses as reports write them: in a Markdown link, in angle brackets, bare.
static ADDRESSES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?:https?|file)://[^\s<>()\[\]"'`]+"#).expect("valid regex"));

/// The evidence keys of every address `report` links, wherever it links them (inline, in a
/// list of references): a page under `site` keyed as the corpus file it serves.
fn linked_keys(report: &str, site: Option<&str>) -> BTreeSet<String> {
    let site = site.map(|s| s.trim_end_matches('/'));
    ADDRESSES
        .find_iter(report)
        .map(|m| {
            m.as_str()
                .trim_end_matches(['.', ',', ';', ':', '!', '?', '*'])
        })
        .map(|url| match site.and_then(|s| url.strip_prefix(s)) {
            Some(path) if path.starts_with('/') => {
                let path = path.split(['#', '?']).next().unwrap_or(path);
                evidence_key(&format!("file://{path}"))
            }
            _ => evidence_key(url),
        })
        .collect()
}

/// Whether normalised `text` holds normalised `words` as whole words.
fn contains_words(text: &str, words: &str) -> bool {
    !words.is_empty() && format!(" {text} ").contains(&format!(" {words} "))
}

/// The token F1 of `predicted` against `gold` (both normalised): the harmonic mean of the
/// shares of each's tokens the other holds, counted with multiplicity.
pub fn token_f1(predicted: &str, gold: &str) -> f64 {
    let p: Vec<&str> = predicted.split(' ').filter(|w| !w.is_empty()).collect();
    let g: Vec<&str> = gold.split(' ').filter(|w| !w.is_empty()).collect();
    if p.is_empty() || g.is_empty() {
        return 0.0;
    }
    let mut left = g.clone();
    let mut common = 0;
    for w in &p {
        if let Some(at) = left.iter().position(|x| x == w) {
            left.swap_remove(at);
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / p.len() as f64;
    let recall = common as f64 / g.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::set::Evidence;
    use crate::plan::Source;
    use crate::plan::testing::{final_summary, plan};

    fn gold(answers: &[&str], evidence: &[&str]) -> Gold {
        Gold {
            id: "q".into(),
            question: "Q?".into(),
            answers: answers.iter().map(|s| s.to_string()).collect(),
            evidence: evidence
                .iter()
                .map(|s| Evidence::One(s.to_string()))
                .collect(),
            trap: false,
            decoys: Vec::new(),
            line: 1,
        }
    }

    fn citing(urls: &[&str]) -> PlanFile {
        let sources = urls.iter().map(|u| Source::new(*u, ""));
        plan("Q?", [final_summary("b", "F").with_sources(sources)])
    }

    fn ran<'a>(plan: &'a PlanFile, report: &'a str) -> Ran<'a> {
        Ran {
            status: "completed",
            wrote: Some((plan, report)),
            tokens: 10,
            seconds: 1.0,
        }
    }

    #[test]
    fn a_report_is_scored_exactly() {
        let plan = citing(&[
            "file:///c/energy.md",
            "file:///c/other%20doc.md",
            "https://x.test/a/",
        ]);
        let report = "# Q?\n\n_2 of 2 cited claims are supported by their sources._\n\n\
                      Cells reach 400 Wh/kg in the lab [1][3].\n\nMore [2].\n\n## Sources\n\n- [1] 400 Wh/kg\n";
        let s = score(
            &gold(&["400 Wh/kg"], &["energy.md", "https://X.test/a"]),
            Some(ran(&plan, report)),
        );
        assert!(s.answer_match);
        // "cells reach 400 wh kg in the lab" against "400 wh kg": 3 common, P 3/8, R 1.
        assert_eq!(s.f1, 2.0 * (3.0 / 8.0) / (3.0 / 8.0 + 1.0));
        assert_eq!(s.cited, ["energy.md", "https://x.test/a", "other doc.md"]);
        assert_eq!(s.citation_precision, Some(2.0 / 3.0));
        assert_eq!(s.evidence_recall, Some(1.0));
        assert_eq!(s.supported_claims, None, "no claims were checked");
    }

    /// Documents that state the same fact: citing one is citing the evidence, and citing
    /// both is two precise citations of one piece of evidence.
    #[test]
    fn alternatives_count_once_for_recall_and_each_for_precision() {
        let plan = citing(&["file:///c/b.md", "file:///c/c.md", "file:///c/x.md"]);
        let report = "# Q?\n\nOne [1]. Two [2]. Three [3].\n";
        let mut g = gold(&["one"], &["a.md"]);
        g.evidence
            .push(Evidence::AnyOf(vec!["b.md".into(), "c.md".into()]));
        let s = score(&g, Some(ran(&plan, report)));
        assert_eq!(s.citation_precision, Some(2.0 / 3.0));
        assert_eq!(s.evidence_recall, Some(0.5), "a.md is not cited");
        g.evidence.remove(0);
        let s = score(&g, Some(ran(&plan, report)));
        assert_eq!(s.evidence_recall, Some(1.0));
    }

    #[test]
    fn a_question_without_an_answer_is_matched_when_the_report_says_so() {
        let plan = citing(&[]);
        let none =
            "# Q?\n\nNo sentence of the documents the searches returned answers the question.\n";
        let s = score(&gold(&[], &[]), Some(ran(&plan, none)));
        assert!(s.answer_match && s.f1 == 1.0);
        assert_eq!((s.citation_precision, s.evidence_recall), (None, None));
        let made_up = score(
            &gold(&[], &[]),
            Some(ran(&plan, "# Q?\n\nIt was 120 dollars.\n")),
        );
        assert!(!made_up.answer_match);
        assert_eq!(score(&gold(&["x"], &[]), None).status, NOT_RUN);
    }

    /// The old figure finds the gold in Findings; the strict one reads the leading statement,
    /// which states another chemistry's figure.
    #[test]
    fn an_answer_only_in_findings_is_gold_anywhere_but_not_stated() {
        let plan = citing(&["file:///c/cells.md"]);
        let report = "# Q?\n\n_1 of 1 cited claims are supported by their sources._\n\n## Answer\n\n\
                      about 1500 cycles [1]\n\n## Findings\n\n- Sodium-ion cells last about 3000 cycles. [1]\n\n\
                      ## Sources\n\n- [1] about 3000 cycles\n";
        let mut g = gold(&["about 3000 cycles"], &["cells.md"]);
        g.trap = true;
        let s = score(&g, Some(ran(&plan, report)));
        assert!(s.gold_anywhere && s.answer_match);
        assert_eq!(
            s.leading_statement.as_deref(),
            Some("about 1500 cycles [1]")
        );
        assert_eq!(
            (s.verdict, s.trap, s.unanswerable),
            (Some(Verdict::Wrong), true, false)
        );
        let unrun = score(&g, None);
        assert_eq!((unrun.verdict, unrun.leading_statement), (None, None));
    }

    #[test]
    fn answers_match_whole_words_only() {
        assert!(contains_words(&words("It took 30 minutes."), "30 minutes"));
        assert!(!contains_words(
            &words("It took 130 minutes."),
            "30 minutes"
        ));
        assert_eq!(token_f1("a b c", "a b c"), 1.0);
        assert_eq!(token_f1("", "a"), 0.0);
    }

    /// Another system's report: its sources are the addresses it links, inline or listed,
    /// a page of the corpus site keyed as the file it serves; its answer as its text says.
    #[test]
    fn a_report_another_system_wrote_is_scored_by_what_it_links() {
        let g = gold(&["3000 cycles"], &["sodium.md", "nmc.md"]);
        let report = "# Sodium-ion cycle life\n\nSodium-ion cells last about 3000 cycles \
                      ([Sodium](http://127.0.0.1:8080/corpus/sodium.md)).\n\n## References\n\n\
                      - http://127.0.0.1:8080/corpus/lfp.md.\n\
                      - <https://example.org/Other/#top>\n";
        let written = Written {
            status: "completed",
            report: Some(report),
            tokens: 1200,
            seconds: 4.5,
            site: Some("http://127.0.0.1:8080/corpus/"),
        };
        let s = score_written(&g, &written);
        assert_eq!(s.verdict, Some(Verdict::Right), "{:?}", s.leading_statement);
        assert_eq!(
            s.cited,
            ["https://example.org/other", "lfp.md", "sodium.md"],
            "{s:?}"
        );
        assert_eq!(s.citation_precision, Some(1.0 / 3.0));
        assert_eq!(s.evidence_recall, Some(0.5));
        assert_eq!((s.tokens, s.answered, s.claims_cited), (1200, None, 0));
        // Without the site, its pages are web addresses no evidence names.
        let s = score_written(
            &g,
            &Written {
                site: None,
                ..written
            },
        );
        assert_eq!(s.citation_precision, Some(0.0));
        // A run that left no report scores nothing but what it spent.
        let none = Written {
            status: "timeout",
            report: None,
            tokens: 0,
            seconds: 600.0,
            site: None,
        };
        let s = score_written(&g, &none);
        assert!(!s.reported && s.verdict.is_none() && s.status == "timeout");
    }
}
