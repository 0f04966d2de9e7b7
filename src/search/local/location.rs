//! Where the corpus and its index live: the canonical corpus folder, the default index folder
//! in the user's cache (`$XDG_CACHE_HOME/researchflow/index/<hash>/`, else
//! `$HOME/.cache/researchflow/index/<hash>/`), and the rule that an index never goes inside the
//! corpus.
//!
//! Nothing here creates or writes a folder; [`default_index_dir`] is a pure function of the
//! environment values it is given, so it is tested without touching the process environment.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::LocalSearchError;

/// The corpus folder as an absolute path with every symbolic link resolved.
pub fn canonical_corpus(corpus: &Path) -> Result<PathBuf, LocalSearchError> {
    let canonical = std::fs::canonicalize(corpus).map_err(|source| match source.kind() {
        ErrorKind::NotFound => LocalSearchError::CorpusMissing {
            corpus: corpus.to_path_buf(),
        },
        _ => LocalSearchError::CorpusUnreadable {
            corpus: corpus.to_path_buf(),
            source,
        },
    })?;
    if !canonical.is_dir() {
        return Err(LocalSearchError::CorpusNotFolder {
            corpus: corpus.to_path_buf(),
        });
    }
    Ok(canonical)
}

/// The index folder for `corpus` (canonical): `explicit` if given, else the default one from
/// the process environment. Refused when it is the corpus or inside it.
pub fn resolve_index_dir(
    corpus: &Path,
    explicit: Option<&Path>,
) -> Result<PathBuf, LocalSearchError> {
    let dir = match explicit {
        Some(dir) => dir.to_path_buf(),
        None => default_index_dir(
            corpus,
            std::env::var_os("XDG_CACHE_HOME").as_deref(),
            std::env::var_os("HOME").as_deref(),
        )
        .ok_or(LocalSearchError::NoCacheFolder)?,
    };
    let resolved = resolve_existing_prefix(&dir)
        .map_err(|source| LocalSearchError::io("resolve the index folder", &dir, source))?;
    if resolved.starts_with(corpus) {
        return Err(LocalSearchError::IndexInsideCorpus {
            index: resolved,
            corpus: corpus.to_path_buf(),
        });
    }
    Ok(resolved)
}

/// The default index folder of a canonical corpus path, from the values of `XDG_CACHE_HOME`
/// and `HOME`; `None` when neither is an absolute path (the XDG spec ignores relative ones).
pub fn default_index_dir(
    corpus: &Path,
    xdg_cache_home: Option<&OsStr>,
    home: Option<&OsStr>,
) -> Option<PathBuf> {
    let absolute = |v: Option<&OsStr>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let cache = absolute(xdg_cache_home).or_else(|| absolute(home).map(|h| h.join(".cache")))?;
    Some(
        cache
            .join("researchflow")
            .join("index")
            .join(corpus_key(corpus)),
    )
}

/// A stable name for a corpus path ([`crate::text::stable_hash`] of its bytes, in hex), so a
/// toolchain update does not orphan the cache.
pub fn corpus_key(corpus: &Path) -> String {
    format!(
        "{:016x}",
        crate::text::stable_hash(corpus.as_os_str().as_encoded_bytes())
    )
}

/// `path` made absolute, with its longest existing ancestor canonicalised and the rest (not
/// created yet) appended, so a folder can be checked before anything is written.
fn resolve_existing_prefix(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(canonical) => {
                return Ok(rest.iter().rev().fold(canonical, |p, name| p.join(name)));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(e);
                };
                rest.push(name.to_os_string());
                existing = parent;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_dir_prefers_an_absolute_xdg_cache_home() {
        let corpus = Path::new("/data/corpus");
        let key = corpus_key(corpus);
        assert_eq!(
            default_index_dir(
                corpus,
                Some(OsStr::new("/xdg")),
                Some(OsStr::new("/home/u"))
            ),
            Some(PathBuf::from(format!("/xdg/researchflow/index/{key}")))
        );
        assert_eq!(
            default_index_dir(corpus, Some(OsStr::new("rel")), Some(OsStr::new("/home/u"))),
            Some(PathBuf::from(format!(
                "/home/u/.cache/researchflow/index/{key}"
            )))
        );
        assert_eq!(
            default_index_dir(corpus, Some(OsStr::new("")), Some(OsStr::new("/home/u"))),
            Some(PathBuf::from(format!(
                "/home/u/.cache/researchflow/index/{key}"
            )))
        );
        assert_eq!(default_index_dir(corpus, None, None), None);
        assert_eq!(default_index_dir(corpus, None, Some(OsStr::new("h"))), None);
    }

    #[test]
    fn the_key_is_stable_and_differs_between_corpora() {
        // FNV-1a test vector: the hash of the empty input is the offset basis.
        assert_eq!(corpus_key(Path::new("")), "cbf29ce484222325");
        assert_eq!(corpus_key(Path::new("a")), "af63dc4c8601ec8c");
        assert_ne!(corpus_key(Path::new("/a/b")), corpus_key(Path::new("/a/c")));
    }

    #[test]
    fn an_index_inside_the_corpus_is_refused_before_anything_is_created() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let corpus = canonical_corpus(tmp.path()).expect("corpus");
        let inside = corpus.join("sub").join("index");
        let err = resolve_index_dir(&corpus, Some(&inside)).expect_err("refused");
        assert!(matches!(err, LocalSearchError::IndexInsideCorpus { .. }));
        assert!(err.is_input_error());
        assert!(err.to_string().contains("outside the corpus"), "{err}");
        assert!(!corpus.join("sub").exists());
        let err = resolve_index_dir(&corpus, Some(&corpus)).expect_err("the corpus itself");
        assert!(matches!(err, LocalSearchError::IndexInsideCorpus { .. }));
    }

    #[test]
    fn a_missing_corpus_and_a_file_are_told_apart() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let missing = tmp.path().join("nope");
        assert!(matches!(
            canonical_corpus(&missing),
            Err(LocalSearchError::CorpusMissing { .. })
        ));
        let file = tmp.path().join("f.txt");
        std::fs::write(&file, "x").expect("write");
        assert!(matches!(
            canonical_corpus(&file),
            Err(LocalSearchError::CorpusNotFolder { .. })
        ));
    }
}
