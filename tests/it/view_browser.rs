//! The HTML views in a real headless browser (Debian's Chromium, `tests/it/support/browser.rs`):
//! the view of a real run against the mock LLM and search, opened from `file://`, shows no
//! console error and makes no request but its own document, draws one graph node per plan node
//! with the plan's edges and status classes, and is not blank; a hostile plan, report and
//! review run no script, even with the page's Content-Security-Policy switched off; a batch's
//! index links only to files that exist, each view opening cleanly.
//!
//! `RESEARCHFLOW_DOCS_SCREENSHOTS=docs/src/images cargo test --test it view_browser::` also writes the
//! screenshots of `docs/src/images/` (`view.png`, `batch-index.png`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support;
use crate::support::browser::{Browser, file_url, ink};
use crate::support::fixtures::{copy_corpus, offline_over, root};
use crate::support::scenario::{
    Agent, Setup, agent, plan_answer, read_json, review_answer, searches_round,
    second_opinion_answer, task_title,
};
use crate::support::{MockLlm, MockSearch, Reply, SearchKind, researchflow};

/// Saves a screenshot under the folder `RESEARCHFLOW_DOCS_SCREENSHOTS` names, when it does.
fn keep_screenshot(png: &[u8], name: &str) {
    if let Some(dir) = std::env::var_os("RESEARCHFLOW_DOCS_SCREENSHOTS") {
        let dir = root().join(dir);
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        std::fs::write(dir.join(name), png).expect("write screenshot");
    }
}

/// The planner's rounds: two searches (the second fails at every try), a summary over both,
/// then the final summary over the summary and the first search.
fn planner_rounds() -> Vec<Value> {
    vec![
        searches_round(&["Energy density of solid-state cells", "Doomed direction"]),
        plan_answer(
            false,
            json!([{"title": "Compare the findings", "type": "summary", "p_node": "b:summary, c:summary"}]),
            json!(["NEW1:summary"]),
        ),
        plan_answer(
            true,
            json!([{"title": "Final report", "type": "summary", "p_node": "d:summary, b:info"}]),
            json!([]),
        ),
    ]
}

/// A mock LLM answering the rounds above, failing every analysis of "Doomed direction", and
/// reviewing with the verdict `warn`.
fn real_run_llm(llm: &MockLlm) {
    let rounds = planner_rounds();
    let calls = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            Reply::json(&rounds[n.min(rounds.len() - 1)])
        }
        Agent::Queries => Reply::json(&json!({"queries": [format!("q {}", task_title(req))]})),
        Agent::Analysis if task_title(req).contains("Doomed") => {
            Reply::raw(500, r#"{"error": {"message": "boom"}}"#)
        }
        Agent::Analysis | Agent::Summary => Reply::json(&json!({
            "summary": format!("Summary of {} [1]", task_title(req)),
            "analysis": format!("Analysis of {} citing [1]", task_title(req)),
        })),
        Agent::Final => Reply::content(
            "Solid-state cells store more energy [1], at a higher cost [2].\n\n## Details\n\n| cell | Wh/kg |\n|:---|---:|\n| solid | 400 |\n",
        ),
        Agent::Review => Reply::json(&review_answer()),
        Agent::SecondOpinion => Reply::json(&second_opinion_answer("warn")),
        // No verifier is configured: never asked.
        Agent::Verifier => Reply::raw(500, r#"{"error": {"message": "not configured"}}"#),
    });
}

/// The plan's edges as its `p_node` refs name them: (input, task), once per pair, only to
/// nodes of the plan.
fn plan_edges(plan: &Value) -> BTreeSet<(String, String)> {
    let nodes = plan["nodes"].as_array().expect("nodes");
    let ids: BTreeSet<String> = nodes
        .iter()
        .map(|n| n["node_id"].as_str().expect("id").to_string())
        .collect();
    let mut edges = BTreeSet::new();
    for n in nodes {
        let to = n["node_id"].as_str().expect("id").to_string();
        for r in n["p_node"].as_str().unwrap_or("").split(',') {
            let from = r.split(':').next().unwrap_or("").trim().to_lowercase();
            if ids.contains(&from) && from != to {
                edges.insert((from, to.clone()));
            }
        }
    }
    edges
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_view_of_a_real_run_opens_cleanly_and_draws_its_plan() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    real_run_llm(&llm);
    let s = Setup::with_config(&llm, Some(&search), json!({"review": {"enabled": true}}));
    let out = s.query("How do solid-state batteries compare?").run().await;
    out.success();
    let stdout = out.stdout_json();
    let html = PathBuf::from(stdout["html"].as_str().expect("the view's path"));
    assert_eq!(
        html,
        s.path()
            .join("out/plan.html")
            .canonicalize()
            .expect("x.html")
    );
    let plan = s.plan();

    let mut browser = Browser::launch();
    let mut page = browser.open(&html, false);
    assert_eq!(page.errors(), Vec::<String>::new(), "console errors");
    assert_eq!(
        page.requests(),
        [file_url(&html)],
        "only the file itself is loaded"
    );

    let drawn = page.eval(
        "Array.from(document.querySelectorAll('svg.plan-graph g.node')).map(g => [g.dataset.node, g.getAttribute('class')])",
    );
    let drawn = drawn.as_array().expect("nodes");
    let nodes = plan["nodes"].as_array().expect("nodes");
    assert_eq!(
        drawn.len(),
        nodes.len(),
        "one graph node per plan node: {drawn:?}"
    );
    for n in nodes {
        let id = n["node_id"].as_str().expect("id");
        let class = drawn
            .iter()
            .find(|d| d[0] == id)
            .unwrap_or_else(|| panic!("node {id} is not drawn"))[1]
            .as_str()
            .expect("class")
            .to_string();
        let classes: BTreeSet<&str> = class.split_whitespace().collect();
        let status = format!("status-{}", n["status"].as_str().expect("status"));
        let kind = format!("type-{}", n["type"].as_str().expect("type"));
        assert!(
            classes.contains(status.as_str()) && classes.contains(kind.as_str()),
            "{id}: {class}"
        );
        assert_eq!(classes.contains("final"), n["batch"] == -1, "{id}: {class}");
    }
    let statuses: BTreeSet<&str> = nodes.iter().filter_map(|n| n["status"].as_str()).collect();
    assert_eq!(
        statuses,
        BTreeSet::from(["completed", "failed"]),
        "the run has both"
    );

    let edges = page.eval(
        "Array.from(document.querySelectorAll('svg.plan-graph path.edge')).map(p => p.dataset.from + '>' + p.dataset.to)",
    );
    let edges: BTreeSet<(String, String)> = strings(&edges)
        .into_iter()
        .map(|e| {
            let (a, b) = e.split_once('>').expect("from>to");
            (a.to_string(), b.to_string())
        })
        .collect();
    assert_eq!(edges, plan_edges(&plan));
    assert!(edges.contains(&("b".into(), "e".into())) && edges.contains(&("c".into(), "d".into())));

    let details = page.eval("document.querySelectorAll('details.node-details').length");
    assert_eq!(details, json!(nodes.len()));
    let rows = page.eval("document.querySelectorAll('svg.timeline g.row').length");
    assert_eq!(rows, json!(nodes.len() - 1), "a timeline row per task");
    let text = page.eval("document.body.innerText");
    let text = text.as_str().expect("text");
    assert!(
        text.contains("Solid-state cells store more energy"),
        "the report"
    );
    assert!(text.contains("HTTP 500"), "the failed task's error");
    // A table aligned in Markdown (`---:`) is aligned by the stylesheet, not by a `style`
    // attribute the policy would refuse with an error.
    let align = page.eval(
        "Array.from(document.querySelectorAll('.report td')).map(td => getComputedStyle(td).textAlign)",
    );
    assert_eq!(align, json!(["left", "right"]));
    let verdict =
        page.eval("document.querySelector('#reviews .badge[class*=verdict]').textContent");
    assert_eq!(verdict, json!("warn"));
    let reviews = page.eval("document.querySelector('#reviews').innerText");
    let reviews = reviews.as_str().expect("text");
    assert!(
        reviews.contains("Verdict warn: reasons.") && reviews.contains("round(s) reviewed"),
        "the second opinion's notes and the plan review: {reviews}"
    );

    // A search node's details: its attempt with start, end and seconds, its tokens, its
    // queries, and each source with the snippet the search returned.
    let b = page.eval("document.querySelector('details[data-node=\"b\"]').innerText");
    let b = b.as_str().expect("text");
    let query = "q Energy density of solid-state cells";
    for part in [
        "search",
        "completed",
        "attempt 1",
        "→",
        "tokens",
        query,
        &format!("Result 1 for {query}"),
        &format!("Snippet 1 about {query}."),
    ] {
        assert!(b.contains(part), "node b's details lack `{part}`:\n{b}");
    }
    let node_b = nodes.iter().find(|n| n["node_id"] == "b").expect("b");
    let tokens = node_b["usage"]["total_tokens"]
        .as_u64()
        .expect("b's tokens");
    assert!(b.contains(&format!("{tokens} (")), "{b}");

    // The totals are the plan's.
    let totals = page.eval(
        "Object.fromEntries(Array.from(document.querySelectorAll('#totals [data-total]')).map(d => [d.dataset.total, d.querySelector('b').textContent]))",
    );
    assert_eq!(totals["nodes"], json!(nodes.len().to_string()));
    assert_eq!(totals["failed"], json!("1"));
    assert_eq!(
        totals["tokens"],
        json!(stdout["totals"]["total_tokens"].to_string()),
        "{totals}"
    );

    // The timeline: the failed search's every attempt is a failed bar, the others completed.
    let bars = page.eval(
        "Object.fromEntries(Array.from(document.querySelectorAll('svg.timeline g.row')).map(r => [r.dataset.node, Array.from(r.querySelectorAll('rect.bar')).map(b => b.getAttribute('class'))]))",
    );
    let failed = bars["c"].as_array().expect("c's bars");
    assert!(
        !failed.is_empty() && failed.iter().all(|b| b == "bar failed"),
        "{bars}"
    );
    assert_eq!(bars["b"], json!(["bar completed"]), "{bars}");

    let png = page.screenshot(1_700);
    let (share, colours) = ink(&png);
    assert!(
        share > 0.05 && colours > 50,
        "a blank screenshot: {share:.3}, {colours} colours"
    );
    keep_screenshot(&png, "view.png");
}

/// The detectors of the tests above can fail: a script the policy blocks is an error on the
/// console, the same script with the policy bypassed sets its marker, and a page that loads
/// something has that request recorded.
#[test]
fn the_detectors_see_a_blocked_script_a_run_script_and_a_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csp = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">";
    let page = dir.path().join("p.html");
    std::fs::write(
        &page,
        format!("<html><head>{csp}</head><body><script>window.__pwned = 1</script>x</body></html>"),
    )
    .expect("write");
    std::fs::write(dir.path().join("q.html"), "<p>other</p>").expect("write");
    let loads = dir.path().join("loads.html");
    std::fs::write(&loads, "<body><iframe src=\"q.html\"></iframe></body>").expect("write");

    let mut browser = Browser::launch();
    let mut blocked = browser.open(&page, false);
    assert_eq!(blocked.eval("typeof window.__pwned"), json!("undefined"));
    assert!(
        !blocked.errors().is_empty(),
        "the blocked script is an error"
    );
    let mut bypassed = browser.open(&page, true);
    assert_eq!(bypassed.eval("window.__pwned"), json!(1));
    let loading = browser.open(&loads, false);
    assert_eq!(loading.requests().len(), 2, "{:?}", loading.requests());
}

/// Text that acts when a browser reads it as HTML, each piece setting the marker
/// `window.__pwned` to say where it came from.
fn attack(from: &str) -> String {
    format!(
        "<script>window.__pwned='{from}'</script> <img src=x onerror=\"window.__pwned='{from}-img'\"> \
         <svg onload=\"window.__pwned='{from}-svg'\"></svg> [click](javascript:window.__pwned='{from}-link') \
         <a href=\"javascript:window.__pwned='{from}-a'\">a</a> <iframe src=\"https://evil.example/{from}\"></iframe>"
    )
}

/// A mock LLM whose every answer is an attack (titles, queries, summaries, analyses, the
/// report, the review), and a search server whose results carry more.
fn hostile_llm(llm: &MockLlm) {
    let calls = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let title = format!("Batteries {}", attack("title"));
            let rounds = [
                searches_round(&[title]),
                plan_answer(
                    true,
                    json!([{"title": format!("Final {}", attack("final-title")), "type": "summary", "p_node": "b:summary"}]),
                    json!([]),
                ),
            ];
            let n = calls.fetch_add(1, Ordering::SeqCst);
            Reply::json(&rounds[n.min(1)])
        }
        Agent::Queries => Reply::json(&json!({"queries": [format!("q {}", attack("query"))]})),
        Agent::Analysis | Agent::Summary => Reply::json(&json!({
            "summary": format!("Summary [1] {}", attack("summary")),
            "analysis": format!("Analysis [1]\n{}", attack("analysis")),
        })),
        Agent::Final => Reply::content(&format!("# Report\n\nThe pages were read [1].\n\n{}\n\n![pixel](https://evil.example/p.png) [1]", attack("report"))),
        Agent::Review => Reply::json(&json!({"ok": false, "summary": attack("review"),
            "risks": [attack("risk")], "gaps": [], "suggestions": [attack("suggestion")]})),
        Agent::SecondOpinion => Reply::json(&json!({"ok": false, "verdict": "block", "notes": attack("notes")})),
        Agent::Verifier => Reply::json(&json!({"verdicts": [], "why": attack("verifier")})),
    });
}

/// What another tool could leave beside a plan: raw HTML in the report, sources with
/// `javascript:`, `data:` and `file:` URLs, markup in the plan review and the event log.
fn hostile_files(plan_path: &Path) {
    let mut plan: Value = read_json(plan_path);
    let b = plan["nodes"]
        .as_array_mut()
        .and_then(|n| n.iter_mut().find(|n| n["node_id"] == "b"))
        .expect("node b");
    let sources = b["sources"].as_array_mut().expect("sources");
    let first = sources[0]["url"].as_str().expect("a url").to_string();
    sources.push(json!({"url": "javascript:window.__pwned='source'", "title": attack("source")}));
    sources.push(
        json!({"url": "data:text/html,<script>window.__pwned='data'</script>", "title": "data"}),
    );
    sources.push(json!({"url": "file:///etc/passwd", "title": "passwd"}));
    sources.push(json!({"url": "https://example.test/\"><script>window.__pwned='url'</script>", "title": "quote"}));
    b["info"] = json!(format!(
        "<info type=\"search\">provider: x\nqueries: {}\n\n[1] {}\n{first}\n{}\n</info>",
        attack("info-query"),
        attack("info-title"),
        attack("snippet")
    ));
    std::fs::write(plan_path, plan.to_string()).expect("write plan");
    let stem = plan_path.with_extension("");
    let stem = stem.display();
    std::fs::write(
        format!("{stem}.report.md"),
        format!(
            "# {}\n\n{}\n\n<div>{}</div>\n\n| {} | b |\n|:-:|--:|\n| 1 | 2 |\n",
            attack("heading"),
            attack("raw-report"),
            attack("div"),
            attack("table").replace('|', "\\|")
        ),
    )
    .expect("write report");
    std::fs::write(
        format!("{stem}.plan-review.json"),
        json!({"round": 1, "ok": false, "issues": [{"id": attack("id"), "type": "X", "severity": attack("sev"), "message": attack("file-issue"), "path": "tasks[0]"}]}).to_string(),
    )
    .expect("write plan review");
    let mut events = std::fs::OpenOptions::new()
        .append(true)
        .open(format!("{stem}.events.ndjson"))
        .expect("events");
    use std::io::Write as _;
    for event in [
        json!({"ts": "2026-01-01T00:00:00Z", "event": "task_started", "node": attack("node")}),
        json!({"ts": "2026-01-01T00:00:00Z", "event": "task_failed", "node": "b", "seconds": 1.0, "error": attack("error")}),
        json!({"ts": attack("ts"), "event": "plan_review", "round": attack("round"), "ok": false, "issues": [{"id": "R9-1", "type": attack("type"), "severity": "block", "message": attack("issue"), "path": "tasks[0]"}]}),
        json!({"ts": "2026-01-01T00:00:00Z", "event": "task_dropped", "round": 9, "title": attack("dropped"), "issue": "R9-1", "reason": "X", "message": "m"}),
    ] {
        writeln!(events, "{event}").expect("append");
    }
}

/// What the DOM of a hostile view holds that could act: scripts, frames, images, `on...`
/// attributes, and links that are not to the web or within the page.
const ACTIVE: &str = "JSON.stringify({\
    elements: document.querySelectorAll('script,iframe,frame,object,embed,img,image,base,form,meta[http-equiv=refresh]').length,\
    styles: document.querySelectorAll('[style]').length,\
    handlers: Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes).map(a => a.name)).filter(n => n.startsWith('on')),\
    links: Array.from(document.querySelectorAll('[href]')).map(e => e.getAttribute('href')).filter(h => !/^(https?:\\/\\/|#)/.test(h)),\
    marker: typeof window.__pwned})";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_plan_report_and_review_run_no_script_even_without_the_policy() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    hostile_llm(&llm);
    let s = Setup::with_config(&llm, Some(&search), json!({"review": {"enabled": true}}));
    s.query(&format!("Question {}", attack("question")))
        .run()
        .await
        .success();
    hostile_files(&s.out());
    let html = s.path().join("hostile.html");
    researchflow()
        .args(["view"])
        .arg(s.out())
        .arg("--out")
        .arg(&html)
        .run()
        .await
        .success();
    let text = std::fs::read_to_string(&html).expect("the view");
    assert!(text.contains("&lt;script&gt;window.__pwned='raw-report'&lt;/script&gt;"));

    let mut browser = Browser::launch();
    for bypass_csp in [false, true] {
        let mut page = browser.open(&html, bypass_csp);
        let found: Value =
            serde_json::from_str(page.eval(ACTIVE).as_str().expect("json")).expect("json");
        assert_eq!(
            found,
            json!({"elements": 0, "styles": 0, "handlers": [], "links": [], "marker": "undefined"}),
            "bypass_csp {bypass_csp}"
        );
        assert_eq!(
            page.errors(),
            Vec::<String>::new(),
            "bypass_csp {bypass_csp}"
        );
        assert_eq!(
            page.requests(),
            [file_url(&html)],
            "bypass_csp {bypass_csp}"
        );
        let shown = page.eval("document.body.innerText");
        let shown = shown.as_str().expect("text");
        assert_eq!(
            page.eval("document.querySelectorAll('.report th.align-center, .report td.align-right').length"),
            json!(2),
            "the hostile table is a table, aligned by class"
        );
        for from in [
            "raw-report",
            "table",
            "title",
            "snippet",
            "notes",
            "issue",
            "dropped",
            "error",
        ] {
            assert!(
                shown.contains(&format!("<script>window.__pwned='{from}'</script>")),
                "the attack in the {from} is shown as text"
            );
        }
        assert!(
            shown.contains("javascript:window.__pwned='source'"),
            "a refused URL is text"
        );
    }
}

/// A planner for any number of runs at once: the searches `titles` on the question, then the
/// final summary; a question with "Doomed" in it fails its final summary.
fn batch_llm(llm: &MockLlm, titles: &'static [&'static str]) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&support::scenario::searches_then_final(req, titles)),
        Agent::Queries => Reply::json(&json!({"queries": [format!("q {}", task_title(req))]})),
        Agent::Final if req.user_prompt().unwrap_or_default().contains("Doomed") => {
            Reply::raw(500, r#"{"error": {"message": "boom"}}"#)
        }
        Agent::Final => Reply::content(&support::scenario::backed_report(req)),
        _ => Reply::json(&json!({"summary": "S [1]", "analysis": "A [1]"})),
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_index_links_only_to_views_that_exist_and_open_cleanly() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    let s = Setup::new(&llm, Some(&search));
    std::fs::write(
        s.path().join("questions.txt"),
        "Solid-state batteries?\nSodium-ion cells?\nDoomed question?\n",
    )
    .expect("questions");
    let batch = |out: &str| s.cmd().args(["batch", "questions.txt", "--out-dir", out]);
    batch_llm(&llm, &["Alpha"]);
    batch("old").run().await.code(1);
    batch_llm(&llm, &["Alpha", "Beta"]);
    batch("new").args(["--previous", "old"]).run().await.code(1);
    let index = s.path().join("new/index.html");

    let mut browser = Browser::launch();
    let mut page = browser.open(&index, false);
    assert_eq!(page.errors(), Vec::<String>::new());
    assert_eq!(page.requests(), [file_url(&index)]);
    let rows = page.eval(
        "Array.from(document.querySelectorAll('tr.question')).map(r => r.dataset.status + ' ' + r.innerText)",
    );
    let rows = strings(&rows);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(
        rows[0].starts_with("completed") && rows[0].contains("+3 / −0 sources"),
        "{rows:?}"
    );
    assert!(
        rows[2].starts_with("final_failed") && rows[2].contains("not compared: not done"),
        "{rows:?}"
    );
    // Each row's tokens and time are the manifest's, its sources the plan's distinct URLs.
    let cells = page.eval(
        "Array.from(document.querySelectorAll('tr.question')).map(r => [r.dataset.name].concat(Array.from(r.querySelectorAll('td.num')).map(c => c.textContent)))",
    );
    let manifest = read_json(&s.path().join("new/batch.json"));
    for row in cells.as_array().expect("rows") {
        let cells = strings(row);
        let name = &cells[0];
        let item = manifest["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|i| i["id"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} is not in the manifest: {manifest}"));
        assert_eq!(
            cells[1],
            item["totals"]["total_tokens"].to_string(),
            "{name}"
        );
        let seconds = item["totals"]["seconds"].as_f64().expect("seconds");
        assert_eq!(cells[2], format!("{seconds:.1} s"), "{name}");
        let plan = read_json(&s.path().join(format!("new/{name}.json")));
        let urls: BTreeSet<&str> = plan["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .flat_map(|n| n["sources"].as_array().into_iter().flatten())
            .filter_map(|s| s["url"].as_str())
            .collect();
        assert!(!urls.is_empty(), "{name} found sources");
        assert_eq!(cells[3], urls.len().to_string(), "{name}");
    }
    let links =
        strings(&page.eval("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"));
    let views: Vec<&String> = links.iter().filter(|l| l.ends_with(".html")).collect();
    assert_eq!(views.len(), 3, "a view per question: {links:?}");
    assert_eq!(
        links.len(),
        5,
        "and a changes file per question done twice: {links:?}"
    );
    for link in &links {
        let path = link.strip_prefix("file://").expect("a file link");
        assert!(Path::new(path).is_file(), "{link} resolves to no file");
    }
    let png = page.screenshot(900);
    let (share, colours) = ink(&png);
    assert!(
        share > 0.05 && colours > 50,
        "a blank screenshot: {share:.3}, {colours} colours"
    );
    keep_screenshot(&png, "batch-index.png");
    for view in views {
        let path = PathBuf::from(view.strip_prefix("file://").expect("file"));
        let mut page = browser.open(&path, false);
        assert_eq!(page.errors(), Vec::<String>::new(), "{view}");
        let title = page.eval("document.title");
        assert!(
            title.as_str().is_some_and(|t| t.contains('?')),
            "{view}: {title}"
        );
        assert_eq!(
            page.eval("document.querySelectorAll('g.node').length")
                .as_u64()
                .map(|n| n >= 3),
            Some(true)
        );
    }
}

/// A plan of `searches` search nodes after the question, three a batch, each fed by the one
/// before it, and a final summary; every search with `sources` sources, `text` characters of
/// overview and of analysis and snippets of `text / 4`. Its event log starts and ends every
/// task one second apart.
fn big_run(dir: &Path, searches: usize, sources: usize, text: usize) -> PathBuf {
    let id = |n: usize| {
        // Excel-column ids: 1 -> a, 27 -> aa.
        let mut n = n;
        let mut s = Vec::new();
        while n > 0 {
            s.push(b'a' + ((n - 1) % 26) as u8);
            n = (n - 1) / 26;
        }
        s.reverse();
        String::from_utf8(s).expect("ascii")
    };
    let filler = |n: usize, seed: usize| {
        let words = [
            "cell ", "energy ", "density ", "solid ", "lithium ", "cost ",
        ];
        (0..)
            .flat_map(|i| words[(i + seed) % words.len()].chars())
            .take(n)
            .collect::<String>()
    };
    let mut nodes = vec![
        json!({"node_id": "a", "title": "How large can a plan get?", "summary": "",
        "info": "", "p_node": "", "batch": 1, "type": "start", "status": "completed"}),
    ];
    let mut events = String::new();
    for i in 0..searches {
        let n = i + 2;
        let batch = 2 + i / 3;
        let p_node = if i < 3 {
            "a:info".to_string()
        } else {
            format!("{}:summary", id(n - 3))
        };
        let hits: Vec<(String, String)> = (0..sources)
            .map(|k| {
                (
                    format!("https://example.test/{n}/{k}"),
                    format!("Source {k} of task {n}"),
                )
            })
            .collect();
        let mut block = format!("provider: searxng\nqueries: query {n}\n");
        for (k, (url, title)) in hits.iter().enumerate() {
            block.push_str(&format!(
                "\n[{}] {title}\n{url}\n{}\n",
                k + 1,
                filler(text / 4, k)
            ));
        }
        nodes.push(json!({"node_id": id(n), "title": format!("Direction {n}: {}", filler(40, n)),
            "summary": filler(text, n), "p_node": p_node, "batch": batch, "type": "search",
            "status": if n % 17 == 0 { "failed" } else { "completed" }, "attempts": 1,
            "info": format!("<info type=\"llm\">{}</info><info type=\"search\">{block}</info>", filler(text, n + 1)),
            "sources": hits.iter().map(|(u, t)| json!({"url": u, "title": t})).collect::<Vec<_>>()}));
        events.push_str(&format!(
            "{{\"ts\":\"2026-01-01T00:00:00Z\",\"event\":\"task_started\",\"node\":\"{}\",\"attempt\":1}}\n\
             {{\"ts\":\"2026-01-01T00:00:01Z\",\"event\":\"task_completed\",\"node\":\"{}\",\"seconds\":1.0,\"tokens\":10}}\n",
            id(n), id(n)
        ));
    }
    let last = id(searches + 1);
    nodes.push(json!({"node_id": id(searches + 2), "title": "Final report", "summary": "Done.",
        "info": "", "p_node": format!("{last}:summary"), "batch": -1, "type": "summary", "status": "completed"}));
    let plan = json!({"version": 1, "workflow_id": "wf-big", "check_list": {"latest_id": id(searches + 2),
        "latest_batch": -1, "refs": []}, "nodes": nodes});
    let path = dir.join("big.json");
    std::fs::write(&path, plan.to_string()).expect("plan");
    std::fs::write(dir.join("big.events.ndjson"), events).expect("events");
    std::fs::write(dir.join("big.report.md"), "# Report\n\nDone.\n").expect("report");
    path
}

/// Opens `html` and checks it is usable: no error, one graph node and one collapsed details
/// element per plan node, a timeline of at most 500 rows, and something drawn.
fn usable_in_a_browser(html: &Path, nodes: usize) {
    let mut browser = Browser::launch();
    let mut page = browser.open(html, false);
    assert_eq!(page.errors(), Vec::<String>::new());
    assert_eq!(page.requests(), [file_url(html)]);
    assert_eq!(
        page.eval("document.querySelectorAll('svg.plan-graph g.node').length"),
        json!(nodes)
    );
    assert_eq!(
        page.eval("document.querySelectorAll('details.node-details').length"),
        json!(nodes)
    );
    assert_eq!(
        page.eval("document.querySelectorAll('details[open]').length"),
        json!(0)
    );
    let rows = page.eval("document.querySelectorAll('svg.timeline g.row').length");
    assert!(rows.as_u64().is_some_and(|r| r <= 500), "{rows}");
    // A node of the graph links to its details, which open.
    page.eval("document.querySelector('svg.plan-graph a[href=\"#node-b\"]').dispatchEvent(new MouseEvent('click', {bubbles: true})) && 0");
    assert_eq!(
        page.eval("document.querySelector('details[data-node=\"b\"]').open"),
        json!(true)
    );
    let (share, colours) = ink(&page.screenshot(900));
    assert!(
        share > 0.05 && colours > 50,
        "{share:.3}, {colours} colours"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_of_10000_nodes_gives_a_usable_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = big_run(dir.path(), 9_998, 3, 300);
    researchflow().arg("view").arg(&plan).run().await.success();
    let html_path = dir.path().join("big.html");
    let html = std::fs::read_to_string(&html_path).expect("view");
    assert!(html.len() < 32 << 20, "{} MB", html.len() >> 20);
    assert_eq!(
        html.matches("<details class=\"node-details").count(),
        10_000
    );
    assert_eq!(
        html.matches("\" open><summary>").count(),
        0,
        "every details collapsed"
    );
    assert!(
        html.contains("The first 500 of 9998 tasks are drawn"),
        "the timeline is capped"
    );
    assert!(html.contains("10000 nodes: each one's details are collapsed"));
    usable_in_a_browser(&html_path, 10_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_plan_gives_a_bounded_usable_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = big_run(dir.path(), 58, 24, 120_000);
    let size = std::fs::metadata(&plan).expect("plan").len();
    assert!(size > 50 << 20, "the plan is {} MB", size >> 20);
    researchflow().arg("view").arg(&plan).run().await.success();
    let html_path = dir.path().join("big.html");
    let html = std::fs::read_to_string(&html_path).expect("view");
    assert!(html.len() < 6 << 20, "the view is {} MB", html.len() >> 20);
    assert!(html.contains("Cut to 20000 characters: the whole text is in the plan file."));
    usable_in_a_browser(&html_path, 60);
}

/// An offline run over a copy of the test corpus in a folder whose name needs encoding: its
/// view links the corpus documents it cites by their `file:` URLs, each resolving to a
/// document of the corpus, and no other `file:` URL; the same plan viewed with another folder
/// as `--corpus` links none of them (without `--corpus`, the corpus the plan records links
/// them as the run's own view does: `tests/it/view.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_view_links_only_documents_of_its_corpus() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("my corpus");
    copy_corpus(&corpus);
    let out = offline_over(dir.path(), &corpus, &["workflow"])
        .args([
            "--query",
            "How do solid-state batteries compare with lithium-ion?",
            "--out",
            "run/p.json",
        ])
        .run()
        .await;
    out.success();
    let html = PathBuf::from(out.stdout_json()["html"].as_str().expect("the view"));
    let corpus = corpus.canonicalize().expect("corpus");

    // Every link's target, resolved (an SVG `<a>` has no string `href` property).
    let hrefs = "Array.from(document.querySelectorAll('[href]')).map(e => new URL(e.getAttribute('href'), document.baseURI).href)";
    let mut browser = Browser::launch();
    let mut page = browser.open(&html, false);
    assert_eq!(page.errors(), Vec::<String>::new());
    assert_eq!(page.requests(), [file_url(&html)]);
    let own = file_url(&html);
    let documents: Vec<PathBuf> = strings(&page.eval(hrefs))
        .into_iter()
        .filter(|h| !h.starts_with(&format!("{own}#")))
        .map(|h| {
            let path = h
                .strip_prefix("file://")
                .unwrap_or_else(|| panic!("only the corpus is linked: {h}"));
            PathBuf::from(
                percent_encoding::percent_decode_str(path)
                    .decode_utf8()
                    .expect("utf-8")
                    .into_owned(),
            )
        })
        .collect();
    assert!(!documents.is_empty(), "the cited documents are linked");
    for doc in &documents {
        assert!(
            doc.starts_with(&corpus) && doc.is_file(),
            "{} is no document of {}",
            doc.display(),
            corpus.display()
        );
    }

    {
        let corpus_flag = dir.path().join("run");
        let other = dir.path().join("other.html");
        researchflow()
            .arg("view")
            .arg(dir.path().join("run/p.json"))
            .arg("--out")
            .arg(&other)
            .arg("--corpus")
            .arg(&corpus_flag)
            .run()
            .await
            .success();
        let mut page = browser.open(&other, false);
        let own = file_url(&other);
        let links: Vec<String> = strings(&page.eval(hrefs))
            .into_iter()
            .filter(|h| !h.starts_with(&format!("{own}#")))
            .collect();
        assert_eq!(
            links,
            Vec::<String>::new(),
            "--corpus {}",
            corpus_flag.display()
        );
        let text = page.eval("document.body.innerText");
        assert!(
            text.as_str().is_some_and(|t| t.contains("file://")),
            "the URLs are shown as text"
        );
    }
}
