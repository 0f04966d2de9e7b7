//! Compressed corpus files, `search::local::content::read` on a file named `.gz`: never
//! panics, never says a readable file cannot be read (`ReadError::Io`, which means "try again
//! later"), never holds more than the cap's bytes, and never allocates much more than the cap
//! whatever the file inflates to (a bomb costs what a file of the cap's size does); a valid
//! file (one member or several) reads back as what it holds, cut at the cap, with `more` when
//! more is left; a broken one (cut, a wrong CRC, a corrupted stream) is an error or reads as
//! the beginning of what it holds, never other bytes.
//!
//! Each input is written to a file in a temporary folder and read with three caps: a small one
//! drawn from its bytes (with the sniffing of a file whose name gives no kind), the text cap
//! (2 MiB) and the PDF cap (64 MiB).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use flate2::Compression;
use flate2::write::GzEncoder;
use researchflow::search::local::content::{ReadError, read};
use researchflow::search::local::decode::{SNIFF_BYTES, Sniffed, sniff};

use crate::alloc::Mark;
use crate::bomb::{Bomb, CHUNK};
use crate::inputs::Gen;
use crate::target::{Expect, Input, Target};

/// What the reader may hold beyond its bytes: the decoder's window and buffers.
const SLACK: usize = 1 << 20;

pub struct GzipTarget {
    seeds: Vec<Vec<u8>>,
    /// Where inputs are written, made on first use (a worker that dies leaves it behind).
    dir: OnceLock<tempfile::TempDir>,
    /// A bomb of zeros, made on first use.
    bomb: OnceLock<Bomb>,
}

impl GzipTarget {
    pub fn new() -> GzipTarget {
        let mut g = Gen::new(9);
        let none = OnceLock::new();
        let seeds = (0..16).map(|_| valid_gzip(&mut g, &none).bytes).collect();
        GzipTarget {
            seeds,
            dir: OnceLock::new(),
            bomb: OnceLock::new(),
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    // Writing into a vector cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

/// A gzip file and what it holds: one member or several, empty, text, binary, now and then a
/// bomb of zeros up to 1 GiB; cut, with a wrong CRC, or with a corrupted byte now and then
/// (a cut file and a wrong CRC still hold the right bytes as far as they go).
fn valid_gzip(g: &mut Gen, bomb: &OnceLock<Bomb>) -> Input {
    if let Some(bomb) = bomb.get().filter(|_| g.rng.u16(..1000) == 0) {
        let chunks = g.log_size(1, (1 << 30) / CHUNK);
        let right = g.rng.u8(..4) != 0;
        return Input {
            bytes: bomb.gzip(chunks, right),
            expect: Expect::Gzip {
                data: Vec::new(),
                zeros: (chunks * CHUNK) as u64,
                intact: right,
            },
        };
    }
    let mut data = Vec::new();
    let mut bytes = Vec::new();
    for _ in 0..g.rng.usize(1..4) {
        let member = match g.rng.u8(..4) {
            0 => g.raw(),
            1 => Vec::new(),
            _ => g.text(300).into_bytes(),
        };
        bytes.extend(gzip(&member));
        data.extend(member);
    }
    let intact = match g.rng.u8(..8) {
        0 => {
            bytes.truncate(g.rng.usize(..bytes.len()));
            false
        }
        1 => {
            // The CRC of the last member.
            let at = bytes.len() - 8;
            bytes[at] ^= 1 << g.rng.u8(..8);
            false
        }
        2 => {
            // A corrupted stream may inflate to other bytes before the CRC tells: only the
            // general invariants hold.
            let at = g.rng.usize(10..bytes.len());
            bytes[at] = bytes[at].wrapping_add(g.rng.u8(1..));
            return Input::noise(bytes);
        }
        _ => true,
    };
    Input {
        bytes,
        expect: Expect::Gzip {
            data,
            zeros: 0,
            intact,
        },
    }
}

impl Target for GzipTarget {
    fn name(&self) -> &'static str {
        "gzip"
    }

    fn tokens(&self) -> &'static [&'static str] {
        &[
            "\u{1f}", "\u{8b}", "\u{8}", "\u{0}", "\u{ff}", "\u{3}", "\u{4}", "text",
        ]
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[("\u{1f}\u{8b}\u{8}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{3}", "")]
    }

    fn binary(&self) -> bool {
        true
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        self.bomb.get_or_init(|| Bomb::new(&[0]));
        valid_gzip(g, &self.bomb)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let bytes = &input.bytes;
        let names = ["a.txt.gz", "NOTES.MD.GZ", "x.gz", "changelog.Debian.gz"];
        let dir = self.dir.get_or_init(|| {
            // In memory where there is a tmpfs: on a disk, rewriting a file a few thousand
            // times a second waits for its writeback. The system's temporary folder is
            // writable wherever this runs; without one there is nothing to fuzz.
            let shm = std::path::Path::new("/dev/shm");
            let mut builder = tempfile::Builder::new();
            builder.prefix("fuzz-gzip");
            if shm.is_dir() {
                builder.tempdir_in(shm)
            } else {
                builder.tempdir()
            }
            .expect("a temporary folder")
        });
        let path: PathBuf = dir.path().join(names[bytes.len() % names.len()]);
        std::fs::write(&path, bytes).map_err(|e| format!("io: cannot write the input: {e}"))?;
        let small = (bytes.len() * 7 + 3) % 5000;
        for (cap, sniff_first) in [(small, true), (2 << 20, false), (64 << 20, false)] {
            let mark = Mark::start();
            let got = read(&path, cap as u64, sniff_first);
            let (peak, _) = mark.end();
            let content = match got {
                Err(ReadError::Io(e)) => return Err(format!("io: a readable file: {e}")),
                Err(ReadError::Gzip(e)) => {
                    if let Expect::Gzip { intact: true, .. } = input.expect {
                        return Err(format!("refused: a valid file: {e}"));
                    }
                    continue;
                }
                Ok(content) => content,
            };
            let held = content.bytes.len();
            if held > cap || !content.gzip || content.size != bytes.len() as u64 {
                return Err(format!(
                    "cap: {held} bytes held for a cap of {cap} (gzip {}, size {})",
                    content.gzip, content.size
                ));
            }
            if peak > 3 * (cap + 1) + SLACK {
                return Err(format!(
                    "memory: {peak} bytes allocated to read {held} bytes with a cap of {cap}"
                ));
            }
            if let Expect::Gzip {
                data,
                zeros,
                intact,
            } = &input.expect
            {
                same(
                    &content.bytes,
                    content.more,
                    data,
                    *zeros,
                    *intact,
                    cap,
                    sniff_first,
                )?;
            }
        }
        Ok(())
    }
}

/// Whether `got` is what the file holds, cut at the cap (and after the sniffed head when the
/// head is not text); `more` says whether content is left.
fn same(
    got: &[u8],
    more: bool,
    data: &[u8],
    zeros: u64,
    intact: bool,
    cap: usize,
    sniff_first: bool,
) -> Result<(), String> {
    let total = data.len() as u64 + zeros;
    let at = |i: usize| data.get(i).copied().unwrap_or(0);
    if let Some(i) = (0..got.len()).find(|&i| got[i] != at(i)) {
        return Err(format!("content: byte {i} is {} not {}", got[i], at(i)));
    }
    // The reader sniffs what it read first: the head, or the cap and one byte if less.
    let head: Vec<u8> = (0..SNIFF_BYTES.min(cap + 1).min(total as usize))
        .map(at)
        .collect();
    let stops_at_head = sniff_first && sniff(&head) != Sniffed::Text;
    let want = if stops_at_head {
        (total as usize).min(cap).min(SNIFF_BYTES)
    } else {
        (total as usize).min(cap)
    };
    if intact && (got.len() != want || (!stops_at_head && more != (total > cap as u64))) {
        return Err(format!(
            "content: {} bytes (more: {more}), not {want} of {total} with a cap of {cap}",
            got.len()
        ));
    }
    Ok(())
}
