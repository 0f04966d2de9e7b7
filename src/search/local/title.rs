//! A document's title when its kind gives none (plain text, a PDF): its first line that reads
//! as a title, else its file name. A header block is not a title, nor are the lines that open
//! a file by convention rather than to name it: lines of `Name: value` fields (two or more, or
//! one whose value is an address), as e-mail, HTTP, Debian control and copyright files open,
//! with their indented continuation lines; an address alone; a copyright notice
//! (`Copyright (C) 2024 ...`); a rule of punctuation (`=====`). Pure text work: it reads no
//! file.

use std::path::Path;

/// A line up to this many characters can be a title.
pub const MAX_TITLE_CHARS: usize = 120;

/// The first line of `text` that reads as a title, when it is short enough to be one; else the
/// file name of `path`.
pub fn first_line_or_name(text: &str, path: &Path) -> String {
    first_title_line(text)
        .filter(|l| l.chars().count() <= MAX_TITLE_CHARS)
        .map(str::to_string)
        .unwrap_or_else(|| file_name(path))
}

/// The file name of `path` (empty for none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The first line (trimmed) that is neither in a header block nor an opening convention.
fn first_title_line(text: &str) -> Option<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut in_header = false;
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            in_header = false;
            continue;
        }
        // A field's value may go on over indented lines (RFC 5322 folding, Debian's format).
        if in_header && raw.starts_with(char::is_whitespace) {
            continue;
        }
        let next_is_field = lines.get(i + 1).is_some_and(|l| field(l).is_some());
        in_header = match field(line) {
            Some(value) => in_header || next_is_field || is_address(value),
            None => false,
        };
        if !in_header && !opens_by_convention(line) {
            return Some(line);
        }
    }
    None
}

/// The value of a `Name: value` header field (a name of letters, digits and `-`, starting
/// with a letter, written flush left), or `None` when the line is not one.
fn field(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let (name, value) = line.split_once(':')?;
    let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (is_name && (value.is_empty() || value.starts_with(char::is_whitespace))).then(|| value.trim())
}

/// A line that opens a file by convention, not to name it: an address alone, a copyright
/// notice, or no letter at all (a rule, a row of stars).
fn opens_by_convention(line: &str) -> bool {
    is_address(line) || is_copyright_notice(line) || !line.chars().any(char::is_alphabetic)
}

/// One web or mail address, alone (`https://x.org/a`, `<https://x.org>`, `www.x.org`).
fn is_address(text: &str) -> bool {
    let text = text.trim().trim_start_matches('<').trim_end_matches('>');
    let lower = text.to_ascii_lowercase();
    !text.is_empty()
        && !text.contains(char::is_whitespace)
        && [
            "http://", "https://", "ftp://", "file://", "mailto:", "www.",
        ]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// `Copyright (C) 2007 Free Software Foundation`, `(c) 2024 A. Author`, `© 2019 X`: the word
/// or sign, then a year.
fn is_copyright_notice(line: &str) -> bool {
    let lower = line.to_lowercase();
    let rest = ["copyright", "(c)", "\u{a9}"]
        .iter()
        .find_map(|p| lower.strip_prefix(p));
    rest.is_some_and(|rest| {
        rest.split(|c: char| !c.is_ascii_digit())
            .any(|n| n.len() == 4)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title(text: &str) -> String {
        first_line_or_name(text, Path::new("/doc/copyright"))
    }

    /// A Debian copyright file is header fields from end to end: no line of it is a title.
    #[test]
    fn a_header_block_is_no_title() {
        let debian = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
                      Upstream-Name: libffi\n\
                      Source: https://github.com/libffi/libffi\n\n\
                      Files: *\n\
                      Copyright: 1996-2019  Anthony Green, Red Hat, Inc and others.\n\
                      License: MIT\n \
                      Permission is hereby granted, free of charge, to any person obtaining\n \
                      a copy of this software.\n";
        assert_eq!(title(debian), "copyright");
        let mail = "From: Ada <ada@x.org>\nSubject: Cells\n\nFlow batteries in practice\n\nText.";
        assert_eq!(title(mail), "Flow batteries in practice");
        assert_eq!(
            title("Format: https://x.org/format/1.0/\n\nGrid storage notes\n"),
            "Grid storage notes"
        );
    }

    #[test]
    fn addresses_notices_and_rules_are_no_title() {
        let text = "https://example.org/docs/\n\
                    Copyright (C) 2007 Free Software Foundation, Inc.\n\
                    ==========\n\
                    GNU GENERAL PUBLIC LICENSE\n";
        assert_eq!(title(text), "GNU GENERAL PUBLIC LICENSE");
        assert_eq!(title("\u{a9} 2024 Ada\nThe notes\n"), "The notes");
    }

    /// What reads as a title still is: one `Topic: subtitle` line over prose, a heading about
    /// copyright without a year, a first line of prose.
    #[test]
    fn titles_that_look_alike_are_kept() {
        assert_eq!(
            title("Introduction: why cells age\n\nCells age when they cycle.\n"),
            "Introduction: why cells age"
        );
        assert_eq!(
            title("Copyright and licensing\n\nText.\n"),
            "Copyright and licensing"
        );
        assert_eq!(
            title("  Field notes  \nBody."),
            "Field notes",
            "a title is trimmed"
        );
        assert_eq!(
            title(&format!("{}\nBody.", "word ".repeat(40))),
            "copyright"
        );
    }
}
