//! What every fuzzed parser provides: its special strings, valid seeds, a generator of valid
//! inputs with a known answer, and the cheap invariants checked on every input.

use std::borrow::Cow;

use researchflow::plan::{PlanFile, Ref};
use serde_json::Value;

use crate::inputs::Gen;

/// What a generated valid input must parse to. Inputs made from noise expect nothing beyond
/// the parser's general invariants.
pub enum Expect {
    Nothing,
    Plan(Box<PlanFile>),
    Refs(Vec<Ref>),
    Blocks {
        llm: String,
        search: String,
    },
    Object(Value),
    /// Words that must come out in this order (other text may stand between them), and the
    /// title when the document has one.
    Words {
        words: Vec<String>,
        title: Option<String>,
    },
    /// The text the bytes decode to.
    Decoded(String),
    /// What a gzip file holds: `data` then `zeros` zero bytes; `intact` when its checksums and
    /// end are right (otherwise reading it may fail, but never gives other bytes).
    Gzip {
        data: Vec<u8>,
        zeros: u64,
        intact: bool,
    },
}

pub struct Input {
    /// Valid UTF-8 for a text parser's input (see [`Target::binary`]).
    pub bytes: Vec<u8>,
    pub expect: Expect,
}

impl Input {
    pub fn new(text: String, expect: Expect) -> Input {
        Input {
            bytes: text.into_bytes(),
            expect,
        }
    }

    pub fn noise(bytes: Vec<u8>) -> Input {
        Input {
            bytes,
            expect: Expect::Nothing,
        }
    }

    /// The input as text (a text parser's inputs are always UTF-8, so this borrows).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }
}

pub trait Target {
    fn name(&self) -> &'static str;
    /// Strings that mean something to the parser, weighted up in token soup and mutations.
    fn tokens(&self) -> &'static [&'static str];
    /// Opening and closing pieces for deep nesting.
    fn nests(&self) -> &'static [(&'static str, &'static str)];
    /// Whether the parser reads bytes; a text parser's inputs are made valid UTF-8.
    fn binary(&self) -> bool {
        false
    }
    /// Valid inputs to mutate.
    fn seeds(&self) -> &[Vec<u8>];
    /// A valid input and what it must parse to.
    fn valid(&self, g: &mut Gen) -> Input;
    /// Runs the parser on the input; `Err` names the broken invariant.
    fn check(&self, input: &Input) -> Result<(), String>;
}

/// One input for `target`: a tenth random bytes, a third token soup, a sixth valid inputs
/// with a known answer, the rest mutations of seeds and of fresh valid inputs.
pub fn generate(target: &dyn Target, g: &mut Gen) -> Input {
    let input = match g.rng.u8(..30) {
        0..3 => Input::noise(g.raw()),
        3..13 => Input::noise(g.soup(target.tokens()).into_bytes()),
        13..18 => target.valid(g),
        _ => {
            let base = pick_base(target, g);
            let other = pick_base(target, g);
            Input::noise(g.mutate(&base, &other, target.tokens(), target.nests()))
        }
    };
    if target.binary() || std::str::from_utf8(&input.bytes).is_ok() {
        input
    } else {
        Input::noise(
            String::from_utf8_lossy(&input.bytes)
                .into_owned()
                .into_bytes(),
        )
    }
}

fn pick_base(target: &dyn Target, g: &mut Gen) -> Vec<u8> {
    let seeds = target.seeds();
    if g.rng.bool() && !seeds.is_empty() {
        seeds[g.rng.usize(..seeds.len())].clone()
    } else {
        target.valid(g).bytes
    }
}

/// Shortens a value for a failure message.
pub fn short(text: &str) -> String {
    const MAX: usize = 300;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head:?}... ({} bytes)", text.len())
    }
}
