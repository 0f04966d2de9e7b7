//! Input generation: random bytes, token soup with a parser's special strings weighted up, and
//! mutations of valid seeds (bit flips, truncation, splicing, duplication, deep nesting).
//!
//! Each input draws from its own `fastrand::Rng`, seeded from the run's seed, the parser and the
//! input's number, so a seed reproduces a run input for input, and a run can resume at any
//! input (after one that killed the process) without generating those before it.

use serde_json::{Map, Value};

/// The longest input we build; duplication and nesting stop here.
pub const MAX_LEN: usize = 1 << 20;

/// Characters that have tripped text handling elsewhere: multi-byte, case-changing, control,
/// line and white-space characters outside ASCII.
const ODD_CHARS: &[char] = &[
    'é', 'ß', 'İ', 'ı', 'K', '日', '本', '😀', '\u{0}', '\u{1b}', '\u{7f}', '\u{85}', '\u{a0}',
    '\u{2028}', '\u{3000}', '\u{feff}', '\u{fffd}', '\u{301}', '，', '：',
];

pub struct Gen {
    pub rng: fastrand::Rng,
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// The generator of input `index` of parser `parser` in the run of `seed`.
    pub fn for_input(seed: u64, parser: u64, index: u64) -> Gen {
        // splitmix64's finaliser: nearby indices give unrelated streams.
        let mut z = seed ^ parser.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index.rotate_left(32);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Gen::new(z ^ (z >> 31))
    }

    /// A length skewed towards short inputs, where parsers have most of their branches.
    pub fn len(&mut self) -> usize {
        match self.rng.u8(..100) {
            0..50 => self.rng.usize(..8),
            50..80 => self.rng.usize(..64),
            80..95 => self.rng.usize(..512),
            _ => self.rng.usize(..4096),
        }
    }

    /// Random bytes (a text parser gets them as lossy UTF-8).
    pub fn raw(&mut self) -> Vec<u8> {
        let mut buf = vec![0u8; self.len()];
        self.rng.fill(&mut buf);
        buf
    }

    /// One of `items`.
    pub fn pick<'a, T: ?Sized>(&mut self, items: &[&'a T]) -> &'a T {
        items[self.rng.usize(..items.len())]
    }

    /// A size spread evenly over the orders of magnitude from `min` to `max`: most are small,
    /// a few are near `max`.
    pub fn log_size(&mut self, min: usize, max: usize) -> usize {
        let (lo, hi) = ((min.max(1) as f64).ln(), (max.max(1) as f64).ln());
        ((lo + self.rng.f64() * (hi - lo)).exp() as usize).clamp(min, max)
    }

    pub fn odd_char(&mut self) -> char {
        ODD_CHARS[self.rng.usize(..ODD_CHARS.len())]
    }

    /// One printable ASCII character, or a new line or tab.
    pub fn ascii_char(&mut self) -> char {
        match self.rng.u8(..20) {
            0 => '\n',
            1 => '\t',
            _ => self.rng.char(' '..='~'),
        }
    }

    /// Text of mixed ASCII and odd characters.
    pub fn text(&mut self, max: usize) -> String {
        let n = self.rng.usize(..=max);
        (0..n)
            .map(|_| {
                if self.rng.u8(..8) == 0 {
                    self.odd_char()
                } else {
                    self.ascii_char()
                }
            })
            .collect()
    }

    /// A short lower-case word.
    pub fn word(&mut self) -> String {
        let n = self.rng.usize(1..8);
        (0..n).map(|_| self.rng.lowercase()).collect()
    }

    /// Token soup: the parser's special strings (half of all pieces), ASCII and odd characters.
    pub fn soup(&mut self, tokens: &[&str]) -> String {
        let pieces = self.len().min(256);
        let mut out = String::new();
        for _ in 0..pieces {
            match self.rng.u8(..10) {
                0..5 => out.push_str(tokens[self.rng.usize(..tokens.len())]),
                5..8 => out.push(self.ascii_char()),
                8 => out.push(self.odd_char()),
                _ => out.push_str(&self.word()),
            }
        }
        out
    }

    /// One to four stacked mutations of `base`; `other` is spliced in, `tokens` inserted and
    /// `nests` wrapped around.
    pub fn mutate(
        &mut self,
        base: &[u8],
        other: &[u8],
        tokens: &[&str],
        nests: &[(&str, &str)],
    ) -> Vec<u8> {
        let mut buf = base.to_vec();
        for _ in 0..self.rng.usize(1..=4) {
            match self.rng.u8(..9) {
                0 => self.flip_bit(&mut buf),
                1 => self.set_byte(&mut buf),
                2 => buf.truncate(self.rng.usize(..=buf.len())),
                3 => self.delete_range(&mut buf),
                4 => self.splice(&mut buf, other),
                5 => self.duplicate(&mut buf),
                6 => self.nest(&mut buf, nests),
                _ => {
                    let at = self.rng.usize(..=buf.len());
                    let token = tokens[self.rng.usize(..tokens.len())];
                    buf.splice(at..at, token.bytes());
                }
            }
        }
        // A larger input stays as it was made (a compressed bomb is small anyway).
        buf.truncate(MAX_LEN.max(base.len()));
        buf
    }

    fn flip_bit(&mut self, buf: &mut [u8]) {
        if !buf.is_empty() {
            let i = self.rng.usize(..buf.len());
            buf[i] ^= 1 << self.rng.u8(..8);
        }
    }

    fn set_byte(&mut self, buf: &mut [u8]) {
        const INTERESTING: &[u8] = b"{}[]:,\"<>&;\\\0\xff\xc3\n";
        if !buf.is_empty() {
            let i = self.rng.usize(..buf.len());
            buf[i] = INTERESTING[self.rng.usize(..INTERESTING.len())];
        }
    }

    fn delete_range(&mut self, buf: &mut Vec<u8>) {
        let a = self.rng.usize(..=buf.len());
        let b = self.rng.usize(a..=buf.len().min(a + 64));
        buf.drain(a..b);
    }

    fn splice(&mut self, buf: &mut Vec<u8>, other: &[u8]) {
        let a = self.rng.usize(..=buf.len());
        let b = self.rng.usize(..=other.len());
        buf.truncate(a);
        buf.extend_from_slice(&other[b..]);
    }

    /// Repeats a slice: usually a few times, once in a few thousand up to [`MAX_LEN`], which is
    /// where a parser that is quadratic in some character shows it.
    fn duplicate(&mut self, buf: &mut Vec<u8>) {
        if buf.is_empty() {
            return;
        }
        let a = self.rng.usize(..buf.len());
        let b = self.rng.usize(a + 1..=buf.len().min(a + 32));
        let piece = buf[a..b].to_vec();
        let times = if self.rng.u16(..2000) == 0 {
            MAX_LEN / piece.len()
        } else {
            self.rng.usize(1..64)
        };
        let mut rep = Vec::with_capacity(piece.len() * times);
        for _ in 0..times {
            rep.extend_from_slice(&piece);
        }
        buf.splice(b..b, rep);
    }

    /// Wraps the input in `depth` opening and closing pieces (deep nesting): far beyond
    /// serde_json's recursion limit of 128, and once in a while 20,000 deep.
    fn nest(&mut self, buf: &mut Vec<u8>, nests: &[(&str, &str)]) {
        let (open, close) = nests[self.rng.usize(..nests.len())];
        let depth = if self.rng.u16(..500) == 0 {
            20_000
        } else {
            self.rng.usize(1..300)
        };
        let mut out = Vec::with_capacity(buf.len() + depth * (open.len() + close.len()));
        for _ in 0..depth {
            out.extend_from_slice(open.as_bytes());
        }
        out.extend_from_slice(buf);
        // Sometimes the nesting is left unclosed, as a cut-off answer would be.
        if self.rng.bool() {
            for _ in 0..depth {
                out.extend_from_slice(close.as_bytes());
            }
        }
        *buf = out;
    }

    /// A random JSON value, `depth` levels deep at most; floats come from random bits, so the
    /// whole range of `f64` is tried.
    pub fn json(&mut self, depth: u32) -> Value {
        match self.rng.u8(..9) {
            0 => Value::Null,
            1 => Value::Bool(self.rng.bool()),
            2 => Value::from(self.rng.i64(..)),
            3 => Value::from(self.rng.u64(..)),
            4 => {
                let f = f64::from_bits(self.rng.u64(..));
                Value::from(if f.is_finite() { f } else { self.rng.f64() })
            }
            5 if depth > 0 => Value::Array(
                (0..self.rng.usize(..4))
                    .map(|_| self.json(depth - 1))
                    .collect(),
            ),
            6 if depth > 0 => Value::Object(self.object(depth - 1)),
            _ => Value::String(self.text(12)),
        }
    }

    pub fn object(&mut self, depth: u32) -> Map<String, Value> {
        (0..self.rng.usize(..4))
            .map(|_| (self.text(6), self.json(depth)))
            .collect()
    }
}
