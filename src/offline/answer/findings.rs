//! The findings of the offline engine's report: under each search task (direction), its best
//! sentences that the answer does not already quote.

use std::collections::BTreeSet;

use super::Scorer;
use crate::agents::Direction;

/// The least share of the question a finding must cover.
pub(super) const FINDING_FLOOR: f64 = 0.4;
/// How much of the answer's first sentence's coverage a finding from a document the answer
/// does not cite needs.
pub(super) const OTHER_DOCUMENT: f64 = 1.0;
/// The most findings under one direction.
pub(super) const PER_DIRECTION: usize = 3;

impl Scorer<'_> {
    /// Under each direction, its best findings that `taken` does not already quote; a
    /// direction with none is left out. Each finding chosen joins `taken`.
    pub(super) fn findings(
        &self,
        directions: &[Direction],
        taken: &mut Vec<usize>,
    ) -> Vec<(String, Vec<usize>)> {
        let none = BTreeSet::new();
        let answered: Vec<usize> = taken.iter().map(|&i| self.candidates[i].source).collect();
        // A document the answer does not cite must be as much to the point as the answer.
        let bar = taken
            .first()
            .map_or(f64::INFINITY, |&i| self.ranked(i, self.gain(i, &none)))
            * OTHER_DOCUMENT;
        let mut out = Vec::new();
        for direction in directions {
            let mut picked = Vec::new();
            while picked.len() < PER_DIRECTION {
                let of_direction = |i: usize| {
                    let source = self.candidates[i].source;
                    let gain = self.gain(i, &none);
                    let fits = answered.contains(&source) || self.ranked(i, gain) >= bar;
                    match direction.sources.contains(&source) && fits && gain >= FINDING_FLOOR {
                        true => self.ranked(i, gain),
                        false => 0.0,
                    }
                };
                match self.best(of_direction, taken) {
                    Some((i, _)) => {
                        picked.push(i);
                        taken.push(i);
                    }
                    _ => break,
                }
            }
            if !picked.is_empty() {
                out.push((direction.title.clone(), picked));
            }
        }
        out
    }
}
