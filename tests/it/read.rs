//! Research that reads: a workflow whose search results point at a loopback site of real pages
//! (`fixtures/web/`, served by `support::web_site`) with useless snippets. The analysis must be
//! sent passages that exist only in the page bodies, the sources keep them, claims are checked
//! against them, robots.txt and the private-address guard keep pages unrequested, slow and huge
//! pages are cut and recorded, and a replay makes no request.

use serde_json::{Value, json};

use crate::support::scenario::{
    Agent, Setup, agent, events_of, final_over, node, read_ndjson, requests_of, searches_round,
};
use crate::support::web_docs::{
    GPL3_TXT, LIBFFI_CLOSURES, MIME_SPEC_PDF, QEMU_NBD, collapse_whitespace, doc,
};
use crate::support::web_site::{MOVED_TO, SECRET_PATH};
use crate::support::{MockLlm, MockSearch, Reply, SearchHit, SearchKind, WebSite};

/// One search task, then the final report. The queries name what the facts say.
fn one_task(llm: &MockLlm, summary: &'static str) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("### b:") => {
            Reply::json(&final_over("b:summary"))
        }
        Agent::Planner => Reply::json(&searches_round(&["Handshake limits and closures"])),
        Agent::Queries => Reply::json(&json!({"queries": [
            "client handshake timeout seconds",
            "closure function deprecated writable executable addresses",
            "text types subclasses of text/plain"
        ]})),
        Agent::Analysis => Reply::json(&json!({"summary": summary, "analysis": summary})),
        Agent::Final => Reply::content(summary),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
}

/// The config of a run reading `site` through `search`.
fn reading(search: &MockSearch, read: Value) -> Value {
    json!({"search": {
        "provider": "searxng",
        "baseURL": search.base_url(),
        "maxResults": 10,
        "read": read
    }})
}

/// The fixture site, a search that finds its five documents with useless snippets, a model
/// that answers one task with `summary`, and a setup that reads pages as `read` says.
struct Fixture {
    site: WebSite,
    search: MockSearch,
    llm: MockLlm,
    s: Setup,
}

async fn fixture(read: Value, summary: &'static str) -> Fixture {
    let site = WebSite::start().await;
    let search = MockSearch::with_results(SearchKind::Searxng, site.search_hits()).await;
    let llm = MockLlm::start().await;
    one_task(&llm, summary);
    let s = Setup::with_config(&llm, Some(&search), reading(&search, read));
    Fixture {
        site,
        search,
        llm,
        s,
    }
}

/// Reading on, the site on loopback allowed.
fn loopback() -> Value {
    json!({"allowPrivate": true, "timeoutMs": 5000})
}

fn hit(site: &WebSite, path: &str, title: &str) -> SearchHit {
    SearchHit {
        title: title.into(),
        url: site.url(path),
        snippet: "Documentation page.".into(),
    }
}

/// The analysis prompt, white space collapsed as the facts are.
fn analysis_prompt(llm: &MockLlm) -> String {
    let asked = requests_of(llm, Agent::Analysis);
    collapse_whitespace(&asked[0].user_prompt().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analysis_is_given_passages_only_the_page_bodies_hold_and_claims_are_checked_on_them() {
    let Fixture {
        site,
        search,
        llm,
        s,
    } = fixture(
        loopback(),
        "A client must complete its handshake within a timeout of 10 seconds by default [1].",
    )
    .await;
    let out = s.query("What limits a qemu-nbd client?").run().await;
    out.success();

    let prompt = analysis_prompt(&llm);
    for name in [QEMU_NBD, LIBFFI_CLOSURES, MIME_SPEC_PDF] {
        let fact = collapse_whitespace(doc(name).fact);
        assert!(prompt.contains(&fact), "`{name}`'s fact: {prompt}");
        assert!(
            !prompt.contains(doc(name).snippet),
            "its snippet stands aside"
        );
    }
    let plan = s.plan();
    let b = node(&plan, "b");
    let first = &b["sources"][0];
    assert_eq!(first["url"], site.doc_url(QEMU_NBD));
    let passages = first["passages"].as_array().cloned().unwrap_or_default();
    assert!(
        passages
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.contains("handshake"))),
        "{first}"
    );
    // The claim's words are in the passages, not in the snippet or the title.
    assert_eq!(b["claims"][0]["supported"], true, "{b}");

    let events = s.events();
    let read = events_of(&events, "page_read");
    assert_eq!(read.len(), 5, "every page read: {read:?}");
    let kind_of = |name: &str| {
        read.iter()
            .find(|e| e["url"] == site.doc_url(name))
            .map(|e| e["kind"].clone())
    };
    assert_eq!(kind_of(QEMU_NBD), Some(json!("html")));
    assert_eq!(kind_of(MIME_SPEC_PDF), Some(json!("pdf")));
    assert_eq!(kind_of(GPL3_TXT), Some(json!("text")));
    assert!(read.iter().all(|e| e["from"] == "web"));
    for name in [QEMU_NBD, LIBFFI_CLOSURES, MIME_SPEC_PDF, GPL3_TXT] {
        assert_eq!(site.requests(&doc(name).path()), 1, "`{name}` read once");
    }
    assert_eq!(site.requests("/robots.txt"), 1, "once per host");
    let agent = site.all_requests()[0]
        .header("user-agent")
        .unwrap_or_default()
        .to_string();
    assert!(agent.starts_with("researchflow/"), "{agent}");
    // The Sphinx page came gzip-compressed (the site sends it so when asked), and was read.
    let asked_gzip = site.all_requests().iter().any(|r| {
        r.path == doc(QEMU_NBD).path()
            && r.header("accept-encoding")
                .is_some_and(|e| e.contains("gzip"))
    });
    assert!(asked_gzip, "the reader accepts gzip");

    // The transcript holds every read; a replay asks the site nothing and cites the same.
    let lines = read_ndjson(&s.path().join("out/plan.transcript.jsonl"));
    let pages = lines.iter().filter(|l| l["kind"] == "page").count();
    assert_eq!(pages, 5);
    let before = site.all_requests().len();
    drop((llm, search));
    let replay = s.replay().await;
    replay.success();
    assert_eq!(site.all_requests().len(), before, "a replay reads nothing");
    let again = crate::support::scenario::read_json(&s.path().join("replay.json"));
    assert_eq!(node(&again, "b")["sources"], b["sources"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_slow_huge_and_odd_pages_are_skipped_or_cut_and_the_task_still_runs() {
    let site = WebSite::start().await;
    let hits = vec![
        hit(&site, SECRET_PATH, "Secret"),
        hit(&site, "/slow", "Slow"),
        hit(&site, "/huge", "Huge"),
        hit(&site, "/image.png", "Image"),
        hit(&site, "/loop", "Loop"),
        hit(&site, "/moved", "Moved"),
        hit(&site, "/status/429", "Busy"),
    ];
    let search = MockSearch::with_results(SearchKind::Searxng, hits).await;
    let llm = MockLlm::start().await;
    one_task(&llm, "The closure API is documented [6].");
    let s = Setup::with_config(
        &llm,
        Some(&search),
        reading(
            &search,
            json!({"allowPrivate": true, "pages": 7, "timeoutMs": 2500, "maxBytes": 1_000_000}),
        ),
    );
    let out = s.query("What does the closure API say?").run().await;
    out.success();

    assert_eq!(site.requests(SECRET_PATH), 0, "robots.txt disallows it");
    let events = s.events();
    let unread = events_of(&events, "page_unread");
    let cause = |path: &str| {
        unread
            .iter()
            .find(|e| e["url"] == site.url(path))
            .and_then(|e| e["cause"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    assert!(cause(SECRET_PATH).contains("robots.txt"), "{unread:?}");
    assert!(cause("/image.png").contains("image"), "{unread:?}");
    assert!(cause("/loop").contains("redirects more than"), "{unread:?}");
    let read = events_of(&events, "page_read");
    let cut = |path: &str| {
        read.iter()
            .find(|e| e["url"] == site.url(path))
            .and_then(|e| e["cut"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    // What trickled in before the deadline is the page's head: no text, and it says why.
    assert!(
        cut("/slow").contains("timeout") || cause("/slow").contains("timeout"),
        "{read:?} {unread:?}"
    );
    assert!(cut("/huge").contains("byte cap"), "{read:?}");
    assert!(
        read.iter().any(|e| e["url"] == site.url("/moved")),
        "a redirect is followed to {MOVED_TO}: {read:?}"
    );
    // A 429 with Retry-After is waited out at the host's gate, then the page is read.
    assert!(
        read.iter().any(|e| e["url"] == site.url("/status/429")),
        "{read:?} {unread:?}"
    );
    assert_eq!(site.requests("/status/429"), 2, "asked again once");
    // The unread pages keep their snippets; the task completed.
    let plan = s.plan();
    let b = node(&plan, "b");
    assert_eq!(b["status"], "completed", "{b}");
    assert_eq!(b["sources"][0]["snippet"], "Documentation page.");
    assert!(b["sources"][0].get("passages").is_none(), "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_queued_behind_a_slow_one_on_its_host_has_its_own_time() {
    let site = WebSite::start().await;
    let mut hits = vec![hit(&site, "/slow", "Slow")];
    for name in [QEMU_NBD, GPL3_TXT] {
        hits.push(hit(&site, &format!("/docs/{name}"), name));
    }
    let search = MockSearch::with_results(SearchKind::Searxng, hits).await;
    let llm = MockLlm::start().await;
    // Source 2 is the qemu-nbd page, whose body says so.
    one_task(
        &llm,
        "A client must complete its handshake within a timeout [2].",
    );
    // One connection to the host: the two pages wait the slow page's whole second and a half.
    let read = json!({"allowPrivate": true, "pages": 3, "perHost": 1, "timeoutMs": 1500});
    let s = Setup::with_config(&llm, Some(&search), reading(&search, read));
    s.query("What limits a qemu-nbd client?")
        .run()
        .await
        .success();

    let events = s.events();
    let read = events_of(&events, "page_read");
    for name in [QEMU_NBD, GPL3_TXT] {
        let url = site.url(&format!("/docs/{name}"));
        let page = read.iter().find(|e| e["url"] == url);
        let page = page.unwrap_or_else(|| panic!("{name} is read: {events:?}"));
        assert!(page.get("cut").is_none_or(Value::is_null), "{page}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_address_is_never_requested_unless_allowed() {
    let Fixture {
        site,
        search: _search,
        llm,
        s,
    } = fixture(
        json!({}),
        "The QEMU documentation describes its network block device server [1].",
    )
    .await;
    let out = s.query("What limits a qemu-nbd client?").run().await;
    out.success();
    assert!(site.all_requests().is_empty(), "the site is on loopback");
    let events = s.events();
    assert!(
        events_of(&events, "http_retry").is_empty(),
        "a refused address is not asked again: {events:?}"
    );
    let unread = events_of(&events, "page_unread");
    assert_eq!(unread.len(), 5, "{unread:?}");
    assert!(
        unread.iter().all(|e| e["cause"]
            .as_str()
            .is_some_and(|c| c.contains("allowPrivate"))),
        "{unread:?}"
    );
    assert!(
        analysis_prompt(&llm).contains("QEMU documentation."),
        "snippets stand in"
    );
}

/// This machine's name, which resolves to one of its own addresses (on these machines, through
/// `/etc/hosts`): a name the guard must refuse that a proxy would reach.
fn own_name() -> String {
    use std::net::ToSocketAddrs;
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    let name = name.trim().to_string();
    let inward = (name.as_str(), 80)
        .to_socket_addrs()
        .map(|mut addrs| addrs.all(|a| researchflow::read::guard::refused_ip(a.ip()).is_some()))
        .unwrap_or(false);
    assert!(
        inward,
        "`{name}` should resolve to an address of this machine"
    );
    name
}

/// With `http_proxy` set, the reader handed a page's host name to the proxy unresolved, so the
/// guard never saw it and a name of this machine was read through the proxy. A name is now
/// resolved and checked before the request; a public address still goes through the proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_a_name_of_this_machine_is_refused_and_a_public_page_is_proxied() {
    use crate::support::hostile_docs::HostileSite;
    let page = format!(
        "<html><body><p>{}</p></body></html>",
        "Proxied text. ".repeat(50)
    );
    let proxy = HostileSite::start(vec![("/page.html", "text/html", page.into_bytes())]).await;
    let port = proxy
        .url("")
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let inward = format!("http://{}:{port}/page.html", own_name());
    let public = "http://93.184.216.34/page.html".to_string();
    let hits = [&inward, &public]
        .iter()
        .map(|url| SearchHit {
            title: "Page".into(),
            url: url.to_string(),
            snippet: "A page.".into(),
        })
        .collect();
    let search = MockSearch::with_results(SearchKind::Searxng, hits).await;
    let llm = MockLlm::start().await;
    one_task(&llm, "The page was read [1].");
    let read = json!({"pages": 2, "timeoutMs": 5000});
    let s = Setup::with_config(&llm, Some(&search), reading(&search, read));
    let out = s
        .query("What does the page say?")
        .env("http_proxy", proxy.url(""))
        .env("NO_PROXY", "127.0.0.1")
        .run()
        .await;
    out.success();
    let events = s.events();
    let unread = events_of(&events, "page_unread");
    let refused = unread.iter().find(|e| e["url"] == inward.as_str());
    assert!(
        refused.is_some_and(|e| e["cause"]
            .as_str()
            .unwrap_or_default()
            .contains("allowPrivate")),
        "{unread:?}"
    );
    let read = events_of(&events, "page_read");
    assert!(
        read.iter().any(|e| e["url"] == public.as_str()),
        "{read:?} {unread:?}"
    );
    let hosts: Vec<String> = proxy
        .all_requests()
        .iter()
        .filter_map(|r| r.header("host").map(str::to_string))
        .collect();
    assert!(hosts.iter().all(|h| h == "93.184.216.34"), "{hosts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thinkon_search_step_reads_the_pages_too() {
    use crate::support::thinkon::{Kind, execute, item, kind, scripted, steps};
    let Fixture {
        site,
        search: _search,
        llm,
        s,
    } = fixture(loopback(), "Unused.").await;
    scripted(&llm, |ctx, _| match item(ctx).as_str() {
        "" => steps("Research", &["Handshake", "Limits", "Timeouts"]),
        step => execute(step, "search: client handshake timeout seconds"),
    });
    s.cmd()
        .args(["thinkon", "--goal", "What limits a qemu-nbd client?"])
        .timeout(std::time::Duration::from_secs(60))
        .run()
        .await
        .success();
    let analysis: Vec<String> = llm
        .chat_requests()
        .iter()
        .filter(|r| kind(r) == Kind::Analysis)
        .filter_map(|r| r.user_prompt())
        .map(|p| collapse_whitespace(&p))
        .collect();
    let fact = collapse_whitespace(doc(QEMU_NBD).fact);
    assert!(analysis.iter().any(|p| p.contains(&fact)), "{analysis:?}");
    // Three steps search alike: each page is fetched by the first and served from memory after.
    let events = read_ndjson(&s.path().join(".thinkon/events.ndjson"));
    let read = events_of(&events, "page_read");
    let from = |f: &str| read.iter().filter(|e| e["from"] == f).count();
    assert_eq!((from("web"), from("memory")), (5, 10), "{read:?}");
    assert_eq!(site.requests(&doc(QEMU_NBD).path()), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_run_asks_only_whether_each_kept_page_changed() {
    let Fixture {
        site,
        search: _search,
        llm: _llm,
        s,
    } = fixture(
        loopback(),
        "A client must complete its handshake in time [1].",
    )
    .await;
    s.query("What limits a qemu-nbd client?")
        .run()
        .await
        .success();
    let kept = std::fs::read_dir(s.path().join("out/pages"))
        .expect("the pages beside the plan")
        .count();
    assert_eq!(kept, 5);
    s.cmd()
        .args(["workflow", "--query", "What limits a qemu-nbd client?"])
        .args(["--out", "out/again.json"])
        .run()
        .await
        .success();
    // Every kept page is asked for again with its validators: the site answers 304 to each.
    let path = doc(QEMU_NBD).path();
    assert_eq!(site.requests(&path), 2, "asked again, conditionally");
    assert_eq!(site.not_modified(&path), 1, "and answered 304");
    let events = crate::support::scenario::read_ndjson(&s.path().join("out/again.events.ndjson"));
    let read = events_of(&events, "page_read");
    assert_eq!(read.len(), 5, "{read:?}");
    assert!(read.iter().all(|e| e["from"] == "cache"), "{read:?}");
    let again = crate::support::scenario::read_json(&s.path().join("out/again.json"));
    assert_eq!(
        node(&again, "b")["sources"][0]["passages"],
        node(&s.plan(), "b")["sources"][0]["passages"],
        "the same passages from the kept page"
    );
}

/// What a poisoned cache file puts before a page's text: terminal escapes and controls, and
/// a sentence of its own that would back the report's claim.
const POISON: &str =
    "FORGED handshake timeout \u{1b}]0;pwned\u{7}\u{0}\u{9b}2J\u{7f}\u{7} seconds.\n";

/// The characters [`POISON`] holds that no text we keep may hold, as they are and as JSON
/// escapes them.
fn poisoned(text: &str) -> Vec<String> {
    ['\u{1b}', '\u{0}', '\u{7}', '\u{9b}', '\u{7f}']
        .iter()
        .flat_map(|c| [c.to_string(), format!("\\u{:04x}", u32::from(*c))])
        .chain(["FORGED".to_string()])
        .filter(|needle| text.contains(needle.as_str()))
        .collect()
}

/// Issue 56: a cached page (`pages/<sha>.json`) is text the reader wrote, but anyone who can
/// write the folder can change it, and a 304 served it as it stood: ESC, OSC, NUL, BEL, U+009B
/// and DEL reached the plan's passages and the transcript, and forged text backed the claim
/// check. Now a kept page that holds what the reader never keeps is refused, said so, and the
/// page read again whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poisoned_kept_page_is_refused_and_read_again_not_served_on_a_304() {
    let Fixture {
        site,
        search: _search,
        llm: _llm,
        s,
    } = fixture(
        loopback(),
        "A client must complete its handshake in time [1].",
    )
    .await;
    s.query("What limits a qemu-nbd client?")
        .run()
        .await
        .success();
    let pages = s.path().join("out/pages");
    let mut poisoned_files = 0;
    for file in std::fs::read_dir(&pages).expect("out/pages").flatten() {
        let mut entry: Value =
            serde_json::from_str(&std::fs::read_to_string(file.path()).expect("read"))
                .expect("an entry");
        let text = entry["page"]["text"].as_str().unwrap_or_default();
        entry["page"]["text"] = json!(format!("{POISON}{text}"));
        entry["page"]["title"] = json!("Title \u{1b}[2J\u{9b}31m");
        std::fs::write(file.path(), entry.to_string()).expect("poison");
        poisoned_files += 1;
    }
    assert_eq!(poisoned_files, 5);
    let path = doc(QEMU_NBD).path();
    let again = s
        .cmd()
        .args(["workflow", "--query", "What limits a qemu-nbd client?"])
        .args(["--out", "out/again.json"])
        .run()
        .await;
    again.success();
    assert_eq!(site.not_modified(&path), 0, "never served from the cache");
    assert_eq!(site.requests(&path), 2, "read again, whole");
    assert!(
        again.stderr.contains("read again") && again.stderr.contains("pages/"),
        "the refusal is said, naming the file: {}",
        again.stderr
    );
    let events = crate::support::scenario::read_ndjson(&s.path().join("out/again.events.ndjson"));
    let read = events_of(&events, "page_read");
    assert_eq!(read.len(), 5, "{read:?}");
    assert!(read.iter().all(|e| e["from"] == "web"), "{read:?}");
    for name in ["again.json", "again.transcript.jsonl", "again.report.md"] {
        let text = std::fs::read_to_string(s.path().join("out").join(name)).expect(name);
        assert_eq!(poisoned(&text), Vec::<String>::new(), "{name}:\n{text}");
    }
    // The cache holds the pages as read again.
    for file in std::fs::read_dir(&pages).expect("out/pages").flatten() {
        let text = std::fs::read_to_string(file.path()).expect("read");
        assert_eq!(poisoned(&text), Vec::<String>::new(), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_after_another_starts_from_its_pages_and_says_which_changed() {
    let Fixture {
        site,
        search: _search,
        llm: _llm,
        s,
    } = fixture(
        loopback(),
        "A client must complete its handshake in time [1].",
    )
    .await;
    std::fs::write(
        s.path().join("questions.txt"),
        "What limits a qemu-nbd client?\n",
    )
    .expect("questions");
    let batch = |out: &str, previous: Option<&str>| {
        let mut cmd = s.cmd().args(["batch", "questions.txt", "--out-dir", out]);
        if let Some(previous) = previous {
            cmd = cmd.args(["--previous", previous]);
        }
        cmd
    };
    batch("monday", None).run().await.success();
    // Make Monday's copy of the GPL look older than the page: no validators, other text.
    let gpl = site.doc_url(GPL3_TXT);
    let pages = s.path().join("monday/pages");
    for file in std::fs::read_dir(&pages).expect("monday/pages").flatten() {
        let mut entry: Value =
            serde_json::from_str(&std::fs::read_to_string(file.path()).expect("read"))
                .expect("an entry");
        if entry["url"] == gpl {
            entry["page"]["text"] = json!("An older licence.");
            entry.as_object_mut().map(|o| o.remove("etag"));
            entry.as_object_mut().map(|o| o.remove("last_modified"));
            std::fs::write(file.path(), entry.to_string()).expect("write");
        }
    }
    let before = site.requests(&doc(QEMU_NBD).path());
    batch("tuesday", Some("monday")).run().await.success();
    assert_eq!(site.not_modified(&doc(QEMU_NBD).path()), 1, "revalidated");
    assert_eq!(site.requests(&doc(QEMU_NBD).path()), before + 1);
    let changes = std::fs::read_to_string(s.path().join("tuesday/pages.changes.md"))
        .expect("pages.changes.md");
    assert!(
        changes.contains("1 changed, 0 new, 4 unchanged."),
        "{changes}"
    );
    assert!(
        changes.contains(&format!("## Changed\n\n- `{gpl}`\n")),
        "{changes}"
    );
}

/// Issue 33: a task killed after its pages were read, while its analysis waits, does not ask
/// the site for them again when the run resumes: they come from the transcript (on a queue
/// worker the dead worker's kept pages are gone; here they would still cost a request each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_task_reads_its_pages_from_the_transcript_not_the_site() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    let Fixture {
        site,
        search: _search,
        llm,
        s,
    } = fixture(
        loopback(),
        "A client must complete its handshake in time [1].",
    )
    .await;
    let hang = Arc::new(AtomicBool::new(true));
    let reached = Arc::new(AtomicBool::new(false));
    let (hanging, reaching) = (Arc::clone(&hang), Arc::clone(&reached));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("### c:") => {
            Reply::json(&final_over("c:summary"))
        }
        // Once b is done, a second search, whose results are the same pages.
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("### b:") => {
            Reply::json(&searches_round(&["Handshakes and closures once more"]))
        }
        Agent::Planner => Reply::json(&searches_round(&["Handshake limits and closures"])),
        Agent::Queries => Reply::json(&json!({"queries": ["client handshake timeout seconds"]})),
        Agent::Analysis if hanging.load(Ordering::SeqCst) => {
            reaching.store(true, Ordering::SeqCst);
            Reply::json(&json!({"summary": "late", "analysis": "late"}))
                .delay(Duration::from_secs(60))
        }
        Agent::Final => Reply::content("A client must complete its handshake in time [1]."),
        _ => Reply::json(&json!({
            "summary": "A client must complete its handshake in time [1].",
            "analysis": "A client must complete its handshake in time [1]."
        })),
    });
    let killed = s
        .query("What limits a qemu-nbd client?")
        .signal_when("KILL", move || reached.load(Ordering::SeqCst))
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed: {}", killed.stderr);
    assert_eq!(node(&s.plan(), "b")["status"], "running");
    let names = [QEMU_NBD, LIBFFI_CLOSURES, MIME_SPEC_PDF, GPL3_TXT];
    for name in names {
        assert_eq!(site.requests(&doc(name).path()), 1, "`{name}` read once");
    }

    hang.store(false, Ordering::SeqCst);
    let plan_path = s.out();
    let resumed = s.resume(&plan_path).await;
    resumed.success();
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(node(&plan, "b")["attempts"], 2, "the task ran again");
    assert_eq!(node(&plan, "c")["status"], "completed");
    for name in names {
        assert_eq!(
            site.requests(&doc(name).path()),
            1,
            "`{name}` was served from the transcript to b and from memory to c, not asked for again"
        );
    }
    let events = s.events();
    let reads = events_of(&events, "page_read");
    let from = |node: &str, from: &str| {
        reads
            .iter()
            .filter(|e| e["node"] == node && e["from"] == from)
            .count()
    };
    assert_eq!(from("b", "transcript"), 5, "the resumed session's reads");
    let of_c = reads.iter().filter(|e| e["node"] == "c").count();
    assert!(of_c > 0, "{reads:?}");
    assert_eq!(
        from("c", "memory"),
        of_c,
        "c reads what b salvaged: {reads:?}"
    );
    let prompt = analysis_prompt(&llm);
    let fact = collapse_whitespace(doc(QEMU_NBD).fact);
    assert!(
        prompt.contains(&fact),
        "the salvaged page's passages: {prompt}"
    );
    let replayed: Vec<Value> = read_ndjson(&plan_path.with_extension("transcript.jsonl"))
        .into_iter()
        .filter(|l| l["kind"] == "page" && l["replayed"] == true)
        .collect();
    assert_eq!(replayed.len(), 5, "{replayed:?}");
    assert!(
        replayed
            .iter()
            .all(|l| l["session"] == 2 && l["page"].is_object())
    );
    assert!(
        resumed
            .stderr
            .lines()
            .any(|l| l.contains("read of") && l.contains("not read again")),
        "{}",
        resumed.stderr
    );
}
