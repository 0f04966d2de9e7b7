//! What in a document's text is not prose, so that [`super::units`] never quotes it nor glues
//! it to a sentence: code and signatures between fence lines (as every reader sets them apart,
//! [`crate::search::local::fence`], and as a `README` fences its own code), navigation lines
//! (`Next: Simple Example, Previous: Top, Up: Top`, as Texinfo and Info write them), and
//! version notes ("New in version 3.5.", "Changed in version 3.6: ...", "Deprecated since
//! version 3.4", Sphinx's and Python's words), which say when something changed, not what it
//! is, and a function's signature where a reader could not fence it (a PDF's `[Function]long
//! asn1_get_length_der (const unsigned char * der, int der_len, int * len)`). Pure text work.

use std::ops::Range;

use crate::search::local::fence;
use crate::text::analyzer::STOPWORDS;

/// The lines of `text`, as byte ranges, each with whether it is prose: not in a fenced block
/// (fence lines included) and not a navigation line.
pub fn prose_lines(text: &str) -> Vec<(Range<usize>, bool)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split('\n') {
        let range = start..start + line.len();
        start = range.end + 1;
        out.push((range, !is_navigation(line)));
    }
    for span in fence::spans(text.split('\n')) {
        for line in &mut out[span] {
            line.1 = false;
        }
    }
    out
}

/// Labels of a navigation line: Texinfo's and Info's, whose node line opens with `File:`.
const NAVIGATION: &[&str] = &["Next:", "Previous:", "Prev:", "Up:", "File:", "Node:"];

/// A navigation line: it opens with a label and holds another (`Next: Simple Example, Up:
/// Using libffi`), or, short, opens with one that points (`Up: (dir)`).
pub fn is_navigation(line: &str) -> bool {
    let line = line.trim();
    let labels = line
        .split_whitespace()
        .filter(|w| NAVIGATION.contains(w))
        .count();
    let opens = |labels: &[&str]| labels.iter().any(|l| line.starts_with(l));
    opens(NAVIGATION)
        && (labels >= 2 || (opens(&NAVIGATION[..4]) && line.split_whitespace().count() <= 6))
}

/// Whether `sentence` opens a version note: `New`, `Added`, `Changed`, `Removed` or
/// `Deprecated` `in version` a number, or `Deprecated since` (`version`) a number; or, in
/// reStructuredText, a `versionadded`, `versionchanged`, `versionremoved` or `deprecated`
/// directive.
pub fn is_version_note(sentence: &str) -> bool {
    let words: Vec<String> = sentence
        .split_whitespace()
        .take(4)
        .map(|w| w.to_lowercase())
        .collect();
    let word = |k: usize| words.get(k).map_or("", String::as_str);
    let number = |k: usize| word(k).starts_with(|c: char| c.is_ascii_digit());
    let verb = ["new", "added", "changed", "removed", "deprecated"].contains(&word(0));
    let directive = word(0) == ".."
        && [
            "versionadded::",
            "versionchanged::",
            "versionremoved::",
            "deprecated::",
        ]
        .contains(&word(1));
    directive
        || (verb && word(1) == "in" && word(2) == "version" && number(3))
        || (word(0) == "deprecated"
            && word(1) == "since"
            && (number(2) || (word(2) == "version" && number(3))))
}

/// Whether `sentence` is a function's signature as a manual prints it: a category in
/// brackets, if any (Texinfo's `[Function]`), the words of a type and a name, then the
/// parameters in brackets, each a declaration of a type and a name (or `void`, `...`), and
/// nothing after but `;`.
pub fn is_signature(sentence: &str) -> bool {
    let line = sentence.trim().trim_end_matches(';').trim_end();
    let line = match line.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or(line, |(_, after)| after),
        None => line,
    };
    let Some((head, parameters)) = line.strip_suffix(')').and_then(|l| l.split_once('(')) else {
        return false;
    };
    // A declaration is code: no word of prose (`the`, `is`, `and`) in it.
    let declaration = |part: &str| {
        let words: Vec<&str> = part.split_whitespace().collect();
        let code = words.iter().all(|w| {
            w.chars()
                .all(|c| c.is_alphanumeric() || "_*[]&".contains(c))
                && !STOPWORDS.contains(&w.to_lowercase().as_str())
        });
        matches!(part.trim(), "void" | "...") || (code && words.len() >= 2)
    };
    declaration(head)
        && head.split_whitespace().count() <= 5
        && parameters.split(',').all(declaration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_functions_signature_is_known_by_its_declarations() {
        for signature in [
            "[Function]long asn1_get_length_der (const unsigned char * der, int der_len, int * len)",
            "int ffi_prep_cif(ffi_cif *cif, ffi_abi abi, unsigned int nargs);",
            "void XML_SetHashSalt(XML_Parser p, unsigned long hash_salt)",
            "int printf(const char *format, ...);",
            "pid_t fork(void);",
        ] {
            assert!(is_signature(signature), "{signature}");
        }
        for prose in [
            "Returns: the decoded length value, or -1 on indefinite length.",
            "The size is checked (see malloc(3)).",
            "It calls ffi_prep_cif (which prepares the cif).",
            "It calls ffi_prep_cif (which prepares the cif)",
            "Use the new function (it is faster, and it is safer)",
        ] {
            assert!(!is_signature(prose), "{prose}");
        }
    }

    #[test]
    fn version_notes_are_known_by_their_first_words() {
        for note in [
            "New in version 3.5.",
            "Changed in version 3.6: All optional parameters are now keyword-only.",
            "Added in version 3.13.",
            "Deprecated since version 3.4, will be removed in version 3.6: use run().",
            "Deprecated since 2.0, use flush() instead.",
            "Removed in version 3.12.",
            ".. versionchanged:: 3.6",
        ] {
            assert!(is_version_note(note), "{note}");
        }
        for prose in [
            "New in 2023, the plant makes 10 GWh.",
            "Changed its name in 1998.",
            "The option is deprecated since it does nothing.",
            "Python 3.5 is new in version control.",
            "",
        ] {
            assert!(!is_version_note(prose), "{prose}");
        }
    }

    #[test]
    fn navigation_lines_and_fenced_code_are_not_prose() {
        let text = "Next: Simple Example, Previous: The Basics, Up: Using libffi [Index]\n\
                    The call is made.\n```\nffi_call(&cif);\n```\n\
                    Up: (dir)\nNext, the call returns: the next step is to free it.\n\
                    File: the name of the file to read.";
        let prose: Vec<(&str, bool)> = prose_lines(text)
            .into_iter()
            .map(|(at, prose)| (&text[at], prose))
            .collect();
        assert_eq!(
            prose,
            [
                (
                    "Next: Simple Example, Previous: The Basics, Up: Using libffi [Index]",
                    false
                ),
                ("The call is made.", true),
                ("```", false),
                ("ffi_call(&cif);", false),
                ("```", false),
                ("Up: (dir)", false),
                ("Next, the call returns: the next step is to free it.", true),
                ("File: the name of the file to read.", true),
            ]
        );
    }
}
