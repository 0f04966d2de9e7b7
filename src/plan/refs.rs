//! The ref grammar: `<id>:summary`, `<id>:info`, `<id>:info[llm|search|all]`, comma separated.
//!
//! Case and white space do not matter (` B : Info [ LLM ] ` is `b:info[llm]`). The planner may
//! also write `NEW1..NEW3` in place of an id and, by mistake, `:title`; both parse here so that
//! the planning round can resolve or sanitise them. Only `new` followed by one digit 1-3 is a
//! placeholder: `new` alone is the id after `nev` (and `newt` a later one), a node like any
//! other. Only a planner's answer gives placeholders a meaning; in a plan file they name no
//! node. This module never looks at node data except
//! in [`resolve`], which applies the fallbacks used when assembling LLM inputs.

use std::fmt;

use super::info::{Info, InfoPart};
use super::model::Node;
use super::node_id::NodeId;

/// The field a ref points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefField {
    Summary,
    Info(InfoPart),
    /// Not valid in a plan file; the planning round rewrites it to `Summary`.
    Title,
}

/// What a ref points at: an existing node, or the n-th task of the current planning answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefTarget {
    Node(NodeId),
    /// `NEW1` .. `NEW3` (stored 1-based).
    New(u8),
}

/// One parsed ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ref {
    pub target: RefTarget,
    pub field: RefField,
}

/// Why a ref does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    #[error("ref `{0}` has no `:` between the node id and the field")]
    MissingColon(String),
    #[error("ref `{0}` names no valid node id (expected letters like `b` or `aa`, or NEW1..NEW3)")]
    BadTarget(String),
    #[error("ref `{0}` asks for an unknown field (expected summary, info or info[llm|search|all])")]
    BadField(String),
}

impl Ref {
    pub fn node(id: NodeId, field: RefField) -> Ref {
        Ref {
            target: RefTarget::Node(id),
            field,
        }
    }

    /// Parses one ref, ignoring case and white space.
    pub fn parse(raw: &str) -> Result<Ref, RefError> {
        let compact: String = raw
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        let (target, field) = compact
            .split_once(':')
            .ok_or_else(|| RefError::MissingColon(raw.trim().to_string()))?;
        // `new`, `newt`, `new01`, ... are node ids or malformed; only `new1` to `new3` are
        // placeholders.
        let target = match target.as_bytes() {
            [b'n', b'e', b'w', n @ b'1'..=b'3'] => RefTarget::New(n - b'0'),
            _ => RefTarget::Node(
                NodeId::parse(target).map_err(|_| RefError::BadTarget(raw.trim().to_string()))?,
            ),
        };
        let field = match field {
            "summary" => RefField::Summary,
            "title" => RefField::Title,
            "info" | "info[all]" => RefField::Info(InfoPart::All),
            "info[llm]" => RefField::Info(InfoPart::Llm),
            "info[search]" => RefField::Info(InfoPart::Search),
            _ => return Err(RefError::BadField(raw.trim().to_string())),
        };
        Ok(Ref { target, field })
    }

    /// The node id, when the target is an existing node.
    pub fn node_id(&self) -> Option<NodeId> {
        match self.target {
            RefTarget::Node(id) => Some(id),
            RefTarget::New(_) => None,
        }
    }
}

impl fmt::Display for RefTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefTarget::Node(id) => write!(f, "{id}"),
            RefTarget::New(n) => write!(f, "NEW{n}"),
        }
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            RefField::Summary => write!(f, "{}:summary", self.target),
            RefField::Title => write!(f, "{}:title", self.target),
            RefField::Info(InfoPart::All) => write!(f, "{}:info", self.target),
            RefField::Info(part) => write!(f, "{}:info[{}]", self.target, part.as_str()),
        }
    }
}

/// Splits a comma separated list (ASCII or full-width commas) and parses every entry.
/// Empty entries are ignored; malformed ones are returned beside the good ones, so the caller
/// can skip them with a warning instead of aborting.
pub fn parse_list(raw: &str) -> (Vec<Ref>, Vec<RefError>) {
    let mut refs = Vec::new();
    let mut errors = Vec::new();
    for part in raw.split([',', '，']) {
        if part.trim().is_empty() {
            continue;
        }
        match Ref::parse(part) {
            Ok(r) => refs.push(r),
            Err(e) => errors.push(e),
        }
    }
    (refs, errors)
}

/// The text a ref stands for, with the input fallbacks: an empty summary falls back to the
/// title; an empty info part falls back to the summary, then to the title. Node data is never
/// changed.
pub fn resolve(node: &Node, field: RefField) -> String {
    let summary_or_title = || {
        if node.summary.trim().is_empty() {
            node.title.clone()
        } else {
            node.summary.clone()
        }
    };
    match field {
        RefField::Summary => summary_or_title(),
        RefField::Title => node.title.clone(),
        RefField::Info(part) => {
            let text = Info::parse(&node.info).part(part);
            if text.trim().is_empty() {
                summary_or_title()
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{id, search};

    #[test]
    fn parses_every_form_ignoring_case_and_space() {
        let cases = [
            ("b:summary", Ref::node(id("b"), RefField::Summary)),
            (
                " B : Info [ LLM ] ",
                Ref::node(id("b"), RefField::Info(InfoPart::Llm)),
            ),
            (
                "aa:info",
                Ref::node(id("aa"), RefField::Info(InfoPart::All)),
            ),
            (
                "aa:INFO[all]",
                Ref::node(id("aa"), RefField::Info(InfoPart::All)),
            ),
            (
                "c:info[search]",
                Ref::node(id("c"), RefField::Info(InfoPart::Search)),
            ),
            ("c:title", Ref::node(id("c"), RefField::Title)),
            (
                "NEW2:summary",
                Ref {
                    target: RefTarget::New(2),
                    field: RefField::Summary,
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(Ref::parse(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn display_is_canonical_and_reparses() {
        for text in [
            "b:summary",
            "aa:info",
            "c:info[llm]",
            "c:info[search]",
            "NEW1:summary",
        ] {
            let r = Ref::parse(text).expect("valid");
            assert_eq!(r.to_string(), text);
            assert_eq!(Ref::parse(&r.to_string()), Ok(r));
        }
        assert_eq!(
            Ref::parse(" A : INFO[ALL]").map(|r| r.to_string()),
            Ok("a:info".into())
        );
    }

    #[test]
    fn malformed_refs_are_errors() {
        assert!(matches!(Ref::parse("b"), Err(RefError::MissingColon(_))));
        assert!(matches!(
            Ref::parse("b1:summary"),
            Err(RefError::BadTarget(_))
        ));
        assert!(matches!(
            Ref::parse(":summary"),
            Err(RefError::BadTarget(_))
        ));
        assert!(matches!(
            Ref::parse("NEW4:summary"),
            Err(RefError::BadTarget(_))
        ));
        assert!(matches!(
            Ref::parse("NEW0:summary"),
            Err(RefError::BadTarget(_))
        ));
        assert!(matches!(
            Ref::parse("NEW01:summary"),
            Err(RefError::BadTarget(_))
        ));
        assert!(matches!(Ref::parse("b:body"), Err(RefError::BadField(_))));
        assert!(matches!(
            Ref::parse("b:info[web]"),
            Err(RefError::BadField(_))
        ));
        assert!(matches!(
            Ref::parse("b:info[llm"),
            Err(RefError::BadField(_))
        ));
    }

    #[test]
    fn new_without_a_digit_is_a_node_id_not_a_malformed_placeholder() {
        assert_eq!(
            Ref::parse("new:summary"),
            Ok(Ref::node(id("new"), RefField::Summary))
        );
        assert_eq!(
            Ref::parse(" NEW : info[llm]"),
            Ok(Ref::node(id("new"), RefField::Info(InfoPart::Llm)))
        );
        assert_eq!(
            Ref::parse("newt:info"),
            Ok(Ref::node(id("newt"), RefField::Info(InfoPart::All)))
        );
        assert_eq!(
            Ref::parse("new:summary").map(|r| r.to_string()),
            Ok("new:summary".into())
        );
    }

    #[test]
    fn list_keeps_good_refs_and_reports_bad_ones() {
        let (refs, errors) = parse_list(" b:summary ,, C:Info[LLM]，d:nope, e ");
        assert_eq!(
            refs,
            vec![
                Ref::node(id("b"), RefField::Summary),
                Ref::node(id("c"), RefField::Info(InfoPart::Llm)),
            ]
        );
        assert_eq!(errors.len(), 2);
        assert_eq!(parse_list("  ").0, vec![]);
    }

    fn node(summary: &str, info: &str) -> Node {
        search("b", "The title")
            .with_summary(summary)
            .with_info(info)
    }

    #[test]
    fn summary_falls_back_to_title() {
        assert_eq!(resolve(&node("S", ""), RefField::Summary), "S");
        assert_eq!(resolve(&node("", ""), RefField::Summary), "The title");
        assert_eq!(resolve(&node("  ", ""), RefField::Summary), "The title");
    }

    #[test]
    fn info_falls_back_to_summary_then_title() {
        let both = r#"<info type="llm">L</info><info type="search">S</info>"#;
        let llm_only = r#"<info type="llm">L</info>"#;
        let n = node("Sum", both);
        assert_eq!(resolve(&n, RefField::Info(InfoPart::Llm)), "L");
        assert_eq!(resolve(&n, RefField::Info(InfoPart::Search)), "S");
        assert!(resolve(&n, RefField::Info(InfoPart::All)).contains('L'));
        assert!(resolve(&n, RefField::Info(InfoPart::All)).contains('S'));
        let n = node("Sum", llm_only);
        assert_eq!(resolve(&n, RefField::Info(InfoPart::Search)), "Sum");
        let n = node("", llm_only);
        assert_eq!(resolve(&n, RefField::Info(InfoPart::Search)), "The title");
        let n = node("", "");
        assert_eq!(resolve(&n, RefField::Info(InfoPart::All)), "The title");
        assert_eq!(resolve(&n, RefField::Info(InfoPart::Llm)), "The title");
    }
}
