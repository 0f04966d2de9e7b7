//! The planner-answer extraction, `llm::extract_json`: never panics; what it returns is always
//! an object; a JSON object embedded in prose, `<think>` blocks (holding decoy objects) and a
//! Markdown fence is found, and a fenced object wins over a decoy in the prose before it.

use researchflow::llm::extract_json;
use serde_json::Value;

use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

pub struct ExtractTarget {
    seeds: Vec<Vec<u8>>,
}

impl ExtractTarget {
    pub fn new() -> ExtractTarget {
        let mut seeds: Vec<String> = [
            "{\"a\": 1}",
            "<think>maybe {\"a\": 0} is it?</think>\nHere:\n```json\n{\"a\": 2}\n```\nDone.",
            "Sure! {\"t\": \"a } b {\", \"n\": [1, {\"x\": 2}]} hope that helps {",
            "<think>{\"a\":1}",
            "{\"is_final\": false, \"tasks\": [{\"title\": \"T\", \"type\": \"search\", \"p_node\": \"a:info\"}], \"next_check_list\": [\"NEW1:summary\"]}",
        ]
        .map(String::from)
        .to_vec();
        let mut g = Gen::new(4);
        seeds.extend((0..16).map(|_| valid_answer(&mut g).text().into_owned()));
        ExtractTarget {
            seeds: seeds.into_iter().map(String::into_bytes).collect(),
        }
    }
}

/// Prose that holds no `{`, no fence and no tag, so it cannot hold an object of its own.
fn prose(g: &mut Gen) -> String {
    g.text(40)
        .chars()
        .filter(|c| !matches!(c, '{' | '<' | '`'))
        .collect()
}

/// Text for inside a `<think>` block: anything, decoy objects and fences included, except its
/// end tag.
fn thought(g: &mut Gen) -> String {
    let mut t = g.soup(ExtractTarget::TOKENS);
    while let Some(at) = t.to_ascii_lowercase().find("</think>") {
        t.replace_range(at..at + "</think>".len(), "");
    }
    t
}

/// A JSON object in an answer with reasoning, prose and perhaps a fence.
fn valid_answer(g: &mut Gen) -> Input {
    // A fence marker inside one of its strings would end the fence early (a known limit, see
    // tests/it/parser_props.rs `json_object`): such objects are not generated.
    let object = loop {
        let candidate = Value::Object(g.object(2));
        if !candidate.to_string().contains("```") {
            break candidate;
        }
    };
    // Serialising a Value cannot fail.
    let json = if g.rng.bool() {
        serde_json::to_string_pretty(&object).expect("a value serialises")
    } else {
        serde_json::to_string(&object).expect("a value serialises")
    };
    let mut text = prose(g);
    for _ in 0..g.rng.usize(..3) {
        let (open, close) = [("<think>", "</think>"), ("<THINK>", "</Think>")][g.rng.usize(..2)];
        text.push_str(&format!("{open}{}{close}{}", thought(g), prose(g)));
    }
    if g.rng.bool() {
        if g.rng.bool() {
            text.push_str("{\"decoy\": true} ");
        }
        let lang = ["", "json", "JSON", "jsonc"][g.rng.usize(..4)];
        let newline = if g.rng.bool() { "\n" } else { "" };
        text.push_str(&format!("```{lang}{newline}{json}\n```"));
    } else {
        text.push_str(&json);
    }
    text.push_str(&prose(g));
    Input::new(text, Expect::Object(object))
}

impl ExtractTarget {
    const TOKENS: &'static [&'static str] = &[
        "{",
        "}",
        "[",
        "]",
        "\"",
        ":",
        ",",
        "\\",
        "\\\"",
        "<think>",
        "</think>",
        "<THINK>",
        "```",
        "```json\n",
        "\n",
        "{\"a\":1}",
        "{\"tasks\":[]}",
        "{\"decoy\":{}}",
        "null",
        "true",
        "1e999",
        "\"\\ud800\"",
        "é",
    ];
}

impl Target for ExtractTarget {
    fn name(&self) -> &'static str {
        "extract_json"
    }

    fn tokens(&self) -> &'static [&'static str] {
        ExtractTarget::TOKENS
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("{\"a\":", "}"),
            ("[", "]"),
            ("{", "}"),
            ("<think>", "</think>"),
            ("```\n", "\n```"),
        ]
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_answer(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let got = extract_json(&input.text());
        if let Ok(v) = &got
            && !v.is_object()
        {
            return Err(format!("returned a non-object: {}", short(&v.to_string())));
        }
        if let Expect::Object(want) = &input.expect
            && got.as_ref() != Ok(want)
        {
            return Err(format!(
                "the embedded object is not found: {} gave {:?}",
                short(&want.to_string()),
                got.map(|v| short(&v.to_string()))
            ));
        }
        Ok(())
    }
}
