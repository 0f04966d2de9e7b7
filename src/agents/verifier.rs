//! The verifier role (`roles.verifier`, asked only when configured): the cited claims the
//! content-word check left unsupported go to a model, each with what the search returned of
//! the sources it cites, in one call per task, under a contract with repair like the other
//! roles' (`{"verdicts": [{"claim", "supported", "why"}]}`, one verdict per claim). A claim it
//! judges is marked `by: verifier`. A verifier that fails (its call, or its contract after the
//! repairs) changes nothing: the content-word verdicts stand, and the log says why.

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::claims::claim_text;
use crate::diagnostics::Diagnostics;
use crate::llm::checked::{Contract, ask_checked};
use crate::llm::schema::GRAMMAR_MAX_REPEAT;
use crate::llm::{CallObserver, JsonSchema, LlmClient, Message, Want};
use crate::plan::{Claim, Source};
use crate::search::hit::TITLE_MAX_CHARS;
use crate::settings::Prompt;
use crate::text::one_line;
use crate::transcript::Site;
use crate::usage::Usage;

/// Token limit of the verifier's answer, unless the role sets `maxTokens`.
pub const VERIFIER_MAX_TOKENS: u32 = Prompt::Verifier.max_tokens();

/// The most claims one call judges (the first ones of the task, in order).
const MAX_CLAIMS: usize = 20;

/// The most characters of a source's text (its passages, else its snippet) the verifier reads.
const SNIPPET_CHARS: usize = 3_000;

/// What the answer must look like, quoted in a repair.
const SHAPE: &str = r#"{"verdicts": [{"claim": 1, "supported": true, "why": "..."}]}"#;

static SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    let schema = |why: Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["verdicts"],
            "properties": {"verdicts": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["claim", "supported", "why"],
                "properties": {
                    "claim": {"type": "integer"},
                    "supported": {"type": "boolean"},
                    "why": why,
                }
            }}}
        })
    };
    JsonSchema::new("claim_verdicts", schema(json!({"type": "string"}))).with_grammar(schema(
        json!({"type": "string", "minLength": 1, "maxLength": GRAMMAR_MAX_REPEAT.min(300)}),
    ))
});

/// The verifier role's client and prompt.
pub struct Verifier {
    pub llm: LlmClient,
    pub prompt: String,
    pub repair_attempts: u32,
}

impl Verifier {
    /// Judges again the unsupported claims of `claims` (whose numbers point into `sources`);
    /// returns what its calls cost.
    pub async fn judge(
        &self,
        site: &Site,
        claims: &mut [Claim],
        sources: &[Source],
        observer: &dyn CallObserver,
    ) -> Usage {
        let weak: Vec<usize> = (0..claims.len())
            .filter(|&i| !claims[i].supported)
            .take(MAX_CLAIMS)
            .collect();
        if weak.is_empty() {
            return Usage::default();
        }
        let user = question(claims, &weak, sources);
        let messages = vec![Message::system(&self.prompt), Message::user(user)];
        let check = |v: &Value| verdicts(v, weak.len());
        let contract = Contract {
            who: "verifier",
            check: &check,
            shape: SHAPE,
            repair_attempts: self.repair_attempts,
            on_repair: None,
        };
        let asked = ask_checked(messages, &contract, |m| async move {
            self.llm
                .chat(site, &m, Want::Json(&SCHEMA), VERIFIER_MAX_TOKENS, observer)
                .await
        })
        .await;
        match asked {
            Ok(checked) => {
                for (k, supported) in checked.answer.into_iter().enumerate() {
                    let claim = &mut claims[weak[k]];
                    claim.supported = supported;
                    claim.by = "verifier".into();
                }
                checked.usage
            }
            Err(e) => {
                tracing::warn!("the verifier failed; the content-word verdicts stand: {e}");
                Usage::default()
            }
        }
    }
}

/// The claims numbered 1.. as the verifier reads them, each with its sources' text.
fn question(claims: &[Claim], weak: &[usize], sources: &[Source]) -> String {
    let mut text = String::from("Claims to judge:\n");
    for (k, &i) in weak.iter().enumerate() {
        let claim = &claims[i];
        text.push_str(&format!(
            "\nClaim {}: {}\n",
            k + 1,
            claim_text(&claim.sentence)
        ));
        for &n in &claim.cites {
            match n.checked_sub(1).and_then(|at| sources.get(at)) {
                Some(s) => text.push_str(&format!(
                    "  Source [{n}] {}: {}\n",
                    one_line(&s.title, TITLE_MAX_CHARS),
                    one_line(&said(s), SNIPPET_CHARS)
                )),
                None => text.push_str(&format!("  Source [{n}]: (there is no such source)\n")),
            }
        }
    }
    text
}

/// What a source says, as the verifier reads it: the passages of its page the task was given,
/// else its snippet.
fn said(source: &Source) -> String {
    match source.passages.is_empty() {
        true => source.snippet.clone().unwrap_or_else(|| "(no text)".into()),
        false => source.passages.join(" … "),
    }
}

/// The contract: one verdict per claim `1..=count`, each with a reason; the verdicts in
/// claim order.
fn verdicts(value: &Value, count: usize) -> Result<Vec<bool>, Diagnostics> {
    let mut d = Diagnostics::new();
    let mut found: Vec<Option<bool>> = vec![None; count];
    let Some(list) = value.get("verdicts").and_then(Value::as_array) else {
        d.error("MISSING_VERDICTS", "verdicts", "give `verdicts`, a list");
        return Err(d);
    };
    for (i, v) in list.iter().enumerate() {
        let path = format!("verdicts[{i}]");
        let claim = v.get("claim").and_then(Value::as_u64).map(|n| n as usize);
        let supported = v.get("supported").and_then(Value::as_bool);
        let why = v.get("why").and_then(Value::as_str).map(str::trim);
        match (claim, supported) {
            (Some(n), Some(s)) if (1..=count).contains(&n) && found[n - 1].is_none() => {
                found[n - 1] = Some(s);
            }
            (Some(n), Some(_)) => {
                d.error(
                    "BAD_CLAIM",
                    format!("{path}.claim"),
                    format!("claim {n} is not one of 1 to {count}, or is judged twice"),
                );
            }
            _ => {
                d.error(
                    "BAD_VERDICT",
                    &path,
                    "each verdict needs `claim` (a number) and `supported` (true or false)",
                );
            }
        }
        if why.is_none_or(str::is_empty) {
            d.error(
                "MISSING_WHY",
                format!("{path}.why"),
                "say why in one short sentence",
            );
        }
    }
    for (k, f) in found.iter().enumerate() {
        if f.is_none() {
            d.error(
                "MISSING_CLAIM",
                "verdicts",
                format!("claim {} has no verdict", k + 1),
            );
        }
    }
    match d.errors.is_empty() {
        true => Ok(found.into_iter().map(|f| f.unwrap_or(false)).collect()),
        false => Err(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claim_needs_one_verdict_with_a_reason() {
        let good = json!({"verdicts": [
            {"claim": 2, "supported": false, "why": "not said"},
            {"claim": 1, "supported": true, "why": "said"}
        ]});
        assert_eq!(verdicts(&good, 2).expect("valid"), [true, false]);
        let missing = json!({"verdicts": [{"claim": 1, "supported": true, "why": ""}]});
        let codes: Vec<String> = verdicts(&missing, 2)
            .expect_err("broken")
            .errors
            .into_iter()
            .map(|f| f.code)
            .collect();
        assert_eq!(codes, ["MISSING_WHY", "MISSING_CLAIM"]);
        assert!(
            verdicts(
                &json!({"verdicts": [{"claim": 3, "supported": true, "why": "x"}]}),
                1
            )
            .is_err()
        );
    }

    #[test]
    fn the_question_quotes_each_claim_with_its_sources() {
        let claims = [Claim {
            sentence: "Cells last long [1][4].".into(),
            cites: vec![1, 4],
            supported: false,
            score: 0.2,
            by: "lexical".into(),
        }];
        let sources = [Source {
            snippet: Some("LFP cells last 6000 cycles.".into()),
            ..Source::new("https://s.test", "Cell life")
        }];
        let text = question(&claims, &[0], &sources);
        assert!(text.contains("Claim 1: Cells last long."), "{text}");
        assert!(text.contains("Source [1] Cell life: LFP cells last 6000 cycles."));
        assert!(text.contains("Source [4]: (there is no such source)"));
    }
}
