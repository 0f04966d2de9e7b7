//! Small text helpers shared by every layer (no dependency on any other module).

/// Cuts `text` to at most `max` characters, marking the cut with how many bytes were left out.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}... [{} more bytes]", &text[..at], text.len() - at),
        None => text.to_string(),
    }
}

/// An error and its causes, joined with `: `, leaving out a cause whose text the message
/// already holds (errors that quote their cause would otherwise say it twice: "X: X").
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `text` with case, punctuation and white space ignored: the letters and digits, lower case.
/// Two task titles that normalise alike ask for the same work.
pub fn normalized(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_characters_and_says_so() {
        assert_eq!(truncate("héllo", 10), "héllo");
        assert_eq!(truncate("héllo", 2), "hé... [3 more bytes]");
    }

    #[test]
    fn an_error_chain_says_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot read `x`: {source}")]
        struct Outer {
            source: std::io::Error,
        }
        #[derive(Debug, thiserror::Error)]
        #[error("the run stopped")]
        struct Top(#[source] Outer);
        let err = Top(Outer {
            source: std::io::Error::other("disk on fire"),
        });
        assert_eq!(
            error_chain(&err),
            "the run stopped: cannot read `x`: disk on fire"
        );
    }

    #[test]
    fn normalised_titles_ignore_case_punctuation_and_space() {
        assert_eq!(normalized(" Energy-density, 2026! "), "energydensity2026");
        assert_eq!(normalized("固态电池 能量密度"), "固态电池能量密度");
        assert_ne!(normalized("cost"), normalized("costs"));
    }
}
