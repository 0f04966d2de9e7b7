//! The words of roff, the language man pages are written in, for [`super::man`]: a line's
//! escapes resolved as a terminal shows them (`\-` a hyphen, `\(em` a dash, `\fB` and sizes
//! and colours dropped, a `\"` comment cut), a request's arguments (`"quoted words"`), and a
//! line of mdoc, BSD's macros (`.Op Fl l Ar level` is `[-l level]`). Pure text work: nothing
//! here knows a page's structure.

/// Named glyphs (`\(em`, `\[em]`) as printed.
const GLYPHS: &[(&str, &str)] = &[
    ("em", "\u{2014}"),
    ("en", "\u{2013}"),
    ("hy", "-"),
    ("mi", "-"),
    ("bu", "\u{2022}"),
    ("co", "\u{a9}"),
    ("rg", "\u{ae}"),
    ("tm", "\u{2122}"),
    ("aq", "'"),
    ("dq", "\""),
    ("lq", "\u{201c}"),
    ("rq", "\u{201d}"),
    ("oq", "\u{2018}"),
    ("cq", "\u{2019}"),
    ("de", "\u{b0}"),
    ("mu", "\u{d7}"),
    ("di", "\u{f7}"),
    ("+-", "\u{b1}"),
    ("<=", "\u{2264}"),
    (">=", "\u{2265}"),
    ("!=", "\u{2260}"),
    ("->", "\u{2192}"),
    ("<-", "\u{2190}"),
    ("ti", "~"),
    ("ha", "^"),
    ("ga", "`"),
    ("aa", "\u{b4}"),
    ("sl", "/"),
    ("rs", "\\"),
    ("ba", "|"),
    ("ul", "_"),
    ("ru", "_"),
    ("'e", "\u{e9}"),
    ("`e", "\u{e8}"),
    ("'a", "\u{e1}"),
    ("`a", "\u{e0}"),
    (":a", "\u{e4}"),
    (":o", "\u{f6}"),
    (":u", "\u{fc}"),
    ("~n", "\u{f1}"),
    (",c", "\u{e7}"),
    ("ss", "\u{df}"),
];

/// Strings (`\*(lq`) as the macro packages that use them define them for a terminal.
const STRINGS: &[(&str, &str)] = &[
    ("lq", "\u{201c}"),
    ("rq", "\u{201d}"),
    ("R", "\u{ae}"),
    ("Tm", "\u{2122}"),
    ("Aq", "'"),
    ("C`", "\""),
    ("C'", "\""),
    ("L\"", "\""),
    ("R\"", "\""),
    ("--", "\u{2014}"),
    ("PI", "\u{3c0}"),
];

/// Escapes whose argument is quoted between two delimiters (`\h'1i'`, `\w'text'`).
const DELIMITED: &str = "hvwlLoDXZbxABCNRSY";

/// A line's text as printed: escapes resolved, fonts, sizes, colours and motions dropped, the
/// rest of the line after a `\"` comment cut.
pub fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else { break };
        match e {
            '"' | '#' => break,
            'f' | 'F' | 'm' | 'M' | 'g' | 'k' | '$' | 'O' => {
                name(&mut chars);
            }
            'n' => {
                chars.next_if(|c| matches!(c, '+' | '-'));
                name(&mut chars);
            }
            's' => {
                chars.next_if(|c| matches!(c, '+' | '-'));
                match chars.peek() {
                    Some('(' | '[') => {
                        name(&mut chars);
                    }
                    Some('\'') => delimited(&mut chars),
                    _ => {
                        let first = chars.next_if(char::is_ascii_digit);
                        if matches!(first, Some('1'..='3')) {
                            chars.next_if(char::is_ascii_digit);
                        }
                    }
                }
            }
            '(' | '[' => {
                let glyph = if e == '(' {
                    chars.by_ref().take(2).collect()
                } else {
                    until_bracket(&mut chars)
                };
                out.push_str(&glyph_of(&glyph));
            }
            '*' => {
                let string = name(&mut chars);
                if let Some((_, shown)) = STRINGS.iter().find(|(n, _)| *n == string) {
                    out.push_str(shown);
                }
            }
            _ if DELIMITED.contains(e) => delimited(&mut chars),
            'e' | '\\' => out.push('\\'),
            ' ' | '~' | '0' | 't' => out.push(' '),
            '&' | '|' | '^' | '%' | ':' | ',' | '/' | ')' | 'd' | 'u' | 'r' | 'p' | 'c' | '{'
            | '}' | 'z' | 'a' => {}
            other => out.push(other),
        }
    }
    out
}

/// A name after an escape: one character, `(xx` or `[name]`.
fn name(chars: &mut std::iter::Peekable<std::str::Chars>) -> String {
    match chars.next() {
        Some('(') => chars.by_ref().take(2).collect(),
        Some('[') => until_bracket(chars),
        Some(c) => c.to_string(),
        None => String::new(),
    }
}

fn until_bracket(chars: &mut std::iter::Peekable<std::str::Chars>) -> String {
    chars.by_ref().take_while(|c| *c != ']').collect()
}

/// Skips an argument between two delimiters (`'1i'`).
fn delimited(chars: &mut std::iter::Peekable<std::str::Chars>) {
    if let Some(delimiter) = chars.next() {
        chars
            .by_ref()
            .take_while(|c| *c != delimiter)
            .for_each(drop);
    }
}

/// A named glyph as printed: from the table, a Unicode code point (`u00E9`), else nothing.
fn glyph_of(name: &str) -> String {
    if let Some((_, shown)) = GLYPHS.iter().find(|(n, _)| *n == name) {
        return (*shown).to_string();
    }
    name.strip_prefix('u')
        .and_then(|hex| u32::from_str_radix(hex.split('_').next().unwrap_or(hex), 16).ok())
        .and_then(char::from_u32)
        .map(String::from)
        .unwrap_or_default()
}

/// The arguments of a request or macro (the line after its name), each unescaped: words apart
/// by white space, or quoted (`"two words"`, `""` a quote inside); nothing after a comment.
pub fn arguments(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        let Some(&first) = chars.peek() else { break };
        let quoted = first == '"';
        if quoted {
            chars.next();
        }
        let mut raw = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('"' | '#') if !quoted => return finish(out, &raw),
                    Some(e) => {
                        raw.push('\\');
                        raw.push(e);
                    }
                    None => {}
                },
                '"' if quoted && chars.next_if_eq(&'"').is_some() => raw.push('"'),
                '"' if quoted => break,
                ' ' | '\t' if !quoted => break,
                c => raw.push(c),
            }
        }
        out.push(unescape(&raw));
    }
    out
}

fn finish(mut out: Vec<String>, raw: &str) -> Vec<String> {
    if !raw.is_empty() {
        out.push(unescape(raw));
    }
    out
}

/// Delimiters an mdoc line sets against the word before it.
const CLOSING: &[&str] = &[".", ",", ";", ":", ")", "]", "?", "!"];

/// A line of mdoc macros as printed (`Op Fl l Ar level` is `[-l level]`, `Xr ls 1` is
/// `ls(1)`); `name` is the page's (what `Nm` alone prints). Macros it does not know print
/// their arguments.
pub fn mdoc_inline(words: &[String], name: &str) -> String {
    // Delimiters that end the line go after what the macros close (`Pq Fl J .` is `(-J).`).
    let tail = words
        .iter()
        .rev()
        .take_while(|w| CLOSING.contains(&w.as_str()))
        .count();
    let (words, trailing) = words.split_at(words.len() - tail);
    let mut out = String::new();
    let mut closers: Vec<&str> = Vec::new();
    let mut glue = false;
    let mut k = 0;
    let push = |out: &mut String, text: &str, glue: &mut bool| {
        let tight = *glue || CLOSING.contains(&text) || out.ends_with(['(', '[']);
        if !out.is_empty() && !tight {
            out.push(' ');
        }
        out.push_str(text);
        *glue = false;
    };
    while k < words.len() {
        let word = words[k].as_str();
        k += 1;
        let next_is_word = words.get(k).is_some_and(|w| !is_macro(w));
        match word {
            "Fl" => {
                let flag = match next_is_word {
                    true => {
                        k += 1;
                        format!("-{}", words[k - 1])
                    }
                    false => "-".to_string(),
                };
                push(&mut out, &flag, &mut glue);
            }
            "Xr" if next_is_word && k + 1 < words.len() => {
                let shown = format!("{}({})", words[k], words[k + 1]);
                k += 2;
                push(&mut out, &shown, &mut glue);
            }
            "Nm" if !next_is_word => push(&mut out, name, &mut glue),
            "Ar" if !next_is_word => push(&mut out, "file ...", &mut glue),
            "Ns" => glue = true,
            "Op" | "Oo" | "Bq" | "Bo" => {
                push(&mut out, "[", &mut glue);
                glue = true;
                if matches!(word, "Op" | "Bq") {
                    closers.push("]");
                }
            }
            "Oc" | "Bc" => push(&mut out, "]", &mut glue),
            "Pq" | "Po" => {
                push(&mut out, "(", &mut glue);
                glue = true;
                if word == "Pq" {
                    closers.push(")");
                }
            }
            "Pc" => push(&mut out, ")", &mut glue),
            "Dq" | "Qq" | "Sq" | "Do" | "Qo" | "So" => {
                let (open, close) = if word.starts_with('S') {
                    ("\u{2018}", "\u{2019}")
                } else {
                    ("\u{201c}", "\u{201d}")
                };
                push(&mut out, open, &mut glue);
                glue = true;
                if word.ends_with('q') {
                    closers.push(close);
                }
            }
            "Dc" | "Qc" => push(&mut out, "\u{201d}", &mut glue),
            "Sc" => push(&mut out, "\u{2019}", &mut glue),
            "Ux" => push(&mut out, "UNIX", &mut glue),
            "Bx" => push(&mut out, "BSD", &mut glue),
            _ if is_macro(word) => {}
            text => push(&mut out, text, &mut glue),
        }
    }
    while let Some(close) = closers.pop() {
        out.push_str(close);
    }
    for delimiter in trailing {
        out.push_str(delimiter);
    }
    out
}

/// An mdoc macro's name among a line's words: two or three letters, the first in upper case
/// and the others in lower case (`Fl`, `Ar`, `Brq`).
fn is_macro(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && (2..=3).contains(&word.len())
        && chars.all(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_print_as_a_terminal_shows_them() {
        assert_eq!(
            unescape(r"\fB\-a\fR, \fB\-\-all\fP \(em do \f(CWnot\fR \s-1ignore\s0 \(lqit\(rq"),
            "-a, --all \u{2014} do not ignore \u{201c}it\u{201d}"
        );
        assert_eq!(
            unescape(r"\m[blue]\fBGit\fR\m[]\&\s-2\u[1]\d\s+2 \*(Aqdiff\*(Aq \[u00E9]t\['e] \e."),
            "Git[1] 'diff' \u{e9}t\u{e9} \\."
        );
        assert_eq!(unescape(r#"text \" a comment"#), "text ");
        assert_eq!(unescape(r"a\h'1i'b\~c\ d\&."), "ab c d.");
    }

    #[test]
    fn arguments_are_words_or_quoted() {
        assert_eq!(
            arguments(r#"FROB 1 "March 2024" "say ""hi""" \fBx\fR \" comment"#),
            ["FROB", "1", "March 2024", "say \"hi\"", "x"]
        );
        assert_eq!(arguments(r"a\ b c"), ["a b", "c"]);
        assert!(arguments("  ").is_empty());
    }

    #[test]
    fn mdoc_lines_print_as_a_terminal_shows_them() {
        let words = |line: &str| arguments(line);
        assert_eq!(
            mdoc_inline(&words("Op Fl B Ar bind_interface"), "ssh"),
            "[-B bind_interface]"
        );
        assert_eq!(
            mdoc_inline(&words("Op Fl D Oo Ar bind_address : Oc Ns Ar port"), "ssh"),
            "[-D [bind_address:]port]"
        );
        assert_eq!(
            mdoc_inline(&words("Xr ssh-agent 1 ."), "ssh"),
            "ssh-agent(1)."
        );
        assert_eq!(mdoc_inline(&words("Nm"), "ssh"), "ssh");
        assert_eq!(mdoc_inline(&words("Pq Fl J ."), "ssh"), "(-J).");
    }
}
