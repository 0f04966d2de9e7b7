//! The one text analyzer: how text becomes terms, the same for the index (documents, queries,
//! passages), the claim check, the offline engine and `watch`'s facts. Words are runs of
//! letters and digits, lower-cased and stemmed (English, tantivy's Snowball stemmer); Chinese
//! and Japanese text, which has no spaces, becomes overlapping pairs of characters (bigrams), so
//! `固态电池` matches `固态` + `态电` + `电池` wherever the phrase occurs. [`content_terms`] is
//! what a sentence is about: its terms without stopwords, a unit written out as its symbol.
//! Sentences are [`crate::text::sentences`]'.
//!
//! Changing the tokenizer or its filters changes the index format: bump
//! `search::local::manifest::VERSION` so existing indexes are rebuilt.

use std::collections::BTreeSet;

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
            text: american(&text[from..to]),
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

/// British spellings and the American ones they stand for, as the start of a word: a
/// question that writes `licence` finds the `License:` that a document writes, and the
/// reverse.
const SPELLINGS: &[(&str, &str)] = &[
    ("licenc", "licens"),
    ("defenc", "defens"),
    ("offenc", "offens"),
    ("colour", "color"),
    ("behaviour", "behavior"),
    ("favour", "favor"),
    ("honour", "honor"),
    ("labour", "labor"),
    ("neighbour", "neighbor"),
    ("centre", "center"),
    ("metre", "meter"),
    ("litre", "liter"),
    ("fibre", "fiber"),
    ("catalogu", "catalog"),
    ("organis", "organiz"),
    ("recognis", "recogniz"),
    ("initialis", "initializ"),
    ("normalis", "normaliz"),
    ("optimis", "optimiz"),
    ("serialis", "serializ"),
    ("synchronis", "synchroniz"),
    ("customis", "customiz"),
    ("authoris", "authoriz"),
    ("minimis", "minimiz"),
    ("maximis", "maximiz"),
    ("prioritis", "prioritiz"),
    ("summaris", "summariz"),
    ("utilis", "utiliz"),
    ("finalis", "finaliz"),
    ("specialis", "specializ"),
    ("standardis", "standardiz"),
    ("categoris", "categoriz"),
    ("visualis", "visualiz"),
];

/// `word` spelled the American way ([`SPELLINGS`]), in lower case where it is respelled.
fn american(word: &str) -> String {
    // The shortest British spelling has five letters.
    if word.len() < 5 {
        return word.to_string();
    }
    let british = |b: &str| {
        word.is_char_boundary(b.len().min(word.len()))
            && word
                .get(..b.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(b))
    };
    match SPELLINGS.iter().find(|(b, _)| british(b)) {
        Some((b, american)) => format!("{american}{}", word[b.len()..].to_lowercase()),
        None => word.to_string(),
    }
}

/// Words that say nothing about a topic (English), left out of the terms.
pub const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "many",
    "may",
    "me",
    "more",
    "most",
    "much",
    "must",
    "my",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "compare",
    "compared",
    "comparison",
    "versus",
    "vs",
];

/// Units written out, and the symbol that means the same (`kilowatt-hour` is `kWh`): a source
/// that spells a unit out supports a claim that abbreviates it, and the other way round.
const UNITS: &[(&[&str], &str)] = &[
    (&["kilowatt", "hour"], "kwh"),
    (&["megawatt", "hour"], "mwh"),
    (&["gigawatt", "hour"], "gwh"),
    (&["watt", "hour"], "wh"),
    (&["kilowatt"], "kw"),
    (&["megawatt"], "mw"),
    (&["gigawatt"], "gw"),
    (&["kilometre"], "km"),
    (&["kilometer"], "km"),
    (&["kilogram"], "kg"),
    (&["millimetre"], "mm"),
    (&["millimeter"], "mm"),
    (&["megapascal"], "mpa"),
];

/// The content terms of `text`: words stemmed as the local index stems them, stopwords and
/// one-character words left out, a unit written out as its symbol ([`UNITS`]); and each
/// short option it writes ([`short_options`]).
pub fn content_terms(text: &str) -> BTreeSet<String> {
    let said = with_unit_symbols(text);
    let mut analyzer = analyzer();
    let mut out: BTreeSet<String> = terms(&mut analyzer, &said)
        .into_iter()
        .filter(|t| {
            let word = said.get(t.offset_from..t.offset_to).unwrap_or("");
            word.chars().count() > 1 && !STOPWORDS.contains(&word)
        })
        .map(|t| t.text)
        .collect();
    out.extend(short_options(text));
    out
}

/// The short options `text` writes (`-7`, `-T`), as written: their one character is no term,
/// yet `xz -7` names a preset as `--threads` names an option, and `-T` is not `-t`.
pub fn short_options(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().filter_map(|raw| {
        let option = raw
            .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '-')
            .trim_end_matches(|c: char| !c.is_alphanumeric());
        let mut chars = option.chars();
        let short = chars.next() == Some('-')
            && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
            && chars.next().is_none();
        short.then(|| option.to_string())
    })
}

/// `text`'s words ([`crate::text::words`]), each unit written out (singular or plural)
/// replaced by its symbol.
fn with_unit_symbols(text: &str) -> String {
    let words = crate::text::words(text);
    let words: Vec<&str> = words.split(' ').collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let unit = UNITS.iter().find(|(spelled, _)| {
            let n = spelled.len();
            words.len() >= i + n
                && spelled
                    .iter()
                    .zip(&words[i..i + n])
                    .enumerate()
                    .all(|(k, (s, w))| w == s || (k == n - 1 && w.strip_suffix('s') == Some(s)))
        });
        match unit {
            Some((spelled, symbol)) => {
                out.push(symbol);
                i += spelled.len();
            }
            None => {
                out.push(words[i]);
                i += 1;
            }
        }
    }
    out.join(" ")
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
    fn british_spellings_are_the_american_terms() {
        assert_eq!(texts("Licence licences"), texts("License licenses"));
        assert_eq!(texts("colour, centre"), ["color", "center"]);
        assert_eq!(texts("Organisation"), texts("organization"));
        // Offsets stay those of the word as written.
        let tokens = terms(&mut analyzer(), "the Licence");
        assert_eq!((tokens[1].offset_from, tokens[1].offset_to), (4, 11));
        assert_eq!(texts("literature analysis"), ["literatur", "analysi"]);
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

    #[test]
    fn content_terms_are_stemmed_words_without_stopwords_and_units_as_symbols() {
        let terms = |t: &str| content_terms(t).into_iter().collect::<Vec<_>>();
        assert_eq!(
            terms("How do the Solid-state batteries compare with cells?"),
            vec!["batteri", "cell", "solid", "state"]
        );
        assert!(terms("the of and").is_empty());
        assert_eq!(terms("battery"), terms("batteries"));
        assert_eq!(terms("300 kilowatt hours"), terms("300 kWh"));
    }

    /// A short option is a term as written: `-7` and `-T` name something, `-t` another.
    #[test]
    fn short_options_are_terms_as_written() {
        let terms = |t: &str| content_terms(t).into_iter().collect::<Vec<_>>();
        assert_eq!(terms("xz -7 (or `-T`), -e."), ["-7", "-T", "-e", "xz"]);
        assert_ne!(terms("-T"), terms("-t"));
        // A dash alone, a long option's sign or a negative figure is no short option.
        assert_eq!(terms("a - b -- c"), Vec::<String>::new());
        assert_eq!(terms("--jobs -20"), ["20", "job"]);
    }
}
