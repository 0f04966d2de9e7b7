//! A PostgreSQL server for the queue's tests, started by the test itself on loopback in a
//! temporary folder: `initdb` (password authentication over TCP, user [`USER`] with
//! [`PASSWORD`]), then `pg_ctl start` on a free port. As root, both run as the unprivileged
//! `postgres` user (initdb refuses root). [`Postgres::shared`] is one server per test binary,
//! started once, with a database per test ([`Postgres::database`]); [`Postgres::start`] is a
//! server of the test's own, for a test that stops and restarts it. A watchdog stops a server
//! and removes its folder when the test process ends, however it ends. The binaries are
//! found in `/usr/lib/postgresql/*/bin` or on PATH; `scripts/setup/postgres.sh` installs them.
//! Without them the test fails, naming the script: no test is skipped.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const USER: &str = "rf";
pub const PASSWORD: &str = "pg-SECRET-4242";

/// A running server.
pub struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
    as_postgres: bool,
}

static SHARED: OnceLock<Postgres> = OnceLock::new();
static DATABASES: AtomicUsize = AtomicUsize::new(0);

impl Postgres {
    /// The test binary's server, started on first use.
    pub fn shared() -> &'static Postgres {
        SHARED.get_or_init(Postgres::start)
    }

    /// A server of its own, stopped when dropped.
    pub fn start() -> Postgres {
        let bin = binaries();
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("researchflow-pg-")
            .tempdir()
            .expect("tempdir")
            .keep();
        std::fs::write(dir.join("pw"), PASSWORD).expect("password file");
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(status.success(), "chown the server's folder to `postgres`");
        }
        let port = free_port();
        let pg = Postgres {
            bin,
            dir,
            port,
            as_postgres,
        };
        pg.run(
            "initdb",
            &[
                "-D",
                &pg.data(),
                "-U",
                USER,
                "--pwfile",
                &pg.dir.join("pw").display().to_string(),
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        pg.watchdog();
        pg.up();
        pg
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// One of the server's programs, to run as `postgres` when root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        }
    }

    /// Runs one of the server's programs; panics with its output.
    fn run(&self, program: &str, args: &[&str]) {
        let out = self
            .command(program)
            .args(args)
            .output()
            .expect("run a PostgreSQL program");
        assert!(
            out.status.success(),
            "{program} {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the server (again).
    pub fn up(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                &log,
                "-w",
                "start",
            ],
        );
    }

    /// Kills the server as a crash would (`-m immediate`): what it had not written yet (an
    /// asynchronous commit's WAL still in memory) is lost, and it recovers at the next start.
    pub fn crash(&self) {
        self.run(
            "pg_ctl",
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
    }

    /// A new database on the server; its URL.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::SeqCst)
        );
        let port = self.port.to_string();
        let host = self.dir.display().to_string();
        self.run("createdb", &["-h", &host, "-p", &port, "-U", USER, &name]);
        self.url(&name)
    }

    /// The URL of database `db`, with the password.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{db}", self.port)
    }

    /// The whole database as SQL (`pg_dump`): what is stored.
    pub fn dump(&self, db: &str) -> String {
        let out = Command::new(self.bin.join("pg_dump"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                USER,
                db,
            ])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .expect("pg_dump");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops the server and removes its folder once this process is gone.
    // Never waited for: the watchdog outlives the test process by design (init reaps it).
    #[allow(clippy::zombie_processes)]
    fn watchdog(&self) {
        let stop = format!(
            "{} {} -D {} -m immediate stop",
            if self.as_postgres {
                "runuser -u postgres --"
            } else {
                ""
            },
            self.bin.join("pg_ctl").display(),
            self.data()
        );
        let script = format!(
            "while kill -0 {} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {}",
            std::process::id(),
            self.dir.display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the server's watchdog");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The folder of `initdb` and `pg_ctl`: the newest `/usr/lib/postgresql/*/bin`, else PATH's.
fn binaries() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return bin;
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").exists() && dir.join("pg_ctl").exists())
        .unwrap_or_else(|| {
            panic!("PostgreSQL's `initdb` and `pg_ctl` are not installed: run `bash scripts/setup/postgres.sh` (or `bash scripts/test.sh`)")
        })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
