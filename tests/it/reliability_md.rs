//! RELIABILITY.md names the test that proves each row; this keeps every name true, so a renamed
//! or deleted test cannot leave a claim behind without proof.
//!
//! The last cell of each table row lists tests as `` `file: name` ``, followed by bare
//! `` `name` ``s in the same file; a bare name with no file before it is in
//! `tests/it/parser_props.rs` (the fuzzing tables).

use std::path::Path;

/// `(file, test name)` for every test the last cell of a table row names.
fn named_tests(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_end_matches('|').split('|').collect();
        let Some(last) = cells.last() else { continue };
        let mut file = "tests/it/parser_props.rs".to_string();
        for span in last.split('`').skip(1).step_by(2) {
            let name = match span.split_once(": ") {
                Some((f, n)) if f.ends_with(".rs") => {
                    file = f.to_string();
                    n
                }
                _ => span,
            };
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                out.push((file.clone(), name.to_string()));
            }
        }
    }
    out
}

#[test]
fn reliability_md_names_only_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("RELIABILITY.md")).expect("RELIABILITY.md");
    let tests = named_tests(&text);
    assert!(tests.len() > 100, "the check reads the tables: {tests:?}");
    let missing: Vec<String> = tests
        .iter()
        .filter(|(file, name)| {
            let source = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            !source.contains(&format!("fn {name}("))
        })
        .map(|(file, name)| format!("{file}: {name}"))
        .collect();
    assert!(
        missing.is_empty(),
        "RELIABILITY.md names tests that do not exist: {missing:?}"
    );
}

#[test]
fn the_check_reads_files_and_bare_names() {
    let row = "| x | y | `tests/a.rs: one`, `two`, `src/b.rs: three` |\n| p | q | `four` |";
    assert_eq!(
        named_tests(row),
        [
            ("tests/a.rs", "one"),
            ("tests/a.rs", "two"),
            ("src/b.rs", "three"),
            ("tests/it/parser_props.rs", "four"),
        ]
        .map(|(f, n)| (f.to_string(), n.to_string()))
    );
}
