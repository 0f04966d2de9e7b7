//! README's event catalogue ("The event log") and the program's `events::Event` name the same
//! kinds: an event added, renamed or dropped in one and not the other fails here.

use std::collections::BTreeSet;
use std::path::Path;

use researchflow::events::Event;

/// The kinds the first cell of each row of README's catalogue names.
fn catalogue(readme: &str) -> BTreeSet<String> {
    let start = readme
        .find("### The event log")
        .expect("README has an event catalogue");
    let section = &readme[start..];
    let end = section[3..].find("\n#").map_or(section.len(), |i| i + 3);
    section[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.to_string())
        .collect()
}

#[test]
fn readme_lists_every_event_the_program_writes_and_no_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let documented = catalogue(&readme);
    let written: BTreeSet<String> = Event::kinds().iter().map(|k| k.to_string()).collect();
    assert!(written.len() >= 30, "the enum is read: {written:?}");
    let undocumented: Vec<&String> = written.difference(&documented).collect();
    let unwritten: Vec<&String> = documented.difference(&written).collect();
    assert!(
        undocumented.is_empty() && unwritten.is_empty(),
        "written but not in README's catalogue: {undocumented:?}; in the catalogue but never written: {unwritten:?}"
    );
}

#[test]
fn the_check_reads_only_the_catalogue_rows() {
    let text = "# x\n| `elsewhere` | no |\n### The event log\n\n| event | by |\n|---|---|\n| `one` | a |\n| `two` | b |\n\n### Next\n| `after` | c |\n";
    assert_eq!(
        catalogue(text),
        ["one", "two"].iter().map(|s| s.to_string()).collect()
    );
}
