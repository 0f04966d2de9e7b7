//! The final report beside the plan file (`<out>.report.md`): the question, the final
//! summary, and the sources it cites under their numbers (a cited number without a source was
//! already removed by [`crate::agents::citations`]). Written through [`crate::atomic::write`].
//!
//! The report is text a person `cat`s and a Markdown viewer renders, built from what models and
//! search providers wrote, so it is defended here too, whatever the plan file holds: no control
//! characters anywhere; a sources list the model wrote itself is replaced by ours; each source
//! is one line with a title of at most [`TITLE_MAX_CHARS`] characters; only `http(s)` URLs are
//! links (`file://` ones only when the caller allows them, see [`render_with`]), links in the
//! summary to any other scheme (`javascript:`, `data:`) are broken up, an image in it is its
//! alternative text (a viewer would load it, telling a page's server whatever its URL holds),
//! and raw HTML in it (`<script>`, `<img onerror=...>`) is escaped into text. The escaping itself is
//! [`crate::markdown`]'s, shared with the review's meeting notes.

use std::path::Path;

use regex::Regex;

use crate::agents::citations;
use crate::agents::claims::DEFAULT_THRESHOLD;
use crate::agents::leading::{leading_statement, uncited_opening};
use crate::markdown::{
    code_text, defang_links, escape_markdown, escape_raw_html, inline, link_target,
};
use crate::plan::footer::footer;
use crate::plan::{Claim, Node, PlanFile, Source};
use crate::search::hit::{TITLE_MAX_CHARS, is_web_url};
use crate::text::{one_line, strip_controls};

/// Which `file://` URLs may be links: the caller's answer for each one.
pub type FileLinks<'a> = &'a dyn Fn(&str) -> bool;

/// No `file://` URL is a link: the default of [`render`].
pub fn no_file_links(_url: &str) -> bool {
    false
}

/// Renders the report of `final_node` and writes it to `path` atomically. A `notice` (a run
/// short of `completed`, already formatted) opens the report; a `file://` source is a link
/// only when `file_links` says so.
pub fn write(
    path: &Path,
    plan: &PlanFile,
    final_node: &Node,
    plan_file: &str,
    notice: Option<&str>,
    file_links: FileLinks<'_>,
) -> std::io::Result<()> {
    let mut text = render_with(plan, final_node, plan_file, file_links);
    if let Some(notice) = notice {
        let title_end = text.find("\n\n").map_or(0, |i| i + 2);
        let notice = escape_raw_html(&strip_controls(notice));
        text.insert_str(title_end, &format!("{notice}\n\n"));
    }
    crate::atomic::write(path, text.as_bytes())
}

/// The report as Markdown: title, the final summary, and its sources. No `file://` URL is a
/// link.
pub fn render(plan: &PlanFile, final_node: &Node, plan_file: &str) -> String {
    render_with(plan, final_node, plan_file, &no_file_links)
}

/// [`render`], where a `file://` source URL is a link only when `file_links` says so for it.
/// The caller passes the allow-list (for a local corpus: the documents inside the configured
/// corpus); nothing else makes a `file://` URL a link, and no other scheme but `http(s)` ever
/// is one.
pub fn render_with(
    plan: &PlanFile,
    final_node: &Node,
    plan_file: &str,
    file_links: FileLinks<'_>,
) -> String {
    let summary = citations::strip_sources_section(&strip_controls(&final_node.summary));
    let (body, cited) = citations::clean(&summary, final_node.sources.len());
    // A plan written before claims were checked is checked here, as it stands.
    let claims = match final_node.claims.is_empty() {
        true => crate::agents::claims::check(&body, &final_node.sources, DEFAULT_THRESHOLD),
        false => final_node.claims.clone(),
    };
    let body = mark_unsupported(&body, &claims);
    let body = mark_uncited_answer(&body, plan.question(), &final_node.sources, &claims);
    // Links are defanged before raw HTML is escaped: the escape leaves alone a `<` that a
    // backslash of the defanging already escapes.
    let mut out = format!(
        "# {}\n\n{}{}\n",
        inline(plan.question(), usize::MAX),
        claims_line(&claims, !final_node.sources.is_empty()),
        escape_raw_html(&defang_links(body.trim()))
    );
    if final_node.truncated {
        out.push_str(
            "\n_This report was cut off at the model's token limit (`maxTokens`); what follows the cut is missing._\n",
        );
    }
    let listed: Vec<(usize, &Source)> = if cited.is_empty() {
        final_node
            .sources
            .iter()
            .enumerate()
            .map(|(i, s)| (i + 1, s))
            .collect()
    } else {
        let mut numbers = cited.clone();
        numbers.sort_unstable();
        numbers
            .into_iter()
            .filter_map(|n| final_node.sources.get(n - 1).map(|s| (n, s)))
            .collect()
    };
    if !listed.is_empty() {
        out.push_str(if cited.is_empty() {
            "\n## Sources consulted\n\n"
        } else {
            "\n## Sources\n\n"
        });
        for (n, s) in listed {
            out.push_str(&source_entry(n, s, file_links));
        }
    }
    out.push_str(&footer(plan, plan_file, final_node.node_id));
    // The plan file is input too: nothing it holds may reach a terminal as a control.
    strip_controls(&out)
}

/// The line under the title of a report that has no source.
const NO_SOURCE_LINE: &str = "_No source backs this report: no search found anything to \
    cite (or none ran), so nothing in it is checked against a source._\n\n";

/// What marks an unsupported claim where it stands in the report.
pub const UNSUPPORTED_MARK: &str = "**[not supported by its sources]**";

/// The line under the title that counts the report's cited claims by what checked them, in
/// words that claim no more than the check can tell (with an empty line after it): a quote is
/// in its source word for word; a word check finds a claim's words in its sources, not its
/// meaning; only a model's judgement (`roles.verifier`) calls a claim supported. A report with
/// no source at all says that nothing backs it (a model's report then is its own writing, no
/// search provider or searches that found nothing, however sure it sounds).
fn claims_line(claims: &[Claim], has_sources: bool) -> String {
    if claims.is_empty() {
        return match has_sources {
            false => NO_SOURCE_LINE.into(),
            true => "_No sentence of this report cites its sources._\n\n".into(),
        };
    }
    // What each check can say, by the `by` of the claims it checked.
    const CHECKS: [&str; 3] = [
        "cited sentences are quoted word for word from their sources",
        "cited claims share most of their words with their sources (a check of words, not of meaning)",
        "cited claims are supported by their sources, as a model judged them",
    ];
    let which = |by: &str| match by {
        "quote" => 0,
        "verifier" => 2,
        _ => 1,
    };
    let mut counts = [(0usize, 0usize); 3];
    for claim in claims {
        let (cited, kept) = &mut counts[which(&claim.by)];
        *cited += 1;
        *kept += usize::from(claim.supported);
    }
    let parts: Vec<String> = counts
        .iter()
        .zip(CHECKS)
        .filter(|((cited, _), _)| *cited > 0)
        .map(|((cited, kept), what)| format!("{kept} of {cited} {what}"))
        .collect();
    format!("_{}._\n\n", parts.join("; "))
}

/// `body` with [`UNSUPPORTED_MARK`] after every sentence of an unsupported claim.
fn mark_unsupported(body: &str, claims: &[Claim]) -> String {
    let mut out = body.to_string();
    for claim in claims.iter().filter(|c| !c.supported) {
        let sentence = claim.sentence.trim();
        let marked = format!("{sentence} {UNSUPPORTED_MARK}");
        if !sentence.is_empty() && !out.contains(&marked) {
            out = out.replacen(sentence, &marked, 1);
        }
    }
    out
}

/// What marks a report's answer that cites no source where it stands.
pub const UNCITED_MARK: &str = "**[cites no source]**";

/// `body` with [`UNCITED_MARK`] after the first sentence of its leading statement (what a
/// reader takes as its answer, read as `eval` reads it) when that states something, cites none
/// of `sources` and is not an abstention, in a report that is not of quotes alone (`claims`;
/// [`uncited_opening`]): the model's own words, which nothing checked. A small model opens
/// with its own answer and cites the pages further down (the fifth peers run's b01 and b06,
/// the sixth's d04, all wrong).
fn mark_uncited_answer(body: &str, asked: &str, sources: &[Source], claims: &[Claim]) -> String {
    let statement = leading_statement(body);
    let Some(leading) = uncited_opening(&statement, asked, sources, claims) else {
        return body.to_string();
    };
    // The statement's words as the body has them, a line break where the statement has a space.
    let pattern: Vec<String> = leading.split_whitespace().map(regex::escape).collect();
    let Ok(found) = Regex::new(&pattern.join(r"\s+")) else {
        return body.to_string();
    };
    match found.find(body) {
        Some(m) => format!("{} {UNCITED_MARK}{}", &body[..m.end()], &body[m.end()..]),
        None => body.to_string(),
    }
}

/// One line of the sources list: `- [n] [title](url)` for a URL that may be a link, else
/// `- [n] title (`url`)`, which no Markdown viewer turns into one.
pub fn source_entry(n: usize, source: &Source, file_links: FileLinks<'_>) -> String {
    let title = one_line(&source.title, TITLE_MAX_CHARS);
    let url = source.url.trim();
    let title = if title.is_empty() {
        one_line(url, TITLE_MAX_CHARS)
    } else {
        title
    };
    let is_file = url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("file://"));
    let linkable = is_web_url(url)
        || (is_file
            && !url.chars().any(|c| c.is_whitespace() || c.is_control())
            && file_links(url));
    if linkable {
        format!(
            "- [{n}] [{}]({})\n",
            escape_markdown(&title),
            link_target(url)
        )
    } else {
        format!(
            "- [{n}] {} (`{}`)\n",
            escape_markdown(&title),
            code_text(&one_line(url, TITLE_MAX_CHARS))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{final_summary, plan, search, source, summary};

    fn a_plan() -> PlanFile {
        plan(
            "Q?",
            [
                search("b", "b").with_sources([source(1), source(2)]),
                search("c", "c").with_sources([source(2), source(3)]),
                summary("d", "d", 3).with_p_node("c:summary"),
                final_summary("e", "Final")
                    .with_p_node("d:summary")
                    .with_summary("Answer [2] and [1]. Bogus [7].")
                    .with_sources([source(2), source(3)]),
            ],
        )
    }

    /// "Supported" is said only of what a model judged: a quote is in its source word for word,
    /// and a word check finds a claim's words, not its meaning.
    #[test]
    fn the_claims_line_says_what_each_check_found_and_no_more() {
        let claim = |by: &str, supported: bool| Claim {
            sentence: "S [1].".into(),
            cites: vec![1],
            supported,
            score: 1.0,
            by: by.into(),
        };
        assert_eq!(
            claims_line(&[claim("quote", true), claim("quote", true)], true),
            "_2 of 2 cited sentences are quoted word for word from their sources._\n\n"
        );
        let mixed = [
            claim("lexical", true),
            claim("lexical", false),
            claim("verifier", true),
        ];
        assert_eq!(
            claims_line(&mixed, true),
            "_1 of 2 cited claims share most of their words with their sources (a check of \
             words, not of meaning); 1 of 1 cited claims are supported by their sources, as a \
             model judged them._\n\n"
        );
        assert_eq!(
            claims_line(&[], false),
            NO_SOURCE_LINE,
            "nothing backs it, and it says so"
        );
        assert_eq!(
            claims_line(&[], true),
            "_No sentence of this report cites its sources._\n\n"
        );
    }

    #[test]
    fn report_lists_only_cited_sources_under_their_numbers() {
        let p = a_plan();
        let text = render(&p, p.final_node().expect("final"), "p.json");
        // The titles `T2`, `T3` say nothing of the answer: its claim is counted, and marked.
        assert!(
            text.starts_with(
                "# Q?\n\n_0 of 1 cited claims share most of their words with their sources (a check of words, not of meaning)._\n\n\
                 Answer [2] and [1]. **[not supported by its sources]** Bogus.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "- [1] [T2](https://example.test/2)\n- [2] [T3](https://example.test/3)\n"
            )
        );
        assert!(!text.contains("[7]"));
    }

    #[test]
    fn an_answer_that_cites_no_source_is_marked_where_it_stands() {
        let sources = vec![source(1)];
        let marked = |summary: &str, sources: Vec<Source>| {
            let (plan, node) = final_with(summary, sources);
            render(&plan, &node, "p.json")
        };
        let text = marked(
            "**Short answer**: Packs cost $139 in\n2015. More.\n\nPacks cost $139 in 2023 [1].",
            sources.clone(),
        );
        assert!(
            text.contains(
                "**Short answer**: Packs cost $139 in\n2015. **[cites no source]** More."
            ),
            "{text}"
        );
        // Cited only in its next sentence: the answer's sentence is marked.
        let text = marked(
            "Packs wait 5 days. Perl is compiled for binary compatibility [1].",
            sources.clone(),
        );
        assert!(
            text.contains("Packs wait 5 days. **[cites no source]** Perl is compiled"),
            "{text}"
        );
        // Cited, an abstention, or a report with no source at all: nothing to mark.
        for (summary, sources) in [
            ("Packs cost $139 in 2023 [1]. More.", sources.clone()),
            ("Packs cost $139 in 2023. [1] More.", sources.clone()),
            (
                "The sources do not state the 2015 price. Packs cost $139 in 2023 [1].",
                sources,
            ),
            ("Packs cost $139 in 2015.", Vec::new()),
        ] {
            let text = marked(summary, sources);
            assert!(!text.contains(UNCITED_MARK), "{text}");
        }
    }

    fn final_with(summary: &str, sources: Vec<Source>) -> (PlanFile, Node) {
        let node = final_summary("b", "Final")
            .with_summary(summary)
            .with_sources(sources);
        (plan("Q?", [node.clone()]), node)
    }

    #[test]
    fn the_report_carries_no_control_characters() {
        let (mut plan, node) = final_with(
            "Text \u{1b}]0;pwned\u{7}with\0 escapes\u{1b}[2J [1].\r\n",
            vec![Source::new(
                "https://x.test/1",
                "Title \u{1b}[31mred\u{9b}0m",
            )],
        );
        plan.nodes[0].title = "Q\u{1b}]2;x\u{7}?".into();
        plan.workflow_id = "wf\u{7}".into();
        let text = render(&plan, &node, "p\u{1b}[1m.json");
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.starts_with("# Q?\n\n_0 of 1 cited claims share most of their words with their sources (a check of words, not of meaning)._\n\nText with escapes [1]."),
            "{text:?}"
        );
        assert!(
            text.contains("- [1] [Title red](https://x.test/1)\n"),
            "{text:?}"
        );
    }

    #[test]
    fn a_source_title_with_a_newline_cannot_forge_a_sources_line() {
        let (plan, node) = final_with(
            "A [1].",
            vec![Source::new(
                "https://x.test/1",
                "Real\n- [2] [Forged](javascript:alert(1))\n",
            )],
        );
        let text = render(&plan, &node, "p.json");
        let sources: Vec<&str> = text.lines().filter(|l| l.starts_with("- [")).collect();
        assert_eq!(
            sources,
            vec![r"- [1] [Real - \[2\] \[Forged\](javascript:alert(1))](https://x.test/1)"],
            "{text}"
        );
        let long = "word ".repeat(500);
        let (plan, node) = final_with("A [1].", vec![Source::new("https://x.test/1", &long)]);
        let text = render(&plan, &node, "p.json");
        let line = text.lines().find(|l| l.starts_with("- [1]")).expect("line");
        assert!(line.chars().count() < TITLE_MAX_CHARS + 40, "{line}");
    }

    #[test]
    fn only_web_urls_are_links_and_file_urls_only_when_allowed() {
        let (plan, node) = final_with(
            "A [1][2][3][4][5].",
            vec![
                Source::new("javascript:alert(1)", "Js"),
                Source::new("data:text/html,<b>x</b>", "Data"),
                Source::new("file:///etc/passwd", "Passwd"),
                Source::new("file:///corpus/a.md", "Corpus doc"),
                Source::new("https://x.test/a_(b)", "Web"),
            ],
        );
        let text = render(&plan, &node, "p.json");
        assert!(
            text.contains("- [1] Js (`javascript:alert(1)`)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [2] Data (`data:text/html,<b>x</b>`)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [3] Passwd (`file:///etc/passwd`)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [4] Corpus doc (`file:///corpus/a.md`)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [5] [Web](https://x.test/a_%28b%29)\n"),
            "{text}"
        );
        let corpus = |url: &str| url.starts_with("file:///corpus/");
        let text = render_with(&plan, &node, "p.json", &corpus);
        assert!(
            text.contains("- [4] [Corpus doc](file:///corpus/a.md)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [3] Passwd (`file:///etc/passwd`)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [1] Js (`javascript:alert(1)`)\n"),
            "{text}"
        );
    }

    #[test]
    fn a_sources_section_by_the_model_is_replaced_never_doubled() {
        for tail in [
            "## Sources\n[1] made up",
            "**References:**\n1. made up",
            "Sources: [1] made up",
        ] {
            let (plan, node) = final_with(
                &format!("Answer [1].\n\n{tail}\n"),
                vec![Source::new("https://x.test/1", "Real")],
            );
            let text = render(&plan, &node, "p.json");
            assert!(!text.contains("made up"), "{text}");
            assert_eq!(
                text.to_lowercase().matches("## sources").count(),
                1,
                "{text}"
            );
            assert!(
                text.contains("## Sources\n\n- [1] [Real](https://x.test/1)\n"),
                "{text}"
            );
        }
    }

    #[test]
    fn links_to_other_schemes_in_the_summary_are_broken_up() {
        let (plan, node) = final_with(
            "See [here](javascript:alert(1)), <data:text/html,x>, [ok](https://x.test) and <https://y.test>.\n\n[ref]: vbscript:evil\n",
            vec![],
        );
        let text = render(&plan, &node, "p.json");
        assert!(text.contains("[here] (javascript:alert(1))"), "{text}");
        assert!(text.contains(r"\<data:text/html,x>"), "{text}");
        assert!(text.contains("[ok](https://x.test)"), "{text}");
        assert!(text.contains("<https://y.test>"), "{text}");
        assert!(text.contains(r"\[ref]: vbscript:evil"), "{text}");
    }
}
