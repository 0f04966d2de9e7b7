//! Property tests of the four parsers that read untrusted text: the plan loader
//! (`plan::store::parse_plan`), the ref parser (`Ref::parse`, `refs::parse_list`), the info
//! block parser (`plan::Info`) and the planner-answer extraction (`llm::extract_json`).
//!
//! `scripts/fuzz.sh` runs the same invariants over millions of generated inputs; every finding
//! of it is a `regression_*` test at the end of this file. Case counts are kept low so the
//! file runs in well under two seconds in a debug build.

use std::path::Path;

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use researchflow::llm::extract_json;
use researchflow::plan::refs::{RefError, parse_list};
use researchflow::plan::store::{StoreError, parse_plan};
use researchflow::plan::{
    CHECK_LIST_KEYS, CheckList, Info, InfoPart, NODE_KEYS, Node, NodeId, NodeStatus, NodeType,
    PLAN_KEYS, PlanFile, Ref, RefField, RefTarget, Source,
};
use researchflow::usage::Usage;
use serde_json::{Map, Value, json};

const PATH: &str = "props.json";

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

fn node_id() -> impl Strategy<Value = NodeId> {
    prop_oneof![
        "[a-z]{1,4}".prop_map(|s| NodeId::parse(&s).expect("letters are an id")),
        (1u64..).prop_map(|n| NodeId::from_ordinal(n).expect("n > 0")),
    ]
}

fn field() -> impl Strategy<Value = RefField> {
    prop_oneof![
        Just(RefField::Summary),
        Just(RefField::Title),
        Just(RefField::Info(InfoPart::All)),
        Just(RefField::Info(InfoPart::Llm)),
        Just(RefField::Info(InfoPart::Search)),
    ]
}

fn a_ref() -> impl Strategy<Value = Ref> {
    let target = prop_oneof![
        4 => node_id().prop_map(RefTarget::Node),
        1 => (1u8..=3).prop_map(RefTarget::New),
    ];
    (target, field()).prop_map(|(target, field)| Ref { target, field })
}

/// Finite floats only: JSON has no NaN or infinity.
fn finite_f64() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite_f64().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            vec((".{0,6}", inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Unknown fields: keys the format does not define (some of them near misses of known ones),
/// holding any JSON.
fn extras(known: &'static [&'static str]) -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![
        Just("color".to_string()),
        Just("Node_ID".to_string()),
        Just("kind".to_string()),
        Just(String::new()),
        ".{1,8}",
    ];
    vec((key, json_value()), 0..3).prop_map(move |kv| {
        kv.into_iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .collect()
    })
}

fn node_type() -> impl Strategy<Value = NodeType> {
    prop_oneof![
        Just(NodeType::Start),
        Just(NodeType::Search),
        Just(NodeType::Summary),
        Just(NodeType::End),
    ]
}

fn node_status() -> impl Strategy<Value = NodeStatus> {
    prop_oneof![
        Just(NodeStatus::Planned),
        Just(NodeStatus::Running),
        Just(NodeStatus::Completed),
        Just(NodeStatus::Failed),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    let head = (
        node_id(),
        any::<String>(),
        node_type(),
        any::<i64>(),
        node_status(),
    );
    let text = (any::<String>(), any::<String>(), a_ref());
    let times = (
        option::of(".{0,20}"),
        option::of(".{0,20}"),
        option::of(".{0,20}"),
        option::of(any::<u32>()),
    );
    let usage = (any::<u64>(), any::<u64>(), any::<u64>()).prop_map(|(p, c, t)| Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: t,
    });
    let source = (".{0,20}", ".{0,20}", proptest::option::of(".{0,20}")).prop_map(
        |(url, title, snippet)| Source {
            snippet,
            ..Source::new(url, title)
        },
    );
    let rest = (
        vec(".{0,20}", 0..2),
        option::of(usage),
        vec(source, 0..2),
        any::<bool>(),
        extras(NODE_KEYS),
    );
    (head, text, times, rest).prop_map(|(head, text, times, rest)| {
        let (id, title, kind, batch, status) = head;
        let (summary, llm, p_node) = text;
        let mut info = Info::default();
        info.set("llm", llm);
        let mut n = Node::new(id, title, kind, batch, status)
            .with_summary(summary)
            .with_info(info.render())
            .with_p_node(p_node.to_string());
        (n.created_at, n.updated_at, n.finished_at, n.attempts) = times;
        (n.errors, n.usage, n.sources, n.truncated, n.extra) = rest;
        n
    })
}

fn valid_plan() -> impl Strategy<Value = PlanFile> {
    let check_list = (
        option::of(node_id()),
        option::of(any::<i64>()),
        vec(a_ref().prop_map(|r| r.to_string()), 0..3),
        extras(CHECK_LIST_KEYS),
    )
        .prop_map(|(latest_id, latest_batch, refs, extra)| CheckList {
            latest_id,
            latest_batch,
            refs,
            extra,
        });
    (
        any::<u32>(),
        any::<String>(),
        option::of(".{0,20}"),
        check_list,
        vec(node(), 0..4),
        0..5u32,
        extras(PLAN_KEYS),
    )
        .prop_map(
            |(version, workflow_id, created_at, check_list, nodes, rounds, extra)| PlanFile {
                version,
                workflow_id,
                created_at,
                check_list,
                nodes,
                rounds,
                outcome: None,
                corpus: None,
                extra,
            },
        )
}

/// JSON built from the plan format's own keys and values, nested at random: mostly not a
/// plan, sometimes nearly one.
fn plan_shaped_json() -> impl Strategy<Value = Value> {
    plan_leaf().prop_recursive(4, 32, 5, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            vec((plan_key(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn plan_key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(PLAN_KEYS),
        prop::sample::select(CHECK_LIST_KEYS),
        prop::sample::select(NODE_KEYS),
    ]
    .prop_map(String::from)
}

/// Values that fit, or nearly fit, the plan format's fields.
fn plan_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(null)),
        Just(json!(-1)),
        Just(json!(1)),
        Just(json!(u64::MAX)),
        Just(json!(-0.5)),
        Just(json!("a")),
        Just(json!("start")),
        Just(json!("completed")),
        Just(json!("b:summary")),
        Just(json!("NEW1")),
        Just(json!([])),
        Just(json!({})),
        any::<String>().prop_map(Value::from),
    ]
}

/// JSON pointers of every object in `value`: where a damaged plan is edited.
fn object_pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.to_string());
            for (k, v) in map {
                let k = k.replace('~', "~0").replace('/', "~1");
                object_pointers(v, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                object_pointers(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A valid plan with one to four edits: a field of some object removed, or set to a value
/// that fits the format or nearly does. Often still a plan, often not.
fn damaged_plan() -> impl Strategy<Value = String> {
    let edit = (
        any::<prop::sample::Index>(),
        plan_key(),
        option::of(plan_leaf()),
    );
    (valid_plan(), vec(edit, 1..4)).prop_map(|(plan, edits)| {
        let mut value = serde_json::to_value(&plan).expect("json");
        for (pick, key, new) in edits {
            let mut pointers = Vec::new();
            object_pointers(&value, "", &mut pointers);
            let at = &pointers[pick.index(pointers.len())];
            if let Some(Value::Object(map)) = value.pointer_mut(at) {
                match new {
                    Some(v) => map.insert(key, v),
                    None => map.remove(&key),
                };
            }
        }
        value.to_string()
    })
}

/// Text made of the info format's own pieces, broken tags and CDATA included.
fn info_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<info type=\"llm\">"),
        Just("<info type=\"search\">"),
        Just("<info type='llm'>"),
        Just("<INFO TYPE = \"Search\" >"),
        Just("<info type=\"a&amp;b\">"),
        Just("<info type='x\"y'>"),
        Just("<info type=\"\">"),
        Just("<info"),
        Just("</info>"),
        Just("</INFO>"),
        Just("</info"),
        Just("<![CDATA["),
        Just("]]>"),
        Just("&amp;"),
        Just("&lt;"),
        Just("&#x41;"),
        Just("&#xD800;"),
        Just("&#99999999999;"),
        Just("&"),
        Just("<"),
        Just(">"),
        Just(";"),
        Just("\""),
        Just("é"),
        Just("日"),
        Just(" "),
        Just("text"),
    ];
    vec(piece, 0..24).prop_map(|p| p.concat())
}

/// Prose that holds no object, fence or tag of its own.
fn prose() -> impl Strategy<Value = String> {
    "[^{<`]{0,30}"
}

/// An object for the extraction tests. None of its strings holds a fence marker: fences are
/// found in the text before any JSON is parsed, so a fence marker inside a string of a fenced
/// object ends the fence there (this property found it; the object is then taken from the
/// whole text, where an object in the prose before the fence comes first).
fn json_object() -> impl Strategy<Value = Value> {
    vec(("[a-z_]{0,6}", json_value()), 0..4)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
        .prop_filter("no fence marker inside", |v| !v.to_string().contains("```"))
}

fn load(text: &str) -> Result<PlanFile, StoreError> {
    parse_plan(Path::new(PATH), text)
}

fn save(plan: &PlanFile) -> String {
    serde_json::to_string_pretty(plan).expect("a plan serialises")
}

/// The loader's contract on any text: an error names the file; a plan it accepts saves and
/// loads back unchanged, and saves again byte for byte.
fn check_loaded(text: &str) -> Result<(), TestCaseError> {
    match load(text) {
        Err(e) => prop_assert!(e.to_string().contains(&format!("`{PATH}`")), "{e}"),
        Ok(plan) => {
            let saved = save(&plan);
            let again = load(&saved).expect("a saved plan loads");
            prop_assert_eq!(&again, &plan);
            prop_assert_eq!(save(&again), saved);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The plan loader
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(32))]

    /// Arbitrary text is refused with an error that names the file, never a panic.
    #[test]
    fn plan_loader_refuses_arbitrary_text_naming_the_file(text in any::<String>()) {
        match load(&text) {
            Ok(plan) => prop_assert!(false, "arbitrary text read as a plan: {plan:?}"),
            Err(e) => prop_assert!(e.to_string().contains(&format!("`{PATH}`")), "{e}"),
        }
    }

    /// JSON made of the format's own keys and values never panics the loader; it is refused
    /// with an error that names the file, or it round-trips.
    #[test]
    fn plan_loader_never_panics_on_json_shaped_text(value in plan_shaped_json()) {
        check_loaded(&value.to_string())?;
    }

    /// A damaged plan (fields removed or set to near-miss values) is refused naming the file,
    /// or accepted and then saved and loaded back unchanged, and saved again byte for byte.
    #[test]
    fn plan_loader_accepts_a_damaged_plan_only_if_it_round_trips(text in damaged_plan()) {
        check_loaded(&text)?;
    }

    /// A valid plan, unknown fields included (top level, check list and nodes), reads back as
    /// written.
    #[test]
    fn valid_plan_round_trips_unchanged_with_unknown_fields(plan in valid_plan()) {
        let text = save(&plan);
        let back = load(&text).expect("a valid plan loads");
        prop_assert_eq!(&back, &plan);
        for (key, value) in &plan.extra {
            let raw: Value = serde_json::from_str(&text).expect("json");
            prop_assert_eq!(&raw[key.as_str()], value, "unknown field `{}` is written", key);
        }
    }

    /// A plan cut anywhere is invalid JSON, reported with the file, never half read.
    #[test]
    fn cut_plan_is_refused_as_invalid_json(plan in valid_plan(), cut in any::<prop::sample::Index>()) {
        let text = save(&plan);
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let at = bounds[cut.index(bounds.len())];
        let err = load(&text[..at]).expect_err("a cut plan is refused");
        prop_assert!(matches!(err, StoreError::InvalidJson { .. }), "{err}");
    }

    /// A node field of the wrong type is reported at its path (`nodes[1].status`).
    #[test]
    fn wrong_type_in_a_node_is_reported_at_its_path(
        plan in valid_plan().prop_filter("has a node", |p| !p.nodes.is_empty()),
        pick in any::<prop::sample::Index>(),
        key in prop::sample::select(&["node_id", "title", "batch", "type", "status"][..]),
    ) {
        let mut value = serde_json::to_value(&plan).expect("json");
        let i = pick.index(plan.nodes.len());
        value["nodes"][i][key] = json!([true]);
        let err = load(&value.to_string()).expect_err("a wrong type is refused");
        let want = format!("nodes[{i}].{key}");
        prop_assert!(
            matches!(&err, StoreError::NotAPlan { field, .. } if *field == want),
            "{err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The ref parser
// ---------------------------------------------------------------------------------------------

/// `text` with ASCII case flipped where `flips` says and white space inserted where `spaces`
/// says (both cycle over the characters).
fn noisy(text: &str, flips: &[bool], spaces: &[Option<&str>]) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if let Some(ws) = spaces[i % spaces.len()] {
            out.push_str(ws);
        }
        out.push(if flips[i % flips.len()] {
            c.to_ascii_uppercase()
        } else {
            c
        });
    }
    out
}

fn white_space() -> impl Strategy<Value = Option<&'static str>> {
    option::weighted(
        0.3,
        prop::sample::select(&[" ", "\t", "\n", "\r\n", "\u{3000}", "\u{a0}"][..]),
    )
}

proptest! {
    #![proptest_config(config(128))]

    /// Any text: no panic, and a ref it yields displays as text that parses back to it.
    #[test]
    fn ref_parser_never_panics_and_what_it_reads_displays_back(
        text in prop_oneof![any::<String>(), "[a-zA-Z0-9:\\[\\], \t]{0,20}"],
    ) {
        if let Ok(r) = Ref::parse(&text) {
            prop_assert_eq!(Ref::parse(&r.to_string()), Ok(r));
        }
        let (refs, errors) = parse_list(&text);
        let entries = text.split([',', '，']).filter(|p| !p.trim().is_empty()).count();
        prop_assert_eq!(refs.len() + errors.len(), entries);
    }

    /// A generated ref's `Display` parses back to itself.
    #[test]
    fn generated_ref_display_parses_back_to_itself(r in a_ref()) {
        let shown = r.to_string();
        prop_assert_eq!(Ref::parse(&shown), Ok(r), "{}", shown);
        prop_assert!(!shown.chars().any(char::is_whitespace));
    }

    /// Case and white space inserted anywhere do not change a valid ref.
    #[test]
    fn case_and_white_space_anywhere_do_not_change_a_ref(
        r in a_ref(),
        flips in vec(any::<bool>(), 1..8),
        spaces in vec(white_space(), 1..8),
    ) {
        let text = noisy(&r.to_string(), &flips, &spaces);
        prop_assert_eq!(Ref::parse(&text), Ok(r), "{:?}", text);
    }

    /// ... nor the result on any text, valid or not.
    #[test]
    fn case_and_white_space_do_not_change_the_result_on_any_text(
        text in prop_oneof![any::<String>(), "(new|NEW|[a-z]|[0-9]|:|info|summary|\\[|\\]){0,8}"],
        flips in vec(any::<bool>(), 1..8),
        spaces in vec(white_space(), 1..8),
    ) {
        let plain = Ref::parse(&text).ok();
        prop_assert_eq!(Ref::parse(&noisy(&text, &flips, &spaces)).ok(), plain);
    }

    /// A comma-joined list of valid refs returns them all, in order, and no error.
    #[test]
    fn parse_list_returns_every_ref_of_a_joined_list(
        refs in vec(a_ref(), 0..6),
        sep in prop::sample::select(&[",", "，", " , ", ",,", ", ,"][..]),
    ) {
        let text = refs.iter().map(Ref::to_string).collect::<Vec<_>>().join(sep);
        prop_assert_eq!(parse_list(&text), (refs, Vec::<RefError>::new()), "{}", text);
    }
}

// ---------------------------------------------------------------------------------------------
// The info block parser
// ---------------------------------------------------------------------------------------------

const PARTS: [InfoPart; 3] = [InfoPart::Llm, InfoPart::Search, InfoPart::All];

proptest! {
    #![proptest_config(config(48))]

    /// Broken tags, CDATA and entities: no panic in parse, part or render; what has no block
    /// is plain text read as `all`.
    #[test]
    fn info_parser_never_panics_on_broken_tags_and_cdata(
        text in prop_oneof![info_soup(), any::<String>()],
    ) {
        let info = Info::parse(&text);
        for part in PARTS {
            info.part(part);
        }
        info.render();
        if !text.to_ascii_lowercase().contains("<info") {
            prop_assert_eq!(info.part(InfoPart::All), text.trim());
            prop_assert_eq!(info.get("llm"), None);
        }
    }

    /// Any text set into a block comes back unchanged through render and parse, and the other
    /// block is left as it was.
    #[test]
    fn info_set_render_parse_round_trips_any_text(
        base in info_soup(),
        (kind, other) in prop_oneof![Just(("llm", "search")), Just(("search", "llm"))],
        text in prop_oneof![any::<String>(), info_soup()],
    ) {
        let mut info = Info::parse(&base);
        let before = info.get(other).map(String::from);
        info.set(kind, text.clone());
        let back = Info::parse(&info.render());
        prop_assert_eq!(back.get(kind), Some(text.as_str()));
        prop_assert_eq!(back.get(other).map(String::from), before);
    }

    /// Parse is idempotent on rendered output: rendering what was parsed and parsing it again
    /// gives the same blocks, and the same text when rendered again.
    #[test]
    fn info_parse_is_idempotent_on_rendered_output(text in info_soup()) {
        let info = Info::parse(&text);
        let rendered = info.render();
        let again = Info::parse(&rendered);
        prop_assert_eq!(&again, &info, "{:?}", rendered);
        prop_assert_eq!(again.render(), rendered);
    }
}

// ---------------------------------------------------------------------------------------------
// The planner-answer extraction
// ---------------------------------------------------------------------------------------------

fn fence() -> impl Strategy<Value = (&'static str, &'static str)> {
    (
        prop::sample::select(&["", "json", "JSON", "jsonc"][..]),
        prop::sample::select(&["", "\n"][..]),
    )
}

proptest! {
    #![proptest_config(config(64))]

    /// No panic on any text; what comes out is always an object.
    #[test]
    fn extract_json_never_panics_and_returns_only_objects(
        text in prop_oneof![
            any::<String>(),
            "([{}\\[\\]\":,0-9a ]|<think>|</think>|```|```json\n|null|true){0,24}",
        ],
    ) {
        if let Ok(v) = extract_json(&text) {
            prop_assert!(v.is_object(), "{v}");
        }
    }

    /// An object in prose, after `<think>` blocks that hold decoy objects and fences, fenced
    /// or not, pretty or compact, is found.
    #[test]
    fn extract_json_finds_an_object_in_prose_thoughts_and_fences(
        object in json_object(),
        (before, after) in (prose(), prose()),
        thoughts in vec(("[^<]{0,20}", prop::sample::select(&["", "{\"decoy\": 1}", "```json\n{\"d\": 2}\n```"][..])), 0..3),
        fenced in option::of(fence()),
        pretty in any::<bool>(),
    ) {
        let json = if pretty {
            serde_json::to_string_pretty(&object).expect("json")
        } else {
            object.to_string()
        };
        let mut text = before;
        for (thought, decoy) in thoughts {
            text.push_str(&format!("<think>{thought}{decoy}</THINK>"));
        }
        match fenced {
            Some((lang, newline)) => text.push_str(&format!("```{lang}{newline}{json}\n```")),
            None => text.push_str(&json),
        }
        text.push_str(&after);
        prop_assert_eq!(extract_json(&text), Ok(object), "{:?}", text);
    }

    /// A fenced object wins over an object in the prose before the fence (when the fenced
    /// object holds no fence marker itself: see `json_object`).
    #[test]
    fn extract_json_prefers_the_fenced_object_to_one_in_prose(
        object in json_object(),
        decoy in json_object(),
        (lang, newline) in fence(),
        (before, between) in (prose(), prose()),
    ) {
        let text = format!("{before}{decoy}{between}```{lang}{newline}{object}\n```");
        prop_assert_eq!(extract_json(&text), Ok(object));
    }

    /// An object that appears only inside reasoning is not the answer.
    #[test]
    fn extract_json_ignores_an_object_only_in_reasoning(
        object in json_object(),
        (before, after) in (prose(), prose()),
    ) {
        let text = format!("{before}<think>{object}</think>{after}");
        prop_assert!(extract_json(&text).is_err(), "{:?}", text);
    }
}

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
