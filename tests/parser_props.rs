//! Tests of the four parsers that read untrusted text: the plan loader
//! (`plan::store::parse_plan`), the ref parser (`Ref::parse`, `refs::parse_list`), the info
//! block parser (`plan::Info`) and the planner-answer extraction (`llm::extract_json`).
//!
//! Every finding of `scripts/fuzz.sh` is a `regression_*` test here, named after what broke.

use researchflow::plan::refs::{RefError, parse_list};
use researchflow::plan::{InfoPart, NodeId, Ref, RefField, RefTarget};

// ---------------------------------------------------------------------------------------------
// Findings of scripts/fuzz.sh, each named after what broke
// ---------------------------------------------------------------------------------------------

fn id(text: &str) -> NodeId {
    NodeId::parse(text).expect("valid id")
}

/// `new` is an id like any other (the one after `nev`), and so are `newt`, `newer`, ...: they
/// were refused as malformed `NEW<n>` placeholders, so a plan with more than 9,616 nodes lost
/// refs to its own nodes. Only `new` followed by 1 to 3 is a placeholder.
#[test]
fn regression_refs_node_id_new_read_as_a_placeholder() {
    assert_eq!(id("new").ordinal(), id("nev").ordinal() + 1);
    assert_eq!(
        Ref::parse("Ne\tW:INfO[\u{3000}lLM]"),
        Ok(Ref::node(id("new"), RefField::Info(InfoPart::Llm)))
    );
    assert_eq!(
        Ref::parse("NeWT:info"),
        Ok(Ref::node(id("newt"), RefField::Info(InfoPart::All)))
    );
    let r = Ref::node(id("new"), RefField::Summary);
    assert_eq!(Ref::parse(&r.to_string()), Ok(r));
    assert_eq!(
        parse_list("new:summary, NEW2:info"),
        (
            vec![
                r,
                Ref {
                    target: RefTarget::New(2),
                    field: RefField::Info(InfoPart::All),
                },
            ],
            vec![]
        )
    );
    for bad in ["NEW4:summary", "new0:summary", "new1x:summary"] {
        assert!(
            matches!(Ref::parse(bad), Err(RefError::BadTarget(_))),
            "{bad}"
        );
    }
}
