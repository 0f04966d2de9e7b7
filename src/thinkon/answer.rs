//! A plan-next answer that passed `validate plan-next`, read into the fields the runtime uses.
//! Reading never re-checks: the validator ([`crate::validate::validate_plan_next`]) decides
//! what is acceptable, this module only takes the parts out.

use serde_json::{Value, json};

use super::block::PlanType;

/// The parts of a valid plan-next answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanNext {
    pub plan_type: PlanType,
    pub goal: Value,
    pub plan: Vec<String>,
    pub executor_call: Option<Value>,
    pub success_signal: Option<String>,
    pub update_plan: Option<Vec<String>>,
}

impl PlanNext {
    /// The parts of `answer`; `None` when it lacks what a valid answer has (the validator
    /// should have said so first).
    pub fn read(answer: &Value) -> Option<PlanNext> {
        let plan_type = PlanType::parse(answer.get("plan_type")?.as_str()?)?;
        let block = answer.get("new_block")?;
        let strings = |v: &Value| -> Option<Vec<String>> {
            v.as_array()?
                .iter()
                .map(|s| s.as_str().map(|s| s.trim().to_string()))
                .collect()
        };
        Some(PlanNext {
            plan_type,
            goal: block.get("goal")?.clone(),
            plan: strings(block.get("plan")?)?,
            executor_call: answer.get("executor_call").cloned(),
            success_signal: answer
                .get("success_signal")
                .and_then(Value::as_str)
                .map(str::to_string),
            update_plan: match answer.get("update_plan") {
                Some(v) => Some(strings(v)?),
                None => None,
            },
        })
    }

    /// What the runtime does without asking at the depth limit: execute the item with the
    /// search sub-agent.
    pub fn forced(item: &str) -> PlanNext {
        PlanNext {
            plan_type: PlanType::Execute,
            goal: json!(item),
            plan: Vec::new(),
            executor_call: Some(json!({
                "command": format!("search: {item}"),
                "inputs": {},
                "expected_observations": ["search results and an analysis of them"],
            })),
            success_signal: None,
            update_plan: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_part() {
        let answer = json!({
            "type": "plan-next", "plan_type": "EXECUTE",
            "new_block": {"goal": {"intent": "i"}, "plan": [], "done": []},
            "executor_call": {"command": "search: x", "inputs": {}, "expected_observations": []},
            "update_plan": [" b ", "c"]
        });
        let read = PlanNext::read(&answer).expect("valid");
        assert_eq!(read.plan_type, PlanType::Execute);
        assert_eq!(
            read.update_plan,
            Some(vec!["b".to_string(), "c".to_string()])
        );
        assert_eq!(read.executor_call.expect("call")["command"], "search: x");
        assert!(PlanNext::read(&json!({"plan_type": "EXECUTE"})).is_none());
    }
}
