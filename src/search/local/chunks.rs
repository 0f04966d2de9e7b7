//! A document's text in chunks: paragraphs (lines) joined up to about [`TARGET_CHARS`] and
//! never over [`MAX_CHARS`]. The unit the local index embeds (`search.embeddings`) and the
//! search sub-agent ranks and quotes (`read::passages`), so that a passage shown is a chunk
//! that was embedded. Pure text work.

use crate::text::collapsed;
use crate::text::sentences::split_sentences;

/// Paragraphs are joined into one passage until it has about this many characters...
pub const TARGET_CHARS: usize = 700;
/// ...and never past this many: a longer paragraph is split at sentence ends (and a longer
/// sentence at spaces).
pub const MAX_CHARS: usize = 1200;

/// Cuts a text into chunks: paragraphs (lines) joined up to about [`TARGET_CHARS`],
/// never over [`MAX_CHARS`], white space collapsed, empty ones dropped.
pub fn cut(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = 0;
    for piece in pieces(text) {
        let len = piece.chars().count();
        if chars > 0 && (chars >= TARGET_CHARS || chars + 1 + len > MAX_CHARS) {
            out.push(std::mem::take(&mut current));
            chars = 0;
        }
        if chars > 0 {
            current.push(' ');
            chars += 1;
        }
        current.push_str(&piece);
        chars += len;
    }
    if chars > 0 {
        out.push(current);
    }
    out
}

/// The paragraphs of `text`, white space collapsed, each at most [`MAX_CHARS`]: a longer one
/// as its sentences, a longer sentence in pieces cut at spaces.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = collapsed(line);
        if line.chars().count() <= MAX_CHARS {
            if !line.is_empty() {
                out.push(line);
            }
            continue;
        }
        for sentence in split_sentences(&line) {
            split_at_spaces(sentence, &mut out);
        }
    }
    out
}

/// `text` (white space collapsed) in pieces of at most [`MAX_CHARS`], cut at the last space
/// that keeps a piece under it, or mid-word for a word longer than that.
fn split_at_spaces(mut text: &str, out: &mut Vec<String>) {
    while let Some((limit, _)) = text.char_indices().nth(MAX_CHARS) {
        let at = match text[..limit].rfind(' ') {
            Some(space) if space > 0 => space,
            _ => limit,
        };
        out.push(text[..at].to_string());
        text = text[at..].trim_start();
    }
    if !text.is_empty() {
        out.push(text.to_string());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A paragraph of about `chars` characters of filler about `topic`.
    pub(crate) fn filler(topic: &str, chars: usize) -> String {
        let sentence = format!("This sentence talks about {topic} in general terms. ");
        sentence.repeat(chars / sentence.len() + 1)[..chars]
            .trim()
            .to_string()
    }

    #[test]
    fn paragraphs_are_joined_up_to_the_target_and_never_over_the_maximum() {
        let short = ["Heading", "A short paragraph.", "Another one."];
        assert_eq!(
            cut(&short.join("\n\n\n")),
            ["Heading A short paragraph. Another one."]
        );
        let text = [
            filler("cells", 500),
            filler("grids", 500),
            filler("tanks", 300),
        ]
        .join("\n");
        let passages = cut(&text);
        assert_eq!(passages.len(), 2, "{passages:?}");
        let first = passages[0].chars().count();
        assert!((TARGET_CHARS..=MAX_CHARS).contains(&first), "{first}");
        assert!(passages[1].contains("tanks"));
        let long = "Membranes wear out and must be replaced every few years. ".repeat(60);
        for passage in cut(&long) {
            let chars = passage.chars().count();
            assert!(chars <= MAX_CHARS && chars > 0, "{chars}");
            assert!(passage.ends_with('.'), "cut at sentence ends: {passage}");
        }
        let word = "x".repeat(2500);
        let pieces = cut(&word);
        assert_eq!(
            pieces.iter().map(|p| p.chars().count()).collect::<Vec<_>>(),
            [1200, 1200, 100]
        );
        assert_eq!(cut("  a \t b  \n\n   \n c"), ["a b c"]);
        assert!(cut(" \n\t\n").is_empty());
    }
}
