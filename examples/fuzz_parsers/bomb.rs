//! Compression bombs, made in microseconds whatever they inflate to: a deflate stream of one
//! chunk (a pattern repeated to [`CHUNK`] bytes) repeated many times is the chunk's first
//! block, then the same second block again and again (once the 32 KB window holds the
//! chunk's tail, every later chunk compresses to the same bytes), then an empty final block.
//! The zlib (Adler-32) and gzip (CRC-32) checksums of the whole are combined from the chunk's,
//! so a bomb is a valid stream: a reader finds nothing wrong with it but its size.

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// The bytes one repeated block inflates to.
pub const CHUNK: usize = 1 << 20;

pub struct Bomb {
    first: Vec<u8>,
    repeat: Vec<u8>,
    end: Vec<u8>,
    adler: u32,
    crc: Crc,
}

impl Bomb {
    /// A bomb that inflates to `pattern` over and over.
    pub fn new(pattern: &[u8]) -> Bomb {
        let times = (CHUNK / pattern.len().max(1)).max(1);
        let mut chunk = pattern.repeat(times);
        chunk.resize(CHUNK, b' ');
        let mut c = Compress::new(Compression::best(), false);
        let first = deflate(&mut c, &chunk, FlushCompress::Sync);
        let repeat = deflate(&mut c, &chunk, FlushCompress::Sync);
        let end = deflate(&mut c, &[], FlushCompress::Finish);
        let mut crc = Crc::new();
        crc.update(&chunk);
        Bomb {
            first,
            repeat,
            end,
            adler: adler32(&chunk),
            crc,
        }
    }

    /// The raw deflate stream of `chunks` chunks (at least one).
    fn deflate(&self, chunks: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.first.len() + chunks * self.repeat.len() + 8);
        out.extend_from_slice(&self.first);
        for _ in 1..chunks {
            out.extend_from_slice(&self.repeat);
        }
        out.extend_from_slice(&self.end);
        out
    }

    /// A zlib stream (what a PDF's `/FlateDecode` holds) of `chunks` chunks.
    pub fn zlib(&self, chunks: usize) -> Vec<u8> {
        let chunks = chunks.max(1);
        let mut out = vec![0x78, 0xda];
        out.extend(self.deflate(chunks));
        let mut adler = self.adler;
        for _ in 1..chunks {
            adler = adler32_combine(adler, self.adler, CHUNK as u64);
        }
        out.extend_from_slice(&adler.to_be_bytes());
        out
    }

    /// A gzip member of `chunks` chunks, with its right CRC-32 or a wrong one.
    pub fn gzip(&self, chunks: usize, right_crc: bool) -> Vec<u8> {
        let chunks = chunks.max(1);
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff];
        out.extend(self.deflate(chunks));
        let mut crc = Crc::new();
        for _ in 0..chunks {
            crc.combine(&self.crc);
        }
        let sum = if right_crc { crc.sum() } else { !crc.sum() };
        out.extend_from_slice(&sum.to_le_bytes());
        out.extend_from_slice(&((chunks as u64 * CHUNK as u64) as u32).to_le_bytes());
        out
    }
}

/// `input` compressed with `flush` at the end, on the compressor's state so far.
fn deflate(c: &mut Compress, mut input: &[u8], flush: FlushCompress) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() / 64 + 4096);
    loop {
        if out.capacity() - out.len() < 4096 {
            out.reserve(out.capacity());
        }
        let before = c.total_in();
        // Compressing into a buffer with room cannot fail: the stream is ours.
        let status = c
            .compress_vec(input, &mut out, flush)
            .expect("deflate into a vector");
        input = &input[(c.total_in() - before) as usize..];
        // Done when the input is used up and the flush left room unused.
        if status == Status::StreamEnd || (input.is_empty() && out.capacity() > out.len()) {
            return out;
        }
    }
}

const ADLER_MOD: u32 = 65521;

pub fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= ADLER_MOD;
        b %= ADLER_MOD;
    }
    (b << 16) | a
}

/// The Adler-32 of `A` then `B` from theirs and `B`'s length (zlib's `adler32_combine`).
fn adler32_combine(adler1: u32, adler2: u32, len2: u64) -> u32 {
    let m = u64::from(ADLER_MOD);
    let rem = len2 % m;
    let a1 = u64::from(adler1 & 0xffff);
    let b1 = u64::from(adler1 >> 16);
    let a2 = u64::from(adler2 & 0xffff);
    let b2 = u64::from(adler2 >> 16);
    let a = (a1 + a2 + m - 1) % m;
    let b = (rem * a1 % m + b1 + b2 + m - rem) % m;
    ((b << 16) | a) as u32
}
