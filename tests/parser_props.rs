//! Tests of the four parsers that read untrusted text: the plan loader
//! (`plan::store::parse_plan`), the ref parser (`Ref::parse`, `refs::parse_list`), the info
//! block parser (`plan::Info`) and the planner-answer extraction (`llm::extract_json`).
//!
//! Every finding of `scripts/fuzz.sh` is a `regression_*` test here, named after what broke.

use researchflow::plan::refs::{RefError, parse_list};
use researchflow::plan::{Info, InfoPart, NodeId, Ref, RefField, RefTarget};

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

/// A block type written with an entity (`type="a&amp;b"`) was read as `a&amp;b` and written
/// back as `a&amp;amp;b`: every load and save added a layer of escaping.
#[test]
fn regression_info_escaped_type_attribute_grew_on_every_save() {
    let info = Info::parse("<info type=\"a&amp;b\"></INFO>&quot;]");
    assert_eq!(info.get("a&b"), Some(""));
    let rendered = info.render();
    assert_eq!(rendered, "<info type=\"a&amp;b\"></info>");
    assert_eq!(Info::parse(&rendered), info);
}

/// A single-quoted block type holding a double quote (`type='x"y'`) was written back as
/// `type="x"y"`, which is no tag: after one save the block and its text were lost.
#[test]
fn regression_info_type_holding_a_double_quote_lost_on_render() {
    // The fuzzer's input: one unterminated block, which runs to the end.
    let raw =
        "7'`^<info type='x\"y'>&<info type=\"\"><info type='llm'>d<info type=\"llm\">é&#65;日#";
    let info = Info::parse(raw);
    let text = "&<info type=\"\"><info type='llm'>d<info type=\"llm\">éA日#";
    assert_eq!(info.get("x\"y"), Some(text));
    let back = Info::parse(&info.render());
    assert_eq!(back, info);
    assert_eq!(back.get("x\"y"), Some(text));

    let info = Info::parse("<info type='x\"y'>kept</info><info type=\"llm\">d</info>");
    let rendered = info.render();
    assert_eq!(
        rendered,
        "<info type=\"x&quot;y\">kept</info><info type=\"llm\">d</info>"
    );
    assert_eq!(Info::parse(&rendered), info);
}

/// Unescaping looked for the `;` of an entity in the whole rest of the text after every `&`,
/// so a megabyte of `&gt` without `;` (text from another tool) took seconds: quadratic.
#[test]
fn regression_info_ampersands_without_semicolon_were_quadratic() {
    let body = "&gt".repeat(350_000);
    let raw = format!("<info type=\"search\">{body}</info>");
    let start = std::time::Instant::now();
    let info = Info::parse(&raw);
    let took = start.elapsed();
    assert_eq!(info.get("search"), Some(body.as_str()));
    assert!(
        took < std::time::Duration::from_secs(2),
        "{took:?} for {} bytes",
        raw.len()
    );
}
