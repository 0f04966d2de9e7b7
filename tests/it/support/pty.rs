//! A real terminal for a test: a pseudo-terminal pair (`posix_openpt`), whose terminal side
//! becomes the child's stderr (and stdout, if asked), so that `isatty` is true there and the
//! terminal has a size, as on a user's screen. Everything the child writes to it is read from
//! the other side until the last process holding the terminal closes it. The terminal keeps
//! its usual settings: each `\n` written arrives as `\r\n`.

use std::ffi::CStr;
use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use super::server::lock;

/// The columns and rows of every test terminal.
pub const COLUMNS: u16 = 120;
pub const ROWS: u16 = 40;

/// The reading side of a pseudo-terminal, and the name of its terminal side.
pub struct Pty {
    reader: File,
    terminal: PathBuf,
}

impl Pty {
    /// A new pseudo-terminal, [`COLUMNS`] by [`ROWS`].
    pub fn open() -> Pty {
        // SAFETY: plain libc calls on a descriptor this function owns; each result is checked,
        // and the name is copied out of a buffer that outlives the call writing it.
        unsafe {
            let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
            let reader = File::from_raw_fd(fd);
            assert_eq!(libc::grantpt(fd), 0, "grantpt");
            assert_eq!(libc::unlockpt(fd), 0, "unlockpt");
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(
                libc::ptsname_r(fd, name.as_mut_ptr(), name.len()),
                0,
                "ptsname_r"
            );
            let terminal = PathBuf::from(CStr::from_ptr(name.as_ptr()).to_string_lossy().as_ref());
            let size = libc::winsize {
                ws_row: ROWS,
                ws_col: COLUMNS,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            assert_eq!(libc::ioctl(fd, libc::TIOCSWINSZ, &size), 0, "TIOCSWINSZ");
            Pty { reader, terminal }
        }
    }

    /// The terminal side, opened for a child's standard streams (not as the test's own
    /// controlling terminal).
    pub fn terminal(&self) -> File {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&self.terminal)
            .unwrap_or_else(|e| panic!("cannot open `{}`: {e}", self.terminal.display()))
    }

    /// Reads what reaches the terminal into `into`, until every process holding its terminal
    /// side has closed it (then Linux answers `EIO`).
    pub fn read_into(self, into: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
        let mut reader = self.reader;
        tokio::task::spawn_blocking(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => lock(&into).extend_from_slice(&chunk[..n]),
                }
            }
        })
    }
}
