//! What every fuzzed parser provides: its special strings, valid seeds, a generator of valid
//! inputs with a known answer, and the cheap invariants checked on every input.

use researchflow::plan::{PlanFile, Ref};
use serde_json::Value;

use crate::inputs::Gen;

/// What a generated valid input must parse to. Inputs made from noise expect nothing beyond
/// the parser's general invariants.
pub enum Expect {
    Nothing,
    Plan(Box<PlanFile>),
    Refs(Vec<Ref>),
    Blocks { llm: String, search: String },
    Object(Value),
}

pub struct Input {
    pub text: String,
    pub expect: Expect,
}

impl Input {
    pub fn noise(text: String) -> Input {
        Input {
            text,
            expect: Expect::Nothing,
        }
    }
}

pub trait Target {
    fn name(&self) -> &'static str;
    /// Strings that mean something to the parser, weighted up in token soup and mutations.
    fn tokens(&self) -> &'static [&'static str];
    /// Opening and closing pieces for deep nesting.
    fn nests(&self) -> &'static [(&'static str, &'static str)];
    /// Valid inputs to mutate.
    fn seeds(&self) -> &[String];
    /// A valid input and what it must parse to.
    fn valid(&self, g: &mut Gen) -> Input;
    /// Runs the parser on the input; `Err` names the broken invariant.
    fn check(&self, input: &Input) -> Result<(), String>;
}

/// One input for `target`: a tenth random bytes, a third token soup, a sixth valid inputs
/// with a known answer, the rest mutations of seeds and of fresh valid inputs.
pub fn generate(target: &dyn Target, g: &mut Gen) -> Input {
    match g.rng.u8(..30) {
        0..3 => Input::noise(g.bytes()),
        3..13 => Input::noise(g.soup(target.tokens())),
        13..18 => target.valid(g),
        _ => {
            let base = pick_base(target, g);
            let other = pick_base(target, g);
            Input::noise(g.mutate(&base, &other, target.tokens(), target.nests()))
        }
    }
}

fn pick_base(target: &dyn Target, g: &mut Gen) -> String {
    let seeds = target.seeds();
    if g.rng.bool() && !seeds.is_empty() {
        seeds[g.rng.usize(..seeds.len())].clone()
    } else {
        target.valid(g).text
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
