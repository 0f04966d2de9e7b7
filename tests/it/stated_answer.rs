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

/// Documents for the forms that ask more than a figure: a cause, yes or no of a subject, a
/// figure that is part of a command.
const FORMS: &[(&str, &str)] = &[
    (
        "lesser.md",
        "# The Lesser licence\n\nThe library licence is a licence for libraries. \
         We call this licence the Lesser licence because it does less to protect the \
         user's freedom than the ordinary licence.\n",
    ),
    (
        "naming.md",
        "# Version numbers\n\nThe second library licence carries the number 2 and was \
         published by the foundation in 1991.\n",
    ),
    (
        "artistic.md",
        "# Artistic licence\n\nA distributor under the Artistic licence may not charge a fee \
         for the software itself.\n",
    ),
    (
        "general.md",
        "# General licence\n\nYou may charge any price for each copy you sell, and you may \
         sell support for a fee.\n",
    ),
    (
        "manuals.txt",
        "Manual pages\n============\n\nManual pages should be installed compressed using \
         ``gzip -9`` on every system.\n",
    ),
    (
        "ageing.md",
        "# Ageing\n\nA common rule of thumb says that the rate of ageing roughly doubles for \
         every 10 degrees above 25 degrees.\n",
    ),
];

/// `Why` is answered by a sentence that gives a cause, or not at all; a question asking yes
/// or no has a subject (the Artistic licence) the answer must be about; a `how` inside a
/// question asks nothing of its own; a figure written in code leads as that code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn causes_subjects_of_yes_or_no_and_figures_in_code_are_read_as_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus dir");
    for (name, text) in FORMS {
        std::fs::write(corpus.join(name), text).expect("write document");
    }
    let (out, answer) = ask(
        dir.path(),
        "Why is the library licence called the Lesser licence?",
        "a.json",
    )
    .await;
    assert_eq!(out["answered"], true, "{answer}");
    assert!(lead(&answer).contains("because"), "{answer}");
    // Its words and its figure, but no cause: not stated.
    let (out, answer) = ask(
        dir.path(),
        "Why does the second library licence carry the number 2?",
        "b.json",
    )
    .await;
    assert_eq!(out["answered"], false, "{answer}");
    assert!(
        lead(&answer).starts_with("No sentence of the sources states"),
        "{answer}"
    );
    // Yes or no of the Artistic licence: the General licence's sentence shares more of the
    // question's words, and is not about it.
    let (_, answer) = ask(
        dir.path(),
        "Is a distributor under the Artistic licence allowed to charge any price for each copy \
         of the software itself?",
        "c.json",
    )
    .await;
    assert!(!lead(&answer).contains("any price"), "{answer}");
    // `how fast` inside `what rule`: the rule is the answer, not a figure cut from it.
    let (_, answer) = ask(
        dir.path(),
        "What rule of thumb links temperatures above 25 degrees to how fast a cell ages?",
        "d.json",
    )
    .await;
    assert!(lead(&answer).contains("roughly doubles"), "{answer}");
    let (_, answer) = ask(
        dir.path(),
        "How hard should manual pages be compressed?",
        "e.json",
    )
    .await;
    assert!(lead(&answer).starts_with("gzip -9 [1]"), "{answer}");
}

/// Debian's manuals in small: every document writes `Debian`; one sentence names a marker, one
/// a symbol.
const NAMES: &[(&str, &str)] = &[
    (
        "versions.md",
        "# Versions\n\nDebian maintainers choose the version string of every upload to Debian. \
         A reverted upload puts the ``+really`` marker into its version string, as in \
         ``2.3+really2.2-1``.\n",
    ),
    (
        "maintainers.md",
        "# Maintainers\n\nThe maintainer of a Debian package uploads new versions of the \
         package to Debian.\n",
    ),
    (
        "relations.md",
        "# Relations\n\nA Debian package may list alternatives: any one of several packages \
         will do when their names are separated by ``|`` symbols.\n",
    ),
];

/// A name answers only from a sentence that says what it names, and never as the name every
/// document writes; a question in parts is answered only when each part is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_answer_only_what_they_name_and_half_an_answer_is_not_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus dir");
    for (name, text) in NAMES {
        std::fs::write(corpus.join(name), text).expect("write document");
    }
    let (out, answer) = ask(
        dir.path(),
        "What marker goes into the version string of a reverted upload?",
        "a.json",
    )
    .await;
    assert_eq!(out["answered"], true, "{answer}");
    assert!(lead(&answer).contains("+really"), "{answer}");
    // The maintainers' sentence holds the question's words and a name, `Debian`, which every
    // document writes and which is no marker.
    let (out, answer) = ask(
        dir.path(),
        "What marker does the maintainer of a package put on new versions?",
        "b.json",
    )
    .await;
    assert_eq!(out["answered"], false, "{answer}");
    assert!(!lead(&answer).starts_with("Debian"), "{answer}");
    let (out, answer) = ask(
        dir.path(),
        "Which symbol separates the names of alternative packages, and who reviews the \
         uploads of new versions?",
        "c.json",
    )
    .await;
    assert_eq!(out["answered"], false, "{answer}");
    assert!(
        lead(&answer).starts_with("No sentence of the sources states an answer to every part"),
        "{answer}"
    );
}

/// A reference's list of command-line options, as DocBook writes Valgrind's manual: each
/// option's term gives its default (`[default: summary]`), its definition follows.
const OPTIONS_HTML: &str = r#"<html><head><title>Memory checker options</title></head><body>
<h2>Command-line options</h2>
<dl class="variablelist">
<dt><span class="term"><code class="option">--leak-check=&lt;no|summary|yes|full&gt; [default: summary] </code></span></dt>
<dd><p>When enabled, search for memory leaks when the client program finishes. If set to full,
each individual leak will be shown in detail.</p></dd>
<dt><span class="term"><code class="option">--leak-resolution=&lt;low|med|high&gt; [default: high] </code></span></dt>
<dd><p>When doing leak checking, determines how willing the checker is to consider different
backtraces to be the same for the purposes of merging multiple leaks.</p></dd>
<dt><span class="term"><code class="option">--num-callers=&lt;number&gt; [default: 12] </code></span></dt>
<dd><p>Specifies the maximum number of entries shown in stack traces that identify program
locations.</p></dd>
</dl>
<p>The default setting, --expensive-checks=auto, is strongly recommended for most programs.</p>
</body></html>"#;

/// The default an option's term gives is the answer to a question on that option's default,
/// led by the value; another option's default, or a sentence that only says `default`, is
/// not: a question on an option the list does not give a default for is not answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_an_options_term_gives_answers_a_question_on_that_option() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus dir");
    std::fs::write(corpus.join("options.html"), OPTIONS_HTML).expect("document");
    for (question, value, out) in [
        (
            "What is the checker's default setting for --leak-check?",
            "summary [1]",
            "a.json",
        ),
        (
            "What is the default of --leak-resolution?",
            "high [1]",
            "b.json",
        ),
        (
            "By default, how many entries does a stack trace show (--num-callers)?",
            "12 [1]",
            "c.json",
        ),
    ] {
        let (out, answer) = ask(dir.path(), question, out).await;
        assert_eq!(out["answered"], true, "{question}: {answer}");
        assert_eq!(lead(&answer), value, "{question}: {answer}");
    }
    let (out, answer) = ask(dir.path(), "What is the default of --track-fds?", "d.json").await;
    assert_eq!(out["answered"], false, "{answer}");
    assert!(!answer.contains("[default:"), "{answer}");
}

/// A configuration file's man page, as pam and shadow write theirs: each setting a tag
/// (`.TP`), its definition under it, its default in a short sentence of its own.
const SETTINGS_MAN: &str = r#".TH LOCKOUT.CONF 5 "2024" "lockout" "File Formats"
.SH NAME
lockout.conf \- pam_lockout configuration file
.SH OPTIONS
.TP
.I dir=/path/to/tally-directory
The directory where the user files with the failure records are kept. The default is
/var/run/lockout.
.TP
.I unlock_time=n
The access will be re-enabled after n seconds after the lock out. The default is 600.
.TP
.I fail_interval=n
The length of the interval during which the failures must happen is n seconds. The default
is 900.
.TP
.I even_deny_root
Root account can become locked as well as regular accounts of the system.
.TP
.I admin_group=name
Members of the named group will be handled the same as the root account of the system.
"#;

/// A man page's settings answer as their definitions say: a default from the sentence under
/// the setting's tag (not a neighbour's), a directory as a path, the name of the setting
/// that does something as its tag; a setting the page gives no default for is not answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_man_pages_settings_are_answered_by_their_definitions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus dir");
    std::fs::write(corpus.join("lockout.conf.5"), SETTINGS_MAN).expect("document");
    for (question, value, out) in [
        (
            "After how many seconds is a locked account re-enabled by default (unlock_time)?",
            "600 [1]",
            "a.json",
        ),
        (
            "In which directory does pam_lockout keep the failure records by default?",
            "/var/run/lockout [1]",
            "b.json",
        ),
        (
            "Which option lets the root account be locked as well as regular accounts?",
            "even_deny_root [1]",
            "c.json",
        ),
    ] {
        let (out, answer) = ask(dir.path(), question, out).await;
        assert_eq!(out["answered"], true, "{question}: {answer}");
        assert_eq!(lead(&answer), value, "{question}: {answer}");
    }
    let (out, answer) = ask(
        dir.path(),
        "What is the default value of admin_group in lockout.conf?",
        "d.json",
    )
    .await;
    assert_eq!(out["answered"], false, "{answer}");
}
