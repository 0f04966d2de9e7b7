//! How text becomes index terms, the same for documents, queries and passages: words are runs
//! of letters and digits, lower-cased and stemmed (English); Chinese and Japanese text, which
//! has no spaces, becomes overlapping pairs of characters (bigrams), so `固态电池` matches
//! `固态` + `态电` + `电池` wherever the phrase occurs.
//!
//! Changing anything here changes the index format: bump `manifest::VERSION` so existing
//! indexes are rebuilt. This module only splits text; it never touches the index.

use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// The name the analyzer is registered under in the index's tokenizer manager.
pub const NAME: &str = "researchflow_words";

/// Words longer than this many bytes (hashes, base64) are not indexed.
const MAX_WORD_BYTES: usize = 60;

/// The analyzer of every text field: [`WordTokenizer`], long words dropped, lower case, English
/// stems.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer)
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Every term of `text` with its byte range, in order.
pub fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    analyzer
        .token_stream(text)
        .process(&mut |token: &Token| out.push(token.clone()));
    out
}

/// Splits text into words and CJK bigrams (see the module doc).
#[derive(Clone, Default)]
pub struct WordTokenizer;

/// The tokens of one text, produced up front.
pub struct Tokens {
    tokens: std::vec::IntoIter<Token>,
    current: Token,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = Tokens;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Tokens {
        Tokens {
            tokens: split(text).into_iter(),
            current: Token::default(),
        }
    }
}

impl TokenStream for Tokens {
    fn advance(&mut self) -> bool {
        match self.tokens.next() {
            Some(token) => {
                self.current = token;
                true
            }
            None => false,
        }
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

/// Han ideographs, kana and CJK compatibility ideographs: scripts written without spaces.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'
        | '\u{3400}'..='\u{4dbf}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{f900}'..='\u{faff}'
        | '\u{20000}'..='\u{2ebef}')
}

fn split(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut push = |from: usize, to: usize| {
        tokens.push(Token {
            offset_from: from,
            offset_to: to,
            position: tokens.len(),
            text: text[from..to].to_string(),
            position_length: 1,
        });
    };
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if is_cjk(c) {
            // One token per pair of neighbours; a lone character is its own token.
            let mut prev = (start, c.len_utf8());
            let mut paired = false;
            while let Some(&(at, next)) = chars.peek().filter(|(_, n)| is_cjk(*n)) {
                push(prev.0, at + next.len_utf8());
                prev = (at, next.len_utf8());
                paired = true;
                chars.next();
            }
            if !paired {
                push(start, start + c.len_utf8());
            }
        } else if c.is_alphanumeric() {
            let mut end = start + c.len_utf8();
            while let Some(&(at, next)) = chars
                .peek()
                .filter(|(_, n)| n.is_alphanumeric() && !is_cjk(*n))
            {
                end = at + next.len_utf8();
                chars.next();
            }
            push(start, end);
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        terms(&mut analyzer(), text)
            .into_iter()
            .map(|t| t.text)
            .collect()
    }

    #[test]
    fn words_are_lower_cased_and_stemmed() {
        assert_eq!(
            texts("Batteries, CHARGING-cycles!"),
            ["batteri", "charg", "cycl"]
        );
        assert_eq!(
            texts("Größe naïve café 2026"),
            ["größe", "naïv", "café", "2026"]
        );
    }

    #[test]
    fn cjk_runs_become_bigrams_and_keep_their_offsets() {
        let text = "固态电池 vs 锂";
        let tokens = terms(&mut analyzer(), text);
        let words: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(words, ["固态", "态电", "电池", "vs", "锂"]);
        for t in &tokens {
            assert_eq!(&text[t.offset_from..t.offset_to], t.text);
        }
        assert_eq!(texts("東京タワー"), ["東京", "京タ", "タワ", "ワー"]);
    }

    #[test]
    fn punctuation_only_gives_no_term() {
        assert!(texts("  -- ?! ***  ").is_empty());
        assert!(texts(&"x".repeat(100)).is_empty());
    }
}
