//! The documents a person reads: README.md (what researchflow is and a tour), ARCHITECTURE.md,
//! RELIABILITY.md, and the book under `docs/` (mdBook: `docs/book.toml`, the chapters in
//! `docs/src/`), which is the reference. Each check below must be able to fail, so each has a
//! test of its checking function on a small made-up text.
//!
//! What "documented exactly once" means, per kind of name:
//! - **A command** (every command and subcommand of the binary, from the clap definition in
//!   `researchflow::cli`, hidden ones aside) is documented by a heading of a page of `docs/src/`
//!   (outside code blocks) holding a code span that is exactly `researchflow` and command names:
//!   `` # `researchflow batch status` ``. A heading may document several commands (`` # `researchflow
//!   view` and `researchflow graph` ``). A span with an argument or a flag (`researchflow batch
//!   FILE --queue URL`) documents nothing. Each command has exactly one such heading in the
//!   book, and no such heading names a command the binary lacks.
//! - **A config key** (every key of `schemas/config.schema.json`, written out in full with dots:
//!   `search.read.pages`; the properties of a map of like entries, `roles`, are its names,
//!   `roles.planning`, and their keys are written with the placeholder `<role>`,
//!   `roles.<role>.model`) is documented by a row of the table under the heading `## Every key`
//!   of `docs/src/configuration.md`: each code span of the row's first cell is one key. Each key
//!   is in exactly one row, and every key there is one of the schema's.
//! - **An event** (every kind of `events::Event`) is a row of the table under `## Every event` of
//!   `docs/src/event-log.md`, its first cell the kind in a code span; `events_catalogue.rs`
//!   holds that table to the program's catalogue.
//! - **A link**: every relative link of README.md, ARCHITECTURE.md, RELIABILITY.md and every
//!   Markdown page under `docs/` (outside code) leads to a file or folder that exists, and a
//!   `#anchor` to a heading of that page, by the anchor rule GitHub and mdBook share: the
//!   heading's text in lower case, code and emphasis marks dropped, spaces turned into `-`, every
//!   other character but letters, digits, `-` and `_` dropped; the second heading of the same
//!   text gets `-1`, the third `-2`.
//!
//! And the book builds: `mdbook build docs` with the mdBook that `scripts/setup/mdbook.sh`
//! installs into `target/tools/` (scripts/test.sh runs it first), into a temporary folder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde_json::Value;

use crate::support::fixtures::root;

/// The mdBook that `scripts/setup/mdbook.sh` installs.
const MDBOOK: &str = "target/tools/bin/mdbook";

/// `text` with every line of a fenced code block (fences included) left empty, so that what a
/// code block shows is neither a heading nor a link; line numbers stay as they were.
pub fn without_code_blocks(text: &str) -> String {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                out.push("");
            }
            (Some(open), Some(m)) if open == m => {
                fence = None;
                out.push("");
            }
            (Some(_), _) => out.push(""),
            (None, None) => out.push(line),
        }
    }
    out.join("\n")
}

/// The headings of a Markdown text, outside code blocks: `(level, text)`.
pub fn headings(text: &str) -> Vec<(usize, String)> {
    without_code_blocks(text)
        .lines()
        .filter_map(|line| {
            let level = line.chars().take_while(|c| *c == '#').count();
            let rest = line.get(level..)?;
            (1..=6).contains(&level).then_some(())?;
            rest.strip_prefix(' ')
                .map(|t| (level, t.trim().trim_end_matches('#').trim().to_string()))
        })
        .collect()
}

/// The code spans of one line of Markdown (single backticks).
fn code_spans(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim().to_string())
        .collect()
}

/// The part of `text` under the heading `heading` (`## Every key`), up to the next heading of
/// its level or above; `None` when there is no such heading.
pub fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let plain = without_code_blocks(text);
    let mut start = None;
    let mut offset = 0;
    for (line, seen) in text.lines().zip(plain.lines()) {
        let here = offset;
        offset = (offset + line.len() + 1).min(text.len());
        let hashes = seen.chars().take_while(|c| *c == '#').count();
        if start.is_none() {
            if seen.trim_end() == heading {
                start = Some(offset);
            }
        } else if (1..=level).contains(&hashes) && seen[hashes..].starts_with(' ') {
            return start.map(|s| &text[s..here]);
        }
    }
    start.map(|s| &text[s..])
}

/// The first cell of every body row of the tables in `text` (header and separator rows left
/// out), as written between the first two unescaped `|`.
pub fn first_cells(text: &str) -> Vec<String> {
    let plain = without_code_blocks(text);
    let lines: Vec<&str> = plain.lines().collect();
    let separator = |l: &str| {
        l.trim().starts_with('|') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
    };
    let mut cells = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        if !line.starts_with('|') || separator(line) {
            continue;
        }
        if lines.get(i + 1).is_some_and(|next| separator(next)) {
            continue; // a header row
        }
        let mut cell = String::new();
        let mut escaped = false;
        for c in line[1..].chars() {
            if c == '|' && !escaped {
                break;
            }
            escaped = c == '\\';
            cell.push(c);
        }
        cells.push(cell.trim().to_string());
    }
    cells
}

/// The command paths a heading's code spans document (`["batch status"]` for `` `researchflow
/// batch status` ``): spans that are `researchflow` and lower-case words only.
pub fn documented_commands(heading: &str) -> Vec<String> {
    code_spans(heading)
        .into_iter()
        .filter_map(|span| {
            let rest = span.strip_prefix("researchflow ")?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let is_name = |w: &&str| {
                w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                    && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            };
            (!words.is_empty() && words.iter().all(is_name)).then(|| words.join(" "))
        })
        .collect()
}

/// Every command and subcommand of the binary, hidden ones aside, as paths (`"batch status"`).
fn cli_commands() -> BTreeSet<String> {
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut BTreeSet<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let path = format!("{prefix}{}", sub.get_name());
            out.insert(path.clone());
            walk(sub, &format!("{path} "), out);
        }
    }
    let mut out = BTreeSet::new();
    walk(&researchflow::cli::Cli::command(), "", &mut out);
    out
}

/// Every key of a JSON Schema of an object, in full with dots (see the module's comment for
/// maps of like entries).
pub fn schema_keys(schema: &Value) -> BTreeSet<String> {
    fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/$defs/");
            return resolve(root, &root["$defs"][name]);
        }
        if let Some(any) = node.get("anyOf").and_then(Value::as_array) {
            let objects: Vec<&Value> = any
                .iter()
                .map(|n| resolve(root, n))
                .filter(|n| n.get("properties").is_some())
                .collect();
            if let [one] = objects[..] {
                return one;
            }
        }
        node
    }
    fn reference(node: &Value) -> Option<String> {
        node.get("$ref")
            .or_else(|| {
                node.get("anyOf")?
                    .as_array()?
                    .iter()
                    .find_map(|n| n.get("$ref"))
            })
            .and_then(Value::as_str)
            .map(str::to_string)
    }
    fn walk(root: &Value, node: &Value, prefix: &str, out: &mut BTreeSet<String>) {
        let node = resolve(root, node);
        let Some(props) = node.get("properties").and_then(Value::as_object) else {
            out.insert(prefix.to_string());
            return;
        };
        let refs: BTreeSet<Option<String>> = props.values().map(reference).collect();
        let like_entries = props.len() > 1 && refs.len() == 1 && refs.iter().all(Option::is_some);
        if like_entries {
            let placeholder = prefix
                .rsplit('.')
                .next()
                .unwrap_or(prefix)
                .trim_end_matches('s');
            for name in props.keys() {
                out.insert(format!("{prefix}.{name}"));
            }
            let first = props.values().next().expect("one property");
            walk(root, first, &format!("{prefix}.<{placeholder}>"), out);
            return;
        }
        for (name, child) in props {
            let key = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            walk(root, child, &key, out);
        }
    }
    let mut out = BTreeSet::new();
    walk(schema, schema, "", &mut out);
    out
}

/// What is wrong with how `found` (one entry per definition) documents `expected`: each name
/// missing, defined more than once, or not one of `expected`.
pub fn exactly_once(what: &str, expected: &BTreeSet<String>, found: &[String]) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in found {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let mut wrong = Vec::new();
    for name in expected {
        match counts.get(name.as_str()) {
            None => wrong.push(format!("{what} `{name}` is not documented")),
            Some(1) => {}
            Some(n) => wrong.push(format!("{what} `{name}` is documented {n} times")),
        }
    }
    for name in counts.keys().filter(|n| !expected.contains(**n)) {
        wrong.push(format!("{what} `{name}` is documented but does not exist"));
    }
    wrong
}

/// The anchor GitHub and mdBook give a heading (see the module's comment).
pub fn anchor(heading: &str) -> String {
    heading
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor of a page's headings, the repeated ones numbered as GitHub and mdBook number
/// them.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, heading) in headings(text) {
        let base = anchor(&heading);
        let n = seen.entry(base.clone()).or_default();
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a page's Markdown links and images (`[text](target)`), outside code blocks
/// and code spans, without a scheme (`https:`, `mailto:`): what must lead to a file.
pub fn relative_links(text: &str) -> Vec<String> {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let mut out = Vec::new();
    for line in without_code_blocks(text).lines() {
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for found in link.captures_iter(&prose) {
            let target = found[1].trim_matches(|c| c == '<' || c == '>');
            if !target.contains(':') {
                out.push(target.to_string());
            }
        }
    }
    out
}

/// What is wrong with the relative links of the page at `page`: each that leads to no file, or
/// to no heading of it.
fn broken_links(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).expect("page");
    let mut wrong = Vec::new();
    for target in relative_links(&text) {
        let (file, fragment) = match target.split_once('#') {
            Some((f, a)) => (f, Some(a)),
            None => (target.as_str(), None),
        };
        let resolved = if file.is_empty() {
            page.to_path_buf()
        } else {
            page.parent().expect("folder").join(file)
        };
        if !resolved.exists() {
            wrong.push(format!("{}: `{target}` leads to no file", page.display()));
            continue;
        }
        if let Some(fragment) = fragment {
            let target_text = std::fs::read_to_string(&resolved).unwrap_or_default();
            if !anchors(&target_text).contains(fragment) {
                wrong.push(format!(
                    "{}: `{target}`: `{}` has no heading `#{fragment}`",
                    page.display(),
                    resolved.display()
                ));
            }
        }
    }
    wrong
}

/// The Markdown pages under `dir`, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The book's chapters: `(path relative to docs/src, text)`.
pub fn book_pages() -> Vec<(String, String)> {
    let src = root().join("docs/src");
    let pages: Vec<(String, String)> = markdown_under(&src)
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .expect("under docs/src")
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("page"))
        })
        .collect();
    assert!(pages.len() > 10, "the book is read: {}", pages.len());
    pages
}

/// One book page's text, by its path under `docs/src`.
pub fn book_page(rel: &str) -> String {
    std::fs::read_to_string(root().join("docs/src").join(rel))
        .unwrap_or_else(|e| panic!("docs/src/{rel}: {e}"))
}

#[test]
fn every_command_has_exactly_one_heading_in_the_book() {
    let commands = cli_commands();
    for c in [
        "workflow",
        "validate plan-next",
        "batch status",
        "queue migrate",
        "mcp",
    ] {
        assert!(commands.contains(c), "the CLI is read: {commands:?}");
    }
    let found: Vec<String> = book_pages()
        .iter()
        .flat_map(|(_, text)| headings(text))
        .flat_map(|(_, h)| documented_commands(&h))
        .collect();
    let wrong = exactly_once("command", &commands, &found);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_config_key_has_exactly_one_row_in_the_configuration_chapter() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/config.schema.json")).expect("schema"),
    )
    .expect("JSON");
    let keys = schema_keys(&schema);
    for k in [
        "search.read.pages",
        "roles.verifier",
        "roles.<role>.model",
        "$schema",
    ] {
        assert!(keys.contains(k), "the schema is read: {keys:?}");
    }
    let page = book_page("configuration.md");
    let table = section(&page, "## Every key").expect("configuration.md has `## Every key`");
    let found: Vec<String> = first_cells(table)
        .iter()
        .flat_map(|cell| code_spans(cell))
        .collect();
    let wrong = exactly_once("config key", &keys, &found);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let mut pages: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "RELIABILITY.md"]
        .iter()
        .map(|p| root().join(p))
        .collect();
    pages.extend(markdown_under(&root().join("docs")));
    let links: usize = pages
        .iter()
        .map(|p| relative_links(&std::fs::read_to_string(p).expect("page")).len())
        .sum();
    assert!(links > 50, "the links are read: {links}");
    let wrong: Vec<String> = pages.iter().flat_map(|p| broken_links(p)).collect();
    assert!(wrong.is_empty(), "broken links:\n{}", wrong.join("\n"));
}

#[test]
fn the_book_builds_with_mdbook() {
    let mdbook = root().join(MDBOOK);
    assert!(
        mdbook.is_file(),
        "`{MDBOOK}` is missing: run `bash scripts/setup/mdbook.sh` (scripts/test.sh does)"
    );
    let out = tempfile::tempdir().expect("tempdir");
    let built = std::process::Command::new(&mdbook)
        .arg("build")
        .arg(root().join("docs"))
        .arg("--dest-dir")
        .arg(out.path())
        .output()
        .expect("run mdbook");
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "mdbook build failed:\n{stderr}");
    assert!(
        !stderr.contains("[WARN]") && !stderr.contains("[ERROR]"),
        "mdbook build warned:\n{stderr}"
    );
    for page in ["index.html", "configuration.html", "commands/workflow.html"] {
        assert!(out.path().join(page).is_file(), "the book has {page}");
    }
}

/// The README stays a tour: at most 400 lines; ARCHITECTURE.md a map: at most 200.
#[test]
fn readme_and_architecture_stay_short() {
    for (page, most) in [("README.md", 400), ("ARCHITECTURE.md", 200)] {
        let lines = std::fs::read_to_string(root().join(page))
            .expect("page")
            .lines()
            .count();
        assert!(lines <= most, "{page} has {lines} lines, more than {most}");
    }
}

/// The checking functions see what they are meant to catch.
#[test]
fn the_checks_catch_a_missing_a_doubled_and_an_unknown_entry() {
    let text = "# `researchflow plan`\n\n```sh\n# `researchflow eval` in a code block\n```\n\
                ## `researchflow batch FILE --queue URL`\n\
                ## `researchflow view` and `researchflow graph`\n### `researchflow plan`\n";
    let found: Vec<String> = headings(text)
        .iter()
        .flat_map(|(_, h)| documented_commands(h))
        .collect();
    assert_eq!(found, ["plan", "view", "graph", "plan"]);
    let expected: BTreeSet<String> = ["plan", "view", "eval"].map(String::from).into();
    assert_eq!(
        exactly_once("command", &expected, &found),
        [
            "command `eval` is not documented",
            "command `plan` is documented 2 times",
            "command `graph` is documented but does not exist",
        ]
    );

    let page = "# Config\n\n| key | x |\n|---|---|\n| `a` | before |\n\n## Every key\n\n\
                | key | default |\n|---|---|\n| `b.c`, `b.d` | 1 \\| 2 |\n| `e` | `not-a-key` |\n\
                | `e` | again |\n\n## After\n\n| `f` | no |\n";
    let cells = first_cells(section(page, "## Every key").expect("section"));
    assert_eq!(cells, ["`b.c`, `b.d`", "`e`", "`e`"]);
    assert!(section(page, "## Nowhere").is_none());

    let schema = serde_json::json!({
        "properties": {
            "a": {"type": "string"},
            "roles": {"$ref": "#/$defs/Roles"},
            "limits": {"anyOf": [{"$ref": "#/$defs/Limits"}, {"type": "null"}]}
        },
        "$defs": {
            "Roles": {"properties": {
                "x": {"anyOf": [{"$ref": "#/$defs/Role"}, {"type": "null"}]},
                "y": {"anyOf": [{"$ref": "#/$defs/Role"}, {"type": "null"}]}
            }},
            "Role": {"properties": {"model": {"type": "string"}, "limits": {"$ref": "#/$defs/Limits"}}},
            "Limits": {"properties": {"rpm": {"type": "integer"}, "tpm": {"type": "integer"}}}
        }
    });
    let keys: Vec<String> = schema_keys(&schema).into_iter().collect();
    assert_eq!(
        keys,
        [
            "a",
            "limits.rpm",
            "limits.tpm",
            "roles.<role>.limits.rpm",
            "roles.<role>.limits.tpm",
            "roles.<role>.model",
            "roles.x",
            "roles.y",
        ]
    );

    assert_eq!(
        anchor("`researchflow view` and `researchflow graph`"),
        "researchflow-view-and-researchflow-graph"
    );
    assert_eq!(anchor("Claims and junk"), "claims-and-junk");
    assert_eq!(
        anchor("Search by meaning (ONNX, 2.0)"),
        "search-by-meaning-onnx-20"
    );
    let page = "# Top\n## Same\n## Same\n```\n# Not one\n```\n";
    assert_eq!(
        anchors(page),
        ["top", "same", "same-1"].map(String::from).into()
    );
    let links = "[a](b.md) [c](d.md#e) `[no](x.md)` [web](https://x.org) ![img](p.png)\n```\n[no](y.md)\n```\n";
    assert_eq!(relative_links(links), ["b.md", "d.md#e", "p.png"]);

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("to.md"), "# Here\n").expect("write");
    let from = dir.path().join("from.md");
    std::fs::write(
        &from,
        "# Self\n[ok](to.md#here) [ok](#self) [bad](to.md#gone) [bad](none.md) [bad](#nowhere)\n",
    )
    .expect("write");
    assert_eq!(broken_links(&from).len(), 3, "{:?}", broken_links(&from));
}
