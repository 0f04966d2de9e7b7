//! The default build, without the optional cargo features (`queue`, `mcp`): what
//! `cargo install --locked --path .` makes. Its commands of a missing feature stay in the help
//! and are refused with exit 2, naming the feature and the install line that brings it; a
//! config naming the search provider `mcp` is refused the same way, before anything runs.
//! `scripts/test.sh` runs this module on the default build (`cargo test --test it lean::`)
//! after the whole suite on the full one (where each test here is compiled out: the feature it
//! checks is there).

#[cfg(not(feature = "queue"))]
use crate::support::fixtures::offline;
#[cfg(any(not(feature = "queue"), not(feature = "mcp")))]
use crate::support::{RunOutput, researchflow};

/// The one error line of a refused command names the feature and how to get it.
#[cfg(any(not(feature = "queue"), not(feature = "mcp")))]
fn refused(out: &RunOutput, what: &str, feature: &str) {
    out.code(2)
        .stderr_contains(what)
        .stderr_contains(&format!("needs the `{feature}` feature"))
        .stderr_contains(&format!(
            "cargo install --locked --path . --features {feature}"
        ));
    assert!(out.stdout.trim().is_empty(), "{}", out.stdout);
}

#[cfg(not(feature = "queue"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_commands_name_the_feature_they_need() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("q.txt"), "A question?\n").expect("questions");
    let url = "postgres://rf@127.0.0.1:9/research";
    let cases: [(&[&str], &str); 5] = [
        (
            &["worker", "--queue", url, "--drain"],
            "`researchflow worker`",
        ),
        (
            &["batch", "q.txt", "--queue", url],
            "`researchflow batch --queue`",
        ),
        (
            &["batch", "status", "--queue", url, "--batch", "q"],
            "`researchflow batch status`",
        ),
        (
            &[
                "batch",
                "export",
                "--queue",
                url,
                "--batch",
                "q",
                "--out-dir",
                "x",
            ],
            "`researchflow batch export`",
        ),
        (
            &["queue", "migrate", "--queue", url],
            "`researchflow queue`",
        ),
    ];
    for (args, what) in cases {
        let out = researchflow()
            .current_dir(dir.path())
            .args(args)
            .run()
            .await;
        refused(&out, what, "queue");
    }
    let help = researchflow().arg("--help").run().await;
    help.success().stdout_contains("worker");
    // A batch run here needs no feature.
    offline(dir.path(), &["batch", "q.txt", "--out-dir", "here"])
        .run()
        .await
        .success();
}

#[cfg(not(feature = "mcp"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_server_and_search_provider_name_the_feature_they_need() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = researchflow()
        .current_dir(dir.path())
        .arg("mcp")
        .run()
        .await;
    refused(&out, "`researchflow mcp`", "mcp");
    let help = researchflow().arg("--help").run().await;
    help.success().stdout_contains("mcp");

    std::fs::write(
        dir.path().join("agent.config.json"),
        r#"{"baseURL": "http://127.0.0.1:9/v1", "model": "m",
            "search": {"provider": "mcp", "command": ["search-server"], "tool": "web_search"}}"#,
    )
    .expect("config");
    let out = researchflow()
        .current_dir(dir.path())
        .args(["workflow", "--query", "Q?", "--out", "p.json"])
        .run()
        .await;
    out.code(2)
        .stderr_contains("search.provider")
        .stderr_contains("the search provider `mcp` needs the `mcp` feature");
    assert!(!dir.path().join("p.json").exists(), "nothing ran");
}
