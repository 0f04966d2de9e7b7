//! The manifest beside the tantivy index (`manifest.json`): for every corpus file seen, its
//! size and modification time when it was read, whether it is indexed, and the warnings its
//! reading raised. Comparing it with the corpus tells which files to re-read.
//!
//! It is written atomically (a temporary file in the index folder, fsync, rename) after the
//! index commit, so a crash leaves an older manifest, which only makes the next open re-read
//! more files. A manifest of another version or corpus is not trusted: the index is rebuilt.
//! This module does not read the corpus or the tantivy index.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The format of the manifest and of the index beside it (schema, tokenizer, and the text the
/// extractors give); an index of another version is rebuilt. 2: HTML text with white space
/// collapsed as a browser shows it, declared charsets, Latin-1 text read as such, plain text
/// one line a paragraph. 3: word positions, for the query's adjacent pairs. 4: gzip-compressed
/// documents, a heading a paragraph of its own, titles that are not header fields, the SHA-256
/// of each text. 5: code and signatures between fence lines, navigation and permalinks left
/// out, man pages read as roff. 6: a Markdown block (a tight list item's sub-list, a quote in
/// it) a line of its own, no longer run on from the item's last word; a Markdown HTML block's
/// text read. 7: a Chinese or Japanese full stop (`。`) ends the sentence a chunk is cut at.
/// 8: a line of two columns (`-c, --create   create a new archive`) a line of its own; a man
/// page's conditional read by nroff's branch. 9: a record of fields (`Package: xz-utils`) a
/// line a field, set apart by blank lines. 10: a list item in a field's text a line of its own.
/// 11: options spaced apart (`-r,  --recursive`) are one two-column line's term. 12: a plain
/// text's heading (a short line or a FAQ's question between blank lines) set apart.
pub const VERSION: u32 = 12;

/// The manifest's file name in the index folder.
pub const FILE_NAME: &str = "manifest.json";

/// What the index holds, file by file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexManifest {
    pub version: u32,
    /// The canonical corpus folder the index was built from.
    pub corpus: String,
    /// Keyed by canonical path.
    #[serde(default)]
    pub files: BTreeMap<String, FileEntry>,
}

/// One corpus file as last read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: u64,
    /// False for a file that was skipped (empty, binary, a PDF without text).
    pub indexed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What was found in the index folder.
#[derive(Debug)]
pub enum Loaded {
    /// No manifest: a new index.
    Missing,
    Valid(IndexManifest),
    /// A manifest that cannot be trusted, and why: the index is rebuilt.
    Invalid(String),
}

impl IndexManifest {
    /// An empty manifest for `corpus`.
    pub fn new(corpus: &str) -> IndexManifest {
        IndexManifest {
            version: VERSION,
            corpus: corpus.to_string(),
            files: BTreeMap::new(),
        }
    }
}

/// Reads the manifest of `dir` and checks that it belongs to `corpus` and this version.
pub fn load(dir: &Path, corpus: &str) -> Loaded {
    let path = dir.join(FILE_NAME);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => return Loaded::Invalid(format!("cannot read `{}` ({e})", path.display())),
    };
    match serde_json::from_str::<IndexManifest>(&text) {
        Ok(m) if m.version != VERSION => Loaded::Invalid(format!(
            "`{}` is of version {}, this build writes version {VERSION}",
            path.display(),
            m.version
        )),
        Ok(m) if m.corpus != corpus => Loaded::Invalid(format!(
            "`{}` belongs to the corpus `{}`",
            path.display(),
            m.corpus
        )),
        Ok(m) => Loaded::Valid(m),
        Err(e) => Loaded::Invalid(format!(
            "`{}` is not a valid manifest ({e})",
            path.display()
        )),
    }
}

/// Writes the manifest of `dir` atomically.
pub fn save(dir: &Path, manifest: &IndexManifest) -> std::io::Result<()> {
    let mut file = tempfile::Builder::new()
        .prefix(".manifest")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let json = serde_json::to_vec(manifest).map_err(std::io::Error::other)?;
    file.write_all(&json)?;
    file.as_file().sync_all()?;
    file.persist(dir.join(FILE_NAME)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> IndexManifest {
        let mut m = IndexManifest::new("/corpus");
        m.files.insert(
            "/corpus/a.md".into(),
            FileEntry {
                size: 12,
                mtime_ns: 1_700_000_000_123_456_789,
                indexed: true,
                warnings: vec!["w".into()],
            },
        );
        m.files.insert(
            "/corpus/empty.txt".into(),
            FileEntry {
                size: 0,
                mtime_ns: 1,
                indexed: false,
                warnings: Vec::new(),
            },
        );
        m
    }

    #[test]
    fn round_trips_and_replaces_the_old_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(load(dir.path(), "/corpus"), Loaded::Missing));
        save(dir.path(), &IndexManifest::new("/corpus")).expect("first save");
        save(dir.path(), &sample()).expect("second save");
        match load(dir.path(), "/corpus") {
            Loaded::Valid(m) => assert_eq!(m, sample()),
            other => panic!("{other:?}"),
        }
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [FILE_NAME], "no temporary file left");
    }

    #[test]
    fn another_corpus_version_or_garbage_is_not_trusted() {
        let dir = tempfile::tempdir().expect("tempdir");
        save(dir.path(), &sample()).expect("save");
        assert!(matches!(load(dir.path(), "/other"), Loaded::Invalid(m) if m.contains("/corpus")));
        let mut old = sample();
        old.version = VERSION + 1;
        save(dir.path(), &old).expect("save");
        assert!(matches!(load(dir.path(), "/corpus"), Loaded::Invalid(m) if m.contains("version")));
        std::fs::write(dir.path().join(FILE_NAME), "{not json").expect("write");
        assert!(matches!(load(dir.path(), "/corpus"), Loaded::Invalid(_)));
    }
}
