//! The plan loader, `plan::store::parse_plan`: never panics; an error names the file; a plan it
//! accepts saves and reloads unchanged, byte for byte on the second save; a generated valid
//! plan, unknown fields included, round-trips through `to_string_pretty` exactly.

use std::path::Path;

use researchflow::plan::store::parse_plan;
use researchflow::plan::{CHECK_LIST_KEYS, NODE_KEYS, PLAN_KEYS, Ref, RefField};
use researchflow::plan::{CheckList, Info, Node, NodeId, NodeStatus, NodeType, PlanFile, Source};
use researchflow::usage::Usage;
use serde_json::{Map, Value};

use crate::inputs::Gen;
use crate::target::{Expect, Input, Target, short};

const PATH: &str = "fuzz.json";

pub struct PlanTarget {
    seeds: Vec<Vec<u8>>,
}

impl PlanTarget {
    pub fn new() -> PlanTarget {
        let mut seeds: Vec<String> = [
            include_str!("../../fixtures/plan_stage1.json"),
            include_str!("../../fixtures/plan_stage2.json"),
            include_str!("../../fixtures/plan_stage3.json"),
        ]
        .map(String::from)
        .to_vec();
        let mut g = Gen::new(1);
        seeds.extend((0..16).map(|_| PlanTarget::valid_plan(&mut g).1));
        PlanTarget {
            seeds: seeds.into_iter().map(String::into_bytes).collect(),
        }
    }

    fn valid_plan(g: &mut Gen) -> (PlanFile, String) {
        let mut plan = PlanFile::new(&g.text(40), g.text(20), g.text(20));
        plan.version = g.rng.u32(..);
        plan.created_at = g.rng.bool().then(|| g.text(20));
        plan.check_list = CheckList {
            latest_id: g.rng.bool().then(|| node_id(g)),
            latest_batch: g.rng.bool().then(|| g.rng.i64(..)),
            refs: (0..g.rng.usize(..4)).map(|_| random_ref(g)).collect(),
            extra: extras(g, CHECK_LIST_KEYS),
        };
        plan.nodes.extend((0..g.rng.usize(..6)).map(|_| node(g)));
        plan.extra = extras(g, PLAN_KEYS);
        let text = if g.rng.bool() {
            serde_json::to_string_pretty(&plan)
        } else {
            serde_json::to_string(&plan)
        };
        // Serialising plain data into a String cannot fail.
        (plan, text.expect("a plan serialises"))
    }
}

fn node_id(g: &mut Gen) -> NodeId {
    // Zero is the only ordinal without an id.
    NodeId::from_ordinal(g.rng.u64(1..)).unwrap_or(NodeId::FIRST)
}

fn random_ref(g: &mut Gen) -> String {
    let field = match g.rng.u8(..3) {
        0 => RefField::Summary,
        1 => RefField::Info(researchflow::plan::InfoPart::Llm),
        _ => RefField::Info(researchflow::plan::InfoPart::All),
    };
    Ref::node(node_id(g), field).to_string()
}

fn node(g: &mut Gen) -> Node {
    let kinds = [
        NodeType::Start,
        NodeType::Search,
        NodeType::Summary,
        NodeType::End,
    ];
    let statuses = [
        NodeStatus::Planned,
        NodeStatus::Running,
        NodeStatus::Completed,
        NodeStatus::Failed,
    ];
    let mut info = Info::default();
    info.set("llm", g.text(30));
    if g.rng.bool() {
        info.set("search", g.text(30));
    }
    let mut n = Node::new(
        node_id(g),
        g.text(30),
        kinds[g.rng.usize(..4)],
        g.rng.i64(..),
        statuses[g.rng.usize(..4)],
    )
    .with_summary(g.text(30))
    .with_info(info.render())
    .with_p_node(random_ref(g));
    n.created_at = g.rng.bool().then(|| g.text(10));
    n.updated_at = g.rng.bool().then(|| g.text(10));
    n.finished_at = g.rng.bool().then(|| g.text(10));
    n.attempts = g.rng.bool().then(|| g.rng.u32(..));
    n.errors = (0..g.rng.usize(..3)).map(|_| g.text(20)).collect();
    n.usage = g.rng.bool().then(|| Usage {
        prompt_tokens: g.rng.u64(..),
        completion_tokens: g.rng.u64(..),
        total_tokens: g.rng.u64(..),
    });
    n.sources = (0..g.rng.usize(..3))
        .map(|_| Source {
            url: g.text(20),
            title: g.text(20),
            snippet: None,
            in_corpus: None,
            passages: Vec::new(),
        })
        .collect();
    n.truncated = g.rng.bool();
    n.extra = extras(g, NODE_KEYS);
    n
}

/// Unknown fields: any JSON under any key the format does not define.
fn extras(g: &mut Gen, known: &[&str]) -> Map<String, Value> {
    let mut map = g.object(2);
    map.retain(|k, _| !known.contains(&k.as_str()));
    map
}

impl Target for PlanTarget {
    fn name(&self) -> &'static str {
        "plan"
    }

    fn tokens(&self) -> &'static [&'static str] {
        &[
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"",
            "\\",
            "\"nodes\"",
            "\"node_id\"",
            "\"check_list\"",
            "\"latest_id\"",
            "\"latest_batch\"",
            "\"refs\"",
            "\"title\"",
            "\"batch\"",
            "\"type\"",
            "\"status\"",
            "\"start\"",
            "\"search\"",
            "\"completed\"",
            "\"planned\"",
            "\"a\"",
            "\"zz\"",
            "\"NEW1\"",
            "\"b:summary\"",
            "-1",
            "0",
            "1",
            "-0",
            "1e999",
            "1.5",
            "18446744073709551616",
            "-9223372036854775809",
            "null",
            "true",
            "\"\\ud800\"",
            "\"\\u0000\"",
            " ",
            "\n",
        ]
    }

    fn nests(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("[", "]"),
            ("{\"a\":", "}"),
            ("{\"nodes\":", "}"),
            ("{\"extra\":[", "]}"),
        ]
    }

    fn seeds(&self) -> &[Vec<u8>] {
        &self.seeds
    }

    fn valid(&self, g: &mut Gen) -> Input {
        let (plan, text) = PlanTarget::valid_plan(g);
        Input::new(text, Expect::Plan(Box::new(plan)))
    }

    fn check(&self, input: &Input) -> Result<(), String> {
        let path = Path::new(PATH);
        let plan = match parse_plan(path, &input.text()) {
            Err(e) if !e.to_string().contains(PATH) => {
                return Err(format!("the error does not name the file: {e}"));
            }
            Err(e) => {
                return match &input.expect {
                    Expect::Plan(_) => Err(format!("a valid plan is refused: {e}")),
                    _ => Ok(()),
                };
            }
            Ok(plan) => plan,
        };
        if let Expect::Plan(want) = &input.expect
            && plan != **want
        {
            return Err("a valid plan does not read back as written".into());
        }
        let saved = serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())?;
        let again = parse_plan(path, &saved)
            .map_err(|e| format!("a saved plan does not load: {e}; {}", short(&saved)))?;
        if again != plan {
            return Err(format!("a saved plan loads differently: {}", short(&saved)));
        }
        let resaved = serde_json::to_string_pretty(&again).map_err(|e| e.to_string())?;
        if resaved != saved {
            return Err("a second save differs from the first".into());
        }
        Ok(())
    }
}
