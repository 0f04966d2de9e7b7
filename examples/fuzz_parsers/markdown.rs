//! Markdown, `search::local::markdown::to_text`: never panics, never overflows the stack,
//! stays within the time and memory bounds; the words of a generated document (in headings,
//! paragraphs, lists and quotes nested up to thousands deep, tight lists with sub-items,
//! tables, code, HTML blocks, long lines) come out in order, each a word of its own, and its
//! first level-1 heading is the title.

use researchflow::search::local::markdown::to_text;

use crate::html::in_order;
use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

pub struct MarkdownTarget {
    seeds: Vec<Vec<u8>>,
}

impl MarkdownTarget {
    pub fn new() -> MarkdownTarget {
        let mut seeds: Vec<Vec<u8>> = [
            "---\ntitle: x\n---\n# Title\n\nText *em* **strong** `code` [link](http://a).\n",
            "- a\n  - b\n    - c\n\n> q\n> > qq\n",
            "| a | b |\n|---|---|\n| c | d |\n",
            "```rust\nfn main() {}\n```\n\n~~~\nunclosed",
            "<div>\n*html*\n</div>\n\n[x]: http://a \"t\"\n\n[x] ![i](src)",
        ]
        .map(|s| s.as_bytes().to_vec())
        .to_vec();
        let mut g = Gen::new(7);
        seeds.extend((0..16).map(|_| valid_document(&mut g).bytes));
        MarkdownTarget { seeds }
    }
}

/// How deep a nested list or quote goes: mostly shallow, rarely thousands.
fn depth(g: &mut Gen) -> usize {
    match g.rng.u16(..1000) {
        0..=4 => g.log_size(100, 20_000),
        5..=60 => g.rng.usize(10..100),
        _ => g.rng.usize(1..10),
    }
}

fn phrase(g: &mut Gen, words: &mut Vec<String>, n: usize) -> String {
    let shown: Vec<String> = (0..n).map(|_| g.word()).collect();
    let text = shown.join(" ");
    words.extend(shown);
    text
}

/// A document of blocks, the words it shows, and its first level-1 heading.
fn valid_document(g: &mut Gen) -> Input {
    let mut doc = String::new();
    let mut words = Vec::new();
    let mut title = None;
    if g.rng.u8(..4) == 0 {
        doc.push_str("---\nauthor: someone\n---\n\n");
    }
    for _ in 0..g.rng.usize(1..8) {
        let n = g.rng.usize(1..6);
        match g.rng.u8(..10) {
            0 => {
                let level = g.rng.usize(1..4);
                let text = phrase(g, &mut words, n);
                if level == 1 && title.is_none() {
                    title = Some(text.clone());
                }
                doc.push_str(&format!("{} {text}\n\n", "#".repeat(level)));
            }
            1 => {
                // A list nested by markers on one line, then its items.
                let marker = g.pick(&["- ", "* ", "1. ", "+ "]);
                let text = phrase(g, &mut words, n);
                doc.push_str(&format!("{}{text}\n\n", marker.repeat(depth(g))));
            }
            2 => {
                let text = phrase(g, &mut words, n);
                doc.push_str(&format!(
                    "{}{text}\n\n",
                    g.pick(&["> ", ">"]).repeat(depth(g))
                ));
            }
            3 => {
                let head = phrase(g, &mut words, 2);
                let row = phrase(g, &mut words, 2);
                let cell = |t: &str| t.replace(' ', " | ");
                doc.push_str(&format!(
                    "| {} |\n|---|---|\n| {} |\n\n",
                    cell(&head),
                    cell(&row)
                ));
            }
            4 => {
                let code = phrase(g, &mut words, n);
                let fence = g.pick(&["```", "~~~", "````"]);
                doc.push_str(&format!(
                    "{fence}{}\n{code}\n{fence}\n\n",
                    g.pick(&["", "rust", "text"])
                ));
            }
            5 => {
                // A long line: thousands of words, rarely a hundred thousand.
                let count = if g.rng.u8(..50) == 0 {
                    g.log_size(1_000, 100_000)
                } else {
                    50
                };
                let text = phrase(g, &mut words, count);
                doc.push_str(&format!("{text}\n\n"));
            }
            6 => {
                let (a, b) = (phrase(g, &mut words, 1), phrase(g, &mut words, 1));
                doc.push_str(&format!("*{a}* **{b}** [link](http://x) `c` ~~s~~\n\n"));
            }
            7 => {
                for _ in 0..g.rng.usize(1..5) {
                    let indent = "  ".repeat(g.rng.usize(..4));
                    let text = phrase(g, &mut words, n);
                    doc.push_str(&format!("{indent}- {text}\n"));
                }
                doc.push('\n');
            }
            8 => {
                // An HTML block, its text read as a browser shows it.
                let text = phrase(g, &mut words, n);
                let (open, close) = *g.pick(&[
                    &("<div>\n", "\n</div>"),
                    &("<p align=\"center\">", "</p>"),
                    &("<details>\n<summary>", "</summary>\n</details>"),
                ]);
                doc.push_str(&format!("{open}{text}{close}\n\n"));
            }
            _ => {
                let text = phrase(g, &mut words, n);
                doc.push_str(&format!("{text}\nmore\n\n"));
                words.push("more".into());
            }
        }
    }
    Input::new(doc, Expect::Words { words, title })
}

impl MarkdownTarget {
    const TOKENS: &'static [&'static str] = &[
        "#",
        "## ",
        "- ",
        "* ",
        "1. ",
        "> ",
        "```",
        "~~~",
        "    ",
        "\t",
        "|",
        "|---|",
        "---",
        "===",
        "***",
        "**",
        "_",
        "__",
        "~~",
        "`",
        "[",
        "](",
        ")",
        "![",
        "<",
        ">",
        "<div>",
        "</div>",
        "<!--",
        "-->",
        "&amp;",
        "&#0;",
        "&#x1b;",
        "\\",
        "\n",
        "\n\n",
        "[^1]",
        "[^1]: note",
        "[x]: http://a",
        "<http://a>",
        "- [ ] ",
        "+++",
        "\u{0}",
        "\u{1b}",
        " ",
        "a",
        "é",
    ];
}

impl Target for MarkdownTarget {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn tokens(&self) -> &'static [&'static str] {
        MarkdownTarget::TOKENS
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("> ", ""),
            ("- ", ""),
            ("1. ", ""),
            ("> - ", ""),
            ("[", "](x)"),
            ("*", "*"),
            ("**", "**"),
            ("`", "`"),
            ("<div>", "</div>"),
            ("![", "](y)"),
        ]
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_document(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let (title, text) = to_text(&input.text());
        if let Expect::Words { words, title: want } = &input.expect {
            in_order(words, &text)?;
            if title != *want {
                return Err(format!(
                    "title: {:?}, not {want:?}, in {}",
                    title,
                    short(&input.text())
                ));
            }
        }
        Ok(())
    }
}
