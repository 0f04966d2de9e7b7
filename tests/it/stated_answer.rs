//! The offline answer states only what a sentence states (issue 57): the figure of the asked
//! subject (not a neighbour's, not of another kind, not of another clause), a time for `When`,
//! a name for `Who`, one of the offered options, the default when the default is asked;
//! otherwise it says that no sentence of the
//! sources states it, lists the closest passages, cited, and the run records `answered: false`.
//! Through the binary, over a small corpus written here (not the one the engine was tuned on).

use std::path::Path;

use serde_json::Value;

use crate::support::researchflow;

/// Documents about kinds of batteries, each sentence written to tempt a careless reader.
const CORPUS: &[(&str, &str)] = &[
    (
        "sodium-ion.md",
        "# Sodium-ion cells\n\nSodium-ion cells are cheaper than lithium cells. \
         Their cycle life is about 3000 cycles. \
         At minus 20 degrees they keep about 90 percent of their capacity.\n",
    ),
    (
        "nmc.md",
        "# NMC cells\n\nNMC cells store about 250 Wh/kg, while LFP cells store about \
         160 Wh/kg. NMC cells last about 1500 cycles.\n",
    ),
    (
        "metals.md",
        "# Metal prices\n\nThe price of lithium carbonate rose above 70,000 US dollars per \
         tonne in 2022. Nickel is mined mostly in Indonesia.\n\n\
         The first grid battery of the utility opened in March 2011.\n",
    ),
    (
        "relations.md",
        "# Package relations\n\nA Conflicts field imposes a stronger restriction than a \
         Breaks field. The tool reads both fields when it installs a package.\n",
    ),
    (
        "timeouts.md",
        "# Timeouts\n\nThe connection timeout can be raised to 300 seconds for slow links.\n",
    ),
];

fn corpus(dir: &Path) -> std::path::PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus dir");
    for (name, text) in CORPUS {
        std::fs::write(corpus.join(name), text).expect("write document");
    }
    corpus
}

/// Runs `question` offline over the corpus in `dir`; gives what stdout printed and the
/// report's Answer section.
async fn ask(dir: &Path, question: &str, out: &str) -> (Value, String) {
    let run = researchflow()
        .current_dir(dir)
        .args(["workflow", "--offline", "--json", "--corpus"])
        .arg(dir.join("corpus"))
        .arg("--index-dir")
        .arg(dir.join("index"))
        .args(["--query", question, "--out", out])
        .run()
        .await;
    run.success();
    let report =
        std::fs::read_to_string(dir.join(out.replace(".json", ".report.md"))).expect("the report");
    let answer = report
        .split("## Answer\n\n")
        .nth(1)
        .and_then(|a| a.split("\n## ").next())
        .expect("an Answer section")
        .to_string();
    (run.stdout_json(), answer)
}

/// The answer's first line: what a reader takes as the answer.
fn lead(answer: &str) -> &str {
    answer.lines().next().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stated_answer_is_the_asked_subjects_figure_of_the_asked_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    corpus(dir.path());
    // The subject: sodium-ion's cycle life, not NMC's (which names cycles with more words).
    let (out, answer) = ask(
        dir.path(),
        "How many cycles do sodium-ion cells last?",
        "a.json",
    )
    .await;
    assert_eq!(out["answered"], true, "{answer}");
    assert!(lead(&answer).contains("3000 cycles"), "{answer}");
    // The clause: LFP's figure is in NMC's sentence, after `while`.
    let (_, answer) = ask(
        dir.path(),
        "What energy density do LFP cells reach?",
        "b.json",
    )
    .await;
    assert!(lead(&answer).contains("160 Wh/kg"), "{answer}");
    let (_, answer) = ask(
        dir.path(),
        "What energy density do NMC cells reach?",
        "c.json",
    )
    .await;
    assert!(lead(&answer).contains("250 Wh/kg"), "{answer}");
    // The form: a time for `When`, a name for `Which country`, an option for a choice.
    let (_, answer) = ask(
        dir.path(),
        "When did the utility's first grid battery open?",
        "d.json",
    )
    .await;
    assert!(lead(&answer).contains("2011"), "{answer}");
    let (_, answer) = ask(dir.path(), "Which country mines most nickel?", "e.json").await;
    assert!(lead(&answer).contains("Indonesia"), "{answer}");
    let (_, answer) = ask(
        dir.path(),
        "Which field imposes the stronger restriction, Breaks or Conflicts?",
        "f.json",
    )
    .await;
    assert!(lead(&answer).contains("Conflicts"), "{answer}");
    assert!(!lead(&answer).starts_with("tool"), "{answer}");
}

/// A figure of another subject or of another kind is no answer: the section says so plainly,
/// then quotes the closest passages with their citations, and the run is not answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_no_sentence_states_is_said_to_be_unstated_with_the_closest_passages() {
    let dir = tempfile::tempdir().expect("tempdir");
    corpus(dir.path());
    for (question, out) in [
        ("What is the price of cobalt per tonne?", "cobalt.json"),
        // A percentage of capacity is no energy density.
        (
            "What energy density do sodium-ion cells reach?",
            "density.json",
        ),
        // A value it may be raised to is not its default.
        ("What is the default connection timeout?", "default.json"),
    ] {
        let (printed, answer) = ask(dir.path(), question, out).await;
        assert_eq!(printed["answered"], false, "{question}: {answer}");
        assert!(
            lead(&answer).starts_with("No sentence of the sources states"),
            "{question}: {answer}"
        );
        assert!(answer.contains("Closest passages:"), "{answer}");
        assert!(
            answer.contains("[1]"),
            "the closest passages are cited: {answer}"
        );
        let plan: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(out)).expect("the plan"))
                .expect("JSON");
        assert_eq!(plan["outcome"]["answered"], false, "{question}");
    }
}
