//! What the offline answer leads with: the figure or name a question in one part asks for,
//! as its sentence writes it, before the sentence itself.

use super::{Scorer, term_name};
use crate::offline::defaults::stated_default;
use crate::offline::question::named_thing;
use crate::offline::span::{figures, short_answer};

impl Scorer<'_> {
    /// The figure or name the question asks for, as candidate `first` (the answer's first
    /// sentence) writes it: the one [`crate::offline::stated::Asked::states`] found, or
    /// [`short_answer`]'s, when it is of the answer's form; `None` for a question in parts or
    /// a sentence that holds nothing asked.
    pub(super) fn lead(&self, first: usize) -> Option<String> {
        if self.parts.len() != 1 || !self.holds_asked[first] {
            return None;
        }
        let candidate = &self.candidates[first];
        let sentence = &candidate.text;
        let default = self.asks_default.then(|| {
            stated_default(&self.known, sentence, candidate.term.as_deref())
                .or_else(|| self.figure_after_default(sentence))
        });
        let setting = self
            .asks_name
            .then(|| term_name(&self.known, named_thing(&self.known), candidate));
        // The figure the sentence states of the subject, when it is one of the figures it
        // gives by default (`128 bytes` of `256 bytes for most file systems, except for small
        // file systems where ... 128 bytes`), over the first of them.
        let stated = self.stated[first].clone().flatten();
        let default = default.flatten();
        let other = |s: &String| {
            default
                .as_ref()
                .is_some_and(|d| first_number(d) != first_number(s))
        };
        let subjects = stated.clone().filter(|s| self.asks_figure && other(s));
        subjects
            .or(default)
            .or(setting.flatten())
            .or(stated)
            .or_else(|| short_answer(&self.known, sentence))
            .filter(|span| self.asked.form.fits(span))
            .map(|span| in_code(sentence, &span).unwrap_or(span))
    }

    /// For a question asking for a figure by default, the first figure `sentence` gives
    /// after the word `default` (`the minimum size is 1024 bits and the default is 3072
    /// bits`), where no option it names tells whose default it is.
    fn figure_after_default(&self, sentence: &str) -> Option<String> {
        let lower = sentence.to_ascii_lowercase();
        let at = lower.find("default")?;
        self.asks_figure
            .then(|| figures(&self.known, sentence))?
            .into_iter()
            .find(|(start, _)| *start > at)
            .map(|(_, span)| span)
    }
}

/// The first run of digits in `span` (`128` of `128 bytes`), empty when it has none.
fn first_number(span: &str) -> &str {
    let start = span
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(span.len());
    let rest = &span[start..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The inline code of `sentence` (`` `gzip -9` ``, ``` ``gzip -9`` ```) that holds `span`:
/// a figure written in code is a part of it (the level of `gzip -9`), and leads whole.
fn in_code(sentence: &str, span: &str) -> Option<String> {
    let mut rest = sentence;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].len() - rest[open..].trim_start_matches('`').len();
        let fence = &rest[open..open + ticks];
        let body = &rest[open + ticks..];
        let close = body.find(fence)?;
        let code = body[..close].trim();
        if code.contains(span) && code != span {
            return Some(code.to_string());
        }
        rest = &body[close + ticks..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::in_code;

    #[test]
    fn a_figure_in_code_leads_as_the_code_that_holds_it() {
        let s = "Manual pages should be installed compressed using ``gzip -9``.";
        assert_eq!(in_code(s, "-9").as_deref(), Some("gzip -9"));
        assert_eq!(
            in_code("Run `make -j4` then `make install`.", "4").as_deref(),
            Some("make -j4")
        );
        // Code that is the span itself, or prose: nothing to widen.
        assert_eq!(in_code("Set `4` workers.", "4"), None);
        assert_eq!(in_code("About 9 of them, `x`.", "9"), None);
        assert_eq!(in_code("An unclosed `gzip -9 here.", "-9"), None);
    }
}
