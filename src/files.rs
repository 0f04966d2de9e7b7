//! Reading an input file whole, bounded: [`read_bounded`] refuses what is not a regular file
//! (a FIFO would block, `/dev/zero` never ends, a folder has no text) and a file over its size
//! cap, at once and without reading it. Every file a command reads whole (plan files, config,
//! the validators' documents) comes through here. It only reads; it never writes.
//!
//! A file in a folder that someone else may write (the pages a batch kept, the files beside a
//! plan that the MCP server reads) is read through [`open_unlinked`] / [`read_unlinked`]:
//! opened without following a symbolic link, and refused unless what was opened is a regular
//! file of one name. Checking the path first and opening it after would follow a link swapped
//! in between; a hard link is another name of a file from elsewhere (`nlink > 1`).

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
    #[error(
        "`{path}` is {kind}: researchflow reads no file through a link there; put a copy of the file itself in its place"
    )]
    Linked { path: String, kind: &'static str },
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
            FileError::Linked { kind, .. } => std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("it is {kind}: researchflow reads no file through a link there"),
            ),
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
    utf8(read_bounded_bytes(path, max_bytes)?, path)
}

fn utf8(bytes: Vec<u8>, path: &Path) -> Result<String, FileError> {
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
    read_capped(file, &meta, path, max_bytes)
}

/// The bytes of `file` (of `meta`, opened from `path`), no more than `max_bytes` whatever
/// the metadata said.
fn read_capped(
    file: File,
    meta: &std::fs::Metadata,
    path: &Path,
    max_bytes: u64,
) -> Result<Vec<u8>, FileError> {
    let shown = || path.display().to_string();
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io {
            path: shown(),
            source,
        })?;
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

/// What a symbolic link at a path is called in [`FileError::Linked`].
pub const SYMBOLIC_LINK: &str = "a symbolic link";
/// What a file with other names is called in [`FileError::Linked`].
pub const HARD_LINKED: &str = "a file with other hard links";

/// The regular file at `path`, opened for reading without following a symbolic link there,
/// with its metadata as opened: refused when it is a link, not a regular file (a FIFO is
/// opened without waiting for a writer, then refused), or a file with other hard links. The
/// checks are of the file opened, not of the path, so nothing swapped in after them is read.
pub fn open_unlinked(path: &Path) -> Result<(File, std::fs::Metadata), FileError> {
    let shown = || path.display().to_string();
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|source| match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => FileError::Linked {
                path: shown(),
                kind: SYMBOLIC_LINK,
            },
            _ => FileError::Io {
                path: shown(),
                source,
            },
        })?;
    let meta = file.metadata().map_err(|source| FileError::Io {
        path: shown(),
        source,
    })?;
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: shown(),
            kind: kind_of(&meta),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(FileError::Linked {
                path: shown(),
                kind: HARD_LINKED,
            });
        }
    }
    Ok((file, meta))
}

/// The whole text of the regular file `path`, at most `max_bytes` long, read as
/// [`open_unlinked`] opens it.
pub fn read_unlinked(path: &Path, max_bytes: u64) -> Result<String, FileError> {
    let (file, meta) = open_unlinked(path)?;
    read_opened(file, &meta, path, max_bytes)
}

/// The whole text of `file`, opened from `path` with `meta`, at most `max_bytes` long.
pub fn read_opened(
    file: File,
    meta: &std::fs::Metadata,
    path: &Path,
    max_bytes: u64,
) -> Result<String, FileError> {
    check(meta, path, max_bytes)?;
    let bytes = read_capped(file, meta, path, max_bytes)?;
    utf8(bytes, path)
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

    #[cfg(unix)]
    #[test]
    fn links_and_hard_links_are_not_read_through_and_a_fifo_does_not_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.json");
        std::fs::write(&real, "{}").expect("write");
        assert_eq!(read_unlinked(&real, 10).expect("a file of one name"), "{}");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let err = read_unlinked(&link, 10).expect_err("a link");
        assert!(
            matches!(
                err,
                FileError::Linked {
                    kind: SYMBOLIC_LINK,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("`"), "{err}");
        let other = dir.path().join("other.json");
        std::fs::hard_link(&real, &other).expect("hard link");
        for name in [&real, &other] {
            let err = read_unlinked(name, 10).expect_err("two names");
            assert!(
                matches!(
                    err,
                    FileError::Linked {
                        kind: HARD_LINKED,
                        ..
                    }
                ),
                "{err}"
            );
        }
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let err = read_unlinked(&fifo, 10).expect_err("a fifo");
        assert!(err.to_string().contains("a named pipe (FIFO)"), "{err}");
        let big = dir.path().join("big.json");
        std::fs::write(&big, "0123456789ab").expect("write");
        assert!(matches!(
            read_unlinked(&big, 10),
            Err(FileError::TooLarge { .. })
        ));
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
