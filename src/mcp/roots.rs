//! [`Roots`]: the folders `researchflow mcp` may touch (`--root DIR`, repeatable, default the
//! current folder). Every path a client gives (a plan file, a corpus, a folder of runs, a
//! resource's URI) is resolved here before anything reads or writes it: a relative path is
//! taken from the first root, symbolic links are resolved, and a path whose real location is
//! outside every root is refused, with a message that says which folders are allowed, and
//! whether a symbolic link is what leads out (never where it leads: that place is none of the
//! client's business). The files beside a plan are checked here too ([`Roots::inside`]), and
//! every file read is opened by [`Roots::open_inside`], which holds what it opened against the
//! roots rather than the path it checked: a link swapped in between is caught.

use std::fs::{File, Metadata};
use std::path::{Component, Path, PathBuf};

use crate::files::FileError;

/// The folders a client's paths must stay within, each canonical.
#[derive(Debug, Clone)]
pub struct Roots {
    dirs: Vec<PathBuf>,
}

/// A path the server will not touch.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    #[error(
        "{what} `{path}` is outside the folders this server may touch ({roots}): give a path under one of them, or start the server with `--root DIR`"
    )]
    Outside {
        what: &'static str,
        path: String,
        roots: String,
    },
    #[error(
        "{what} `{path}` goes through a symbolic link that leads outside the folders this server may touch ({roots}): give a path that stays under them"
    )]
    LinkLeaves {
        what: &'static str,
        path: String,
        roots: String,
    },
    #[error("{what} `{path}` does not exist: {source}")]
    Missing {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
}

impl Roots {
    /// The roots, each made canonical; an error names one that is not a folder.
    pub fn new(dirs: &[PathBuf]) -> Result<Roots, String> {
        let dirs = if dirs.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            dirs.to_vec()
        };
        let mut canonical = Vec::with_capacity(dirs.len());
        for dir in &dirs {
            let real = std::fs::canonicalize(dir)
                .map_err(|e| format!("`--root {}` cannot be used: {e}", dir.display()))?;
            if !real.is_dir() {
                return Err(format!("`--root {}` is not a folder", dir.display()));
            }
            canonical.push(real);
        }
        Ok(Roots { dirs: canonical })
    }

    /// The first root: where relative paths start and new runs go (`runs/` in it).
    pub fn first(&self) -> &Path {
        &self.dirs[0]
    }

    /// Every root.
    pub fn all(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Whether a canonical path lies within a root.
    pub fn contains(&self, real: &Path) -> bool {
        self.dirs.iter().any(|root| real.starts_with(root))
    }

    /// `raw` resolved (relative to the first root, symbolic links followed) to an existing
    /// path within the roots; `what` names it in messages (`plan file`, `corpus`).
    pub fn resolve(&self, raw: &str, what: &'static str) -> Result<PathBuf, RootError> {
        let given = self.first().join(raw);
        let lexical = normalize(&given);
        if !self.contains(&lexical) {
            return Err(RootError::Outside {
                what,
                path: raw.to_string(),
                roots: self.shown(),
            });
        }
        let real = std::fs::canonicalize(&lexical).map_err(|source| RootError::Missing {
            what,
            path: raw.to_string(),
            source,
        })?;
        if !self.contains(&real) {
            return Err(RootError::LinkLeaves {
                what,
                path: raw.to_string(),
                roots: self.shown(),
            });
        }
        Ok(real)
    }

    /// The real path of `path` (a file the server found, such as one beside a plan) when it
    /// exists and lies within the roots; `None` when it is missing or a symbolic link leads
    /// out, so that it is treated as absent: never read, never shown.
    pub fn inside(&self, path: &Path) -> Option<PathBuf> {
        let real = std::fs::canonicalize(path).ok()?;
        self.contains(&real).then_some(real)
    }

    /// The file at `path` (a link inside the roots may lead to it) opened for reading, when it
    /// is a regular file of one name within the roots. Held against the roots by what was
    /// opened: the real path is found, checked, and opened without following a link
    /// ([`open_unlinked`](crate::files::open_unlinked), which refuses a file with other hard
    /// links), then the file opened must be the one at that real path (same device and inode).
    /// A link swapped into the path after the check leads to another file, which is refused;
    /// with one name, the file at the real path is nowhere else. The message names `path`,
    /// never where a link leads.
    pub fn open_inside(&self, path: &Path) -> Result<(File, Metadata), String> {
        let leaves = || {
            format!(
                "`{}` goes through a symbolic link that leads outside the folders this server may touch ({}), or changed while it was read: give a path that stays under them",
                path.display(),
                self.shown()
            )
        };
        let real = std::fs::canonicalize(path)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        if !self.contains(&real) {
            return Err(leaves());
        }
        let (file, meta) = crate::files::open_unlinked(&real).map_err(|e| match e {
            FileError::Linked { kind, .. } => format!(
                "`{}` is {kind}: this server reads no file through a link; put a copy of the file there",
                path.display()
            ),
            other => other.to_string(),
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let there = std::fs::metadata(&real).map_err(|_| leaves())?;
            if (there.dev(), there.ino()) != (meta.dev(), meta.ino()) {
                return Err(leaves());
            }
        }
        Ok((file, meta))
    }

    /// The roots for a message: `` `/a`, `/b` ``.
    fn shown(&self) -> String {
        let dirs: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("`{}`", d.display()))
            .collect();
        dirs.join(", ")
    }
}

/// `path` with `.` and `..` taken out without touching the disk (an absolute path's `..` at
/// the top stays at the top), so that a path that names a place outside is refused as such
/// before any link is followed.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_resolve_and_paths_outside_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("runs")).expect("mkdir");
        std::fs::write(root.join("runs/p.json"), "{}").expect("write");
        std::fs::write(dir.path().join("secret.json"), "{}").expect("write");
        let roots = Roots::new(std::slice::from_ref(&root)).expect("roots");
        let real_root = std::fs::canonicalize(&root).expect("canonical");
        assert_eq!(
            roots.resolve("runs/p.json", "plan file").expect("inside"),
            real_root.join("runs/p.json")
        );
        let absolute = real_root.join("runs/./p.json");
        assert!(
            roots
                .resolve(&absolute.to_string_lossy(), "plan file")
                .is_ok()
        );
        for outside in ["../secret.json", "/etc/passwd", "runs/../../secret.json"] {
            let err = roots.resolve(outside, "plan file").expect_err(outside);
            assert!(matches!(err, RootError::Outside { .. }), "{outside}: {err}");
            assert!(err.to_string().contains("outside the folders"), "{err}");
        }
        let err = roots
            .resolve("runs/none.json", "plan file")
            .expect_err("missing");
        assert!(err.to_string().contains("does not exist"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_that_leaves_the_roots_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).expect("mkdir");
        std::fs::write(dir.path().join("secret.json"), "{}").expect("write");
        std::os::unix::fs::symlink(dir.path().join("secret.json"), root.join("link.json"))
            .expect("symlink");
        std::os::unix::fs::symlink(dir.path(), root.join("up")).expect("symlink");
        std::fs::write(root.join("inside.json"), "{}").expect("write");
        std::os::unix::fs::symlink(root.join("inside.json"), root.join("ok.json"))
            .expect("symlink");
        let roots = Roots::new(std::slice::from_ref(&root)).expect("roots");
        for through in ["link.json", "up/secret.json"] {
            let err = roots.resolve(through, "plan file").expect_err(through);
            assert!(
                matches!(err, RootError::LinkLeaves { .. }),
                "{through}: {err}"
            );
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }
        assert!(
            roots.resolve("ok.json", "plan file").is_ok(),
            "a link that stays inside"
        );
        let err = roots.resolve("link.json", "plan file").expect_err("leaves");
        assert!(
            !err.to_string().contains("secret.json"),
            "where the link leads is not shown: {err}"
        );
        assert_eq!(
            roots.inside(&root.join("ok.json")),
            Some(roots.first().join("inside.json"))
        );
        assert_eq!(roots.inside(&root.join("link.json")), None);
        assert_eq!(roots.inside(&root.join("none.json")), None);
        assert!(roots.open_inside(&root.join("ok.json")).is_ok(), "inside");
        let err = roots
            .open_inside(&root.join("link.json"))
            .expect_err("leaves");
        assert!(!err.contains("secret.json"), "{err}");
        std::fs::hard_link(dir.path().join("secret.json"), root.join("hard.json"))
            .expect("hard link");
        let err = roots
            .open_inside(&root.join("hard.json"))
            .expect_err("two names");
        assert!(err.contains("hard links"), "{err}");
    }
}
