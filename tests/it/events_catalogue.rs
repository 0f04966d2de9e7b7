//! The book's event catalogue (the table under `## Every event` of `docs/src/event-log.md`) and
//! the program's `events::Event` name the same kinds, each in exactly one row: an event added,
//! renamed or dropped in one and not the other, or listed twice, fails here. The conventions of
//! the book's checks are in `docs.rs`.

use std::collections::BTreeSet;

use researchflow::events::Event;

use crate::docs::{book_page, exactly_once, first_cells, section};

/// The kinds the first cell of each row of the catalogue names.
fn catalogue(page: &str) -> Vec<String> {
    let table = section(page, "## Every event").expect("event-log.md has `## Every event`");
    first_cells(table)
        .iter()
        .filter_map(|cell| cell.strip_prefix('`')?.split_once('`'))
        .map(|(name, _)| name.to_string())
        .collect()
}

#[test]
fn the_book_lists_every_event_the_program_writes_once_and_no_other() {
    let documented = catalogue(&book_page("event-log.md"));
    let written: BTreeSet<String> = Event::kinds().iter().map(|k| k.to_string()).collect();
    assert!(written.len() >= 30, "the enum is read: {written:?}");
    let wrong = exactly_once("event", &written, &documented);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_check_reads_only_the_catalogue_rows() {
    let text = "# x\n| `elsewhere` | no |\n## Every event\n\n| event | by |\n|---|---|\n| `one` | a |\n| `two` | b |\n| `one` | c |\n\n## Next\n| `after` | c |\n";
    assert_eq!(catalogue(text), ["one", "two", "one"]);
    let expected: BTreeSet<String> = ["one", "two", "three"].map(String::from).into();
    assert_eq!(
        exactly_once("event", &expected, &catalogue(text)),
        [
            "event `one` is documented 2 times",
            "event `three` is not documented"
        ]
    );
}
