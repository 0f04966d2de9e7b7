//! The leading statement of a report, and whether it is right, wrong or an abstention: what a
//! reader takes as the report's answer. `eval` scores it strictly (where the older
//! `gold_anywhere` figure counts a gold answer found anywhere, Findings included); the report
//! marks its first sentence when that cites no source ([`crate::report`]); a batch's index
//! shows it.
//!
//! **The leading statement** is what the report's answer says first, up to its first
//! citation:
//! 1. the answer section: under the first heading of level 2 or deeper that has the word
//!    `answer` (`## Answer`, `## Short answer`), up to the next heading of its level or
//!    higher; a report without one is read from its start (a model's report opens with its
//!    short answer);
//! 2. its first paragraph of prose (a heading is a block of its own, as Markdown reads it,
//!    so the line under it opens a paragraph): headings, block quotes (a run's notice), rules, a
//!    paragraph wholly in italics (the claims line, the offline engine's notice), a label
//!    ending in `:` (`**Short answer:**`) and a paragraph of questions alone (the question
//!    restated) are passed over; of a list, its first item;
//! 3. that paragraph up to and including its first citation marker (`[1]`, `[2][3]`); a
//!    paragraph that cites nothing, up to the end of its first sentence. A marker that opens
//!    its sentence attributes what follows (`According to [1], ...`, `[2] states that ...`:
//!    at most three words before it, words or a comma after it) and ends nothing: the
//!    statement runs on to the next marker, or to the end of that sentence.
//!
//! The offline engine's answer leads with the figure or name asked for on its own line
//! (`about 1500 cycles [1]`), then the quote it comes from: the figure is the statement. A
//! model's report is asked to cite right after each statement, so its first cited sentence is.
//!
//! **The verdict**: an abstention when the run recorded `answered: false`, when the leading
//! statement says that the sources do not state or answer it ([`abstains`]), or when there is
//! none; else right when it holds a gold answer as whole words (as `gold_anywhere` matches),
//! wrong otherwise. A question without a gold answer is never right: stating anything there is
//! wrong, abstaining is what it asks. Plain functions of the report's text.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::claims::{cited_numbers, claim_text};
use super::quality::says_no_answer;
use crate::markdown::{answer_section, heading};
use crate::plan::{Claim, Source};
use crate::text::analyzer::content_terms;
use crate::text::sentences;
use crate::text::words;

/// What a question's leading statement is, against its gold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum Verdict {
    /// It holds a gold answer.
    Right,
    /// It states something that is not a gold answer (on a question without one: anything).
    Wrong,
    /// It says that the sources do not state it, or the run answered nothing.
    Abstained,
}

impl Verdict {
    /// As the table and `--previous` show it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// How good it is, for comparisons: saying nothing is better than saying something wrong.
    pub fn rank(self) -> u8 {
        match self {
            Verdict::Right => 2,
            Verdict::Abstained => 1,
            Verdict::Wrong => 0,
        }
    }
}

/// Ways of saying the sources do not state it, besides those
/// ([`crate::agents::quality::NO_ANSWER`]) that mark a whole run as not answered.
const STATES_NONE: &[&str] = &[
    "do not state",
    "does not state",
    "not stated",
    "no sentence of the sources",
];

/// Whether `statement` says that the sources do not state or answer the question.
pub fn abstains(statement: &str) -> bool {
    let said = format!(" {} ", words(statement));
    says_no_answer(statement) || STATES_NONE.iter().any(|p| said.contains(&format!(" {p} ")))
}

/// The first sentence of `statement`, the leading statement of a report on the question `asked`
/// that lists `sources` and whose cited sentences are `claims`, when it states something,
/// cites no source and is not an abstention: the model's own answer, which no check looked at
/// (the report marks it, the batch index says so). A question states nothing, nor does a
/// sentence of the question's own terms alone (a term restated before the quote that defines
/// it: "State of charge. How full a battery is ... [1]"). A sentence is cited by its own
/// markers or by those right after its full stop (`It holds. [1]`, as
/// [`cited_sentences`](super::claims::cited_sentences) reads them). A model's sentence that a
/// source holds was cited by researchflow before the report was written
/// ([`cite_supported`](super::claims::cite_supported)), and a report of quotes alone (the
/// offline engine's) has no sentence of its own. A statement that runs on to a marker in a
/// later sentence is cited there, not in the sentence a reader takes as the answer (the sixth
/// peers run's d04: "must wait for 5 days ...", uncited and in no source, then a sentence on
/// Perl citing [6]).
pub fn uncited_opening<'a>(
    statement: &'a str,
    asked: &str,
    sources: &[Source],
    claims: &[Claim],
) -> Option<&'a str> {
    // A report whose every claim is a word-for-word quote (the offline engine's) writes no
    // words of its own: what stands before a quote's marker is the quote's.
    let quoted = !claims.is_empty() && claims.iter().all(|c| c.by == "quote");
    if sources.is_empty() || quoted {
        return None;
    }
    let question = content_terms(asked);
    let states = |s: &str| {
        !s.trim_end().ends_with('?')
            && content_terms(&claim_text(s))
                .iter()
                .any(|t| !question.contains(t))
    };
    let range = sentences::ranges(statement)
        .into_iter()
        .find(|r| states(&statement[r.clone()]))?;
    let first = &statement[range.clone()];
    let after = statement[range.end..].trim_start();
    let cited = !cited_numbers(first).is_empty()
        || MARKERS
            .captures(after)
            .is_some_and(|c| c.get(0).is_some_and(|m| m.start() == 0) && c.get(1).is_none());
    (!cited && !abstains(first)).then_some(first)
}

/// What a report's opening notice says when the report is not to be read as an answer (a
/// degraded run's notice writes it, `workflow::ending::notice`).
pub const DISOWNED: &str = "must not be taken as";

/// Whether `body` (a report's) holds a notice, a block quote (its lines that continue it
/// included), saying that what follows is not to be taken as an answer: a reader takes
/// nothing from it, as from an abstention.
pub fn disowned(body: &str) -> bool {
    body.split("\n\n")
        .filter(|p| p.trim_start().starts_with('>'))
        .any(|p| p.contains(DISOWNED))
}

/// The verdict on `leading` (a report's leading statement) against the gold `answers` (empty:
/// the corpus has none); `answered` is what the run recorded.
pub fn verdict(leading: &str, answers: &[String], answered: Option<bool>) -> Verdict {
    if answered == Some(false) || leading.trim().is_empty() || abstains(leading) {
        return Verdict::Abstained;
    }
    let said = format!(" {} ", words(&claim_text(leading)));
    let holds = |answer: &String| {
        let answer = words(answer);
        !answer.is_empty() && said.contains(&format!(" {answer} "))
    };
    match answers.iter().any(holds) {
        true => Verdict::Right,
        false => Verdict::Wrong,
    }
}

/// A citation marker, with the markers right after it (`[1]`, `[2][3]`, `[1, 4]`); a Markdown
/// link's text (`[1](url)`) is not one.
static MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(r"\[\d{1,4}(?:\s*[,，]\s*\d{1,4})*\](?:\s*\[\d{1,4}(?:\s*[,，]\s*\d{1,4})*\])*(\()?")
        .expect("valid regex")
});

/// The leading statement of a report's `body` (its text without the sources list and footer),
/// as the module doc defines it; "" when it has none.
pub fn leading_statement(body: &str) -> String {
    let Some(paragraph) = first_paragraph(answer_section(body)) else {
        return String::new();
    };
    let sentences = sentences::ranges(&paragraph);
    let sentence_of = |at: usize| sentences.iter().find(|r| r.contains(&at));
    let mut opener = None;
    for marker in MARKERS.captures_iter(&paragraph) {
        let (Some(m), None) = (marker.get(0), marker.get(1)) else {
            continue;
        };
        if opener.is_some_and(|end| m.start() >= end) {
            break;
        }
        let sentence = sentence_of(m.start());
        let start = sentence.map_or(0, |r| r.start);
        if !attributes(
            &paragraph[start..m.start()],
            &paragraph[m.end()..],
            start == 0,
        ) {
            return paragraph[..m.end()].trim().to_string();
        }
        opener = opener.or(sentence.map(|r| r.end));
    }
    let end = opener.or_else(|| sentences.first().map(|r| r.end));
    end.map_or(String::new(), |end| paragraph[..end].trim().to_string())
}

/// Whether a citation marker between `before` (its sentence's words before it) and `after`
/// (the paragraph after it) opens its sentence, attributing what follows (`According to [1],
/// ...`, `[2] states ...`) rather than ending a statement: at most three words (markers
/// aside: `According to [1], [2] and [3], ...`) before it
/// (none only at the paragraph's start, `opens`; else it cites the sentence before), then a
/// comma, a colon or a word.
fn attributes(before: &str, after: &str, opens: bool) -> bool {
    let said = words(&MARKERS.replace_all(before, " "))
        .split_whitespace()
        .count();
    let next = after.trim_start().chars().next();
    ((1..=3).contains(&said) || (said == 0 && opens))
        && next.is_some_and(|c| c == ',' || c == ':' || c.is_alphanumeric())
}

/// The first paragraph of prose among `lines`, on one line; of a list, its first item.
fn first_paragraph(lines: Vec<&str>) -> Option<String> {
    for paragraph in blocks(&lines) {
        let first = paragraph[0].trim();
        if heading(first).is_some() || first.starts_with('>') || is_rule(first) {
            continue;
        }
        let lines = match list_item(first) {
            Some(_) => first_item(&paragraph),
            None => paragraph.iter().map(|l| l.trim()).collect(),
        };
        let text = lines.join(" ");
        if !is_meta(&text) {
            return Some(text);
        }
    }
    None
}

/// `lines` in blocks, as Markdown reads them: a blank line ends a block, and a heading is a
/// block of its own (the text on the line after it is a paragraph, as a model writes `###
/// Answer` over its first sentence).
fn blocks<'a>(lines: &[&'a str]) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut block = Vec::new();
    for &line in lines {
        let is_heading = heading(line).is_some();
        if line.trim().is_empty() || is_heading {
            if !block.is_empty() {
                out.push(std::mem::take(&mut block));
            }
            if is_heading {
                out.push(vec![line]);
            }
        } else {
            block.push(line);
        }
    }
    if !block.is_empty() {
        out.push(block);
    }
    out
}

/// A list item's text without its marker (`- `, `* `, `+ `, `1. `, `1) `).
fn list_item(line: &str) -> Option<&str> {
    if let Some(rest) = ["- ", "* ", "+ "].iter().find_map(|m| line.strip_prefix(m)) {
        return Some(rest);
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let rest = &line[digits..];
    (digits > 0)
        .then(|| rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")))
        .flatten()
}

/// The first item of a list paragraph: its first line without the marker, and the lines that
/// continue it.
fn first_item<'a>(paragraph: &[&'a str]) -> Vec<&'a str> {
    let first = paragraph[0].trim();
    let mut out = vec![list_item(first).unwrap_or(first)];
    out.extend(
        paragraph[1..]
            .iter()
            .map(|l| l.trim())
            .take_while(|l| list_item(l).is_none()),
    );
    out
}

/// `---`, `***`, `___`: a thematic break.
fn is_rule(line: &str) -> bool {
    let bare: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    bare.len() >= 3
        && ['-', '*', '_']
            .iter()
            .any(|&m| bare.chars().all(|c| c == m))
}

/// A paragraph that states nothing: wholly in italics (`_..._`, `*...*`, a notice), a label
/// (`**Short answer:**`, `Answer:`), questions alone (a model restating the question before
/// its answer), or no words at all.
fn is_meta(text: &str) -> bool {
    let italics = |m: char| {
        text.starts_with(m)
            && text.ends_with(m)
            && !text.starts_with(&format!("{m}{m}"))
            && text.len() > 1
    };
    let bare = text.trim_matches(|c: char| c == '*' || c == '_' || c.is_whitespace());
    let said = sentences::ranges(text);
    let asks = !said.is_empty()
        && said
            .iter()
            .all(|r| text[r.clone()].trim_end().ends_with('?'));
    italics('_') || italics('*') || bare.ends_with(':') || asks || words(text).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eval results store these names: they must never change.
    #[test]
    fn every_verdict_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<Verdict>(),
            "right wrong abstained"
        );
    }

    fn gold(answers: &[&str]) -> Vec<String> {
        answers.iter().map(|a| a.to_string()).collect()
    }

    /// An offline report: the claims line, the engine's notice, the figure first, its quote,
    /// then Findings.
    const OFFLINE: &str = "# How many cycles do sodium-ion cells last?\n\n\
        _2 of 2 cited claims are supported by their sources._\n\n\
        *Made offline, by extraction, without a language model.*\n\n\
        ## Answer\n\n\
        about 1500 cycles [1]\n\n\
        A typical NMC cell lasts about 1500 cycles, and an LFP cell lasts more than 4000 cycles. [1]\n\n\
        ## Findings\n\n### Sodium-ion\n\n\
        - Sodium-ion cells last about 3000 cycles. [2]\n";

    #[test]
    fn the_offline_answer_leads_with_its_figure_and_an_answer_only_in_findings_is_not_stated() {
        assert_eq!(leading_statement(OFFLINE), "about 1500 cycles [1]");
        let answers = gold(&["about 3000 cycles", "3000 cycles"]);
        assert_eq!(
            verdict(&leading_statement(OFFLINE), &answers, Some(true)),
            Verdict::Wrong
        );
        assert_eq!(
            verdict(
                &leading_statement(OFFLINE),
                &gold(&["1500 cycles"]),
                Some(true)
            ),
            Verdict::Right
        );
        // The quote after the figure holds LFP's figure: it is not what the answer states.
        assert_eq!(
            verdict(
                &leading_statement(OFFLINE),
                &gold(&["more than 4000 cycles"]),
                None
            ),
            Verdict::Wrong
        );
    }

    #[test]
    fn a_wrong_figure_leading_and_the_right_one_later_is_wrong() {
        let report = "# Q?\n\nSodium-ion cells last about 1500 cycles [1]. Others measured about 3000 cycles [2].\n";
        assert_eq!(
            leading_statement(report),
            "Sodium-ion cells last about 1500 cycles [1]"
        );
        let answers = gold(&["about 3000 cycles"]);
        assert_eq!(
            verdict(&leading_statement(report), &answers, Some(true)),
            Verdict::Wrong
        );
        // The next paragraph does not count either; uncited, the first sentence is the statement.
        let report = "# Q?\n\nThey last about 1500 cycles. They last about 3000 cycles.\n\nAbout 3000 cycles [1].\n";
        assert_eq!(leading_statement(report), "They last about 1500 cycles.");
        assert_eq!(
            verdict(&leading_statement(report), &answers, None),
            Verdict::Wrong
        );
        // A cited quote of several sentences is one statement: it holds what it quotes.
        let report =
            "## Answer\n\nLFP is a cathode. Its atoms form an olivine crystal. [1] More. [2]\n";
        assert_eq!(
            verdict(&leading_statement(report), &gold(&["olivine"]), None),
            Verdict::Right
        );
    }

    /// A heading is a block of its own: the sentence on the line under it is the statement.
    #[test]
    fn a_heading_with_its_text_on_the_next_line_leads_with_that_text() {
        let report = "# Q?\n\n_1 of 1 cited claims ..._\n\n### b:summary\n\
            The limit is 80 characters [1]. More.\n#### Details\nOther text [2].\n";
        assert_eq!(leading_statement(report), "The limit is 80 characters [1]");
        let quoted = "> A notice\nthat runs on.\n\nThe answer [1].\n";
        assert_eq!(leading_statement(quoted), "The answer [1]");
    }

    /// A marker that opens its sentence attributes what follows: the statement runs on.
    #[test]
    fn a_citation_that_opens_its_sentence_attributes_what_follows() {
        let lfp = gold(&["170 Wh/kg"]);
        let report =
            "## Answer\n\nAccording to [1], LFP cells reach about 170 Wh/kg. NMC: 270 Wh/kg [2].\n";
        let leading = leading_statement(report);
        assert_eq!(
            leading,
            "According to [1], LFP cells reach about 170 Wh/kg."
        );
        assert_eq!(verdict(&leading, &lfp, None), Verdict::Right);
        // Up to the next marker when the sentence cites again.
        let report = "[1] states that LFP cells reach 170 Wh/kg [2] and last long.\n";
        assert_eq!(
            leading_statement(report),
            "[1] states that LFP cells reach 170 Wh/kg [2]"
        );
        let report = "As reported in [3]: about 170 Wh/kg [3]. More [4].\n";
        assert_eq!(
            leading_statement(report),
            "As reported in [3]: about 170 Wh/kg [3]"
        );
        // A list of markers opens it as one marker does.
        let report = "According to [1], [2], and [3], LFP cells reach 170 Wh/kg. More [4].\n";
        assert_eq!(
            leading_statement(report),
            "According to [1], [2], and [3], LFP cells reach 170 Wh/kg."
        );
        // Four words before it: the marker ends a statement, however short.
        let report = "LFP cells reach far [1], about 170 Wh/kg [2].\n";
        assert_eq!(leading_statement(report), "LFP cells reach far [1]");
        // A marker after a sentence's end cites that sentence, not what follows it.
        let report = "LFP cells reach 90 Wh/kg. [1] Later ones reach 170 Wh/kg. [2]\n";
        assert_eq!(leading_statement(report), "LFP cells reach 90 Wh/kg. [1]");
        // A marker at a sentence's end ends it, however few its words.
        assert_eq!(
            leading_statement("See [1]. LFP reaches 170 Wh/kg [2].\n"),
            "See [1]"
        );
    }

    #[test]
    fn saying_the_sources_do_not_state_it_is_an_abstention_whatever_follows() {
        let report = "# Q?\n\n## Answer\n\nThe sources do not state how many cycles sodium-ion cells last.\n\n\
                      ### Closest passages\n\n- Sodium-ion cells last about 3000 cycles. [1]\n";
        let answers = gold(&["about 3000 cycles"]);
        assert_eq!(
            verdict(&leading_statement(report), &answers, Some(true)),
            Verdict::Abstained
        );
        assert_eq!(
            verdict(&leading_statement(report), &[], Some(true)),
            Verdict::Abstained
        );
        let engine = "## Answer\n\nNo sentence of the documents the searches returned answers the question (3 document(s) read).\n";
        assert_eq!(
            verdict(&leading_statement(engine), &[], None),
            Verdict::Abstained
        );
        // What the run recorded settles it, as does a report that states nothing.
        assert_eq!(
            verdict("about 3000 cycles [1]", &answers, Some(false)),
            Verdict::Abstained
        );
        assert_eq!(
            verdict(&leading_statement("# Q?\n\n_notice_\n"), &answers, None),
            Verdict::Abstained
        );
        // On a question the corpus does not answer, any statement is wrong.
        assert_eq!(
            verdict("It cost 120 dollars [1]", &[], Some(true)),
            Verdict::Wrong
        );
    }

    #[test]
    fn notices_labels_lists_and_other_sections_are_read_past() {
        let report = "# Q?\n\n> **Partial run: budget.** The report is written from what was researched.\n\n\
                      **Short answer:**\n\n- **Energy.** NMC stores 270 Wh/kg [1] and LFP 170 Wh/kg [2]\n- **Cost.** LFP is cheaper [2]\n";
        assert_eq!(
            leading_statement(report),
            "**Energy.** NMC stores 270 Wh/kg [1]"
        );
        // The answer section is the one headed so, not the first section.
        let report = "# Q?\n\n## Background\n\nLFP was described in 1997 [1].\n\n## The answer\n\n---\n\nAbout 170 Wh/kg [2]\n\n## Details\n\nx\n";
        assert_eq!(leading_statement(report), "About 170 Wh/kg [2]");
        // A number in brackets that is a link's text is not a citation.
        assert_eq!(
            leading_statement("It is [1](https://x.test) stated. Then [2]."),
            "It is [1](https://x.test) stated. Then [2]"
        );
        // A question restated before the answer states nothing.
        let report = "# How long must it wait?\n\nHow long must a package wait?\n\n\
                      According to [1], it waits five days. Then [2].\n";
        assert_eq!(
            leading_statement(report),
            "According to [1], it waits five days."
        );
        assert_eq!(leading_statement(""), "");
        assert!(abstains("The documents do not state it.") && !abstains("It states 3000 cycles."));
        let sources = [Source::new("https://s.test/perl", "Perl")];
        let cells = Some("Cells last 3000 cycles.");
        for (statement, uncited) in [
            ("Cells last 3000 cycles.", cells),
            ("Cells last 3000 cycles. Perl is compiled so [1]", cells),
            ("Cells last 3000 cycles [1].", None),
            // Markers right after the full stop cite the sentence; a link's text does not.
            ("Cells last 3000 cycles. [1]", None),
            ("Cells last 3000 cycles.\n[1][2] More.", None),
            ("Cells last 3000 cycles. [1](https://x.test)", cells),
            ("According to [1], cells last 3000 cycles.", None),
            ("The documents do not state it. Cells [1]", None),
            ("", None),
            ("How dense are cells? Dense ones [1]", None),
            (
                "How dense are cells? Dense ones. Very [1]",
                Some("Dense ones."),
            ),
        ] {
            let asked = "How long do cells last?";
            let found = uncited_opening(statement, asked, &sources, &[]);
            assert_eq!(found, uncited, "{statement}");
        }
        // In a report without sources there is nothing to cite.
        assert_eq!(
            uncited_opening("Cells last 3000 cycles.", "Q?", &[], &[]),
            None
        );
        // The question's own terms state nothing: the quote after them is the answer.
        let asked = "In battery jargon, what does 'state of charge' refer to?";
        let quote = "State of charge. How full a battery is, as a percentage. [1]";
        assert_eq!(uncited_opening(quote, asked, &sources, &[]), None);
        assert_eq!(
            uncited_opening(
                "State of charge. How full a battery is.",
                asked,
                &sources,
                &[]
            ),
            Some("How full a battery is.")
        );
        // A report of quotes alone: the passage before the marker is the quote's.
        let passage = "Cells last 3000 cycles. Perl is compiled so [1]";
        let quoted = |by: &str| Claim {
            sentence: "Perl is compiled so [1]".into(),
            cites: vec![1],
            supported: true,
            score: 1.0,
            by: by.into(),
        };
        assert_eq!(
            uncited_opening(passage, "Q?", &sources, &[quoted("quote")]),
            None
        );
        assert_eq!(
            uncited_opening(passage, "Q?", &sources, &[quoted("lexical")]),
            Some("Cells last 3000 cycles.")
        );
    }

    /// A degraded run's report says at its top that it is no answer: read as an abstention
    /// when no plan records that (another system's report, `eval --reports`).
    #[test]
    fn a_report_that_disowns_itself_is_recognised() {
        use crate::events::RunStatus;
        use crate::workflow::ending::notice;
        let degraded = format!(
            "# Q\n\n{}\n\nCells last 900 cycles [1].",
            notice(RunStatus::Degraded, "junk", true)
        );
        assert!(disowned(&degraded));
        let partial = format!(
            "# Q\n\n{}\n\nCells last 900 cycles [1].",
            notice(RunStatus::Partial, "budget", true)
        );
        assert!(!disowned(&partial));
        assert!(!disowned(
            "# Q\n\nIt must not be taken as a rule that cells last [1]."
        ));
    }
}
