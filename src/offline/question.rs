//! What a question asks, as the extractive engine's answer ([`super::answer`]) reads it: the
//! questions in one ([`parts`]), the specific words no answer may do without
//! ([`specific_terms`]), and whether it asks for a figure ([`asks_figure`]).

use std::collections::BTreeSet;

use crate::agents::claims::content_terms;

/// The most questions one question is split into: one answer sentence each.
pub const MOST_PARTS: usize = 3;

/// The terms of the question's specific words: a figure or a year (`2015`), a name (a
/// capitalised word past the first), a compound (`lithium-sulfur`). When no sentence holds
/// one of them, none answers what the question asks about it.
pub fn specific_terms(question: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, word) in question.split_whitespace().enumerate() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric());
        // A short acronym (`EU`) is as often written out in full: not a name to require.
        let named = k > 0
            && word.chars().next().is_some_and(char::is_uppercase)
            && !(word.len() <= 3 && word.chars().all(|c| c.is_ascii_uppercase()));
        if named || word.contains('-') || word.chars().any(|c| c.is_ascii_digit()) {
            out.extend(content_terms(word));
        }
    }
    out
}

/// The questions in one `question`: split before each `and` that starts another (`..., and
/// how much ...?`, `... and what share ...?`), at most [`MOST_PARTS`]; the last takes the
/// rest.
pub fn parts(question: &str) -> Vec<String> {
    const ASKS: &[&str] = &[
        "what", "which", "how", "when", "why", "where", "who", "whom", "whose", "would", "does",
        "do", "did", "is", "are", "can",
    ];
    let words: Vec<&str> = question.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let mut out = vec![String::new()];
    for (k, word) in words.iter().enumerate() {
        let starts = bare(word) == "and"
            && words
                .get(k + 1)
                .is_some_and(|next| ASKS.contains(&bare(next).as_str()))
            && out.len() < MOST_PARTS;
        if starts {
            out.push(String::new());
            continue;
        }
        let part = out.last_mut().expect("one part at least");
        if !part.is_empty() {
            part.push(' ');
        }
        part.push_str(word);
    }
    out
}

/// Whether the question asks for a quantity: `how much`, `how high` (any `how` but of
/// manner: `how does`, `how is`), `what share`, `at what temperature`, `when`, `what year`.
pub fn asks_figure(question: &str) -> bool {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    const MANNER: &[&str] = &[
        "do", "does", "did", "is", "are", "was", "were", "can", "could", "would", "should",
    ];
    const MEASURES: &[&str] = &[
        "share",
        "percentage",
        "temperature",
        "year",
        "price",
        "density",
        "energy",
        "efficiency",
        "conductivity",
        "voltage",
        "capacity",
        "cost",
    ];
    words.windows(2).any(|w| {
        (w[0] == "how" && !MANNER.contains(&w[1].as_str()))
            || (w[0] == "what" && MEASURES.contains(&w[1].as_str()))
    }) || words.iter().any(|w| w == "when")
}

/// Whether `sentence` holds a number that `question` does not.
pub fn new_figure(question: &str, sentence: &str) -> bool {
    let numbers = |text: &str| -> BTreeSet<String> {
        text.split(|c: char| !c.is_ascii_digit() && c != ',' && c != '.')
            .map(|n| n.trim_matches(|c: char| c == ',' || c == '.').to_string())
            .filter(|n| n.chars().any(|c| c.is_ascii_digit()))
            .collect()
    };
    let asked = numbers(question);
    numbers(sentence).iter().any(|n| !asked.contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_split_before_each_and_that_asks_again() {
        assert_eq!(parts("Why is the sky blue?"), ["Why is the sky blue?"]);
        assert_eq!(
            parts("Why do dendrites form, and how do solid electrolytes suppress them?"),
            [
                "Why do dendrites form,",
                "how do solid electrolytes suppress them?"
            ]
        );
        assert_eq!(
            parts("Which cobalt and nickel?").len(),
            1,
            "`and` joining nouns"
        );
        assert_eq!(parts("a and what b and how c and why d").len(), MOST_PARTS);
    }
}
