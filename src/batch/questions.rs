//! The questions file of a batch: one question per line (blank lines and `#` comments
//! skipped), or JSON lines `{"id": ..., "query": ...}` (the id optional), mixed as one likes.
//! Each question gets a stable file name: its id when it has one, else words of its text,
//! with a short hash of the text so that two similar questions never share a name.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::text::stable_hash;

/// Names a question may not take, with the files a batch or watch run folder keeps for itself
/// under them. A question named `batch` would read the manifest as its plan, one named
/// `index` would lose its view to the folder's index, one named `pages` its changes file to
/// the pages' (`pages.changes.md`, which `index.html` would link as its).
const RESERVED_NAMES: [(&str, &str); 4] = [
    ("batch", "`batch.json`, `batch.journal.ndjson`"),
    ("index", "`index.html`"),
    ("watch", "`watch.json`, `watch.events.ndjson`"),
    ("pages", "`pages/`, `pages.changes.md`"),
];

/// One question of the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub id: String,
    pub query: String,
    /// The stem of its plan, report and events files.
    pub name: String,
}

/// Why the questions file cannot be used; each message names the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum QuestionsError {
    #[error("cannot read the questions file `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` line {line}: {message}")]
    Line {
        path: String,
        line: usize,
        message: String,
    },
    #[error("`{path}` holds no question: write one per line, or JSON lines with `id` and `query`")]
    Empty { path: String },
}

/// One JSON line of a questions file.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "researchflow questions file line")]
struct JsonLine {
    /// The question's id, which names its files (a string; another value is written as JSON).
    id: Option<serde_json::Value>,
    /// The question.
    query: String,
}

/// The JSON Schema of one JSON line of a questions file (`researchflow schema questions`).
pub fn json_line_schema() -> schemars::Schema {
    schemars::schema_for!(JsonLine)
}

/// The largest questions file read.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Reads and parses the questions file.
pub fn read(path: &Path) -> Result<Vec<Question>, QuestionsError> {
    let shown = path.display().to_string();
    let text = crate::files::read_bounded(path, MAX_BYTES).map_err(|e| QuestionsError::Read {
        path: shown.clone(),
        source: e.into_io(),
    })?;
    parse(&shown, &text)
}

/// Parses the text of a questions file; `shown` names it in errors. A UTF-8 byte order mark
/// (which Windows editors write) is not part of the first question.
pub fn parse(shown: &str, text: &str) -> Result<Vec<Question>, QuestionsError> {
    let mut entries = Vec::new();
    for (number, line) in crate::text::content_lines(text) {
        if line.starts_with('{') {
            let parsed: JsonLine =
                serde_json::from_str(line).map_err(|e| QuestionsError::Line {
                    path: shown.to_string(),
                    line: number,
                    message: format!("not a `{{\"id\", \"query\"}}` line: {e}"),
                })?;
            let id = parsed.id.map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            });
            entries.push(QuestionLine {
                line: number,
                id,
                query: parsed.query,
            });
        } else {
            entries.push(QuestionLine {
                line: number,
                id: None,
                query: line.to_string(),
            });
        }
    }
    questions(shown, entries)
}

/// One question as read, before it is named: its line in `shown`, its id if it has one.
pub struct QuestionLine {
    pub line: usize,
    pub id: Option<String>,
    pub query: String,
}

/// The questions of `entries`, each named (its id's words, or its text's with a hash); an
/// empty question, or a name taken twice, is refused with its line.
pub fn questions(shown: &str, entries: Vec<QuestionLine>) -> Result<Vec<Question>, QuestionsError> {
    let mut out: Vec<Question> = Vec::new();
    let mut names = HashSet::new();
    for QuestionLine { line, id, query } in entries {
        let err = |message: String| QuestionsError::Line {
            path: shown.to_string(),
            line,
            message,
        };
        let query = crate::text::one_line(&query, 2000);
        if query.is_empty() {
            return Err(err(
                "the question is empty once control characters and white space are removed".into(),
            ));
        }
        let name = match &id {
            Some(id) => slug(id, 60),
            None => format!(
                "{}-{:08x}",
                slug(&query, 40),
                stable_hash(query.as_bytes()) as u32
            ),
        };
        if name.is_empty() {
            return Err(err(
                "the id has no letter or digit to name files after".into()
            ));
        }
        if let Some((_, files)) = RESERVED_NAMES.iter().find(|(n, _)| *n == name) {
            return Err(err(format!(
                "the question's name `{name}` is taken by the folder's own files ({files}): give the question another id"
            )));
        }
        if !names.insert(name.clone()) {
            return Err(err(format!(
                "the question's name `{name}` is taken by an earlier line: give each question its own id"
            )));
        }
        out.push(Question {
            id: id.unwrap_or_else(|| name.clone()),
            query,
            name,
        });
    }
    if out.is_empty() {
        return Err(QuestionsError::Empty {
            path: shown.to_string(),
        });
    }
    Ok(out)
}

/// Lower-case ASCII letters and digits joined by `-`, at most `max` characters: safe as a file
/// name everywhere.
fn slug(text: &str, max: usize) -> String {
    let mut out = String::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let extra = word.len() + usize::from(!out.is_empty());
        if out.len() + extra > max {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_json_lines_mix_and_names_are_stable() {
        let text = "# a comment\n\nHow do solid-state batteries compare?\n\
                    {\"id\": \"Q-7\", \"query\": \"Why do dendrites form?\"}\n\
                    {\"id\": 8, \"query\": \"LFP or NMC?\"}\n";
        let q = parse("q.txt", text).expect("valid");
        assert_eq!(q.len(), 3);
        assert_eq!(q[0].query, "How do solid-state batteries compare?");
        assert!(
            q[0].name
                .starts_with("how-do-solid-state-batteries-compare-")
        );
        assert_eq!(
            q[0].name,
            parse("q.txt", text).expect("again")[0].name,
            "stable"
        );
        assert_eq!((q[1].id.as_str(), q[1].name.as_str()), ("Q-7", "q-7"));
        assert_eq!((q[2].id.as_str(), q[2].name.as_str()), ("8", "8"));
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_question() {
        for text in [
            "Why?\n",
            "{\"id\": \"q1\", \"query\": \"Why?\"}\n",
            "# c\nWhy?\n",
        ] {
            let plain = parse("q.txt", text).expect("valid");
            let marked = parse("q.txt", &format!("\u{feff}{text}")).expect("valid");
            assert_eq!(marked, plain, "{text:?}");
            assert_eq!(marked[0].query, "Why?");
        }
    }

    #[test]
    fn bad_lines_are_named() {
        let err = parse("q.txt", "ok?\n{\"query\": 3}\n").expect_err("bad json");
        assert!(err.to_string().starts_with("`q.txt` line 2:"), "{err}");
        let err = parse(
            "q.txt",
            "{\"id\": \"a\", \"query\": \"x\"}\n{\"id\": \"A\", \"query\": \"y\"}",
        )
        .expect_err("duplicate");
        assert!(
            err.to_string().contains("line 2") && err.to_string().contains("`a`"),
            "{err}"
        );
        assert!(matches!(
            parse("q.txt", "# only\n\n"),
            Err(QuestionsError::Empty { .. })
        ));
        assert!(parse("q.txt", "{\"id\": \"...\", \"query\": \"x\"}").is_err());
        for id in ["batch", "Index", "WATCH", "pages"] {
            let line = format!("Why?\n{{\"id\": \"{id}\", \"query\": \"x\"}}\n");
            let err = parse("q.txt", &line).expect_err("reserved");
            assert!(
                err.to_string().starts_with("`q.txt` line 2:")
                    && err.to_string().contains("give the question another id"),
                "{err}"
            );
        }
        assert!(parse("q.txt", "{\"id\": \"batch-1\", \"query\": \"x\"}").is_ok());
    }
}
