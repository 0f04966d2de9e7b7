//! The pages kept beside plans (`pages/`) in folders a cloned repository or someone else may
//! have written: links in an earlier batch's `pages/` are not copied by `batch --previous`,
//! a `pages` that is a symbolic link is neither read nor written by a workflow, and a
//! question may not take the name `pages`, whose changes file is the batch's.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::MockLlm;
use crate::support::reading::Reading;
use crate::support::scenario::{Setup, stateless};
use crate::support::web_docs::{QEMU_NBD, doc};

/// The name a page of `url` is kept under: the SHA-256 of the URL, in hex.
fn kept_name(url: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}.json", Sha256::digest(url.as_bytes()))
}

/// A page as the cache keeps it, holding `text`.
fn kept_entry(url: &str, text: &str) -> String {
    json!({
        "url": url,
        "at": "2026-01-01T00:00:00.000Z",
        "page": {"url": url, "kind": "text", "title": null, "text": text, "cut": null,
                 "bytes": text.len()}
    })
    .to_string()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
}

/// Issue 56: `batch --previous OLD` copied what links in `OLD/pages` led to (`a.json ->
/// ~/creds.json`, `s.json -> /etc/shadow`) into the new batch, mode 0644. Now only the
/// regular files of one name that hold the page their name says are copied, with the mode
/// of any file the batch writes; each link and hard link is named in a warning.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previous_copies_no_link_of_the_earlier_pages() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("questions.txt"), "Why?\n").expect("questions");
    let (old, home) = (s.path().join("last-week/pages"), s.path().join("home"));
    std::fs::create_dir_all(&old).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    let page = |name: &str| format!("http://site.test/{name}");
    std::fs::write(
        old.join(kept_name(&page("kept"))),
        kept_entry(&page("kept"), "Kept."),
    )
    .expect("kept");
    let creds = home.join("creds.json");
    std::fs::write(&creds, kept_entry(&page("creds"), "CREDS-SECRET")).expect("creds");
    let shadow = home.join("shadow");
    std::fs::write(&shadow, "root:SHADOW-SECRET:19000::::::\n").expect("shadow");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shadow, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    std::os::unix::fs::symlink(&creds, old.join(kept_name(&page("creds")))).expect("link");
    std::os::unix::fs::symlink(&creds, old.join("a.json")).expect("link");
    std::os::unix::fs::symlink(&shadow, old.join("s.json")).expect("link");
    let other = home.join("other.json");
    std::fs::write(&other, kept_entry(&page("other"), "HARD-SECRET")).expect("other");
    std::fs::hard_link(&other, old.join(kept_name(&page("other")))).expect("hard link");

    let out = s
        .cmd()
        .args([
            "batch",
            "questions.txt",
            "--out-dir",
            "out",
            "--previous",
            "last-week",
        ])
        .umask(0o022)
        .run()
        .await;
    out.success();
    let copied: Vec<String> = std::fs::read_dir(s.path().join("out/pages"))
        .expect("out/pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(copied, [kept_name(&page("kept"))], "only the regular page");
    let kept = s.path().join("out/pages").join(&copied[0]);
    assert!(!kept.is_symlink());
    assert_eq!(
        mode(&kept),
        mode(&s.path().join("out/batch.json")),
        "as any file"
    );
    assert_eq!(mode(&kept), 0o644);
    let written = crate::watch::all_text(&s.path().join("out"));
    for secret in ["CREDS-SECRET", "SHADOW-SECRET", "HARD-SECRET"] {
        assert!(!written.contains(secret), "`{secret}` copied");
    }
    assert_eq!(mode(&shadow), 0o600, "left as it was");
    out.stderr_contains("a.json")
        .stderr_contains("s.json")
        .stderr_contains("symbolic link")
        .stderr_contains("hard links");
}

/// Issue 56: a workflow read and wrote its kept pages through `runs/pages`, a symbolic link
/// out of the folder: a page kept there (`POISONED`) was served as the page, and every page
/// read was written there. Now the link is neither read nor written: the pages come from
/// the web, nothing lands where it leads, and a warning names it.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_folder_that_is_a_link_is_neither_read_nor_written() {
    let r = Reading::start().await;
    let s = &r.s;
    let query = |out: &str| {
        s.cmd().args([
            "workflow",
            "--query",
            "What limits a qemu-nbd client?",
            "--out",
            out,
        ])
    };
    query("first/plan.json").run().await.success();
    // A page kept elsewhere, whose validators are the page's own: served on a 304.
    let url = r.site.doc_url(QEMU_NBD);
    let mut entry: Value = serde_json::from_str(
        &std::fs::read_to_string(s.path().join("first/pages").join(kept_name(&url)))
            .expect("kept page"),
    )
    .expect("an entry");
    entry["page"]["text"] = json!("POISONED-CACHE says nothing of handshakes.");
    let elsewhere = s.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::write(elsewhere.join(kept_name(&url)), entry.to_string()).expect("poison");
    let before = std::fs::read(elsewhere.join(kept_name(&url))).expect("read");
    std::fs::create_dir_all(s.path().join("second")).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, s.path().join("second/pages")).expect("link");
    let asked_before = r.llm.requests().len();

    let out = query("second/plan.json").run().await;
    out.success();
    let asked: Vec<String> = r.llm.requests()[asked_before..]
        .iter()
        .map(|q| q.raw_body.clone())
        .collect();
    assert!(
        !asked.concat().contains("POISONED"),
        "the kept page was not read"
    );
    assert_eq!(r.site.not_modified(&doc(QEMU_NBD).path()), 0, "asked whole");
    let names: Vec<_> = std::fs::read_dir(&elsewhere)
        .expect("elsewhere")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "nothing written through the link: {names:?}"
    );
    assert_eq!(
        std::fs::read(elsewhere.join(kept_name(&url))).expect("read"),
        before
    );
    out.stderr_contains("second/pages")
        .stderr_contains("symbolic link");
}

/// Issue 56: a question with id `pages` lost its changes file to the batch's
/// `pages.changes.md` (and `index.html` linked it there). The name is refused like the
/// folder's other own names, before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_named_pages_is_refused_before_it_could_lose_its_changes_file() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    let line = "Why?\n{\"id\": \"Pages\", \"query\": \"What changed?\"}\n";
    std::fs::write(s.path().join("questions.txt"), line).expect("write");
    std::fs::create_dir_all(s.path().join("last-week")).expect("mkdir");
    let out = s
        .cmd()
        .args([
            "batch",
            "questions.txt",
            "--out-dir",
            "out",
            "--previous",
            "last-week",
        ])
        .run()
        .await;
    out.code(2)
        .stderr_contains("line 2")
        .stderr_contains("`pages`")
        .stderr_contains("pages.changes.md")
        .stderr_contains("give the question another id");
    assert!(llm.requests().is_empty(), "no question ran");
    assert!(!s.path().join("out/batch.json").exists(), "no manifest");
}
