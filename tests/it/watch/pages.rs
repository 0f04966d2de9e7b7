//! `watch` over a question whose search reads web pages: each run starts from the pages the
//! last run kept, so the site is asked only whether each page changed, and the run says
//! which did in `<run>/pages.changes.md`, as `batch --previous` does.

use crate::support::reading::Reading;
use crate::support::web_docs::{DOCS, doc};

/// Issue 56: `watch` never reused the previous run's page cache: every page was fetched
/// whole each night, with no conditional request and no `pages.changes.md`. Now the second
/// run asks each page with its validators (304 for all five), and says none changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_starts_from_the_pages_the_last_run_kept() {
    let r = Reading::start().await;
    let s = &r.s;
    std::fs::write(s.path().join("q.txt"), "What limits a qemu-nbd client?\n").expect("q");
    let watch = || s.cmd().args(["watch", "q.txt", "--dir", "w", "--json"]);
    let first = watch().run().await;
    first.code(0);
    let second = watch().run().await;
    second.code(0);
    let run = s
        .path()
        .join("w")
        .join(second.stdout_json()["run"].as_str().expect("run"));
    for d in DOCS.iter().filter(|d| r.site.requests(&d.path()) > 0) {
        assert_eq!(
            r.site.not_modified(&doc(d.name).path()),
            1,
            "`{}` asked only whether it changed",
            d.name
        );
    }
    let changes = std::fs::read_to_string(run.join("pages.changes.md")).expect("pages.changes.md");
    assert!(
        changes.contains("0 changed, 0 new, 5 unchanged."),
        "{changes}"
    );
    let first_run = first.stdout_json()["run"]
        .as_str()
        .expect("run")
        .to_string();
    assert!(
        changes.contains(&first_run),
        "names the run it held them against: {changes}"
    );
}
