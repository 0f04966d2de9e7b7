//! One node's details in a view: a `<details data-node="<id>">` (collapsed unless the plan is
//! small; its body is `#node-<id>`, so a link from the graph opens it) whose summary line
//! shows the id, type, status and title, and whose body lists what
//! a person asks of a task: its inputs, attempts and timing (from the event log), tokens,
//! errors, the search queries, the overview, the analysis, and each source with its snippet.
//! Texts are cut to the caller's length ([`DetailOptions`]); every text is escaped and every URL goes through
//! [`Links`].

use std::fmt::Write as _;

use super::events::{Attempt, RunEvents};
use super::html::{Links, esc};
use super::report_html::plain;
use crate::agents::search_agent::PASSAGES_LINE;
use crate::plan::{FINAL_BATCH, Info, Node};

/// The most sources listed for one node.
pub const SOURCES_MAX: usize = 50;

/// The most characters of one snippet shown (what the search sub-agent keeps of one).
pub const SNIPPET_MAX: usize = 2_000;

/// How much of a node's texts a view shows, and whether its details start open.
#[derive(Debug, Clone, Copy)]
pub struct DetailOptions {
    pub open: bool,
    /// The most characters of each text (the overview, the analysis).
    pub text_max: usize,
}

impl DetailOptions {
    /// The most characters of one snippet: half a text, at least 100, at most
    /// [`SNIPPET_MAX`].
    pub fn snippet_max(self) -> usize {
        (self.text_max / 2).clamp(100, SNIPPET_MAX)
    }
}

/// A node's `<details>`.
pub fn node_details(
    node: &Node,
    events: &RunEvents,
    links: &Links,
    options: DetailOptions,
) -> String {
    let raw_id = node.node_id.to_string();
    let id = esc(&raw_id);
    let status = node.status.as_str();
    let kind = node.kind.as_str();
    let is_final = node.batch == FINAL_BATCH;
    let mut out = String::with_capacity(1_024);
    let _ = write!(
        out,
        r#"<details class="node-details status-{status}" data-node="{id}"{}><summary><span class="node-id">{id}</span> <span class="badge type-{kind}">{kind}</span> <span class="badge status-{status}">{status}</span>{} {}</summary><div class="body" id="node-{id}">"#,
        if options.open { " open" } else { "" },
        if is_final {
            r#" <span class="badge final">final</span>"#
        } else {
            ""
        },
        esc(&crate::text::one_line(&node.title, 300)),
    );
    facts(node, events.attempts(&raw_id), &mut out);
    let info = Info::parse(&node.info);
    let search = info.get("search").map(SearchBlock::parse);
    if let Some(search) = &search
        && !search.queries.is_empty()
    {
        out.push_str("<h4>Queries</h4><ul class=\"queries\">");
        for q in &search.queries {
            let _ = write!(out, "<li>{}</li>", esc(q));
        }
        out.push_str("</ul>");
    }
    if !node.summary.trim().is_empty() {
        out.push_str("<h4>Overview</h4>");
        out.push_str(&plain(&node.summary, options.text_max));
    }
    if let Some(analysis) = info.get("llm").filter(|a| !a.trim().is_empty()) {
        out.push_str("<h4>Analysis</h4>");
        out.push_str(&plain(analysis, options.text_max));
    }
    sources(node, search.as_ref(), links, options, &mut out);
    out.push_str("</div></details>");
    out
}

/// The facts of a node as a definition list.
fn facts(node: &Node, attempts: &[Attempt], out: &mut String) {
    out.push_str("<dl class=\"facts\">");
    let mut fact = |name: &str, value: String| {
        let _ = write!(out, "<dt>{name}</dt><dd>{}</dd>", esc(&value));
    };
    fact("batch", node.batch.to_string());
    if !node.p_node.trim().is_empty() {
        fact("inputs", node.p_node.clone());
    }
    if let Some(n) = node.attempts {
        fact("attempts", n.to_string());
    }
    for (i, a) in attempts.iter().enumerate() {
        fact(&format!("attempt {}", i + 1), attempt_text(a));
    }
    for (name, value) in [
        ("created", &node.created_at),
        ("updated", &node.updated_at),
        ("finished", &node.finished_at),
    ] {
        if let Some(value) = value {
            fact(name, value.clone());
        }
    }
    if let Some(u) = node.usage {
        fact(
            "tokens",
            format!(
                "{} ({} prompt, {} completion)",
                u.total_tokens, u.prompt_tokens, u.completion_tokens
            ),
        );
    }
    if node.truncated {
        fact("truncated", "the model's answer was cut off".into());
    }
    for e in &node.errors {
        fact("error", crate::text::one_line(e, 2_000));
    }
    out.push_str("</dl>");
}

/// One attempt: when it started and ended, how, and how long it took.
fn attempt_text(a: &Attempt) -> String {
    let time = |t: Option<chrono::DateTime<chrono::FixedOffset>>| {
        t.map_or("?".to_string(), |t| {
            t.format("%Y-%m-%d %H:%M:%S").to_string()
        })
    };
    let mut text = format!("{} → {}: {}", time(a.started), time(a.ended), a.outcome);
    if let Some(s) = a.seconds {
        let _ = write!(text, ", {s:.1} s");
    }
    if let Some(t) = a.tokens {
        let _ = write!(text, ", {t} tokens");
    }
    if let Some(e) = &a.error {
        let _ = write!(text, ": {}", crate::text::one_line(e, 500));
    }
    text
}

/// The node's sources, each with its snippet from the search block; a node written by another
/// tool without `sources` shows the block's results.
fn sources(
    node: &Node,
    search: Option<&SearchBlock>,
    links: &Links,
    options: DetailOptions,
    out: &mut String,
) {
    let from_block: Vec<(String, String)>;
    let list: Vec<(&str, &str)> = if node.sources.is_empty() {
        from_block = search.map_or_else(Vec::new, |s| {
            s.results
                .iter()
                .map(|r| (r.url.clone(), r.title.clone()))
                .collect()
        });
        from_block
            .iter()
            .map(|(u, t)| (u.as_str(), t.as_str()))
            .collect()
    } else {
        node.sources
            .iter()
            .map(|s| (s.url.as_str(), s.title.as_str()))
            .collect()
    };
    if list.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h4>Sources ({})</h4><ol class=\"sources\">",
        list.len()
    );
    for (at, (url, title)) in list.iter().enumerate().take(SOURCES_MAX) {
        let title = crate::text::one_line(title, 300);
        out.push_str("<li>");
        out.push_str(&links.anchor(url, if title.is_empty() { url } else { &title }));
        let result = search.and_then(|s| s.results.iter().find(|r| r.url == *url));
        let passages = match node.sources.get(at).filter(|s| !s.passages.is_empty()) {
            Some(source) => source.passages.as_slice(),
            None => result.map_or(&[][..], |r| r.passages.as_slice()),
        };
        if !passages.is_empty() {
            let _ = write!(
                out,
                r#"<p class="note">{} passage(s) of the page read:</p>"#,
                passages.len()
            );
            for passage in passages {
                out.push_str("<blockquote class=\"passage\">");
                out.push_str(&plain(passage, options.snippet_max()));
                out.push_str("</blockquote>");
            }
        } else if let Some(r) = result.filter(|r| !r.snippet.trim().is_empty()) {
            out.push_str("<blockquote>");
            out.push_str(&plain(&r.snippet, options.snippet_max()));
            out.push_str("</blockquote>");
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
    if list.len() > SOURCES_MAX {
        let _ = write!(
            out,
            r#"<p class="note">{} more sources are in the plan file.</p>"#,
            list.len() - SOURCES_MAX
        );
    }
}

/// The `<info type="search">` block as the search sub-agent writes it: `provider:` and
/// `queries:` lines, then per result `[n] title`, its URL and its snippet on three lines, or,
/// for a page that was read, `passages of the page:` and one `> passage` line each.
#[derive(Debug, Default, PartialEq)]
pub struct SearchBlock {
    pub queries: Vec<String>,
    pub results: Vec<SearchResult>,
}

#[derive(Debug, Default, PartialEq)]
pub struct SearchResult {
    pub title: String,
    pub url: String,
    pub snippet: String,
    /// The passages of the page the analysis saw, when it was read.
    pub passages: Vec<String>,
}

impl SearchBlock {
    pub fn parse(text: &str) -> SearchBlock {
        let mut block = SearchBlock::default();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if let Some(q) = line.strip_prefix("queries: ") {
                block.queries = q
                    .split(" | ")
                    .map(str::trim)
                    .filter(|q| !q.is_empty())
                    .map(str::to_string)
                    .collect();
                continue;
            }
            let Some(title) = result_title(line) else {
                continue;
            };
            let url = lines.next().unwrap_or_default().trim().to_string();
            let mut passages = Vec::new();
            let snippet = match lines.peek() {
                Some(&PASSAGES_LINE) => {
                    lines.next();
                    while let Some(p) = lines.peek().and_then(|l| l.strip_prefix("> ")) {
                        passages.push(p.to_string());
                        lines.next();
                    }
                    String::new()
                }
                Some(next) if result_title(next).is_none() => {
                    lines.next().unwrap_or_default().to_string()
                }
                _ => String::new(),
            };
            block.results.push(SearchResult {
                title: title.to_string(),
                url,
                snippet,
                passages,
            });
        }
        block
    }
}

/// The title of a `[n] title` line.
fn result_title(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('[')?;
    let (n, title) = rest.split_once("] ")?;
    (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_block_gives_queries_and_snippets() {
        let text = "provider: searxng\nqueries: one | two\n\n[1] First\nhttps://a.test/1\nsnip <b>1</b>\n\n[2] Second\nhttps://a.test/2\n\n[3] Third\nhttps://a.test/3\nsnip 3\n";
        let b = SearchBlock::parse(text);
        assert_eq!(b.queries, ["one", "two"]);
        assert_eq!(b.results.len(), 3);
        assert_eq!(b.results[0].snippet, "snip <b>1</b>");
        assert_eq!(b.results[1].snippet, "");
        assert_eq!(b.results[2].url, "https://a.test/3");
        let read = "queries: q\n\n[1] Page\nhttps://a.test/1\npassages of the page:\n> First passage.\n> Second.\n\n[2] Other\nhttps://a.test/2\nsnip 2\n";
        let b = SearchBlock::parse(read);
        assert_eq!(b.results[0].passages, ["First passage.", "Second."]);
        assert_eq!(b.results[0].snippet, "");
        assert_eq!(b.results[1].snippet, "snip 2");
        assert!(b.results[1].passages.is_empty());
    }
}
