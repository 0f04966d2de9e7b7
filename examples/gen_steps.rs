//! Writes a large step plan and its atom registry for `scripts/bench-validate.sh`:
//! `cargo run --release --example gen_steps -- N OUT_DIR` writes `OUT_DIR/steps.json` (N steps)
//! and `OUT_DIR/atoms.json`. Deterministic: the same N gives the same files.
//!
//! Each step reads one or two recent steps; every other step declares them in `depends_on`, the
//! rest rely on the implicit dependencies of their references; one step in a hundred also reads
//! step 0, which exercises the R3 reachability search through the whole chain.

use std::path::PathBuf;

use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().as_deref().unwrap_or("10000").parse()?;
    let out = PathBuf::from(args.next().unwrap_or_else(|| ".".into()));
    std::fs::create_dir_all(&out)?;

    // A small LCG keeps the output reproducible without a dependency.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |m: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        ((state >> 33) as usize) % m.max(1)
    };

    let mut steps = Vec::with_capacity(n);
    for i in 0..n {
        let mut deps: Vec<usize> = Vec::new();
        if i > 0 {
            deps.push(i - 1);
            if i > 1 && next(2) == 0 {
                deps.push(i - 2 - next((i - 1).min(20)));
            }
        }
        let mut text = String::from("combine");
        for d in &deps {
            text.push_str(&format!(" ${{s{d}.outputs.result}}"));
        }
        if i > 0 && i % 100 == 0 {
            text.push_str(" ${s0.outputs.result}");
        }
        let mut step = json!({
            "id": if i % 3 == 0 { "fetch" } else { "transform" },
            "step_id": format!("s{i}"),
            "target": format!("step {i}"),
            "inputs": {"source": text, "options": {"retries": 2, "tags": ["bench", format!("t{}", i % 7)]}},
        });
        if i % 2 == 0 {
            let mut declared: Vec<Value> = deps.iter().map(|d| json!(format!("s{d}"))).collect();
            if i > 0 && i % 100 == 0 {
                declared.push(json!("s0"));
            }
            step["depends_on"] = Value::Array(declared);
        }
        steps.push(step);
    }
    let plan = json!({"target": format!("benchmark plan of {n} steps"), "plan": {"steps": steps}});
    let atoms = json!([
        {"id": "fetch", "inputs": [{"name": "source", "required": true}, {"name": "options"}], "outputs": [{"name": "result"}]},
        {"id": "transform", "inputs": {"source": {"required": true}, "options": {}}, "outputs": {"result": {}}}
    ]);
    std::fs::write(out.join("steps.json"), serde_json::to_vec(&plan)?)?;
    std::fs::write(out.join("atoms.json"), serde_json::to_vec_pretty(&atoms)?)?;
    eprintln!("wrote {n} steps to {}", out.join("steps.json").display());
    Ok(())
}
