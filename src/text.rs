//! Small text helpers shared by every layer (no dependency on any other module).

/// Cuts `text` to at most `max` characters, marking the cut with how many bytes were left out.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}... [{} more bytes]", &text[..at], text.len() - at),
        None => text.to_string(),
    }
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
    fn normalised_titles_ignore_case_punctuation_and_space() {
        assert_eq!(normalized(" Energy-density, 2026! "), "energydensity2026");
        assert_eq!(normalized("固态电池 能量密度"), "固态电池能量密度");
        assert_ne!(normalized("cost"), normalized("costs"));
    }
}
