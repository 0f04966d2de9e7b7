//! Writing a transcript: appended one whole line at a time, secrets redacted, a `session` line
//! first for each invocation.

use crate::sync::Locked;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

use super::line::{Line, SessionLine};
use crate::atomic::{LineFile, Tee};
use crate::settings::ApiKey;
use crate::settings::secret::redact;

/// Appends the lines of one invocation to a transcript.
#[derive(Debug)]
pub struct Recorder {
    session: u32,
    file: LineFile,
    calls: Mutex<HashMap<String, u32>>,
    secrets: Vec<ApiKey>,
}

impl Recorder {
    /// Opens (or creates) the transcript at `path` and appends the `session` line of this
    /// invocation: `session` is filled in (one more than the transcript holds). A line left
    /// unfinished by a crash is ended first, so it stays one broken line, not two. A symbolic
    /// link there is refused ([`crate::atomic::append`]). Every line goes to `tee` too (a queue
    /// worker's writer).
    pub fn open(
        path: &Path,
        mut session: SessionLine,
        secrets: Vec<ApiKey>,
        tee: Option<Tee>,
    ) -> std::io::Result<Recorder> {
        let mut file = crate::atomic::append(path, true)?;
        let (sessions, ends_clean) = scan(&mut file)?;
        session.session = sessions + 1;
        let recorder = Recorder {
            session: session.session,
            file: LineFile::new(path, "transcript", file, tee),
            calls: Mutex::new(HashMap::new()),
            secrets,
        };
        if !ends_clean {
            // Its tee too: a copy of the transcript elsewhere ends the same line.
            recorder.file.write(b"\n");
        }
        recorder.write(&Line::Session(session));
        Ok(recorder)
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// This invocation's session number, for its lines.
    pub fn session(&self) -> u32 {
        self.session
    }

    /// The number of the next call under `key`, from 0.
    /// The number of the next call under `key`, not taken.
    pub(super) fn peek_call(&self, key: &str) -> u32 {
        let calls = self.calls.locked();
        calls.get(key).copied().unwrap_or(0)
    }

    pub(super) fn next_call(&self, key: &str) -> u32 {
        let mut calls = self.calls.locked();
        let n = calls.entry(key.to_string()).or_insert(0);
        let call = *n;
        *n += 1;
        call
    }

    /// Appends `line` in one write, with every secret of the run (and of the process,
    /// [`crate::text::secrets`]) replaced by `***`. A write
    /// that fails is logged once; the run goes on without its transcript.
    pub fn write(&self, line: &Line) {
        let text = match serde_json::to_string(line) {
            Ok(text) => {
                crate::text::secrets::mask(&redact(&text, &self.secrets)).into_owned() + "\n"
            }
            Err(e) => {
                tracing::warn!("cannot encode a transcript line: {e}");
                return;
            }
        };
        self.file.write(text.as_bytes());
    }
}

/// How many sessions `file` holds, and whether it ends with a complete line.
fn scan(file: &mut File) -> std::io::Result<(u32, bool)> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((0, true));
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    file.seek(SeekFrom::Start(0))?;
    let mut sessions = 0;
    for line in BufReader::new(&mut *file).split(b'\n') {
        if line?.starts_with(br#"{"kind":"session""#) {
            sessions += 1;
        }
    }
    Ok((sessions, last[0] == b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> SessionLine {
        SessionLine {
            session: 0,
            at: "t".into(),
            version: "v".into(),
            workflow_id: "wf".into(),
            query: "Q?".into(),
            max_rounds: None,
            replay_of: None,
        }
    }

    #[test]
    fn sessions_are_numbered_calls_counted_and_secrets_redacted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.transcript.jsonl");
        let key = ApiKey::new("sk-very-secret").expect("key");
        let first = Recorder::open(&path, session(), vec![key.clone()], None).expect("open");
        assert_eq!(first.session(), 1);
        assert_eq!((first.next_call("a"), first.next_call("a")), (0, 1));
        assert_eq!(first.next_call("b"), 0);
        let mut s = session();
        s.query = "leaks sk-very-secret".into();
        first.write(&Line::Session(s));
        drop(first);
        // A crash left half a line.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("f");
        std::io::Write::write_all(&mut f, b"{\"kind\":\"llm\",\"ses").expect("w");
        drop(f);
        let second = Recorder::open(&path, session(), vec![key], None).expect("reopen");
        assert_eq!(second.session(), 3, "the written session line counts too");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains("sk-very-secret"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[2], "{\"kind\":\"llm\",\"ses",
            "the broken line stays alone"
        );
        assert!(lines[3].contains("\"session\":3"));
    }
}
