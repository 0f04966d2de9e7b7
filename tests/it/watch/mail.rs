//! `watch --notify mailto:` through a real SMTP server (aiosmtpd, a third-party server) on
//! loopback: in the clear to this machine, and over STARTTLS and TLS to a server whose
//! certificate only `notify.smtp.caFile` vouches for.

use serde_json::{Value, json};

use super::{Folder, QUESTION, SECRET, all_text};
use crate::support::scenario::read_json;
use crate::support::smtp::{Login, Security, SmtpServer};

const PASSWORD: &str = "smtp-pa55word-right";
const WRONG_PASSWORD: &str = "smtp-pa55word-wrong";

/// `--notify mailto:` through a real SMTP server (aiosmtpd) on loopback: one mail per run with
/// a plain-text and an HTML part that say which figure changed; no secret in it, nor in any
/// file; not sent again when the run is resumed. Without `notify.smtp`, a mail target exits 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_figure_is_mailed_through_a_real_smtp_server_with_both_parts() {
    use crate::support::smtp::SmtpServer;

    let f = Folder::new();
    let out = f.watch_raw(&["--notify", "mailto:team@example.org"]).await;
    out.code(2).stderr_contains("add `notify.smtp`");
    let smtp = SmtpServer::start(&f.root);
    let config = json!({"notify": {"smtp": {"host": "127.0.0.1", "port": smtp.port,
        "security": "none", "from": "researchflow <watch@example.org>"}}});
    std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
    let mail = ["--notify", "mailto:team@example.org"];
    assert_eq!(f.watch(&mail).await.0, 0);
    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
    let (code, changed, stderr) = f.watch(&mail).await;
    assert_eq!(code, 3, "{changed}\n{stderr}");
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "one mail: {messages:?}");
    let m = &messages[0];
    let run = changed["run"].as_str().expect("run");
    assert_eq!(
        m["subject"],
        format!("researchflow watch: 1 question(s) changed (run {run})")
    );
    assert_eq!(m["to"], "team@example.org");
    assert_eq!(m["type"], "multipart/alternative");
    let part = |kind: &str| {
        m["parts"]
            .as_array()
            .expect("parts")
            .iter()
            .find(|p| p["type"] == kind)
            .and_then(|p| p["text"].as_str())
            .unwrap_or_else(|| panic!("no {kind} part: {m}"))
            .to_string()
    };
    for text in [part("text/plain"), part("text/html")] {
        assert!(
            text.contains("270 wh/kg -&gt; 290 wh/kg") || text.contains("270 wh/kg -> 290 wh/kg"),
            "{text}"
        );
        assert!(text.contains(QUESTION), "{text}");
    }
    assert!(!m["raw"].as_str().expect("raw").contains(SECRET));
    let record = read_json(&f.run_dir(&changed).join("watch.json"));
    assert_eq!(
        record["notifications"][0]["target"],
        "mailto:team@example.org"
    );
    assert_eq!(record["notifications"][0]["sent"], true);

    // Resumed, the run does not mail again.
    let record_path = f.run_dir(&changed).join("watch.json");
    let mut record = read_json(&record_path);
    record["finished"] = Value::Null;
    std::fs::write(&record_path, record.to_string()).expect("unfinish");
    let (code, _, _) = f.watch(&mail).await;
    assert_eq!(code, 3);
    assert_eq!(smtp.messages().len(), 1, "not mailed twice");
}

/// Over TLS from the first byte and over STARTTLS (which the server requires before any
/// mail, and a login after it), to a server whose certificate signs itself: refused until
/// `notify.smtp.caFile` names that certificate (exit 4, the reason recorded, nothing
/// received), then delivered on both; a wrong password is refused, the right one (read from
/// the variable `passwordEnv` names) logs in, and neither is written anywhere. A `caFile`
/// that is not a certificate file is refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_goes_over_tls_and_starttls_to_a_server_only_the_configured_certificate_vouches_for() {
    let f = Folder::new();
    let (cert, key) = crate::support::smtp::self_signed(&f.root);
    let tls = SmtpServer::start_with(
        &f.root,
        Security::Tls {
            cert: &cert,
            key: &key,
        },
        None,
    );
    let starttls = SmtpServer::start_with(
        &f.root,
        Security::Starttls {
            cert: &cert,
            key: &key,
        },
        Some(Login {
            user: "watch",
            password: PASSWORD,
            echo: false,
        }),
    );
    let configure = |port: u16, security: &str, ca_file: Option<&str>| {
        let mut smtp = json!({"host": "localhost", "port": port, "security": security,
            "from": "researchflow <watch@example.org>"});
        if let Some(ca) = ca_file {
            smtp["caFile"] = json!(ca);
        }
        if security == "starttls" {
            smtp["user"] = json!("watch");
            smtp["passwordEnv"] = json!("RESEARCHFLOW_SMTP_PASSWORD");
        }
        let config = json!({"notify": {"smtp": smtp},
            "retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 20}});
        std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
    };
    let mail = ["--notify", "mailto:team@example.org"];

    configure(tls.port, "tls", None);
    assert_eq!(f.watch(&mail).await.0, 0, "a first run tells nothing");
    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
    let (code, printed, stderr) = f.watch(&mail).await;
    assert_eq!(
        code, 4,
        "an unknown certificate is refused: {printed}\n{stderr}"
    );
    let record = read_json(&f.run_dir(&printed).join("watch.json"));
    let error = record["notifications"][0]["error"].as_str().expect("error");
    assert!(error.contains("certificate"), "{error}");
    assert!(tls.messages().is_empty());

    // Relative to the config file's folder.
    configure(tls.port, "tls", Some("smtp-cert.pem"));
    f.change_figure("about 290 Wh/kg", "about 310 Wh/kg");
    let (code, printed, stderr) = f.watch(&mail).await;
    assert_eq!(code, 3, "{printed}\n{stderr}");
    told(&tls.messages(), "290 wh/kg -> 310 wh/kg");

    configure(
        starttls.port,
        "starttls",
        Some(cert.to_str().expect("utf-8")),
    );
    f.change_figure("about 310 Wh/kg", "about 330 Wh/kg");
    let wrong = f
        .watch_in(&mail, &[("RESEARCHFLOW_SMTP_PASSWORD", WRONG_PASSWORD)])
        .await;
    assert_eq!(wrong.status, 4, "a wrong password: {}", wrong.stderr);
    let record = read_json(&f.run_dir(&wrong.stdout_json()).join("watch.json"));
    let error = record["notifications"][0]["error"].as_str().expect("error");
    assert!(error.contains("535"), "the server's refusal: {error}");
    assert!(starttls.messages().is_empty());
    f.change_figure("about 330 Wh/kg", "about 350 Wh/kg");
    let right = f
        .watch_in(&mail, &[("RESEARCHFLOW_SMTP_PASSWORD", PASSWORD)])
        .await;
    assert_eq!(right.status, 3, "{}", right.stderr);
    told(&starttls.messages(), "330 wh/kg -> 350 wh/kg");
    let written = all_text(&f.root.join("w")) + &wrong.stderr + &right.stderr + &right.stdout;
    for secret in [PASSWORD, WRONG_PASSWORD] {
        assert!(
            !written.contains(secret),
            "no password on disk or in output"
        );
    }
    assert_eq!(tls.messages().len(), 1, "one server a run");

    configure(starttls.port, "starttls", Some("smtp-key.pem"));
    let out = f.watch_raw(&mail).await;
    out.code(2).stderr_contains("notify.smtp.caFile");
    assert!(!out.stderr.contains("PRIVATE KEY"), "{}", out.stderr);
}

/// A server that refuses the login and quotes it back in its 535 (two lines, with terminal
/// escapes): the user, the password plain, percent- and form-encoded, and the base64 of
/// `AUTH PLAIN` and `AUTH LOGIN`. Exit 4, the error still names the 535, as one line without
/// control characters; neither the password nor its encodings are in any file, event, stdout
/// or stderr (they all were).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_smtp_server_that_echoes_the_password_in_its_535_gets_it_written_nowhere() {
    use base64::Engine;

    const ECHOED: &str = "echo-pa55/w rd+s3cret";
    let f = Folder::new();
    let smtp = SmtpServer::start_with(
        &f.root,
        Security::None,
        Some(Login {
            user: "watch-login",
            password: PASSWORD,
            echo: true,
        }),
    );
    let config = json!({"notify": {"smtp": {"host": "127.0.0.1", "port": smtp.port,
        "security": "none", "user": "watch-login", "passwordEnv": "RESEARCHFLOW_SMTP_PASSWORD",
        "from": "researchflow <watch@example.org>"}},
        "retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 20}});
    std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
    let mail = ["--notify", "mailto:team@example.org"];
    assert_eq!(f.watch(&mail).await.0, 0, "a first run tells nothing");
    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
    let out = f
        .watch_in(&mail, &[("RESEARCHFLOW_SMTP_PASSWORD", ECHOED)])
        .await;
    assert_eq!(out.status, 4, "a refused login: {}", out.stderr);
    assert!(smtp.messages().is_empty());
    let printed = out.stdout_json();
    let record = read_json(&f.run_dir(&printed).join("watch.json"));
    let error = record["notifications"][0]["error"].as_str().expect("error");
    assert!(error.contains("535"), "the server's refusal: {error}");
    assert!(
        !error.contains(['\n', '\r', '\u{1b}', '\u{7}']),
        "one clean line: {error:?}"
    );
    let events =
        std::fs::read_to_string(f.run_dir(&printed).join("watch.events.ndjson")).expect("events");
    let written = all_text(&f.root.join("w")) + &out.stdout + &out.stderr + &events;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let forms = [
        ECHOED.to_string(),
        "s3cret".to_string(),
        "echo-pa55%2Fw%20rd%2Bs3cret".to_string(),
        b64(ECHOED),
        b64(&format!("\0watch-login\0{ECHOED}")),
    ];
    for form in &forms {
        assert!(
            !written.contains(form.as_str()),
            "`{form}` written: {written}"
        );
    }
    assert!(!out.stderr.contains('\u{1b}'), "{}", out.stderr);
}

/// A `mailto:` that is not one plain address is refused before anything runs (exit 2 naming
/// `--notify` and the address, control characters shown escaped, no run folder): several
/// addresses (`;`, `,`), a line break that would add a header, a name or spaces, mailto
/// headers, percent-encoding, and what lettre's parser refuses. They used to pass the check,
/// run every question, then fail to send (exit 4, a raw newline in the event).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_mailto_is_refused_before_anything_runs() {
    let f = Folder::new();
    let config = json!({"notify": {"smtp": {"host": "127.0.0.1", "port": 9, "security": "none",
        "from": "researchflow <watch@example.org>"}}});
    std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
    let cases = [
        (
            "mailto:a@b.example;c@d.example",
            "mailto:a@b.example;c@d.example",
        ),
        (
            "mailto:a@b.example,c@d.example",
            "mailto:a@b.example,c@d.example",
        ),
        (
            "mailto:a@b.example\r\nBcc: c@d.example",
            "mailto:a@b.example\\r\\nBcc: c@d.example",
        ),
        ("mailto:a@b.example\n", "mailto:a@b.example\\n"),
        ("mailto:Team <a@b.example>", "mailto:Team <a@b.example>"),
        (
            "mailto:a@b.example?cc=c@d.example",
            "mailto:a@b.example?cc=c@d.example",
        ),
        ("mailto:a%40b.example", "mailto:a%40b.example"),
        ("mailto:", "mailto:`"),
        ("mailto:not-an-address", "mailto:not-an-address"),
        ("mailto:a@@b.example", "mailto:a@@b.example"),
        ("mailto:a@b..example", "mailto:a@b..example"),
    ];
    for (target, shown) in cases {
        let out = f.watch_raw(&["--notify", target]).await;
        out.code(2).stderr_contains(&format!("`--notify {shown}"));
        assert!(!out.stderr.contains('\r'), "{:?}", out.stderr);
        assert!(!f.root.join("w").exists(), "nothing ran for {target:?}");
    }
}

/// `messages` is one mail whose plain text tells `change`.
fn told(messages: &[Value], change: &str) {
    assert_eq!(messages.len(), 1, "one mail: {messages:?}");
    let text = messages[0]["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .find(|p| p["type"] == "text/plain")
        .and_then(|p| p["text"].as_str())
        .expect("a plain-text part");
    assert!(text.contains(change), "{text}");
}

/// Issue 56: bidirectional controls and zero-width characters of a question and of a
/// document reached the mail as they were (U+202E shows what follows it reversed). Now the
/// mail, both parts and its subject, holds none: they are removed where text enters and again
/// where the mail is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bidi_and_zero_width_characters_of_a_question_and_a_document_are_in_no_mail() {
    let f = Folder::new();
    let question = "How do solid\u{202e}-state batteries\u{200b} compare with lithium-ion?";
    std::fs::write(f.root.join("q.txt"), format!("{question}\n")).expect("questions");
    let smtp = SmtpServer::start(&f.root);
    let config = json!({"notify": {"smtp": {"host": "127.0.0.1", "port": smtp.port,
        "security": "none", "from": "researchflow <watch@example.org>"}}});
    std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
    let mail = ["--notify", "mailto:team@example.org"];
    assert_eq!(f.watch(&mail).await.0, 0);
    f.change_figure(
        "about 270 Wh/kg",
        "about 290\u{200b} Wh/kg\u{2066}\u{2069}\u{feff}",
    );
    let (code, changed, stderr) = f.watch(&mail).await;
    assert_eq!(code, 3, "{changed}\n{stderr}");
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "one mail: {messages:?}");
    let m = &messages[0];
    let mut texts = vec![m["subject"].as_str().unwrap_or_default().to_string()];
    for part in m["parts"].as_array().expect("parts") {
        texts.push(part["text"].as_str().unwrap_or_default().to_string());
    }
    assert!(
        texts.iter().any(|t| t.contains("290 wh/kg")),
        "the change is told: {texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("How do solid-state batteries compare")),
        "{texts:?}"
    );
    for text in &texts {
        for c in ['\u{202e}', '\u{200b}', '\u{2066}', '\u{2069}', '\u{feff}'] {
            assert!(!text.contains(c), "{c:?} in {text:?}");
        }
    }
}
