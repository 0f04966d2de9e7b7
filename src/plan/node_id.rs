//! Excel-column node ids: `a..z, aa..az, ba..zz, aaa, ...` (bijective base 26).
//!
//! Ids are compared and stored in lower case; parsing ignores case. This module only converts
//! between ids and their 1-based ordinals; it knows nothing of plan files.

use std::fmt;

/// A node id, kept as its 1-based ordinal (`a` = 1, `z` = 26, `aa` = 27).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(u64);

/// Why a string is not a node id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeIdError {
    #[error("node id is empty")]
    Empty,
    #[error("node id `{0}` may hold only the letters a-z")]
    InvalidChar(String),
    #[error("node id `{0}` is too long")]
    Overflow(String),
}

impl NodeId {
    /// The first id, `a`.
    pub const FIRST: NodeId = NodeId(1);

    /// The id with the given 1-based ordinal; `None` for 0.
    pub fn from_ordinal(n: u64) -> Option<NodeId> {
        (n > 0).then_some(NodeId(n))
    }

    pub fn ordinal(self) -> u64 {
        self.0
    }

    /// The id after this one (`z` -> `aa`).
    pub fn next(self) -> NodeId {
        NodeId(self.0.saturating_add(1))
    }

    /// Parses an id, ignoring case and surrounding white space.
    pub fn parse(s: &str) -> Result<NodeId, NodeIdError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(NodeIdError::Empty);
        }
        let mut n: u64 = 0;
        for c in s.chars() {
            let c = c.to_ascii_lowercase();
            if !c.is_ascii_lowercase() {
                return Err(NodeIdError::InvalidChar(s.to_string()));
            }
            let digit = u64::from(c as u8 - b'a' + 1);
            n = n
                .checked_mul(26)
                .and_then(|n| n.checked_add(digit))
                .ok_or_else(|| NodeIdError::Overflow(s.to_string()))?;
        }
        Ok(NodeId(n))
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut n = self.0;
        let mut buf = Vec::with_capacity(4);
        while n > 0 {
            let rem = (n - 1) % 26;
            buf.push(b'a' + rem as u8);
            n = (n - 1) / 26;
        }
        buf.reverse();
        // Only ASCII letters were pushed.
        f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
    }
}

impl std::str::FromStr for NodeId {
    type Err = NodeIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NodeId::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(n: u64) -> String {
        NodeId::from_ordinal(n).expect("n > 0").to_string()
    }

    #[test]
    fn known_ordinals() {
        for (n, s) in [
            (1, "a"),
            (26, "z"),
            (27, "aa"),
            (52, "az"),
            (53, "ba"),
            (702, "zz"),
            (703, "aaa"),
            (18278, "zzz"),
            (18279, "aaaa"),
        ] {
            assert_eq!(id(n), s, "ordinal {n}");
            assert_eq!(NodeId::parse(s).map(NodeId::ordinal), Ok(n), "id {s}");
        }
    }

    #[test]
    fn parse_ignores_case_and_space() {
        assert_eq!(NodeId::parse(" AB "), NodeId::parse("ab"));
        assert_eq!(NodeId::parse("Zz").map(NodeId::ordinal), Ok(702));
    }

    #[test]
    fn parse_rejects_non_letters() {
        assert_eq!(NodeId::parse(""), Err(NodeIdError::Empty));
        assert!(matches!(NodeId::parse("a1"), Err(NodeIdError::InvalidChar(_))));
        assert!(matches!(NodeId::parse("NEW1"), Err(NodeIdError::InvalidChar(_))));
        assert!(matches!(NodeId::parse("é"), Err(NodeIdError::InvalidChar(_))));
        assert!(matches!(
            NodeId::parse(&"z".repeat(20)),
            Err(NodeIdError::Overflow(_))
        ));
    }

    #[test]
    fn next_round_trips_for_the_first_million() {
        let mut cur = NodeId::FIRST;
        for n in 1..=1_000_000u64 {
            assert_eq!(cur.ordinal(), n);
            let text = cur.to_string();
            assert_eq!(NodeId::parse(&text), Ok(cur), "{text}");
            let next = cur.next();
            assert!(next.to_string() != text);
            cur = next;
        }
    }

    proptest! {
        #[test]
        fn display_then_parse_is_identity(n in 1u64..u64::MAX / 27) {
            let text = id(n);
            prop_assert!(text.bytes().all(|b| b.is_ascii_lowercase()));
            prop_assert_eq!(NodeId::parse(&text).map(NodeId::ordinal), Ok(n));
            prop_assert_eq!(NodeId::parse(&text.to_uppercase()).map(NodeId::ordinal), Ok(n));
        }
    }
}
