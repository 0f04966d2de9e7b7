//! A question set for `researchflow eval`: one JSON object per line, `{"id", "question",
//! "answers": [...], "evidence": [...]}` (blank lines and `#` comments skipped). `answers` are
//! short gold answers a correct report contains; `evidence`, the corpus file names or URLs a
//! good report cites. An evidence item may be a list of alternatives (`["a.md", "b.md"]`:
//! documents that state the same fact, either of which is the evidence). A question with no
//! answer in the corpus has both empty: its right report says it found none. A question may
//! be marked `"trap": true`, with the wrong answers it tempts (`"decoys"`: a neighbouring
//! figure for another subject, or for an unanswerable question the nearby figure an engine
//! might give), so that figures can be shown with and without the traps.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One question of the set, with its gold answers and evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gold {
    pub id: String,
    pub question: String,
    #[serde(default)]
    pub answers: Vec<String>,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// A question built to tempt a wrong answer.
    #[serde(default)]
    pub trap: bool,
    /// The wrong answers it tempts (only `scripts/check-eval-set.py` reads them).
    #[serde(default)]
    pub decoys: Vec<String>,
    /// Its line in the set's file (1-based), for messages.
    #[serde(skip)]
    pub line: usize,
}

/// One piece of gold evidence: a corpus file name or URL, or alternatives that state the
/// same fact (citing any one of them cites it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Evidence {
    One(String),
    AnyOf(Vec<String>),
}

impl Evidence {
    /// The file names or URLs that count as this evidence.
    pub fn alternatives(&self) -> &[String] {
        match self {
            Evidence::One(one) => std::slice::from_ref(one),
            Evidence::AnyOf(any) => any,
        }
    }
}

impl Gold {
    /// Whether the corpus holds no answer to it.
    pub fn unanswerable(&self) -> bool {
        self.answers.is_empty()
    }
}

/// Why a set cannot be used; each message names the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error("cannot read the question set `{path}`: {message}")]
    Read { path: String, message: String },
    #[error("`{path}` line {line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
    #[error(
        "`{0}` holds no question: one JSON object per line, {{\"id\", \"question\", \"answers\", \"evidence\"}}"
    )]
    Empty(String),
}

/// The largest set read.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Reads the set at `path`.
pub fn read(path: &Path) -> Result<Vec<Gold>, SetError> {
    let shown = path.display().to_string();
    let text = crate::files::read_bounded(path, MAX_BYTES).map_err(|e| SetError::Read {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    parse(&shown, &text)
}

/// Parses the text of a set; `shown` names it in errors.
pub fn parse(shown: &str, text: &str) -> Result<Vec<Gold>, SetError> {
    let mut out: Vec<Gold> = Vec::new();
    let mut ids = HashSet::new();
    for (number, line) in crate::text::content_lines(text) {
        let err = |message: String| SetError::Line {
            path: shown.to_string(),
            line: number,
            message,
        };
        let mut json = serde_json::Deserializer::from_str(line);
        let mut gold: Gold = serde_path_to_error::deserialize(&mut json).map_err(|e| {
            let field = match e.path().to_string() {
                top if top == "." => String::new(),
                field => format!("field `{field}`: "),
            };
            err(format!(
                "{field}{}; each line is one JSON object, {{\"id\": \"...\", \"question\": \"...\", \"answers\": [\"...\"], \"evidence\": [\"file name or URL\", [\"or one\", \"of these\"]]}}",
                e.into_inner()
            ))
        })?;
        if gold.id.trim().is_empty() || gold.question.trim().is_empty() {
            return Err(err("`id` and `question` must not be empty".into()));
        }
        if gold.answers.iter().any(|a| a.trim().is_empty()) {
            return Err(err(
                "an answer is empty: give short gold answers, or none".into()
            ));
        }
        let alternatives = gold.evidence.iter().map(Evidence::alternatives);
        if alternatives
            .clone()
            .any(|a| a.is_empty() || a.iter().any(|e| e.trim().is_empty()))
        {
            return Err(err(
                "an `evidence` item is empty: give a file name or URL, or a list of them".into(),
            ));
        }
        if !ids.insert(gold.id.clone()) {
            return Err(err(format!(
                "the id `{}` is taken by an earlier line",
                gold.id
            )));
        }
        gold.line = number;
        out.push(gold);
    }
    if out.is_empty() {
        return Err(SetError::Empty(shown.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_and_bad_ones_named() {
        let set = parse(
            "s.jsonl",
            "# a set\n{\"id\": \"a\", \"question\": \"Q?\", \"answers\": [\"x\"], \"evidence\": [\"f.md\", [\"g.md\", \"h.md\"]]}\n\n{\"id\": \"b\", \"question\": \"None?\", \"trap\": true, \"decoys\": [\"y\"]}\n",
        )
        .expect("valid");
        assert_eq!(set.len(), 2);
        assert_eq!(set[0].evidence[1].alternatives(), ["g.md", "h.md"]);
        for bad in ["[[]]", "[\"\"]", "[[\"g.md\", \" \"]]", "[{\"f\": 1}]"] {
            let line = format!("{{\"id\": \"a\", \"question\": \"Q?\", \"evidence\": {bad}}}\n");
            let err = parse("s.jsonl", &line).expect_err(bad);
            assert!(err.to_string().contains("evidence"), "{bad}: {err}");
        }
        assert!(set[1].unanswerable() && set[1].evidence.is_empty());
        assert!(set[1].trap && !set[0].trap && set[1].decoys == ["y"]);
        let err = parse(
            "s.jsonl",
            "{\"id\": \"a\", \"question\": \"Q?\", \"gold\": 1}\n",
        )
        .expect_err("unknown key");
        assert!(err.to_string().starts_with("`s.jsonl` line 1: "), "{err}");
        let err = parse(
            "s.jsonl",
            "\n{\"id\": \"a\", \"question\": \"Q?\", \"answers\": \"x\"}\n",
        )
        .expect_err("answers not a list");
        assert!(
            err.to_string()
                .starts_with("`s.jsonl` line 2: field `answers`: invalid type"),
            "{err}"
        );
        let twice = "{\"id\": \"a\", \"question\": \"Q?\"}\n{\"id\": \"a\", \"question\": \"R?\"}";
        assert!(
            parse("s", twice)
                .expect_err("twice")
                .to_string()
                .contains("line 2")
        );
        assert!(matches!(parse("s", "# only\n"), Err(SetError::Empty(_))));
    }
}
