//! What the offline answer leads with: the figure or name a question in one part asks for,
//! as its sentence writes it, before the sentence itself.

use super::Scorer;
use crate::offline::span::short_answer;

impl Scorer<'_> {
    /// The figure or name `question` asks for, as candidate `first` (the answer's first
    /// sentence) writes it: the one [`crate::offline::stated::Asked::states`] found, or
    /// [`short_answer`]'s, when it is of the answer's form; `None` for a question in parts or
    /// a sentence that holds nothing asked.
    pub(super) fn lead(&self, question: &str, first: usize) -> Option<String> {
        if self.parts.len() != 1 || !self.holds_asked[first] {
            return None;
        }
        self.stated[first]
            .clone()
            .flatten()
            .or_else(|| short_answer(question, &self.candidates[first].text))
            .filter(|span| self.asked.form.fits(span))
    }
}
