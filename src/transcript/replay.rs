//! Serving a recorded run back: every LLM and search answer from a transcript, matched by the
//! call's key (role, node, round) and number, after checking that the run asks what the
//! recorded run asked.

use crate::sync::Locked;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::Site;
use super::line::{Line, LlmLine, PageLine, SearchLine, SessionLine};

/// The largest transcript read: far above any real run's.
const MAX_BYTES: u64 = 1 << 30;

/// The replay asked something the transcript does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the replay diverged at the {call}: {why}")]
pub struct Diverged {
    /// The call, as `Site::describe` names it.
    pub call: String,
    pub why: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read the transcript `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "`{path}` is not a transcript: {why}; give the `<plan>.transcript.jsonl` a run wrote beside its plan"
    )]
    NotATranscript { path: PathBuf, why: String },
}

/// The calls of a transcript, ready to be served.
#[derive(Debug)]
pub struct Replayer {
    path: PathBuf,
    first: Option<SessionLine>,
    /// Per (key, call): the session the lines come from, and the call's attempts.
    llm: HashMap<(String, u32), (u32, Vec<LlmLine>)>,
    search: HashMap<(String, u32), (u32, SearchLine)>,
    /// Per (key, URL): the latest session's read of the page.
    pages: HashMap<(String, String), PageLine>,
    calls: Mutex<HashMap<String, u32>>,
}

impl Replayer {
    /// Reads the transcript at `path`. A call recorded in several sessions (a task run again
    /// after an interruption) is served as the latest session recorded it. Lines that are not
    /// transcript lines (one cut by a crash) are skipped with a warning.
    pub fn load(path: &Path) -> Result<Replayer, LoadError> {
        let io = |source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        let not = |why: String| LoadError::NotATranscript {
            path: path.to_path_buf(),
            why,
        };
        if !meta.is_file() {
            return Err(not("not a regular file".into()));
        }
        if meta.len() > MAX_BYTES {
            return Err(not(format!("larger than {MAX_BYTES} bytes")));
        }
        let mut replayer = Replayer {
            path: path.to_path_buf(),
            first: None,
            llm: HashMap::new(),
            search: HashMap::new(),
            pages: HashMap::new(),
            calls: Mutex::new(HashMap::new()),
        };
        let mut skipped = 0;
        for (n, line) in BufReader::new(File::open(path).map_err(io)?)
            .lines()
            .enumerate()
        {
            let line = line.map_err(io)?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Line>(&line) {
                Ok(parsed) => replayer.add(parsed),
                Err(e) => {
                    skipped += 1;
                    tracing::warn!(
                        "transcript `{}` line {}: not a transcript line ({e}); skipped",
                        path.display(),
                        n + 1
                    );
                }
            }
        }
        if replayer.first.is_none() {
            return Err(not(if skipped > 0 {
                format!("none of its {skipped} line(s) is a transcript line")
            } else {
                "it holds no session".into()
            }));
        }
        Ok(replayer)
    }

    fn add(&mut self, line: Line) {
        match line {
            Line::Session(s) => {
                self.first.get_or_insert(s);
            }
            Line::Llm(l) => {
                let site = Site {
                    node: l.node.clone(),
                    round: l.round,
                };
                let slot = self
                    .llm
                    .entry((site.llm_key(&l.role), l.call))
                    .or_insert((l.session, Vec::new()));
                if l.session > slot.0 {
                    *slot = (l.session, Vec::new());
                }
                if l.session == slot.0 {
                    slot.1.push(*l);
                }
            }
            Line::Search(s) => {
                let site = Site {
                    node: s.node.clone(),
                    round: s.round,
                };
                let key = (site.search_key(), s.call);
                if self.search.get(&key).is_none_or(|(at, _)| s.session >= *at) {
                    self.search.insert(key, (s.session, s));
                }
            }
            Line::Page(p) => {
                let site = Site {
                    node: p.node.clone(),
                    round: p.round,
                };
                let key = (site.page_key(), p.url.clone());
                if self
                    .pages
                    .get(&key)
                    .is_none_or(|at| p.session >= at.session)
                {
                    self.pages.insert(key, p);
                }
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The question of the recorded run (its first session's).
    pub fn query(&self) -> Option<&str> {
        self.first.as_ref().map(|s| s.query.as_str())
    }

    /// The most planning rounds the recorded run allowed.
    pub fn max_rounds(&self) -> Option<u32> {
        self.first.as_ref().and_then(|s| s.max_rounds)
    }

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

    /// The last attempt of the recorded LLM call `call` of `role` at `site`, if the run asks it
    /// the same `messages`.
    pub fn llm(
        &self,
        role: &str,
        site: &Site,
        call: u32,
        messages: &[Value],
    ) -> Result<&LlmLine, Diverged> {
        let diverged = |why: String| Diverged {
            call: site.describe(&format!("{role} LLM call"), call),
            why,
        };
        let last = self
            .llm
            .get(&(site.llm_key(role), call))
            .and_then(|(_, attempts)| attempts.iter().max_by_key(|l| l.attempt))
            .ok_or_else(|| diverged("the transcript holds no such call".into()))?;
        match first_difference(&last.messages, messages) {
            None => Ok(last),
            Some(why) => Err(diverged(why)),
        }
    }

    /// The recorded read of the page at `url` for `site`.
    pub fn page(&self, site: &Site, url: &str) -> Result<&PageLine, Diverged> {
        self.pages
            .get(&(site.page_key(), url.to_string()))
            .ok_or_else(|| Diverged {
                call: site.describe(&format!("read of `{}`", excerpt(url, 0)), 0),
                why: "the transcript holds no read of this page".into(),
            })
    }

    /// The recorded search `call` at `site`, if the run searches the same `query`.
    pub fn search(&self, site: &Site, call: u32, query: &str) -> Result<&SearchLine, Diverged> {
        let diverged = |why: String| Diverged {
            call: site.describe("search", call),
            why,
        };
        let (_, line) = self
            .search
            .get(&(site.search_key(), call))
            .ok_or_else(|| diverged("the transcript holds no such search".into()))?;
        if line.query != query {
            return Err(diverged(format!(
                "the transcript searched `{}`, the run searches `{}`",
                excerpt(&line.query, 0),
                excerpt(query, 0)
            )));
        }
        Ok(line)
    }
}

/// Where the messages a run sends first differ from the recorded ones, in words.
fn first_difference(recorded: &[Value], now: &[Value]) -> Option<String> {
    for (i, (was, is)) in recorded.iter().zip(now).enumerate() {
        if was == is {
            continue;
        }
        let role = is["role"].as_str().unwrap_or("?");
        let (was, is) = (
            was["content"].as_str().unwrap_or_default(),
            is["content"].as_str().unwrap_or_default(),
        );
        let at = was
            .chars()
            .zip(is.chars())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| was.chars().count().min(is.chars().count()));
        return Some(format!(
            "message {} ({role}) differs from character {}: the transcript has «{}», the run sends «{}»",
            i + 1,
            at + 1,
            excerpt(was, at),
            excerpt(is, at)
        ));
    }
    (recorded.len() != now.len()).then(|| {
        format!(
            "the transcript has {} message(s), the run sends {}",
            recorded.len(),
            now.len()
        )
    })
}

/// A one-line excerpt of `text` from character `at`.
fn excerpt(text: &str, at: usize) -> String {
    let tail: String = text.chars().skip(at).collect();
    crate::text::one_line(&tail, 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn llm_line(session: u32, call: u32, attempt: u32, content: &str) -> String {
        json!({"kind": "llm", "session": session, "at": "t", "role": "planning", "round": 1,
               "call": call, "attempt": attempt, "model": "m", "url": "u",
               "messages": [{"role": "user", "content": "What next?"}],
               "content": content, "latency_ms": 1})
        .to_string()
    }

    fn session(n: u32) -> String {
        json!({"kind": "session", "session": n, "at": "t", "version": "v", "workflow_id": "wf",
               "query": "Q?"})
        .to_string()
    }

    #[test]
    fn calls_are_served_by_key_and_number_the_latest_session_winning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let text = [
            session(1),
            llm_line(1, 0, 1, "first try"),
            llm_line(1, 0, 2, "second try"),
            "{\"kind\":\"llm\",\"ses".to_string(),
            session(2),
            llm_line(2, 1, 1, "later"),
        ]
        .join("\n");
        std::fs::write(&path, text).expect("write");
        let r = Replayer::load(&path).expect("load");
        assert_eq!(r.query(), Some("Q?"));
        let asked = [json!({"role": "user", "content": "What next?"})];
        let site = Site::round(1);
        let key = site.llm_key("planning");
        assert_eq!((r.next_call(&key), r.next_call(&key)), (0, 1));
        let got = r.llm("planning", &site, 0, &asked).expect("call 0");
        assert_eq!(got.content.as_deref(), Some("second try"));
        assert!(r.llm("planning", &site, 1, &asked).is_ok());
        let missing = r.llm("planning", &site, 2, &asked).expect_err("no call 3");
        assert_eq!(
            missing.to_string(),
            "the replay diverged at the planning LLM call #3 of round 1: the transcript holds no such call"
        );
        let changed = [json!({"role": "user", "content": "What now?"})];
        let err = r.llm("planning", &site, 0, &changed).expect_err("changed");
        assert!(
            err.why
                .starts_with("message 1 (user) differs from character 7: the transcript has «ext?», the run sends «ow?»"),
            "{err}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_transcript_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.ndjson");
        std::fs::write(&path, "{\"event\":\"run_started\"}\n").expect("write");
        let err = Replayer::load(&path).expect_err("not a transcript");
        assert!(err.to_string().contains("is not a transcript"), "{err}");
        assert!(err.to_string().contains("events.ndjson"), "{err}");
    }
}
