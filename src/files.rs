//! Reading an input file whole, bounded: [`read_bounded`] refuses what is not a regular file
//! (a FIFO would block, `/dev/zero` never ends, a folder has no text) and a file over its size
//! cap, at once and without reading it. Every file a command reads whole (plan files, config,
//! the validators' documents) comes through here. It only reads; it never writes.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The largest file read whole unless a caller sets another cap: 256 MB.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// Why a file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("`{path}` is {kind}, not a regular file: pass the path of a regular file")]
    NotRegular { path: String, kind: &'static str },
    #[error(
        "`{path}` is {}, over the limit of {}: check that it is the right file",
        megabytes(*.size),
        megabytes(*.max)
    )]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("cannot read `{path}`: {source}: check the path and its permissions")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl FileError {
    /// The error as an [`std::io::Error`] for callers whose errors wrap one and name the file
    /// themselves: the message leaves the path out, and a missing file stays `NotFound`.
    pub fn into_io(self) -> std::io::Error {
        match self {
            FileError::Io { source, .. } => source,
            FileError::NotRegular { kind, .. } => std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("it is {kind}, not a regular file: pass the path of a regular file"),
            ),
            FileError::TooLarge { size, max, .. } => std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "it is {}, over the limit of {}: check that it is the right file",
                    megabytes(size),
                    megabytes(max)
                ),
            ),
        }
    }
}

/// The whole text of the regular file `path`, at most `max_bytes` long. Not valid UTF-8 is an
/// [`FileError::Io`] of kind `InvalidData`.
pub fn read_bounded(path: &Path, max_bytes: u64) -> Result<String, FileError> {
    let bytes = read_bounded_bytes(path, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| FileError::Io {
        path: path.display().to_string(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text ({e})"),
        ),
    })
}

/// The whole content of the regular file `path`, at most `max_bytes` long, as bytes (a log
/// whose last line a crash cut inside a character is still read).
pub fn read_bounded_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>, FileError> {
    let shown = || path.display().to_string();
    let io = |source| FileError::Io {
        path: shown(),
        source,
    };
    // Look before opening: opening a FIFO blocks until someone writes to it.
    let meta = std::fs::metadata(path).map_err(io)?;
    check(&meta, path, max_bytes)?;
    let file = File::open(path).map_err(io)?;
    // The file may have been replaced since: look again at what was opened, and read no more
    // than the cap whatever the metadata said.
    let meta = file.metadata().map_err(io)?;
    check(&meta, path, max_bytes)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if size > max_bytes {
        return Err(FileError::TooLarge {
            path: shown(),
            size,
            max: max_bytes,
        });
    }
    Ok(bytes)
}

fn check(meta: &std::fs::Metadata, path: &Path, max_bytes: u64) -> Result<(), FileError> {
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: path.display().to_string(),
            kind: kind_of(meta),
        });
    }
    if meta.len() > max_bytes {
        return Err(FileError::TooLarge {
            path: path.display().to_string(),
            size: meta.len(),
            max: max_bytes,
        });
    }
    Ok(())
}

/// A size for people: `300.0 MB`, or bytes below a megabyte.
fn megabytes(bytes: u64) -> String {
    if bytes < 1024 * 1024 {
        format!("{bytes} bytes")
    } else {
        let mb = bytes as f64 / (1024.0 * 1024.0);
        format!("{mb:.1} MB")
    }
}

/// What a path that is not a regular file is, in words.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_regular_file_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.json");
        std::fs::write(&path, "{}").expect("write");
        assert_eq!(read_bounded(&path, 10).expect("read"), "{}");
        let err = read_bounded(&path, 1).expect_err("over the cap");
        assert!(
            matches!(
                err,
                FileError::TooLarge {
                    size: 2,
                    max: 1,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn folders_and_devices_are_refused_without_reading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = read_bounded(dir.path(), DEFAULT_MAX_BYTES).expect_err("a folder");
        assert!(
            err.to_string().contains("is a folder, not a regular file"),
            "{err}"
        );
        #[cfg(unix)]
        {
            let err = read_bounded(Path::new("/dev/zero"), DEFAULT_MAX_BYTES).expect_err("dev");
            assert_eq!(
                err.to_string(),
                "`/dev/zero` is a character device, not a regular file: pass the path of a regular file"
            );
            let fifo = dir.path().join("pipe");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
            let err = read_bounded(&fifo, DEFAULT_MAX_BYTES).expect_err("a fifo");
            assert!(err.to_string().contains("a named pipe (FIFO)"), "{err}");
        }
    }

    #[test]
    fn a_sparse_file_over_the_cap_is_refused_by_its_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.json");
        let file = File::create(&path).expect("create");
        file.set_len(DEFAULT_MAX_BYTES + 1).expect("sparse");
        let err = read_bounded(&path, DEFAULT_MAX_BYTES).expect_err("too big");
        assert!(
            err.to_string()
                .contains("is 256.0 MB, over the limit of 256.0 MB"),
            "{err}"
        );
        assert!(err.into_io().to_string().starts_with("it is 256.0 MB"));
    }

    #[test]
    fn a_missing_file_stays_not_found() {
        let err = read_bounded(Path::new("/nonexistent/x.json"), 10).expect_err("missing");
        assert!(
            err.to_string()
                .starts_with("cannot read `/nonexistent/x.json`")
        );
        assert_eq!(err.into_io().kind(), std::io::ErrorKind::NotFound);
    }
}
