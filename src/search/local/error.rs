//! What can stop [`super::LocalIndex`] from opening or searching. Problems with one document
//! are not errors: they are warnings in the [`super::IndexReport`].
//!
//! Messages are lower-case fragments that name the path in backticks and say what to do. The
//! variants a caller should treat as bad input (exit 2) answer `true` to
//! [`LocalSearchError::is_input_error`].

use std::path::PathBuf;

/// Why the local index cannot be opened, updated or searched.
#[derive(Debug, thiserror::Error)]
pub enum LocalSearchError {
    #[error("corpus folder `{}` does not exist: check the path", corpus.display())]
    CorpusMissing { corpus: PathBuf },
    #[error(
        "corpus `{}` is not a folder: give the folder that holds the documents",
        corpus.display()
    )]
    CorpusNotFolder { corpus: PathBuf },
    #[error(
        "corpus folder `{}` cannot be read ({source}): check its permissions",
        corpus.display()
    )]
    CorpusUnreadable {
        corpus: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "corpus folder `{}` has no document to index (.md, .markdown, .rst, .txt, .html, .htm, or .pdf with a text layer): add documents or check the path",
        corpus.display()
    )]
    NoDocuments { corpus: PathBuf },
    #[error(
        "index folder `{}` is inside the corpus `{}`: choose an index folder outside the corpus",
        index.display(),
        corpus.display()
    )]
    IndexInsideCorpus { index: PathBuf, corpus: PathBuf },
    #[error(
        "no cache folder for the local index: set `XDG_CACHE_HOME` or `HOME` to an absolute path, or give an index folder"
    )]
    NoCacheFolder,
    #[error(
        "cannot {action} `{}` ({source}): check its permissions and the free disk space",
        path.display()
    )]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "local index `{}` failed ({source}): delete that folder to rebuild the index",
        path.display()
    )]
    Index {
        path: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    /// The embedding model (`search.embeddings.model`) could not be loaded or failed.
    #[error(transparent)]
    Embedding(#[from] crate::embed::EmbedError),
}

impl LocalSearchError {
    /// Whether the error comes from what the caller gave (corpus or index folder), not from the
    /// index itself: a command should exit 2 on these.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            LocalSearchError::CorpusMissing { .. }
                | LocalSearchError::CorpusNotFolder { .. }
                | LocalSearchError::CorpusUnreadable { .. }
                | LocalSearchError::NoDocuments { .. }
                | LocalSearchError::IndexInsideCorpus { .. }
                | LocalSearchError::NoCacheFolder
        )
    }

    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        LocalSearchError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn index(path: impl Into<PathBuf>, source: tantivy::TantivyError) -> Self {
        LocalSearchError::Index {
            path: path.into(),
            source,
        }
    }
}
