//! Small text helpers shared by every layer (no dependency on any other module).

/// Cuts `text` to at most `max` characters, marking the cut with how many bytes were left out.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}... [{} more bytes]", &text[..at], text.len() - at),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_characters_and_says_so() {
        assert_eq!(truncate("héllo", 10), "héllo");
        assert_eq!(truncate("héllo", 2), "hé... [3 more bytes]");
    }
}
