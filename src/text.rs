//! Small text helpers shared by every layer (no dependency on any other module): cutting text to
//! a budget (and recording the cut), removing control characters, one-line labels, masking the
//! passwords of URLs and the secrets of the process ([`secrets`]) in text we print or write.
//!
//! Text from the network (search results, model answers) may carry terminal escapes: `ESC ]0;`
//! retitles the terminal of whoever `cat`s a report, and U+202E shows what follows it
//! reversed. [`strip_controls`] is the one filter for text we store or write.

pub mod analyzer;
pub mod secrets;
pub mod sentences;

/// Cuts `text` to at most `max` characters, marking the cut with how many bytes were left out.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}... [{} more bytes]", &text[..at], text.len() - at),
        None => text.to_string(),
    }
}

/// A 64-bit hash that never changes: FNV-1a. For names kept on disk (index folders, batch
/// file names), which std's `DefaultHasher` may change between Rust releases.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
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

/// One piece of input cut to fit its cap: what it was, its length and what was kept (in
/// characters; `kept` is 0 when it was dropped). Callers report each one (`input_cut`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub what: String,
    pub chars: usize,
    pub kept: usize,
}

/// `text` cut to `max` characters like [`truncate`]; a cut is pushed onto `cuts` as `what`.
pub fn cap(text: &str, max: usize, what: impl FnOnce() -> String, cuts: &mut Vec<Cut>) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => {
            cuts.push(Cut {
                what: what(),
                chars: max + text[at..].chars().count(),
                kept: max,
            });
            truncate(text, max)
        }
        None => text.to_string(),
    }
}

/// Whether `c` is a bidirectional control or a zero-width character: invisible, yet U+202E
/// shows the text after it reversed and U+200B hides inside a word, so a reader sees other
/// text than is there (a forged file name, a key that matches no search). Removed with the
/// control characters ([`strip_controls`]), escaped in the log (`crate::logging`). A byte
/// order mark (U+FEFF) is one too: it belongs at the start of a file, never inside text.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        // Embeddings, overrides and isolates; the marks LRM, RLM and ALM.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        // Zero-width space, non-joiner and joiner; word joiner; byte order mark.
        | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
}

/// Whether [`strip_controls`] removes `c` where it stands alone.
fn is_stripped(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_invisible(c)
}

/// `text` without control characters: whole terminal escape sequences (CSI `ESC [ ... m`, OSC
/// `ESC ] ... BEL`, DCS/APC/PM/SOS strings, two-character escapes and their 8-bit C1 forms),
/// NUL and every other C0 and C1 character and DEL are removed, and so are the bidirectional
/// controls and zero-width characters ([`is_invisible`]); `\n` and `\t` stay.
pub fn strip_controls(text: &str) -> String {
    if !text.chars().any(is_stripped) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // `ESC` + intermediates + a final character (`ESC ( B`, `ESC c`, `ESC 7`).
                Some(' '..='/') => {
                    while chars.next_if(|c| matches!(c, ' '..='/')).is_some() {}
                    chars.next_if(|c| matches!(c, '0'..='~'));
                }
                // A control after ESC is looked at again by itself (`ESC \n` keeps the newline).
                Some(next @ ('\n' | '\t')) => out.push(next),
                Some(_) | None => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if is_stripped(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the rest of a CSI sequence: parameters and intermediates, then one final character.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars
        .next_if(|c| matches!(c, '0'..='?' | ' '..='/'))
        .is_some()
    {}
    chars.next_if(|c| matches!(c, '@'..='~'));
}

/// Skips the body of an OSC, DCS, SOS, PM or APC string up to its terminator (BEL, `ESC \` or
/// ST). An unterminated one ends at the next line break or control character, so a stray
/// introducer cannot swallow the rest of a report.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\u{7}' | '\u{9c}' => {
                chars.next();
                return;
            }
            '\u{1b}' => {
                chars.next();
                chars.next_if_eq(&'\\');
                return;
            }
            c if c.is_control() => return,
            _ => {
                chars.next();
            }
        }
    }
}

/// `text` with the password of every URL in it (`http://user:password@host`) replaced by
/// `***`. The last line of defence at what we print and write: URLs of our own endpoints are
/// already shown without it where they are formatted (`settings::BaseUrl`), but a server or a
/// search result may quote one. A URL's address part ends at a path, query or fragment, at
/// white space and at a quote, backtick or angle bracket, so one in a sentence, a JSON string
/// or Markdown code is found.
pub fn without_url_passwords(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find("://") {
        let start = found + 3;
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after
            .find(|c: char| {
                matches!(c, '/' | '\\' | '?' | '#' | '`' | '"' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority
            .rfind('@')
            .and_then(|at| Some((authority[..at].find(':')?, at)))
        {
            Some((colon, at)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// `text` without control characters ([`strip_controls`]: newlines and tabs stay), with URL
/// passwords ([`without_url_passwords`]) and the secrets of the process ([`secrets::mask`])
/// masked: what a command's result on stdout, as JSON ([`clean_json`]) or as text, and an
/// event may keep of outside text.
pub fn clean(text: &str) -> String {
    // Masked last: a zero-width character inside a key must not hide it from the mask.
    secrets::mask(&strip_controls(&without_url_passwords(text))).into_owned()
}

/// Every string in `value`, at any depth, [`clean`]ed: what a JSON line we write (an event) or
/// print (a command's result) may keep of outside text.
pub fn clean_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => {
            let clean = clean(text);
            if clean != *text {
                *text = clean;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(clean_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(clean_json),
        _ => {}
    }
}

/// `text` as one line: control characters removed, every run of white space (line breaks
/// included) one space, trimmed, and at most `max_chars` characters (the last an ellipsis when
/// cut).
pub fn one_line(text: &str, max_chars: usize) -> String {
    let clean = strip_controls(text);
    let mut out = String::new();
    let mut count = 0;
    for word in clean.split_whitespace() {
        let len = word.chars().count();
        let sep = usize::from(count > 0);
        if count + sep + len <= max_chars {
            out.push_str(&" "[..sep]);
            out.push_str(word);
            count += sep + len;
            continue;
        }
        // The ellipsis takes the last character: part of this word when there is room for it.
        let room = max_chars - count;
        if room >= sep + 2 {
            out.push_str(&" "[..sep]);
            out.extend(word.chars().take(room - sep - 1));
        } else if room == 0 {
            out.pop();
        }
        if max_chars > 0 {
            out.push('…');
        }
        return out;
    }
    out
}

/// `text` trimmed, every run of white space (line breaks included) one space.
pub fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with case, punctuation and white space ignored: the letters and digits, lower case.
/// Two task titles that normalise alike ask for the same work.
pub fn normalized(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether `word` is written as a setting's key or an option is: joined by `_`
/// (`even_deny_root`), set with `=` (`MaxLevelConsole=`), an option (`-a`, `--all`), in
/// capitals (`DIR_MODE`) or with its words run together (`RequiredRSASize`); `bash-2.0` and
/// `audit` are not.
pub fn is_key(word: &str) -> bool {
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    let capitals = letters >= 2 && word.chars().all(|c| !c.is_ascii_lowercase());
    let run_together = word.chars().any(|c| c.is_ascii_lowercase())
        && word.chars().skip(1).any(|c| c.is_ascii_uppercase());
    letters > 0
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_=-./<>|".contains(c))
        && (word.contains(['_', '=']) || word.starts_with('-') || capitals || run_together)
}

/// `text`'s words: lower case, letters and digits, one space between (`"It's 5 °C."` is
/// `"it s 5 c"`).
pub fn words(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lines of a line-per-item file that hold something, trimmed, each with its number
/// (1-based): a UTF-8 byte order mark (which Windows editors write) is not part of the first,
/// blank lines and `#` comments are skipped.
pub fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
}

/// The names of every variant of `E`, in order, space-separated: for tests that pin the names
/// that files and events store (a new variant fails them until it is named).
#[cfg(test)]
pub fn variant_names<E: strum::IntoEnumIterator + Into<&'static str>>() -> String {
    E::iter().map(Into::into).collect::<Vec<&str>>().join(" ")
}

/// [`variant_names`], each checked to be the name serde writes too.
#[cfg(test)]
pub fn stored_names<E>() -> String
where
    E: strum::IntoEnumIterator + Into<&'static str> + serde::Serialize + Copy,
{
    for v in E::iter() {
        let name: &str = v.into();
        assert_eq!(serde_json::json!(v), name, "serde agrees");
    }
    variant_names::<E>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_lines_skip_the_mark_blanks_and_comments_and_keep_their_numbers() {
        let lines: Vec<(usize, &str)> = content_lines("\u{feff}# head\n\n  a  \n#b\nc").collect();
        assert_eq!(lines, [(3, "a"), (5, "c")]);
    }

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
    fn a_cut_is_recorded_with_both_lengths() {
        let mut cuts = Vec::new();
        assert_eq!(cap("héllo", 10, || "x".into(), &mut cuts), "héllo");
        assert!(cuts.is_empty());
        assert_eq!(
            cap("héllo", 2, || "greeting".into(), &mut cuts),
            "hé... [3 more bytes]"
        );
        assert_eq!(
            cuts,
            vec![Cut {
                what: "greeting".into(),
                chars: 5,
                kept: 2
            }]
        );
    }

    #[test]
    fn terminal_escapes_are_removed_whole() {
        assert_eq!(strip_controls("a\u{1b}]0;pwned\u{7}b"), "ab");
        assert_eq!(strip_controls("a\u{1b}]8;;http://x\u{1b}\\link"), "alink");
        assert_eq!(strip_controls("\u{1b}[1;31mred\u{1b}[0m"), "red");
        assert_eq!(strip_controls("\u{9b}2Jclear\u{9d}0;t\u{9c}!"), "clear!");
        assert_eq!(strip_controls("\u{1b}(Bx\u{1b}cy"), "xy");
        assert_eq!(strip_controls("\u{1b}Pdcs body\u{1b}\\z"), "z");
    }

    #[test]
    fn other_controls_go_and_newlines_and_tabs_stay() {
        assert_eq!(
            strip_controls("a\0b\u{7}c\r\nd\te\u{7f}f\u{85}g"),
            "abc\nd\tefg"
        );
        assert_eq!(strip_controls("plain text, 中文"), "plain text, 中文");
    }

    #[test]
    fn bidi_controls_and_zero_width_characters_go_and_other_marks_stay() {
        let hostile = "a\u{202e}fdp.exe\u{202c} b\u{200b}c\u{200c}\u{200d}\u{2060}\u{feff}d \
                       \u{2066}e\u{2069}\u{200e}\u{200f}\u{061c}f\u{202a}\u{202b}\u{2067}\u{2068}";
        assert_eq!(strip_controls(hostile), "afdp.exe bcd ef");
        assert_eq!(one_line("x\u{202e}\n\u{200b}y", 10), "x y");
        // Letters with accents, Arabic and Hebrew text, emoji and non-breaking spaces stay.
        let kept = "é ع ש 🙂 a\u{a0}b ü";
        assert_eq!(strip_controls(kept), kept);
    }

    #[test]
    fn an_unterminated_escape_string_ends_at_the_line() {
        assert_eq!(strip_controls("a\u{1b}]0;title\nnext line"), "a\nnext line");
        assert_eq!(strip_controls("tail\u{1b}"), "tail");
    }

    #[test]
    fn one_line_collapses_white_space_and_caps_with_an_ellipsis() {
        assert_eq!(
            one_line("  a\n\n- [x](javascript:y)\tb  ", 100),
            "a - [x](javascript:y) b"
        );
        assert_eq!(one_line("abc def", 5), "abc…");
        assert_eq!(one_line("abc defgh", 6), "abc d…");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("ab cd", 5), "ab cd");
        assert_eq!(one_line("ab cd", 3), "ab…");
        assert_eq!(one_line("t\u{1b}]0;x\u{7}\u{2028}u", 10), "t u");
        assert!(one_line(&"é".repeat(1000), 300).chars().count() <= 300);
    }

    #[test]
    fn url_passwords_are_masked_wherever_they_stand() {
        assert_eq!(
            without_url_passwords(
                "cannot reach `http://u:pw@h:1/v1`: see \"https://a:b@c\" or <ftp://x:y@z>, not http://h/a:b@c"
            ),
            "cannot reach `http://u:***@h:1/v1`: see \"https://a:***@c\" or <ftp://x:***@z>, not http://h/a:b@c"
        );
        assert_eq!(
            without_url_passwords("http://u:p@ss@host/x"),
            "http://u:***@host/x"
        );
        assert_eq!(
            without_url_passwords("http://token@h a@b"),
            "http://token@h a@b"
        );
        assert!(matches!(
            without_url_passwords("no url here: a:b@c"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(without_url_passwords("x://"), "x://");
    }

    #[test]
    fn json_strings_lose_controls_and_url_passwords_at_any_depth() {
        let mut value = serde_json::json!({"a": ["t\u{1b}]0;x\u{7}itle\nline", 3],
            "b": {"c": "see http://u:pw@h/x\t\u{9b}2J"}, "d": null});
        clean_json(&mut value);
        assert_eq!(
            value,
            serde_json::json!({"a": ["title\nline", 3], "b": {"c": "see http://u:***@h/x\t"}, "d": null})
        );
    }

    #[test]
    fn normalised_titles_ignore_case_punctuation_and_space() {
        assert_eq!(normalized(" Energy-density, 2026! "), "energydensity2026");
        assert_eq!(normalized("固态电池 能量密度"), "固态电池能量密度");
        assert_ne!(normalized("cost"), normalized("costs"));
    }
}
