//! Finds the documents of a corpus: every file whose name gives a kind ([`Kind::of`]: a
//! known extension, or none at all, as `LICENSE` and `COPYING` have) under the corpus folder,
//! by canonical path, with its size and modification time; every other file is counted by
//! type ([`type_label`]), so that what the index passes over is said, not silent.
//!
//! Symbolic links are followed once: a file or folder reachable by two names is listed once
//! (by its canonical path); a link whose target is outside the corpus, broken, or a loop is
//! skipped with a warning. Names starting with `.` (`.git`, `.obsidian`) are not entered. The
//! walk uses an explicit stack and a set of visited folders, so no link structure makes it
//! recurse or loop. It reads folder listings and metadata only, never file contents.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::LocalSearchError;
use super::extract::{Kind, type_label};

/// One document file of the corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The canonical path, as UTF-8 text (it is the index key and goes into a URL).
    pub path: String,
    pub kind: Kind,
    pub size: u64,
    pub mtime_ns: u64,
}

/// The documents of a corpus, sorted by path, and the warnings the walk raised.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<Found>,
    pub warnings: Vec<String>,
    /// The files whose name gives no kind, counted by type (`.png`: 5).
    pub passed_over: BTreeMap<String, usize>,
}

/// Walks the canonical corpus folder `root`.
pub fn walk(root: &Path) -> Result<Walk, LocalSearchError> {
    let mut state = State {
        root,
        visited: HashSet::from([root.to_path_buf()]),
        seen: HashSet::new(),
        walk: Walk::default(),
    };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(source) if dir == root => {
                return Err(LocalSearchError::CorpusUnreadable {
                    corpus: root.to_path_buf(),
                    source,
                });
            }
            Err(e) => {
                state.warn(format!(
                    "skipped folder `{}`: cannot list it ({e})",
                    dir.display()
                ));
                continue;
            }
        };
        let mut names: Vec<_> = entries.filter_map(Result::ok).collect();
        names.sort_by_key(|e| e.file_name());
        for entry in names {
            if entry.file_name().as_encoded_bytes().starts_with(b".") {
                continue;
            }
            // The folder is canonical and the entry is not a link, so its path is canonical.
            let path = dir.join(entry.file_name());
            match entry.file_type() {
                Ok(t) if t.is_symlink() => state.link(&dir, &path, &mut stack),
                Ok(t) if t.is_dir() => {
                    if state.visited.insert(path.clone()) {
                        stack.push(path);
                    }
                }
                Ok(t) if t.is_file() => state.file(&path),
                Ok(_) => {}
                Err(e) => state.warn(format!(
                    "skipped `{}`: cannot read its type ({e})",
                    path.display()
                )),
            }
        }
    }
    let mut walk = state.walk;
    walk.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walk)
}

struct State<'a> {
    root: &'a Path,
    /// Canonical folders already listed (or queued).
    visited: HashSet<PathBuf>,
    /// Canonical files already found.
    seen: HashSet<PathBuf>,
    walk: Walk,
}

impl State<'_> {
    fn warn(&mut self, warning: String) {
        self.walk.warnings.push(warning);
    }

    /// Follows the link at `path` (in folder `dir`) if it stays inside the corpus.
    fn link(&mut self, dir: &Path, path: &Path, stack: &mut Vec<PathBuf>) {
        let target = match std::fs::canonicalize(path) {
            Ok(target) => target,
            Err(e) => {
                return self.warn(format!(
                    "skipped link `{}`: its target cannot be resolved ({e}): fix or remove the link",
                    path.display()
                ));
            }
        };
        if !target.starts_with(self.root) {
            return self.warn(format!(
                "skipped link `{}`: it leads outside the corpus, to `{}`",
                path.display(),
                target.display()
            ));
        }
        if target.is_dir() {
            if dir.starts_with(&target) {
                self.warn(format!(
                    "skipped link `{}`: it points back to `{}`, which contains it (a loop)",
                    path.display(),
                    target.display()
                ));
            } else if self.visited.insert(target.clone()) {
                stack.push(target);
            }
        } else if target.is_file() {
            self.file(&target);
        }
    }

    /// Records the canonical file `path` if it was not seen yet: as a document if its kind is
    /// indexed, else in the count of files passed over.
    fn file(&mut self, path: &Path) {
        if !self.seen.insert(path.to_path_buf()) {
            return;
        }
        let Some(kind) = Kind::of(path) else {
            *self.walk.passed_over.entry(type_label(path)).or_default() += 1;
            return;
        };
        let Some(text) = path.to_str() else {
            return self.warn(format!(
                "skipped `{}`: its path is not valid UTF-8: rename it",
                path.display()
            ));
        };
        match std::fs::metadata(path) {
            Ok(meta) => {
                let mtime_ns = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
                self.walk.files.push(Found {
                    path: text.to_string(),
                    kind,
                    size: meta.len(),
                    mtime_ns,
                });
            }
            Err(e) => self.warn(format!(
                "skipped `{}`: cannot read its metadata ({e})",
                path.display()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn corpus() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("corpus");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("a.md"), "# A").expect("write");
        std::fs::write(root.join("sub/b.txt"), "b").expect("write");
        std::fs::write(root.join("sub/c.jpg"), "c").expect("write");
        std::fs::create_dir(root.join(".git")).expect("mkdir");
        std::fs::write(root.join(".git/d.txt"), "d").expect("write");
        let root = std::fs::canonicalize(root).expect("canonical");
        (tmp, root)
    }

    fn names(walk: &Walk, root: &Path) -> Vec<String> {
        walk.files
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(&format!("{}/", root.display()))
                    .unwrap_or(&f.path)
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn finds_known_kinds_and_skips_hidden_names() {
        let (_tmp, root) = corpus();
        let walk = walk(&root).expect("walk");
        assert_eq!(names(&walk, &root), ["a.md", "sub/b.txt"]);
        assert!(walk.warnings.is_empty(), "{:?}", walk.warnings);
        assert_eq!(
            walk.passed_over,
            BTreeMap::from([(".jpg".to_string(), 1)]),
            "a file of no kind is counted, a hidden one not"
        );
        assert_eq!(walk.files[0].size, 3);
        assert!(walk.files[0].mtime_ns > 0);
    }

    #[test]
    fn a_link_inside_the_corpus_is_one_document() {
        let (_tmp, root) = corpus();
        symlink(root.join("a.md"), root.join("alias.md")).expect("link");
        symlink(root.join("sub"), root.join("sub-alias")).expect("link");
        let walk = walk(&root).expect("walk");
        assert_eq!(names(&walk, &root), ["a.md", "sub/b.txt"]);
        assert!(walk.warnings.is_empty(), "{:?}", walk.warnings);
    }

    #[test]
    fn a_link_outside_the_corpus_is_skipped_with_a_warning() {
        let (tmp, root) = corpus();
        std::fs::write(tmp.path().join("secret.md"), "outside").expect("write");
        symlink(tmp.path().join("secret.md"), root.join("secret.md")).expect("link");
        symlink(tmp.path(), root.join("up")).expect("link");
        let walk = walk(&root).expect("walk");
        assert_eq!(names(&walk, &root), ["a.md", "sub/b.txt"]);
        assert_eq!(walk.warnings.len(), 2, "{:?}", walk.warnings);
        assert!(
            walk.warnings
                .iter()
                .all(|w| w.contains("outside the corpus"))
        );
    }

    #[test]
    fn loops_and_broken_links_end_with_a_warning() {
        let (_tmp, root) = corpus();
        symlink(&root, root.join("sub/back")).expect("link");
        symlink(root.join("x1.md"), root.join("x2.md")).expect("link");
        symlink(root.join("x2.md"), root.join("x1.md")).expect("link");
        let walk = walk(&root).expect("walk");
        assert_eq!(names(&walk, &root), ["a.md", "sub/b.txt"]);
        assert_eq!(walk.warnings.len(), 3, "{:?}", walk.warnings);
        assert!(
            walk.warnings.iter().any(|w| w.contains("a loop")),
            "{:?}",
            walk.warnings
        );
    }
}
