//! What a node drew on and what was checked of it: its sources (with what the search returned
//! of each), the claims of its summary that cite them, and what is wrong with its output.

use serde::{Deserialize, Serialize};

use crate::in_corpus::InCorpus;

/// A search result a node drew on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Source {
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// What the search returned of it (its snippet, or the passage of a local document): the
    /// text a claim citing it is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// A document of the local corpus: its path inside the corpus and the hash of its text,
    /// which name it wherever the corpus is mounted (`diff` compares sources by them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_corpus: Option<InCorpus>,
    /// The passages of the page the task's analysis was given (when the page was read): with
    /// the snippet, what a claim citing it is checked against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<String>,
}

impl Source {
    /// A source known by its address and title alone: no snippet, passages or place.
    pub fn new(url: impl Into<String>, title: impl Into<String>) -> Source {
        Source {
            url: url.into(),
            title: title.into(),
            ..Source::default()
        }
    }
}

/// A sentence that cites sources, and whether they support it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Claim {
    pub sentence: String,
    /// The numbers it cites (`[n]`, 1-based into the node's sources).
    pub cites: Vec<usize>,
    pub supported: bool,
    /// The share of its content words its sources hold (1.0 for a quote).
    pub score: f64,
    /// What judged it: `lexical` (content words), `verifier` (a model), `quote` (quoted word
    /// for word from the source).
    pub by: String,
}

/// Something wrong with a node's output that a repair did not mend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QualityFinding {
    pub code: String,
    pub message: String,
}

impl QualityFinding {
    /// The codes of `findings`, joined with `, ` (for a log line or a run's reason).
    pub fn codes(findings: &[QualityFinding]) -> String {
        let codes: Vec<&str> = findings.iter().map(|f| f.code.as_str()).collect();
        codes.join(", ")
    }
}
