//! Charset decoding, `search::local::decode::{sniff, text, html, declared}`: never panics;
//! `sniff` looks at the first 8 KB only and calls text with a UTF-16 byte order mark text;
//! valid UTF-8 comes back unchanged and without a warning, and so does its beginning when the
//! read cap cut a character at the very end; no decoding gives more than three bytes of text
//! per byte; a generated text encoded in a known encoding (with a byte order mark, a `<meta>`
//! charset, or a declared charset) decodes back to itself; a `<meta>` charset is read as the
//! encoding standard reads its label, whatever its case.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};
use researchflow::search::local::decode::{
    SNIFF_BYTES, Sniffed, declared, declared_charset, html, sniff, text,
};

use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

/// Labels the encoding standard knows (and a few it does not), as pages write them.
const LABELS: &[&str] = &[
    "utf-8",
    "UTF8",
    "unicode-1-1-utf-8",
    "latin1",
    "iso-8859-1",
    "ISO_8859-1:1987",
    "ascii",
    "us-ascii",
    "windows-1252",
    "cp1252",
    "iso-8859-2",
    "iso-8859-15",
    "koi8-r",
    "koi8-u",
    "windows-1251",
    "cp1251",
    "x-mac-cyrillic",
    "shift_jis",
    "sjis",
    "ms_kanji",
    "euc-jp",
    "iso-2022-jp",
    "euc-kr",
    "ks_c_5601-1987",
    "gbk",
    "gb2312",
    "gb18030",
    "big5",
    "big5-hkscs",
    "windows-874",
    "tis-620",
    "iso-8859-8-i",
    "windows-1255",
    "utf-16",
    "utf-16le",
    "utf-16be",
    "x-user-defined",
    "replacement",
    "csiso2022kr",
    "klingon",
    "utf-7",
    "",
    "utf-8 ",
    " latin1",
];

/// Declared encodings to decode with.
const DECLARED: &[&str] = &[
    "utf-8",
    "windows-1252",
    "utf-16le",
    "utf-16be",
    "shift_jis",
    "euc-jp",
    "iso-2022-jp",
    "gb18030",
    "big5",
    "euc-kr",
    "koi8-r",
    "x-user-defined",
    "replacement",
    "iso-8859-8",
];

pub struct CharsetTarget {
    seeds: Vec<Vec<u8>>,
}

impl CharsetTarget {
    pub fn new() -> CharsetTarget {
        let mut seeds: Vec<Vec<u8>> = vec![
            b"<meta charset=\"latin1\"><p>caf\xe9</p>".to_vec(),
            b"\xef\xbb\xbfBOM".to_vec(),
            b"\xff\xfeU\0T\0F\0".to_vec(),
            b"\xfe\xff\0U\0T".to_vec(),
            "caf\u{e9} \u{65e5}\u{672c}".as_bytes().to_vec(),
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=shift_jis\">\x82\xa0"
                .to_vec(),
            b"\x1b$B$3$s\x1b(B".to_vec(),
        ];
        let mut g = Gen::new(8);
        seeds.extend((0..16).map(|_| valid_encoded(&mut g).bytes));
        CharsetTarget { seeds }
    }
}

/// The encoding a label names, as `<meta>` reads it (UTF-16 labels on an ASCII page are UTF-8).
fn meta_encoding(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label(label.trim().as_bytes()).map(Encoding::output_encoding)
}

/// A text encoded one of the ways a page or file is: with a byte order mark, behind a
/// `<meta>` charset, or plain UTF-8; and the text it must decode to.
fn valid_encoded(g: &mut Gen) -> Input {
    let text: String = g.text(80);
    let (bytes, want) = match g.rng.u8(..4) {
        0 => {
            let boms: [&[u8]; 3] = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"];
            let bom = g.pick(&boms);
            let mut bytes = bom.to_vec();
            match bom.len() {
                3 => bytes.extend_from_slice(text.as_bytes()),
                _ if bom[0] == 0xff => bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes)),
                _ => bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes)),
            }
            (bytes, Some(text))
        }
        1 => {
            let label = g.pick(LABELS);
            let meta = format!("<meta charset=\"{}\">", flip_case(g, label));
            let encoding = meta_encoding(label).unwrap_or(UTF_8);
            let (body, _, lossy) = encoding.encode(&text);
            let mut bytes = meta.clone().into_bytes();
            bytes.extend_from_slice(&body);
            (bytes, (!lossy).then(|| meta + &text))
        }
        // Text that starts with U+FEFF starts with the bytes of a byte order mark.
        _ => (
            text.clone().into_bytes(),
            Some(text).filter(|t| !t.starts_with('\u{feff}')),
        ),
    };
    let expect = match want {
        Some(text) => Expect::Decoded(text),
        None => Expect::Nothing,
    };
    Input { bytes, expect }
}

fn flip_case(g: &mut Gen, s: &str) -> String {
    s.chars()
        .map(|c| {
            if g.rng.bool() {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

/// A number drawn from the bytes, so that a replayed input makes the same choices.
fn choice(bytes: &[u8], n: usize) -> usize {
    bytes.iter().fold(bytes.len(), |h, &b| {
        h.wrapping_mul(31).wrapping_add(usize::from(b))
    }) % n
}

impl Target for CharsetTarget {
    fn name(&self) -> &'static str {
        "charset"
    }

    fn tokens(&self) -> &'static [&'static str] {
        &[
            "<meta charset=",
            "<META CHARSET=\"",
            "<meta http-equiv=\"Content-Type\" content=\"",
            "text/html; charset=",
            "\"",
            "'",
            ">",
            "utf-8",
            "latin1",
            "shift_jis",
            "utf-16le",
            "iso-2022-jp",
            "gb18030",
            "\u{feff}",
            "\u{fffd}",
            "\u{0}",
            "\u{1b}$B",
            "\u{1b}(B",
            "é",
            "日本",
            "😀",
            "\r\n",
            "#!",
        ]
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("<meta charset=", ">"),
            ("\u{feff}", ""),
            ("\u{1b}$B", "\u{1b}(B"),
        ]
    }

    fn binary(&self) -> bool {
        true
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_encoded(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let bytes = &input.bytes;
        let sniffed = sniff(bytes);
        if sniffed != sniff(&bytes[..bytes.len().min(SNIFF_BYTES)]) {
            return Err("sniff: it looks past its first 8 KB".into());
        }
        if (bytes.starts_with(b"\xff\xfe") || bytes.starts_with(b"\xfe\xff"))
            && sniffed != Sniffed::Text
        {
            return Err("sniff: UTF-16 with a byte order mark is not text".into());
        }
        let declared_as = Encoding::for_label(DECLARED[choice(bytes, DECLARED.len())].as_bytes())
            .unwrap_or(UTF_16LE);
        let decoded = [
            ("text", text(bytes, false)),
            ("text (cut)", text(bytes, true)),
            ("html", html(bytes, false)),
            ("html (cut)", html(bytes, true)),
            ("declared", declared(bytes, false, declared_as)),
            ("declared UTF-16BE", declared(bytes, true, UTF_16BE)),
        ];
        for (how, (out, _)) in &decoded {
            if out.len() > 3 * bytes.len() {
                return Err(format!(
                    "grows: {how} gives {} bytes of text for {}",
                    out.len(),
                    bytes.len()
                ));
            }
        }
        utf8_properties(bytes)?;
        if let Expect::Decoded(want) = &input.expect {
            let (got, _) = &decoded[2].1;
            if got != want {
                return Err(format!("decodes wrong: {} not {}", short(got), short(want)));
            }
        }
        meta_property(bytes)
    }
}

/// Valid UTF-8 (without a byte order mark, whose bytes would say otherwise) comes back as it
/// is, and so does its beginning when the cap cut its last character.
fn utf8_properties(bytes: &[u8]) -> Result<(), String> {
    let Ok(valid) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    if Encoding::for_bom(bytes).is_some() {
        return Ok(());
    }
    if text(bytes, false) != (valid.to_string(), None) {
        return Err(format!("utf-8 changed: {}", short(valid)));
    }
    if let Some((at, c)) = valid.char_indices().last()
        && c.len_utf8() > 1
    {
        let cut = &bytes[..at + 1 + choice(bytes, c.len_utf8() - 1)];
        if text(cut, true) != (valid[..at].to_string(), None) {
            return Err(format!("a cut character is not dropped: {}", short(valid)));
        }
    }
    Ok(())
}

/// A `<meta charset="LABEL">` at the start of a page names the encoding its label names.
fn meta_property(bytes: &[u8]) -> Result<(), String> {
    let Some(rest) = bytes.strip_prefix(b"<meta charset=\"") else {
        return Ok(());
    };
    // The tag ends right after the label: a later `charset=` in the same tag would count.
    let Some(end) = rest.windows(2).position(|w| w == b"\">") else {
        return Ok(());
    };
    let label = String::from_utf8_lossy(&rest[..end]);
    let simple = label
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_:.+-".contains(&b));
    let got = declared_charset(bytes);
    if simple && got != meta_encoding(&label) {
        return Err(format!(
            "meta: `{label}` read as {:?}, not {:?}",
            got.map(Encoding::name),
            meta_encoding(&label).map(Encoding::name)
        ));
    }
    Ok(())
}
