//! A real SMTP server for the mail tests: aiosmtpd (a third-party server, not ours), installed
//! by `scripts/setup/smtp-python.sh` in `target/smtp-venv`, listening on 127.0.0.1 and
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
        SmtpServer::start_with(dir, Security::None)
    }

    /// Starts aiosmtpd on a free loopback port speaking `security`, its Maildir in
    /// `dir/maildir-<port>`; returns once it accepts connections.
    pub fn start_with(dir: &Path, security: Security) -> SmtpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let maildir = dir.join(format!("maildir-{port}"));
        let mut command = std::process::Command::new(python());
        command.args(["-m", "aiosmtpd", "-n", "-l"]);
        command.arg(format!("127.0.0.1:{port}"));
        match security {
            Security::None => {}
            Security::Starttls { cert, key } => {
                command.arg("--tlscert").arg(cert).arg("--tlskey").arg(key);
            }
            Security::Tls { cert, key } => {
                command
                    .arg("--smtpscert")
                    .arg(cert)
                    .arg("--smtpskey")
                    .arg(key);
            }
        }
        let child = command
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
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
