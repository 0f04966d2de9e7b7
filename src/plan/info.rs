//! The `info` field: sibling blocks `<info type="llm">...</info><info type="search">...</info>`.
//!
//! Writing escapes `&`, `<` and `>` so that any text, including `</info>` and `]]>`, round-trips.
//! Reading unescapes entities and also accepts what other tools write: unescaped text, CDATA
//! sections, single-quoted attributes, and plain text with no block at all (read as `all`).

use std::sync::LazyLock;

use regex::Regex;

/// Which part of `info` a ref asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum InfoPart {
    Llm,
    Search,
    All,
}

impl InfoPart {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The parsed blocks of an `info` field, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    blocks: Vec<InfoBlock>,
    /// Text outside any block, kept only when there is no block at all.
    loose: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct InfoBlock {
    kind: String,
    text: String,
}

static OPEN_TAG: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(r#"(?i)<info\s+type\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>"#).expect("valid regex")
});

const CLOSE_TAG: &str = "</info>";
const CDATA_OPEN: &str = "<![CDATA[";
const CDATA_CLOSE: &str = "]]>";

impl Info {
    /// Parses an `info` field. Never fails: what is not a block is ignored, unless there is no
    /// block at all, in which case the whole text counts as `all`.
    pub fn parse(raw: &str) -> Info {
        let mut info = Info::default();
        let mut rest = raw;
        while let Some(caps) = OPEN_TAG.captures(rest) {
            let (Some(whole), Some(kind)) = (caps.get(0), caps.get(1).or_else(|| caps.get(2)))
            else {
                break;
            };
            let kind = unescape(kind.as_str()).trim().to_ascii_lowercase();
            let body = &rest[whole.end()..];
            let (inner, after) = split_block_body(body);
            info.blocks.push(InfoBlock {
                kind,
                text: unescape(inner),
            });
            rest = after;
        }
        if info.blocks.is_empty() {
            info.loose = raw.trim().to_string();
        }
        info
    }

    /// The text of one part; `""` when absent. `All` joins every block in order.
    pub fn part(&self, part: InfoPart) -> String {
        match part {
            InfoPart::All if self.blocks.is_empty() => self.loose.clone(),
            InfoPart::All => self
                .blocks
                .iter()
                .map(|b| b.text.as_str())
                .filter(|t| !t.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n\n"),
            InfoPart::Llm | InfoPart::Search => self.get(part.as_str()).unwrap_or_default().into(),
        }
    }

    /// The text of the block of the given type, if present.
    pub fn get(&self, kind: &str) -> Option<&str> {
        self.blocks
            .iter()
            .find(|b| b.kind == kind)
            .map(|b| b.text.as_str())
    }

    /// Sets the block of the given type, replacing an existing one in place.
    pub fn set(&mut self, kind: &str, text: impl Into<String>) {
        let text = text.into();
        match self.blocks.iter_mut().find(|b| b.kind == kind) {
            Some(b) => b.text = text,
            None => self.blocks.push(InfoBlock {
                kind: kind.to_string(),
                text,
            }),
        }
    }

    /// Every block's text (or the loose text) replaced by `f` of it.
    pub fn map_text(&mut self, f: impl Fn(&str) -> String) {
        for b in &mut self.blocks {
            b.text = f(&b.text);
        }
        self.loose = f(&self.loose);
    }

    /// Renders the blocks, escaped; `""` when there is none.
    pub fn render(&self) -> String {
        if self.blocks.is_empty() {
            return self.loose.clone();
        }
        let mut out = String::new();
        for b in &self.blocks {
            let kind = escape(&b.kind).replace('"', "&quot;");
            out.push_str(&format!(r#"<info type="{kind}">"#));
            out.push_str(&escape(&b.text));
            out.push_str(CLOSE_TAG);
        }
        out
    }
}

/// Splits the text after an opening tag into the block body and what follows the closing tag.
/// CDATA sections are skipped over, so a `</info>` inside one does not end the block. An
/// unterminated block runs to the end of the text.
fn split_block_body(body: &str) -> (&str, &str) {
    let mut i = 0;
    while i < body.len() {
        let tail = &body[i..];
        if tail.starts_with(CDATA_OPEN) {
            match tail.find(CDATA_CLOSE) {
                Some(end) => i += end + CDATA_CLOSE.len(),
                None => return (body, ""),
            }
        } else if tail.len() >= CLOSE_TAG.len()
            && tail.is_char_boundary(CLOSE_TAG.len())
            && tail[..CLOSE_TAG.len()].eq_ignore_ascii_case(CLOSE_TAG)
        {
            return (&body[..i], &tail[CLOSE_TAG.len()..]);
        } else {
            i += tail.chars().next().map_or(1, char::len_utf8);
        }
    }
    (body, "")
}

/// Escapes the three characters that could end a block or start an entity.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Reverses [`escape`], also decoding numeric entities, `&quot;`, `&apos;` and CDATA sections.
/// Anything that is not a known entity is kept as written.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(['&', '<']) {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        if let Some(after) = rest.strip_prefix(CDATA_OPEN) {
            let end = after.find(CDATA_CLOSE).unwrap_or(after.len());
            out.push_str(&after[..end]);
            rest = after.get(end + CDATA_CLOSE.len()..).unwrap_or("");
            continue;
        }
        if rest.starts_with('<') {
            out.push('<');
            rest = &rest[1..];
            continue;
        }
        // An entity ends within 13 bytes; looking further for its `;` made `        // Only the next 13 bytes: searching the whole rest for every `&` is quadratic.`s quadratic.
        let near = &rest.as_bytes()[..rest.len().min(13)];
        let decoded = near.iter().position(|&b| b == b';').and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Refs in plan files store these names: they must never change.
    #[test]
    fn every_info_part_keeps_its_stored_name() {
        assert_eq!(crate::text::variant_names::<InfoPart>(), "llm search all");
    }

    fn round_trip(llm: &str, search: &str) -> Info {
        let mut info = Info::default();
        info.set("llm", llm);
        info.set("search", search);
        Info::parse(&info.render())
    }

    #[test]
    fn nasty_text_round_trips() {
        let nasty = "a </info> b ]]> c & d < e > f &amp; <![CDATA[x]]> <info type=\"llm\">";
        let back = round_trip(nasty, "plain");
        assert_eq!(back.get("llm"), Some(nasty));
        assert_eq!(back.get("search"), Some("plain"));
    }

    #[test]
    fn reads_unescaped_blocks_from_other_tools() {
        let raw = "<info type=\"llm\">x < y && z</info>\n<info type='search'>R & D</info>";
        let info = Info::parse(raw);
        assert_eq!(info.get("llm"), Some("x < y && z"));
        assert_eq!(info.get("search"), Some("R & D"));
    }

    #[test]
    fn reads_cdata_blocks() {
        let raw = "<info type=\"search\"><![CDATA[a </info> b]]></info>";
        assert_eq!(Info::parse(raw).get("search"), Some("a </info> b"));
    }

    #[test]
    fn missing_blocks_are_empty_and_plain_text_is_all() {
        let info = Info::parse(r#"<info type="llm">only</info>"#);
        assert_eq!(info.part(InfoPart::Search), "");
        assert_eq!(info.part(InfoPart::All), "only");
        let info = Info::parse("  just text  ");
        assert_eq!(info.part(InfoPart::All), "just text");
        assert_eq!(info.part(InfoPart::Llm), "");
        assert_eq!(Info::parse("").part(InfoPart::All), "");
    }

    #[test]
    fn set_replaces_in_place() {
        let mut info = Info::parse(r#"<info type="llm">a</info><info type="search">b</info>"#);
        info.set("llm", "c");
        assert_eq!(
            info.render(),
            r#"<info type="llm">c</info><info type="search">b</info>"#
        );
    }

    #[test]
    fn unterminated_block_runs_to_the_end() {
        assert_eq!(
            Info::parse(r#"<info type="llm">no end"#).get("llm"),
            Some("no end")
        );
    }

    proptest! {
        #[test]
        fn any_text_round_trips(llm in any::<String>(), search in "(.|</info>|]]>|&|<|&amp;)*") {
            let back = round_trip(&llm, &search);
            prop_assert_eq!(back.get("llm"), Some(llm.as_str()));
            prop_assert_eq!(back.get("search"), Some(search.as_str()));
        }

        #[test]
        fn escape_then_unescape_is_identity(text in any::<String>()) {
            prop_assert_eq!(unescape(&escape(&text)), text);
        }
    }
}
