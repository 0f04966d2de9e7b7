//! What a free-text query asks of the index, and the tantivy query that asks it.
//!
//! Every term of the query, in the body or (boosted) in the title, scores by BM25. On top of
//! that, two kinds of word order count:
//! - each two words that stand side by side in the query and in a document's body
//!   ([`PAIR_BOOST`]): `cathode particles` together says more than the two words apart;
//! - a phrase the query puts in quotes (`what does 'state of charge' mean`), found as that
//!   phrase in the body ([`QUOTED_BOOST`]): the asker said these words belong together.
//!
//! The query is never parsed as query syntax: quotes that do not pair up are ordinary
//! characters, and no text fails. Pure query building: no index, no files.

use tantivy::Term;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;

use super::schema::Fields;
use crate::text::analyzer;

/// A match in the title counts this much more than one in the body.
const TITLE_BOOST: f32 = 2.0;
/// Query terms (and pairs) past this many are ignored (a pasted paragraph stays fast).
const MAX_QUERY_TERMS: usize = 64;
/// Two words of the query found side by side in the body count this much more than each alone.
const PAIR_BOOST: f32 = 1.0;
/// A quoted phrase of the query found as a phrase in the body counts this much.
const QUOTED_BOOST: f32 = 4.0;
/// The most quoted phrases a query is searched for.
const MAX_QUOTED: usize = 8;

/// A query's analysed terms (each once, in order), its adjacent pairs and its quoted phrases.
#[derive(Debug, Default, PartialEq)]
pub struct Asked {
    pub terms: Vec<String>,
    pub pairs: Vec<(String, String)>,
    pub phrases: Vec<Vec<String>>,
}

impl Asked {
    /// What `query` asks, analysed as documents are.
    pub fn of(query: &str, analyzer: &mut TextAnalyzer) -> Asked {
        let mut asked = Asked::default();
        let mut previous: Option<String> = None;
        for token in analyzer::terms(analyzer, query) {
            if let Some(first) = previous.replace(token.text.clone()) {
                let pair = (first, token.text.clone());
                let fresh = pair.0 != pair.1 && !asked.pairs.contains(&pair);
                if fresh && asked.pairs.len() < MAX_QUERY_TERMS {
                    asked.pairs.push(pair);
                }
            }
            if !asked.terms.contains(&token.text) && asked.terms.len() < MAX_QUERY_TERMS {
                asked.terms.push(token.text);
            }
        }
        for phrase in quoted(query).into_iter().take(MAX_QUOTED) {
            let terms: Vec<String> = analyzer::terms(analyzer, phrase)
                .into_iter()
                .map(|t| t.text)
                .take(MAX_QUERY_TERMS)
                .collect();
            if terms.len() > 1 && !asked.phrases.contains(&terms) {
                asked.phrases.push(terms);
            }
        }
        asked
    }

    /// The tantivy query: any term in the body or the title, pairs and quoted phrases in the
    /// body adding to the score.
    pub fn query(&self, fields: &Fields) -> BooleanQuery {
        let term_query = |field, text: &str| -> Box<dyn Query> {
            let term = Term::from_field_text(field, text);
            Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs))
        };
        let boosted = |query: Box<dyn Query>, boost: f32| -> (Occur, Box<dyn Query>) {
            (Occur::Should, Box::new(BoostQuery::new(query, boost)))
        };
        let phrase = |words: &[String]| -> Box<dyn Query> {
            let terms = words
                .iter()
                .map(|w| Term::from_field_text(fields.body, w))
                .collect();
            Box::new(PhraseQuery::new(terms))
        };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &self.terms {
            clauses.push((Occur::Should, term_query(fields.body, t)));
            clauses.push(boosted(term_query(fields.title, t), TITLE_BOOST));
        }
        for (first, second) in &self.pairs {
            clauses.push(boosted(
                phrase(&[first.clone(), second.clone()]),
                PAIR_BOOST,
            ));
        }
        for words in &self.phrases {
            clauses.push(boosted(phrase(words), QUOTED_BOOST));
        }
        BooleanQuery::new(clauses)
    }
}

/// The phrases `text` puts in quotes: `"..."`, `'...'`, `“...”` or `‘...’`, the opening mark
/// at the start or after a space or bracket, the closing one at the end or before a space or
/// punctuation (so that the apostrophes of `a car's pack` quote nothing).
pub fn quoted(text: &str) -> Vec<&str> {
    const PAIRS: &[(char, char)] = &[('"', '"'), ('\'', '\''), ('“', '”'), ('‘', '’')];
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut before: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        let opens = before.is_none_or(|b| b.is_whitespace() || matches!(b, '(' | '['));
        let close = PAIRS.iter().find(|p| p.0 == c).map(|p| p.1);
        before = Some(c);
        let (Some(close), true) = (close, opens) else {
            continue;
        };
        let start = i + c.len_utf8();
        let end = text[start..].char_indices().find_map(|(j, d)| {
            let after = text[start + j + d.len_utf8()..].chars().next();
            let closes = after.is_none_or(|a| a.is_whitespace() || a.is_ascii_punctuation());
            (d == close && closes && j > 0).then_some(start + j)
        });
        if let Some(end) = end {
            out.push(text[start..end].trim());
            while chars.peek().is_some_and(|(k, _)| *k <= end) {
                before = chars.next().map(|(_, d)| d);
            }
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_phrases_are_found_and_apostrophes_are_not_quotes() {
        assert_eq!(
            quoted("In battery jargon, what does 'state of charge' refer to?"),
            ["state of charge"]
        );
        assert_eq!(
            quoted("Is \"thermal runaway\" the same as “venting”, or (‘off-gas’)?"),
            ["thermal runaway", "venting", "off-gas"]
        );
        assert!(quoted("How much can a car's battery pack apply? The cells' rate").is_empty());
        assert!(quoted("an 'unclosed quote").is_empty());
        assert!(quoted("'' and \"\"").is_empty());
        assert_eq!(quoted("'a' b 'c d'."), ["a", "c d"]);
    }

    #[test]
    fn terms_pairs_and_phrases_are_analysed_like_documents() {
        let mut analyzer = analyzer::analyzer();
        let asked = Asked::of(
            "Cathode particles, cathode 'State of Charges'",
            &mut analyzer,
        );
        assert_eq!(asked.terms, ["cathod", "particl", "state", "of", "charg"]);
        assert_eq!(
            asked.pairs,
            [
                ("cathod".to_string(), "particl".to_string()),
                ("particl".into(), "cathod".into()),
                ("cathod".into(), "state".into()),
                ("state".into(), "of".into()),
                ("of".into(), "charg".into()),
            ]
        );
        assert_eq!(asked.phrases, [vec!["state", "of", "charg"]]);
        assert_eq!(Asked::of("'one' \"\"", &mut analyzer).phrases.len(), 0);
    }
}
