//! A real SMTP server for the mail tests: aiosmtpd (a third-party server, not ours), installed
//! by `scripts/setup/smtp-python.sh` in `target/smtp-venv`, listening on 127.0.0.1 (in the
//! clear, over STARTTLS or TLS with a certificate [`self_signed`] makes, with or without a
//! required login) and
//! keeping every message it receives in a Maildir, which [`SmtpServer::messages`] reads back
//! with Python's own `email` parser. A missing virtualenv fails the test with the command that
//! installs it: no mail test is ever skipped. Dropping it stops the server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The server's Python, as `scripts/setup/smtp-python.sh` installs it.
fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/smtp-venv/bin/python");
    assert!(
        python.exists(),
        "`{}` is missing: run `bash scripts/setup/smtp-python.sh` (scripts/test.sh runs it)",
        python.display()
    );
    python
}

/// Every message of a Maildir as JSON: subject, from, to, and each part's type and text.
const READ_MAILDIR: &str = r#"
import email, json, mailbox, sys
from email import policy
out = []
for key, raw in mailbox.Maildir(sys.argv[1], create=False).items():
    msg = email.message_from_bytes(raw.as_bytes(), policy=policy.default)
    parts = [{"type": p.get_content_type(), "text": p.get_content()} for p in msg.walk() if not p.is_multipart()]
    out.append({"subject": msg["subject"], "from": msg["from"], "to": msg["to"],
                "type": msg.get_content_type(), "parts": parts, "raw": raw.as_bytes().decode("utf-8", "replace")})
print(json.dumps(out))
"#;

/// aiosmtpd's own `SMTP` protocol on a loopback port, as its command line starts it, with what
/// its command line cannot give: a login (`AUTH PLAIN`/`LOGIN`, required, only after TLS when
/// the server speaks TLS) checked against one user and password.
const SERVE: &str = r#"
import asyncio, base64, json, ssl, sys, urllib.parse, warnings
warnings.simplefilter("ignore")
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword
cfg = json.loads(sys.argv[1])
ctx = None
if cfg["security"] != "none":
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cfg["cert"], cfg["key"])
kw = {}
if cfg["security"] == "starttls":
    kw.update(tls_context=ctx, require_starttls=True)
def check(server, session, envelope, mechanism, data):
    ok = isinstance(data, LoginPassword) and (data.login.decode(), data.password.decode()) == (cfg["user"], cfg["password"])
    if ok or not cfg.get("echo") or not isinstance(data, LoginPassword):
        return AuthResult(success=ok, handled=False)
    login, password = data.login.decode(), data.password.decode()
    plain = base64.b64encode(b"\0" + data.login + b"\0" + data.password).decode()
    said = ("535-5.7.8 refused %s with %s (%s, %s)\x1b]0;owned\x07\r\n535 5.7.8 AUTH PLAIN %s, LOGIN %s %s\x1b[31m"
            % (login, password, urllib.parse.quote(password, safe=""), urllib.parse.quote_plus(password),
               plain, base64.b64encode(data.login).decode(), base64.b64encode(data.password).decode()))
    return AuthResult(success=False, handled=False, message=said)
if cfg.get("user"):
    kw.update(authenticator=check, auth_required=True, auth_require_tls=cfg["security"] != "none")
handler = Mailbox(cfg["maildir"])
loop = asyncio.new_event_loop()
server = loop.run_until_complete(loop.create_server(
    lambda: SMTP(handler, **kw), "127.0.0.1", cfg["port"],
    ssl=ctx if cfg["security"] == "tls" else None))
loop.run_forever()
"#;

/// The one login a server started with one accepts.
pub struct Login<'a> {
    pub user: &'a str,
    pub password: &'a str,
    /// Whether a refused login is quoted back in the 535 (a reply of two lines, with terminal
    /// escapes): the user, the password plain, percent- and form-encoded, and the base64 the
    /// client sent (`AUTH PLAIN`'s, `AUTH LOGIN`'s), as a careless server may.
    pub echo: bool,
}

pub struct SmtpServer {
    child: std::process::Child,
    pub port: u16,
    maildir: PathBuf,
}

/// How the server speaks: in the clear, plain then upgraded (STARTTLS, which it requires
/// before any mail), or TLS from the first byte; the TLS modes with the certificate and key
/// of these PEM files.
pub enum Security<'a> {
    None,
    Starttls { cert: &'a Path, key: &'a Path },
    Tls { cert: &'a Path, key: &'a Path },
}

/// A certificate for `localhost` that signs itself, and its key, as PEM files in `dir`:
/// `(cert, key)`. Only a client told to trust it does.
pub fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
        .expect("a self-signed certificate");
    let (cert, key) = (dir.join("smtp-cert.pem"), dir.join("smtp-key.pem"));
    std::fs::write(&cert, made.cert.pem()).expect("cert");
    std::fs::write(&key, made.signing_key.serialize_pem()).expect("key");
    (cert, key)
}

impl SmtpServer {
    /// Starts aiosmtpd on a free loopback port, in the clear, its Maildir in `dir`; returns
    /// once it accepts connections.
    pub fn start(dir: &Path) -> SmtpServer {
        SmtpServer::start_with(dir, Security::None, None)
    }

    /// Starts aiosmtpd on a free loopback port speaking `security`, requiring `login` when
    /// given, its Maildir in `dir/maildir-<port>`; returns once it accepts connections.
    pub fn start_with(dir: &Path, security: Security, login: Option<Login>) -> SmtpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let maildir = dir.join(format!("maildir-{port}"));
        let (kind, files) = match security {
            Security::None => ("none", None),
            Security::Starttls { cert, key } => ("starttls", Some((cert, key))),
            Security::Tls { cert, key } => ("tls", Some((cert, key))),
        };
        let config = serde_json::json!({
            "port": port,
            "maildir": maildir,
            "security": kind,
            "cert": files.map(|f| f.0),
            "key": files.map(|f| f.1),
            "user": login.as_ref().map(|l| l.user),
            "password": login.as_ref().map(|l| l.password),
            "echo": login.as_ref().is_some_and(|l| l.echo),
        });
        let child = std::process::Command::new(python())
            .args(["-c", SERVE])
            .arg(config.to_string())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start aiosmtpd");
        let server = SmtpServer {
            child,
            port,
            maildir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "aiosmtpd did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// Every message received, read back by Python's `email` parser.
    pub fn messages(&self) -> Vec<Value> {
        if !self.maildir.join("new").is_dir() {
            return Vec::new();
        }
        let out = std::process::Command::new(python())
            .args(["-c", READ_MAILDIR])
            .arg(&self.maildir)
            .output()
            .expect("read the maildir");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let all: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        all.as_array().cloned().unwrap_or_default()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
