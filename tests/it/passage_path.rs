//! One passage path for every source: a local document's text goes the way a web page's
//! does. It is cut into passages, ranked against the task's queries and question, and the
//! best ones (several per document, within `search.read.passageChars`) are what the analysis
//! is shown, what the plan's source keeps, and what a claim citing it is checked against.
//! Before, a local result was one passage of 200-600 characters around its best sentence.
//! The MCP side of the same path is in `mcp_search.rs`.

use serde_json::{Value, json};

use crate::support::scenario::{
    Agent, Setup, agent, final_over, node, requests_of, searches_round,
};
use crate::support::{MockLlm, Reply};

/// Two facts far apart in one document: no single passage of 600 characters holds both.
const RANGE_FACT: &str = "The spring range at the harbour mouth reaches 7.4 metres, the largest \
                          on the whole coast.";
const SURGE_FACT: &str = "A storm surge in 1953 raised the water 2.1 metres above the predicted \
                          tide and flooded the lower town.";

/// A long document about the bay's tides, its two facts separated by paragraphs of other
/// matter.
fn tides_document() -> String {
    let filler = |topic: &str| {
        format!(
            "The harbour office keeps records of {topic} going back two centuries. Its clerks \
             wrote down each observation by hand, in ledgers that are now kept in the town \
             archive, and the ledgers were copied twice when the archive moved. Visitors may \
             read them on weekdays, by appointment, in the reading room on the second floor."
        )
    };
    let mut text = String::from("# Tides of the northern bay\n\n");
    text.push_str(&format!("{RANGE_FACT} {}\n\n", filler("shipping")));
    for topic in ["fishing", "weather", "dredging", "lighthouses", "ferries"] {
        text.push_str(&filler(topic));
        text.push_str("\n\n");
    }
    text.push_str(&format!("{} {SURGE_FACT}\n", filler("floods")));
    text
}

/// A model that plans one search task whose queries name both facts, then the final report;
/// its analysis says `summary`.
fn one_task(llm: &MockLlm, summary: &'static str) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("### b:") => {
            Reply::json(&final_over("b:summary"))
        }
        Agent::Planner => Reply::json(&searches_round(&["Tides of the northern bay"])),
        Agent::Queries => Reply::json(&json!({"queries": [
            "spring tidal range harbour mouth",
            "storm surge flood water above predicted tide"
        ]})),
        Agent::Analysis => Reply::json(&json!({"summary": summary, "analysis": summary})),
        Agent::Final => Reply::content(summary),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
}

/// A run with the model over a corpus of the one document.
fn over_corpus(llm: &MockLlm, read: Value) -> Setup {
    let s = Setup::with_config(llm, None, json!({}));
    let corpus = s.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus");
    std::fs::write(corpus.join("tides.md"), tides_document()).expect("document");
    let config = json!({"search": {
        "provider": "local",
        "corpus": corpus,
        "indexDir": s.path().join("index"),
        "read": read
    }});
    let path = s.path().join("agent.config.json");
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("config")).expect("json");
    file["search"] = config["search"].clone();
    std::fs::write(&path, file.to_string()).expect("config");
    s
}

#[tokio::test]
async fn a_local_document_is_shown_by_its_best_passages_and_claims_are_checked_on_them() {
    let llm = MockLlm::start().await;
    one_task(
        &llm,
        "In 1953 a storm surge raised the water 2.1 metres above the predicted tide [1].",
    );
    let s = over_corpus(&llm, json!({}));
    s.query("How high do the tides of the northern bay rise?")
        .run()
        .await
        .success();

    let asked = requests_of(&llm, Agent::Analysis);
    let prompt = asked[0].user_prompt().unwrap_or_default();
    assert!(prompt.contains("passages of the page:"), "{prompt}");
    for fact in [RANGE_FACT, SURGE_FACT] {
        assert!(
            prompt.contains(fact),
            "the analysis is shown `{fact}`: {prompt}"
        );
    }

    let plan = s.plan();
    let b = node(&plan, "b");
    let source = &b["sources"][0];
    assert!(
        source["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("tides.md")),
        "{source}"
    );
    let passages: Vec<&str> = source["passages"]
        .as_array()
        .expect("the source keeps its passages")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(passages.len() >= 2, "{passages:?}");
    assert!(
        passages.iter().any(|p| p.contains(SURGE_FACT)),
        "{passages:?}"
    );
    // The claim's words are in the surge passage, not near the document's best sentence for
    // the first query.
    assert_eq!(b["claims"][0]["supported"], true, "{b:#}");
}

/// The passages of a task are within `search.read.passageChars` in all, whatever the source:
/// with room for one passage, the document gives one.
#[tokio::test]
async fn a_small_passage_budget_keeps_a_local_document_to_what_fits() {
    let llm = MockLlm::start().await;
    one_task(&llm, "The tides rise [1].");
    let s = over_corpus(&llm, json!({"passageChars": 1000}));
    s.query("How high do the tides of the northern bay rise?")
        .run()
        .await
        .success();
    let plan = s.plan();
    let passages = node(&plan, "b")["sources"][0]["passages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(passages.len(), 1, "{passages:?}");
    let chars = passages[0].as_str().map_or(0, |p| p.chars().count());
    assert!(
        (500..=1000).contains(&chars),
        "{chars} characters: {passages:?}"
    );
}
