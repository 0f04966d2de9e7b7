//! Webhook receivers that answer as careless or hostile ones do: a redirect (the POST would
//! become an empty GET, or the signed digest go elsewhere) is no delivery, and what a
//! receiver says back (its path, query and our signing secret echoed, in every encoding, with
//! terminal escapes and forged lines) reaches no file, event, stdout or stderr but as one
//! clean line.

use std::sync::Arc;

use base64::Engine;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use super::{Folder, SECRET, all_text};
use crate::support::scenario::{read_json, read_ndjson};
use crate::support::server::{Planned, Server, json_response, raw_response};

/// A retry policy of milliseconds, so a 503 is retried once at once.
fn quick_retries(f: &Folder) {
    let config = json!({"retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 20}});
    std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
}

/// A first run, then a changed figure: the next `watch` has something worth telling.
async fn something_to_tell(f: &Folder) {
    let (code, printed, stderr) = f.watch(&[]).await;
    assert_eq!(code, 0, "{printed}\n{stderr}");
    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
}

/// Each notification of the run: target, sent, error.
fn notifications(f: &Folder, printed: &Value) -> Vec<Value> {
    let record = read_json(&f.run_dir(printed).join("watch.json"));
    record["notifications"]
        .as_array()
        .expect("notifications")
        .clone()
}

/// Hooks answering 301, 302, 303 and 307 towards a second server that would take anything:
/// none counts as delivered (exit 4, each recorded `sent: false` with its status and the
/// Location's scheme and host, never its path), and no redirect is followed (the second
/// server hears nothing; reqwest used to turn the POST into a GET there, or post the signed
/// digest to it, and record `sent: true`). A hook given with a trailing slash is posted to
/// with it (it used to be cut, and the server's redirect back to it followed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_redirects_is_not_delivered_and_the_redirect_is_not_followed() {
    let f = Folder::new();
    quick_retries(&f);
    let landing = Server::start(Arc::new(|_| {
        Planned::respond(json_response(200, &json!({"ok": true})))
    }))
    .await;
    let elsewhere = format!("{}/landing/landing-s3cret-path", landing.url());
    let to = elsewhere.clone();
    let hooks = Server::start(Arc::new(move |req| match req.path.as_str() {
        // As Django's APPEND_SLASH does: the hook is `/exact/`, `/exact` redirects there.
        "/exact/" => Planned::respond(json_response(200, &json!({"ok": true}))),
        "/exact" => Planned::respond(raw_response(301, &[("location", "/exact/")], "")),
        path => {
            let status: u16 = path.trim_start_matches("/hook-").parse().unwrap_or(500);
            Planned::respond(raw_response(status, &[("location", to.as_str())], ""))
        }
    }))
    .await;
    something_to_tell(&f).await;
    let codes = [301, 302, 303, 307];
    let mut targets: Vec<String> = codes
        .iter()
        .map(|code| format!("{}/hook-{code}", hooks.url()))
        .collect();
    targets.push(format!("{}/exact/", hooks.url()));
    let mut args = Vec::new();
    for target in &targets {
        args.extend(["--notify", target.as_str()]);
    }
    let (code, printed, stderr) = f.watch(&args).await;
    assert_eq!(code, 4, "a redirect is no delivery: {printed}\n{stderr}");
    assert!(landing.requests().is_empty(), "no redirect followed");
    let posts = hooks.requests();
    assert_eq!(posts.len(), 5, "one POST each, none retried: {posts:?}");
    assert!(posts.iter().all(|p| p.method == "POST"), "{posts:?}");
    assert_eq!(
        posts[4].path, "/exact/",
        "the URL as given, its trailing slash kept"
    );
    let told = notifications(&f, &printed);
    assert_eq!(told.len(), 5, "{told:?}");
    assert_eq!(told[4]["sent"], true, "{told:?}");
    for (n, status) in told.iter().zip(codes) {
        assert_eq!(n["sent"], false, "{n}");
        let error = n["error"].as_str().expect("error");
        assert!(error.contains(&format!("HTTP {status}")), "{error}");
        assert!(
            error.contains(&landing.url()),
            "the Location's origin: {error}"
        );
        assert!(!error.contains("landing-s3cret-path"), "{error}");
    }
    let written = all_text(&f.root.join("w")) + &printed.to_string() + &stderr;
    assert!(!written.contains("landing-s3cret-path"), "{written}");
}

/// What a receiver says back is untrusted text: a 404 and a 503 (retried, so logged on the
/// way) whose bodies echo the hook's path and query as received, percent-encoded, decoded
/// and JSON-escaped, the signing secret plain and in base64, a terminal escape and a forged
/// line. The path, query and secret are in no file, event, stdout or stderr; each error is
/// one line without control characters, still naming the status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_echoes_the_hook_path_and_the_secret_gets_them_written_nowhere() {
    let f = Folder::new();
    quick_retries(&f);
    let hook = Server::start(Arc::new(|req| {
        let status = if req.path.contains("T503") { 503 } else { 404 };
        let full = format!("{}?{}", req.path, req.query);
        let said = format!(
            "no route for {full}, that is {} or {} or {}; signed with {SECRET} ({})\n\u{1b}]0;owned\u{7}\u{1b}[31mERROR forged line",
            utf8_percent_encode(&full, NON_ALPHANUMERIC),
            full.replace('/', "%2F").replace('?', "%3F").replace('=', "%3D"),
            full.replace('/', "\\/"),
            base64::engine::general_purpose::STANDARD.encode(SECRET),
        );
        Planned::respond(raw_response(status, &[("content-type", "text/plain")], &said))
    }))
    .await;
    something_to_tell(&f).await;
    let gone = format!(
        "{}/services/T404/hook-path-s3cret?token=query-s3cret-value",
        hook.url()
    );
    let down = format!(
        "{}/services/T503/hook-path-s3cret?token=query-s3cret-value",
        hook.url()
    );
    let (code, printed, stderr) = f.watch(&["--notify", &gone, "--notify", &down]).await;
    assert_eq!(code, 4, "{printed}\n{stderr}");
    assert_eq!(hook.requests().len(), 3, "the 404 once, the 503 twice");
    let told = notifications(&f, &printed);
    for (n, status) in told.iter().zip(["HTTP 404", "HTTP 503"]) {
        let error = n["error"].as_str().expect("error");
        assert!(error.contains(status), "{error}");
        assert!(
            !error.contains(['\n', '\r', '\u{1b}', '\u{7}']),
            "one clean line: {error:?}"
        );
    }
    let events = read_ndjson(&f.run_dir(&printed).join("watch.events.ndjson"));
    let events: String = events.iter().map(Value::to_string).collect();
    let written = all_text(&f.root.join("w")) + &printed.to_string() + &stderr + &events;
    let b64 = base64::engine::general_purpose::STANDARD.encode(SECRET);
    for secret in ["s3cret", "T404/hook", "query-s3cret", SECRET, b64.as_str()] {
        assert!(!written.contains(secret), "`{secret}` written: {written}");
    }
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert!(
        stderr.contains("HTTP 503"),
        "the retry is still logged: {stderr}"
    );
}
