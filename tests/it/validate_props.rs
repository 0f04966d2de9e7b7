//! Property tests of the validators: random DAGs get a correct `execution_order`, a back edge
//! gives `CIRCULAR_DEPENDENCY` naming the cycle, and whatever plan-next answer the validator
//! accepts satisfies seed 000's JSON Schema (checked with a fresh, independent validator).

use proptest::prelude::*;
use proptest::sample::Index;
use researchflow::validate::plan_next_schema::SCHEMA;
use researchflow::validate::{AtomRegistry, validate_plan_next, validate_steps};
use serde_json::{Value, json};

fn registry() -> AtomRegistry {
    AtomRegistry::from_value(
        &json!([{"id": "op", "inputs": [{"name": "x"}], "outputs": [{"name": "out"}]}]),
        "props",
    )
    .expect("valid registry")
}

/// A random DAG: `deps[k]` are logical steps lower than `k`; `order` places logical steps in the
/// array; `declared[k]` says whether step k lists its deps in `depends_on` (else it only
/// references them, which makes the dependency implicit).
#[derive(Debug, Clone)]
struct Dag {
    deps: Vec<Vec<usize>>,
    order: Vec<usize>,
    declared: Vec<bool>,
}

fn dag() -> impl Strategy<Value = Dag> {
    (1usize..=200).prop_flat_map(|n| {
        (
            proptest::collection::vec(proptest::collection::vec(any::<Index>(), 0..4), n),
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
            proptest::collection::vec(any::<bool>(), n),
        )
            .prop_map(|(picks, order, declared)| {
                let deps = picks
                    .iter()
                    .enumerate()
                    .map(|(k, ps)| {
                        let mut d: Vec<usize> = if k == 0 {
                            Vec::new()
                        } else {
                            ps.iter().map(|p| p.index(k)).collect()
                        };
                        d.sort_unstable();
                        d.dedup();
                        d
                    })
                    .collect();
                Dag {
                    deps,
                    order,
                    declared,
                }
            })
    })
}

fn plan_of(dag: &Dag) -> Value {
    let steps: Vec<Value> = dag
        .order
        .iter()
        .map(|&k| {
            let refs: Vec<String> = dag.deps[k]
                .iter()
                .map(|d| format!("${{s{d}.outputs.out}}"))
                .collect();
            let mut step = json!({"id": "op", "step_id": format!("s{k}"), "target": "t",
                                  "inputs": {"x": {"all": refs}}});
            if dag.declared[k] {
                step["depends_on"] = json!(
                    dag.deps[k]
                        .iter()
                        .map(|d| format!("s{d}"))
                        .collect::<Vec<_>>()
                );
            }
            step
        })
        .collect();
    json!({"target": "t", "plan": {"steps": steps}})
}

/// Whether `to` is reachable from `from` following dependencies.
fn reaches(deps: &[Vec<usize>], from: usize, to: usize) -> bool {
    let mut stack = vec![from];
    let mut seen = vec![false; deps.len()];
    while let Some(c) = stack.pop() {
        if c == to {
            return true;
        }
        if !std::mem::replace(&mut seen[c], true) {
            stack.extend(&deps[c]);
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn execution_order_respects_every_dependency(dag in dag()) {
        let d = validate_steps(&plan_of(&dag), &registry());
        prop_assert!(d.valid, "{}", d.to_text());
        let order = d.execution_order.clone().unwrap_or_default();
        prop_assert_eq!(order.len(), dag.deps.len());
        let mut pos = vec![usize::MAX; dag.deps.len()];
        for (p, id) in order.iter().enumerate() {
            let k: usize = id.trim_start_matches('s').parse().expect("ids are s<k>");
            prop_assert_eq!(pos[k], usize::MAX, "step listed twice");
            pos[k] = p;
        }
        for (k, deps) in dag.deps.iter().enumerate() {
            for &dep in deps {
                prop_assert!(pos[dep] < pos[k], "s{} runs before its dependency s{}", k, dep);
            }
        }
    }

    #[test]
    fn a_back_edge_is_a_named_cycle(mut dag in dag(), a in any::<Index>(), b in any::<Index>()) {
        let n = dag.deps.len();
        prop_assume!(n >= 2);
        let a = 1 + a.index(n - 1); // 1..n
        let b = b.index(a);         // 0..a
        if !reaches(&dag.deps, a, b) {
            dag.deps[a].push(b);
        }
        dag.deps[b].push(a); // the back edge: every cycle now runs through a and b
        let d = validate_steps(&plan_of(&dag), &registry());
        prop_assert!(!d.valid);
        prop_assert!(d.execution_order.is_none());
        let cycles: Vec<&str> = d.errors.iter()
            .filter(|e| e.code == "CIRCULAR_DEPENDENCY")
            .map(|e| e.message.as_str())
            .collect();
        prop_assert!(!cycles.is_empty(), "{}", d.to_text());
        let (na, nb) = (format!("`s{a}`"), format!("`s{b}`"));
        prop_assert!(cycles.iter().any(|m| m.contains(&na) && m.contains(&nb)), "{:?}", cycles);
    }
}

fn templates() -> Vec<Value> {
    vec![
        json!({"type": "plan-next", "plan_type": "PLAN_PROBES",
               "new_block": {"goal": {"intent": "i", "deliverable": "d", "metric": "m", "constraint": "c"},
                             "plan": ["网关超时", "Token expired", "参数格式错误"], "done": []},
               "success_signal": "s"}),
        json!({"type": "plan-next", "plan_type": "PLAN_STEPS",
               "new_block": {"goal": "g", "plan": ["写 HTML", "写 CSS", "写 JS", "测试"], "done": []},
               "success_signal": "s", "update_plan": ["a"]}),
        json!({"type": "plan-next", "plan_type": "EXECUTE",
               "new_block": {"goal": "g", "plan": [], "done": []},
               "executor_call": {"command": "shell: ls", "inputs": {}, "expected_observations": ["0"]}}),
    ]
}

const POINTERS: &[&str] = &[
    "/type",
    "/plan_type",
    "/new_block",
    "/new_block/goal",
    "/new_block/goal/intent",
    "/new_block/plan",
    "/new_block/plan/0",
    "/new_block/done",
    "/new_block/extra",
    "/success_signal",
    "/executor_call",
    "/executor_call/command",
    "/executor_call/inputs",
    "/executor_call/expected_observations",
    "/update_plan",
    "/extra",
    "/id",
];

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "(plan-next|PLAN_STEPS|EXECUTE|shell: ls|先|可能|then|x| ){0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
            proptest::collection::btree_map(
                "(goal|plan|done|intent|deliverable|metric|constraint|id|x)",
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Removes (None) or sets the value at a pointer whose parent exists.
fn mutate(doc: &mut Value, pointer: &str, value: Option<Value>) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    match (doc.pointer_mut(parent), value) {
        (Some(Value::Object(m)), None) => {
            m.remove(last);
        }
        (Some(Value::Object(m)), Some(v)) => {
            m.insert(last.to_string(), v);
        }
        (Some(Value::Array(items)), Some(v)) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *slot = v;
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn accepted_plan_next_answers_satisfy_the_schema(
        which in 0usize..3,
        edits in proptest::collection::vec((0..POINTERS.len(), proptest::option::of(any_value())), 0..3),
    ) {
        let mut doc = templates()[which].clone();
        for (p, v) in edits {
            mutate(&mut doc, POINTERS[p], v);
        }
        let d = validate_plan_next(&doc, None, None);
        if d.valid {
            let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
            let fresh = jsonschema::draft7::new(&schema).expect("schema compiles");
            prop_assert!(fresh.is_valid(&doc), "accepted but not schema-valid: {}", doc);
        }
    }
}

#[test]
fn the_templates_are_accepted() {
    for doc in templates() {
        let d = validate_plan_next(&doc, None, None);
        assert!(d.valid, "{doc}: {}", d.to_text());
    }
}
