//! The ref parser, `Ref::parse` and `refs::parse_list`: never panics; a parsed ref's `Display`
//! parses back to it; ASCII case and white space inserted anywhere change nothing; the refs a
//! list yields, joined again, are read back whole and without error; a generated list of valid
//! refs, written with noise in case, spacing and separators, reads back as generated.

use researchflow::plan::refs::parse_list;
use researchflow::plan::{InfoPart, NodeId, Ref, RefField, RefTarget};

use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

const SPACES: &[&str] = &[" ", "\t", "\n", "\u{3000}", "\u{a0}", "\r\n"];
const SEPARATORS: &[&str] = &[",", "，", ", ,", " , ", ",,"];

pub struct RefsTarget {
    seeds: Vec<Vec<u8>>,
}

impl RefsTarget {
    pub fn new() -> RefsTarget {
        let mut seeds: Vec<String> = [
            "b:summary",
            " B : Info [ LLM ] ",
            "aa:info[all], c:info[search]，NEW2:title",
            "NEW1:summary,NEW3:info",
            "zz:info[search], a:info",
        ]
        .map(String::from)
        .to_vec();
        let mut g = Gen::new(2);
        seeds.extend((0..16).map(|_| valid_list(&mut g).text().into_owned()));
        RefsTarget {
            seeds: seeds.into_iter().map(String::into_bytes).collect(),
        }
    }
}

/// A list of valid refs, written with noise, and the refs it holds.
fn valid_list(g: &mut Gen) -> Input {
    let refs: Vec<Ref> = (0..g.rng.usize(..5)).map(|_| random_ref(g)).collect();
    let text = refs
        .iter()
        .map(|r| noisy(g, &r.to_string()))
        .collect::<Vec<_>>()
        .join(SEPARATORS[g.rng.usize(..SEPARATORS.len())]);
    Input::new(text, Expect::Refs(refs))
}

/// A random valid ref: half of the ids short words (every short word is an id), half any
/// ordinal.
fn random_ref(g: &mut Gen) -> Ref {
    let target = if g.rng.u8(..6) == 0 {
        RefTarget::New(g.rng.u8(1..=3))
    } else if g.rng.bool() {
        let letters: String = (0..g.rng.usize(1..=4)).map(|_| g.rng.lowercase()).collect();
        // Lower-case letters always make an id.
        RefTarget::Node(NodeId::parse(&letters).expect("letters are an id"))
    } else {
        RefTarget::Node(NodeId::from_ordinal(g.rng.u64(1..)).unwrap_or(NodeId::FIRST))
    };
    let field = match g.rng.u8(..5) {
        0 => RefField::Summary,
        1 => RefField::Title,
        2 => RefField::Info(InfoPart::All),
        3 => RefField::Info(InfoPart::Llm),
        _ => RefField::Info(InfoPart::Search),
    };
    Ref { target, field }
}

/// The text with ASCII case flipped and white space inserted at random places.
fn noisy(g: &mut Gen, text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if g.rng.u8(..4) == 0 {
            out.push_str(SPACES[g.rng.usize(..SPACES.len())]);
        }
        out.push(if g.rng.bool() {
            c.to_ascii_uppercase()
        } else {
            c
        });
    }
    if g.rng.bool() {
        out.push_str(SPACES[g.rng.usize(..SPACES.len())]);
    }
    out
}

impl Target for RefsTarget {
    fn name(&self) -> &'static str {
        "refs"
    }

    fn tokens(&self) -> &'static [&'static str] {
        &[
            ":",
            ",",
            "，",
            "[",
            "]",
            "summary",
            "info",
            "title",
            "llm",
            "search",
            "all",
            "NEW1",
            "NEW2",
            "NEW3",
            "NEW0",
            "NEW4",
            "new",
            "NEW+1",
            "NEW01",
            "b",
            "aa",
            "zz",
            "zzzzzzzzzzzzzz",
            " ",
            "\t",
            "\u{3000}",
            "İ",
            "SUMMARY",
            "Info",
        ]
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[("[", "]"), ("info[", "]"), (",", ",")]
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        valid_list(g)
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        check_one(&input.text())?;
        let (refs, errors) = parse_list(&input.text());
        if let Expect::Refs(want) = &input.expect
            && (refs != *want || !errors.is_empty())
        {
            return Err(format!(
                "a list of valid refs reads back changed: {refs:?} with errors {errors:?}, not {want:?}"
            ));
        }
        let joined = refs
            .iter()
            .map(Ref::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let (again, errors) = parse_list(&joined);
        if again != refs || !errors.is_empty() {
            return Err(format!(
                "the accepted refs, joined, read back changed: {} gives {again:?} with errors {errors:?}",
                short(&joined)
            ));
        }
        Ok(())
    }
}

/// The invariants of one ref on any text.
fn check_one(text: &str) -> Result<(), String> {
    let parsed = Ref::parse(text).ok();
    if let Some(r) = parsed {
        let shown = r.to_string();
        if Ref::parse(&shown) != Ok(r) {
            return Err(format!(
                "a display does not parse back: `{shown}` of {r:?} gives {:?}",
                Ref::parse(&shown)
            ));
        }
    }
    let upper = text.to_ascii_uppercase();
    if Ref::parse(&upper).ok() != parsed {
        return Err("upper case changes the result".into());
    }
    // White space at the middle character boundary and at both ends.
    let mid = text.char_indices().nth(text.chars().count() / 2);
    let at = mid.map_or(text.len(), |(i, _)| i);
    let spaced = format!(" \t{} \u{3000}{}\n", &text[..at], &text[at..]);
    if Ref::parse(&spaced).ok() != parsed {
        return Err("inserted white space changes the result".into());
    }
    Ok(())
}
