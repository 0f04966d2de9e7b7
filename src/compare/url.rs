//! The key two source URLs are compared by. A page found again is the same source even when one
//! run wrote `https://x/a/` and the other `https://x/a#intro`; anything else (scheme, host
//! case, query) is kept as written, since no rule here can tell two pages apart reliably.

/// `url` trimmed, without its `#fragment` and then without one trailing `/`.
pub fn url_key(url: &str) -> &str {
    let url = url.trim();
    let url = url.split_once('#').map_or(url, |(before, _)| before);
    url.strip_suffix('/').unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_space_fragment_and_trailing_slash_do_not_make_another_source() {
        assert_eq!(url_key("https://a.example/x"), "https://a.example/x");
        assert_eq!(url_key("  https://a.example/x/\n"), "https://a.example/x");
        assert_eq!(url_key("https://a.example/x#intro"), "https://a.example/x");
        assert_eq!(url_key("https://a.example/x/#top"), "https://a.example/x");
        assert_eq!(url_key("https://a.example/"), "https://a.example");
    }

    #[test]
    fn the_query_and_the_path_still_tell_pages_apart() {
        assert_ne!(
            url_key("https://a.example/x?p=1"),
            url_key("https://a.example/x?p=2")
        );
        assert_ne!(
            url_key("https://a.example/x"),
            url_key("https://a.example/y")
        );
        assert_eq!(url_key("#only-a-fragment"), "");
    }
}
