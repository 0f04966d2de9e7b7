//! [`to_markdown`]: a [`PlanDiff`] as a digest a person reads in a terminal or a Markdown
//! viewer.
//!
//! Everything in it comes from plan files, that is from models and search providers, so the
//! digest is defended as the report is (`report.rs`, whose helpers this layer cannot
//! import): no control characters; titles on one line of at most [`TITLE_MAX_CHARS`]
//! characters with the characters that make links, code or HTML escaped; only `http(s)` URLs
//! become links, other URLs are shown as code; summaries are cut to [`SUMMARY_MAX_CHARS`] and
//! quoted line by line, so nothing in them can end the quote or start a section of ours.

use super::facts::FactChange;
use super::plan_diff::{NodeRef, PlanDiff};
use crate::markdown::{self, link_target};
use crate::plan::Source;
use crate::text::{one_line, strip_controls};

/// The longest title shown, in characters (as the search sub-agent keeps them).
pub const TITLE_MAX_CHARS: usize = 300;

/// The longest excerpt of a summary shown, in characters.
pub const SUMMARY_MAX_CHARS: usize = 600;

/// How many hex digits of a local document's text hash are shown.
const HASH_SHOWN: usize = 8;

/// The digest of `d` between the plan files named `old_name` and `new_name`: a heading, the
/// counts, then one section per non-empty list, or "No change.".
pub fn to_markdown(d: &PlanDiff, old_name: &str, new_name: &str) -> String {
    let mut out = format!(
        "# What changed\n\n- before: {}\n- now: {}\n",
        code(old_name),
        code(new_name)
    );
    let old_q = inline(&d.question_old);
    let new_q = inline(&d.question_new);
    if old_q == new_q {
        out.push_str(&format!("- question: {new_q}\n"));
    } else {
        out.push_str(&format!(
            "- question before: {old_q}\n- question now: {new_q}\n"
        ));
    }
    if d.is_empty() {
        out.push_str("\nNo change.\n");
        return strip_controls(&out);
    }
    out.push_str(&format!("\n{}\n", counts(d)));
    facts_section(&mut out, &d.facts);
    sources_section(&mut out, "New sources", &d.sources_new);
    sources_section(&mut out, "Sources no longer found", &d.sources_gone);
    if !d.changed.is_empty() {
        out.push_str("\n## Changed findings\n");
        for c in &d.changed {
            let title = match inline(&c.title) {
                t if t.is_empty() => format!("Node {}", code(&c.new_node)),
                t => t,
            };
            out.push_str(&format!(
                "\n### {title}\n\nBefore:\n\n{}\nNow:\n\n{}",
                quote(&c.old_summary),
                quote(&c.new_summary)
            ));
        }
    }
    nodes_section(&mut out, "New directions", &d.nodes_new);
    nodes_section(&mut out, "Dropped directions", &d.nodes_gone);
    // The pieces were cleaned one by one; this is the last word on what reaches a terminal.
    strip_controls(&out)
}

/// One sentence with every count, nothing left out, so a reader sees at once what is empty.
fn counts(d: &PlanDiff) -> String {
    let n = |count: usize, one: &str, many: &str| {
        format!("{count} {}", if count == 1 { one } else { many })
    };
    let facts = |kind: fn(&FactChange) -> bool| d.facts.iter().filter(|f| kind(f)).count();
    let changed = facts(|f| matches!(f, FactChange::Changed { .. }));
    let new = facts(|f| matches!(f, FactChange::New { .. }));
    let gone = facts(|f| matches!(f, FactChange::Gone { .. }));
    format!(
        "{}, {new} new, {gone} gone; {}, {} no longer found; {}; {}, {}.",
        n(changed, "changed fact", "changed facts"),
        n(d.sources_new.len(), "new source", "new sources"),
        n(d.sources_gone.len(), "source", "sources"),
        n(d.changed.len(), "changed finding", "changed findings"),
        n(d.nodes_new.len(), "new direction", "new directions"),
        n(
            d.nodes_gone.len(),
            "dropped direction",
            "dropped directions"
        ),
    )
}

/// The facts of the final report that changed (with the values before and after), are new
/// or are gone, each sentence quoted as one line.
fn facts_section(out: &mut String, facts: &[FactChange]) {
    if facts.is_empty() {
        return;
    }
    out.push_str("\n## Facts\n\n");
    let said = |sentence: &str| markdown::inline(sentence, SUMMARY_MAX_CHARS);
    let values = |v: &[String]| match v.is_empty() {
        true => "nothing".to_string(),
        false => v.iter().map(|v| code(v)).collect::<Vec<_>>().join(", "),
    };
    for fact in facts {
        out.push_str(&match fact {
            FactChange::Changed {
                before,
                after,
                values_before,
                values_after,
            } => format!(
                "- changed: {} -> {}\n  - before: {}\n  - now: {}\n",
                values(values_before),
                values(values_after),
                said(before),
                said(after)
            ),
            FactChange::New { after } => format!("- new: {}\n", said(after)),
            FactChange::Gone { before } => format!("- gone: {}\n", said(before)),
        });
    }
}

fn sources_section(out: &mut String, heading: &str, sources: &[Source]) {
    if sources.is_empty() {
        return;
    }
    out.push_str(&format!("\n## {heading}\n\n"));
    for source in sources {
        out.push_str(&source_line(source));
    }
}

/// `- [title](url)` for an `http(s)` URL, else `- title (`url`)`, which no viewer follows; a
/// local document with the start of its text's hash (`text `3f2a9c1b``), which tells a
/// revised document from the one it replaced.
fn source_line(source: &Source) -> String {
    let url = source.url.trim();
    let title = inline(&source.title);
    let shown = match &source.in_corpus {
        Some(at) => format!(
            "{}, text {}",
            code(url),
            code(&at.sha256.chars().take(HASH_SHOWN).collect::<String>())
        ),
        None => code(url),
    };
    if is_web_url(url) {
        let text = if title.is_empty() { inline(url) } else { title };
        format!("- [{text}]({})\n", link_target(url))
    } else if title.is_empty() {
        format!("- {shown}\n")
    } else {
        format!("- {title} ({shown})\n")
    }
}

fn nodes_section(out: &mut String, heading: &str, nodes: &[NodeRef]) {
    if nodes.is_empty() {
        return;
    }
    out.push_str(&format!("\n## {heading}\n\n"));
    for node in nodes {
        out.push_str(&format!(
            "- {} ({}, {})\n",
            inline(&node.title),
            code(&node.node_id),
            node.status.as_str()
        ));
    }
}

/// A summary cut to [`SUMMARY_MAX_CHARS`] as a block quote: every line inside it, no raw
/// HTML, links only to web addresses.
fn quote(summary: &str) -> String {
    markdown::prose(summary, SUMMARY_MAX_CHARS)
}

/// Text from a plan on one line of at most [`TITLE_MAX_CHARS`], with Markdown escaped.
fn inline(text: &str) -> String {
    markdown::inline(text, TITLE_MAX_CHARS)
}

/// `text` as a code span of one line.
fn code(text: &str) -> String {
    format!(
        "`{}`",
        markdown::code_text(&one_line(text, TITLE_MAX_CHARS))
    )
}

/// An `http` or `https` URL with something after the scheme and no white space or control
/// character: what may be a link. (The report's stricter check parses the URL; this layer has
/// no URL parser, and a malformed web URL as a link harms no one.)
fn is_web_url(url: &str) -> bool {
    let rest = ["http://", "https://"].iter().find_map(|scheme| {
        url.get(..scheme.len())
            .filter(|s| s.eq_ignore_ascii_case(scheme))
            .map(|_| &url[scheme.len()..])
    });
    rest.is_some_and(|r| !r.is_empty()) && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::plan_diff::ChangedNode;
    use crate::plan::{NodeStatus, NodeType};

    fn empty() -> PlanDiff {
        PlanDiff {
            question_old: "Q?".into(),
            question_new: "Q?".into(),
            sources_new: Vec::new(),
            sources_gone: Vec::new(),
            changed: Vec::new(),
            facts: Vec::new(),
            nodes_new: Vec::new(),
            nodes_gone: Vec::new(),
        }
    }

    fn src(url: &str, title: &str) -> Source {
        Source::new(url, title)
    }

    fn changed(old: &str, new: &str) -> ChangedNode {
        ChangedNode {
            title: "Finding".into(),
            old_node: "b".into(),
            new_node: "b".into(),
            old_summary: old.into(),
            new_summary: new.into(),
        }
    }

    #[test]
    fn nothing_changed_says_so_and_shows_no_section() {
        let text = to_markdown(&empty(), "old.json", "new.json");
        assert!(text.starts_with("# What changed\n\n- before: `old.json`\n- now: `new.json`\n"));
        assert!(text.ends_with("\nNo change.\n"), "{text}");
        assert!(!text.contains("##"), "{text}");
    }

    #[test]
    fn a_new_question_is_shown_before_and_after() {
        let d = PlanDiff {
            question_new: "Other?".into(),
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(
            text.contains("- question before: Q?\n- question now: Other?\n"),
            "{text}"
        );
        assert!(!text.contains("No change."), "{text}");
    }

    #[test]
    fn a_local_document_shows_the_start_of_its_text_hash() {
        let mut doc = src("file:///c/a.md", "Notes");
        doc.in_corpus = Some(crate::in_corpus::InCorpus {
            path: "a.md".into(),
            sha256: "3f2a9c1b0d".repeat(6),
        });
        let d = PlanDiff {
            sources_new: vec![doc],
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(
            text.contains("- Notes (`file:///c/a.md`, text `3f2a9c1b`)\n"),
            "{text}"
        );
    }

    #[test]
    fn only_web_urls_become_links() {
        let d = PlanDiff {
            sources_new: vec![
                src("https://x.example/a_(b)", "Web page"),
                src("HTTP://x.example/b", ""),
                src("javascript:alert(1)", "Click"),
                src("file:///etc/passwd", ""),
                src("https://x.example/a b", "Space"),
            ],
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(text.contains("## New sources\n\n"), "{text}");
        assert!(
            text.contains("- [Web page](https://x.example/a_%28b%29)\n"),
            "{text}"
        );
        assert!(
            text.contains("- [HTTP://x.example/b](HTTP://x.example/b)\n"),
            "{text}"
        );
        assert!(text.contains("- Click (`javascript:alert(1)`)\n"), "{text}");
        assert!(text.contains("- `file:///etc/passwd`\n"), "{text}");
        assert!(
            text.contains("- Space (`https://x.example/a b`)\n"),
            "{text}"
        );
        assert!(
            !text.contains("](javascript") && !text.contains("](file"),
            "{text}"
        );
    }

    #[test]
    fn titles_are_one_escaped_line() {
        let long = "x".repeat(1000);
        let d = PlanDiff {
            sources_gone: vec![
                src(
                    "https://x.example/a",
                    "A [fake](javascript:x) <b>\n## Forged section",
                ),
                src("https://x.example/b", &long),
                src("ftp://x.example/`c`", "Code"),
            ],
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(text.contains("## Sources no longer found\n\n"), "{text}");
        assert!(
            text.contains(
                "- [A \\[fake\\](javascript:x) \\<b\\> ## Forged section](https://x.example/a)\n"
            ),
            "{text}"
        );
        assert!(!text.contains("\n## Forged"), "{text}");
        let line = text
            .lines()
            .find(|l| l.contains("x.example/b"))
            .expect("listed");
        assert!(line.chars().count() < TITLE_MAX_CHARS + 40, "{line}");
        assert!(text.contains("- Code (`ftp://x.example/'c'`)\n"), "{text}");
    }

    #[test]
    fn summaries_are_cut_quoted_line_by_line_and_without_controls() {
        let long = "word ".repeat(400);
        let d = PlanDiff {
            changed: vec![
                changed(
                    "Old line.\n\n# Not a heading\x1b]0;pwned\x07",
                    "New\r\nlines",
                ),
                changed("", &long),
            ],
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(
            text.contains(
                "\n## Changed findings\n\n### Finding\n\nBefore:\n\n> Old line.\n>\n> # Not a heading\n\nNow:\n\n> New\n> lines\n\n"
            ),
            "{text}"
        );
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
        assert!(text.contains("Before:\n\n> *(empty)*\n"), "{text}");
        let quoted = text
            .lines()
            .find(|l| l.starts_with("> word"))
            .expect("the long summary is quoted");
        assert!(quoted.contains("more bytes]"), "{quoted}");
        assert!(quoted.chars().count() < SUMMARY_MAX_CHARS + 40, "{quoted}");
    }

    #[test]
    fn summaries_keep_only_web_links_and_no_raw_html() {
        let d = PlanDiff {
            changed: vec![changed(
                "See [docs](https://ok.test/a).",
                "Click [here](javascript:alert(1)) <img src=x onerror=alert(1)>",
            )],
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(text.contains("[docs](https://ok.test/a)"), "{text}");
        assert!(!text.contains("](javascript:"), "{text}");
        assert!(text.contains("\\<img"), "{text}");
    }

    #[test]
    fn directions_and_counts_are_listed() {
        let node = |id: &str, title: &str| NodeRef {
            node_id: id.into(),
            title: title.into(),
            kind: NodeType::Search,
            status: NodeStatus::Planned,
        };
        let d = PlanDiff {
            sources_new: vec![src("https://x.example/a", "A")],
            nodes_new: vec![node("c", "New [way]")],
            nodes_gone: vec![node("d", "Old way"), node("e", "Older way")],
            ..empty()
        };
        let text = to_markdown(&d, "a", "b");
        assert!(
            text.contains(
                "\n0 changed facts, 0 new, 0 gone; 1 new source, 0 sources no longer found; 0 changed findings; 1 new direction, 2 dropped directions.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\n## New directions\n\n- New \\[way\\] (`c`, planned)\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\n## Dropped directions\n\n- Old way (`d`, planned)\n- Older way (`e`, planned)\n"
            ),
            "{text}"
        );
        assert!(!text.contains("## Changed findings") && !text.contains("No change."));
    }
}
