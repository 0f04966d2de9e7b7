//! `validate plan-next`: one test per rule of seeds 000/001, each on a minimal answer that
//! breaks only that rule, asserting the code and the path.

use researchflow::diagnostics::Diagnostics;
use researchflow::validate::{
    Executors, PlanNextContext, validate_plan_next, validate_plan_next_text,
};
use serde_json::{Value, json};

use crate::support::doc::{assert_error, assert_warning, with, without};

fn probes() -> Value {
    json!({
        "type": "plan-next",
        "plan_type": "PLAN_PROBES",
        "new_block": {
            "goal": {"intent": "定位登录报错原因", "deliverable": "根因分析报告",
                     "metric": "能复现并解释错误", "constraint": "不修改生产数据"},
            "plan": ["假设：鉴权服务返回 401", "假设：API 网关超时", "假设：前端请求参数格式错误"],
            "done": []
        },
        "success_signal": "能复现并确认至少一个假设"
    })
}

fn steps() -> Value {
    json!({
        "type": "plan-next",
        "plan_type": "PLAN_STEPS",
        "new_block": {
            "goal": "实现登录页面前端",
            "plan": ["创建 login.html 骨架结构", "编写 login.css 样式", "实现 login.js 表单验证逻辑", "集成测试"],
            "done": []
        },
        "success_signal": "表单提交触发校验"
    })
}

fn execute() -> Value {
    json!({
        "type": "plan-next",
        "plan_type": "EXECUTE",
        "new_block": {"goal": "创建 login.html 骨架", "plan": [], "done": []},
        "executor_call": {"command": "shell: touch login.html", "inputs": {},
                          "expected_observations": ["退出码 0"]}
    })
}

fn executors() -> Executors {
    Executors::from_value(
        &json!({"executors": [{"id": "pytest"}, {"id": "git"}]}),
        "test",
    )
    .expect("valid executors")
}

fn check(doc: &Value) -> Diagnostics {
    validate_plan_next(doc, Some(&executors()), None)
}

/// The finding is the only error (schema errors at other paths excluded only when told).
#[track_caller]
fn assert_only(d: &Diagnostics, code: &str, path: &str) {
    assert_error(d, code, path);
    let others: Vec<_> = d.errors.iter().filter(|f| f.code != code).collect();
    assert!(others.is_empty(), "unexpected errors:\n{}", d.to_text());
}

#[test]
fn the_seed_examples_are_valid() {
    for doc in [probes(), steps(), execute()] {
        let d = check(&doc);
        assert!(d.valid, "{}", d.to_text());
        assert!(d.warnings.is_empty(), "{}", d.to_text());
    }
}

#[test]
fn invalid_json_and_surrounding_text() {
    let d = validate_plan_next_text("Here it is: {\"type\": \"plan-next\"}", None, None);
    assert_only(&d, "INVALID_JSON", "");
    let fenced = format!("```json\n{}\n```", execute());
    let d = validate_plan_next_text(&fenced, None, None);
    assert_only(&d, "INVALID_JSON", "");
    assert!(d.errors[0].message.contains("code fence"));
    let d = validate_plan_next_text(&execute().to_string(), Some(&executors()), None);
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn type_must_be_plan_next() {
    assert_only(
        &check(&with(execute(), "/type", json!("plan-return"))),
        "WRONG_TYPE",
        "type",
    );
    assert_only(
        &check(&without(execute(), "", "type")),
        "WRONG_TYPE",
        "type",
    );
}

#[test]
fn plan_type_must_be_known() {
    let d = check(&with(execute(), "/plan_type", json!("EXEC")));
    assert_only(&d, "INVALID_PLAN_TYPE", "plan_type");
}

#[test]
fn structural_fields_are_forbidden_at_any_depth() {
    let d = check(&with(
        execute(),
        "/executor_call/inputs/path",
        json!("a.txt"),
    ));
    assert_only(&d, "FORBIDDEN_FIELD", "executor_call.inputs.path");
    let d = check(&with(execute(), "/id", json!("b")));
    assert_error(&d, "FORBIDDEN_FIELD", "id");
    let d = check(&with(probes(), "/new_block/goal/children", json!([])));
    assert_only(&d, "FORBIDDEN_FIELD", "new_block.goal.children");
    let d = check(&with(execute(), "/new_block/new_id", json!("c")));
    assert_error(&d, "FORBIDDEN_FIELD", "new_block.new_id");
    assert!(
        !d.has_error("NEW_BLOCK_EXTRA_FIELD"),
        "reported once, as forbidden"
    );
}

#[test]
fn new_block_must_exist() {
    assert_only(
        &check(&without(execute(), "", "new_block")),
        "INVALID_NEW_BLOCK",
        "new_block",
    );
    let d = check(&with(execute(), "/new_block", json!("goal")));
    assert_only(&d, "INVALID_NEW_BLOCK", "new_block");
}

#[test]
fn new_block_holds_only_goal_plan_done() {
    let d = check(&with(execute(), "/new_block/notes", json!("x")));
    assert_only(&d, "NEW_BLOCK_EXTRA_FIELD", "new_block.notes");
}

#[test]
fn goal_is_a_string_or_a_complete_core4() {
    assert_only(
        &check(&with(execute(), "/new_block/goal", json!(" "))),
        "INVALID_GOAL",
        "new_block.goal",
    );
    assert_only(
        &check(&with(execute(), "/new_block/goal", json!(5))),
        "INVALID_GOAL",
        "new_block.goal",
    );
    let d = check(&without(probes(), "/new_block/goal", "metric"));
    assert_only(&d, "INVALID_GOAL", "new_block.goal.metric");
    let d = check(&with(probes(), "/new_block/goal/intent", json!("")));
    assert_only(&d, "INVALID_GOAL", "new_block.goal.intent");
    assert_only(
        &check(&without(execute(), "/new_block", "goal")),
        "INVALID_GOAL",
        "new_block.goal",
    );
}

#[test]
fn plan_is_a_list_of_strings() {
    let d = check(&with(steps(), "/new_block/plan/2", json!(3)));
    assert_only(&d, "INVALID_PLAN", "new_block.plan[2]");
    let d = check(&with(steps(), "/new_block/plan/1", json!("  ")));
    assert_only(&d, "INVALID_PLAN", "new_block.plan[1]");
    assert_only(
        &check(&without(execute(), "/new_block", "plan")),
        "INVALID_PLAN",
        "new_block.plan",
    );
}

#[test]
fn done_is_empty() {
    let d = check(&with(execute(), "/new_block/done", json!(["did it"])));
    assert_only(&d, "DONE_NOT_EMPTY", "new_block.done");
    assert_only(
        &check(&without(execute(), "/new_block", "done")),
        "DONE_NOT_EMPTY",
        "new_block.done",
    );
}

#[test]
fn execute_has_an_empty_plan() {
    let d = check(&with(execute(), "/new_block/plan", json!(["do it"])));
    assert_only(&d, "EXECUTE_PLAN_NOT_EMPTY", "new_block.plan");
}

#[test]
fn execute_needs_an_executor_call() {
    let d = check(&without(execute(), "", "executor_call"));
    assert_only(&d, "MISSING_EXECUTOR_CALL", "executor_call");
}

#[test]
fn executor_call_has_command_inputs_and_observations() {
    for (field, path) in [
        ("command", "executor_call.command"),
        ("inputs", "executor_call.inputs"),
        (
            "expected_observations",
            "executor_call.expected_observations",
        ),
    ] {
        let d = check(&without(execute(), "/executor_call", field));
        assert_only(&d, "INVALID_EXECUTOR_CALL", path);
    }
    let d = check(&with(
        execute(),
        "/executor_call/command",
        json!("shell:  "),
    ));
    assert_only(&d, "INVALID_EXECUTOR_CALL", "executor_call.command");
    let d = check(&with(
        execute(),
        "/executor_call/expected_observations/0",
        json!(0),
    ));
    assert_only(
        &d,
        "INVALID_EXECUTOR_CALL",
        "executor_call.expected_observations[0]",
    );
}

#[test]
fn plans_need_three_to_seven_items() {
    let two = json!(["创建 login.html", "编写样式"]);
    assert_only(
        &check(&with(steps(), "/new_block/plan", two)),
        "PLAN_ITEM_COUNT",
        "new_block.plan",
    );
    let eight: Vec<String> = (1..=8).map(|i| format!("假设 {i}")).collect();
    let d = check(&with(probes(), "/new_block/plan", json!(eight)));
    assert_only(&d, "PLAN_ITEM_COUNT", "new_block.plan");
}

#[test]
fn plans_should_have_a_success_signal() {
    let d = check(&without(steps(), "", "success_signal"));
    assert!(d.valid, "a warning only: {}", d.to_text());
    assert_warning(&d, "MISSING_SUCCESS_SIGNAL", "success_signal");
}

#[test]
fn probes_have_no_ordering_words() {
    let d = check(&with(
        probes(),
        "/new_block/plan/1",
        json!("然后检查网关超时"),
    ));
    assert_only(&d, "ORDERING_WORD_IN_PROBE", "new_block.plan[1]");
    let d = check(&with(
        probes(),
        "/new_block/plan/0",
        json!("Then the token expired"),
    ));
    assert_only(&d, "ORDERING_WORD_IN_PROBE", "new_block.plan[0]");
}

#[test]
fn steps_have_no_guessing_words() {
    let d = check(&with(
        steps(),
        "/new_block/plan/3",
        json!("也许需要集成测试"),
    ));
    assert_only(&d, "GUESSING_WORD_IN_STEP", "new_block.plan[3]");
    let d = check(&with(
        steps(),
        "/new_block/plan/0",
        json!("Maybe write the HTML"),
    ));
    assert_only(&d, "GUESSING_WORD_IN_STEP", "new_block.plan[0]");
}

#[test]
fn executor_call_is_unexpected_outside_execute() {
    let d = check(&with(
        steps(),
        "/executor_call",
        json!({"command": "shell: ls", "inputs": {}, "expected_observations": []}),
    ));
    assert!(d.valid, "{}", d.to_text());
    assert_warning(&d, "UNEXPECTED_EXECUTOR_CALL", "executor_call");
}

#[test]
fn commands_name_declared_executors_or_shell() {
    let d = check(&with(
        execute(),
        "/executor_call/command",
        json!("curl https://example.org"),
    ));
    assert_only(&d, "UNKNOWN_EXECUTOR", "executor_call.command");
    for ok in ["pytest -q", "git: status", "git", "SHELL: ls"] {
        let d = check(&with(execute(), "/executor_call/command", json!(ok)));
        assert!(d.valid, "{ok}: {}", d.to_text());
    }
    // Without any executors file only the generic form is valid (seed 001: no invented
    // tools): a named tool is an error, `shell: ...` is fine.
    let doc = with(execute(), "/executor_call/command", json!("curl x"));
    let d = validate_plan_next(&doc, None, None);
    assert_only(&d, "UNKNOWN_EXECUTOR", "executor_call.command");
    assert!(
        d.errors[0].message.contains("shell: <command>"),
        "{}",
        d.to_text()
    );
    let d = validate_plan_next(&execute(), None, None);
    assert!(d.valid && d.warnings.is_empty(), "{}", d.to_text());
}

#[test]
fn a_usage_placeholder_copied_as_the_argument_is_refused() {
    for copied in [
        "git: <query>",
        "shell: <command>",
        "pytest:  <the test name> ",
    ] {
        let doc = with(execute(), "/executor_call/command", json!(copied));
        let d = validate_plan_next(&doc, Some(&executors()), None);
        assert_only(&d, "PLACEHOLDER_COMMAND", "executor_call.command");
    }
    for ok in ["git: log <ref> --oneline", "shell: sort <in.txt >out.txt"] {
        let d = check(&with(execute(), "/executor_call/command", json!(ok)));
        assert!(d.valid, "{ok}: {}", d.to_text());
    }
}

#[test]
fn a_completed_attempt_whose_result_mentions_an_error_is_no_failed_attempt() {
    let ctx = PlanNextContext::from_value(
        &json!({"think": {"goal": "g", "plan": [], "done": [
            {"goal": "创建 login.html 骨架", "status": "completed", "command": "shell: touch login.html",
             "result": "no errors found"}
        ]}, "path": [], "max_depth": 3}),
        "ctx",
    )
    .expect("context");
    let d = validate_plan_next(&execute(), Some(&executors()), Some(&ctx));
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn update_plan_is_a_list_of_strings() {
    let d = check(&with(execute(), "/update_plan", json!(["a", 2])));
    assert_only(&d, "INVALID_UPDATE_PLAN", "update_plan[1]");
    let d = check(&with(execute(), "/update_plan", json!("a")));
    assert_only(&d, "INVALID_UPDATE_PLAN", "update_plan");
    let d = check(&with(execute(), "/update_plan", json!(["a", "b"])));
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn unknown_top_level_fields_are_schema_errors() {
    let d = check(&with(execute(), "/notes", json!("x")));
    assert_only(&d, "SCHEMA", "notes");
    let d = check(&with(steps(), "/success_signal", json!(1)));
    assert_only(&d, "SCHEMA", "success_signal");
}

fn context(value: Value) -> PlanNextContext {
    PlanNextContext::from_value(&value, "test context").expect("valid context")
}

#[test]
fn depth_at_the_limit_requires_execute() {
    let ctx = context(json!({"think": {}, "path": [{}, {}, {}], "max_depth": 3}));
    let d = validate_plan_next(&steps(), Some(&executors()), Some(&ctx));
    assert_only(&d, "DEPTH_REQUIRES_EXECUTE", "plan_type");
    let d = validate_plan_next(&execute(), Some(&executors()), Some(&ctx));
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn depth_one_below_the_limit_warns() {
    let ctx = context(json!({"think": {}, "path": [{}, {}], "max_depth": 3}));
    let d = validate_plan_next(&probes(), Some(&executors()), Some(&ctx));
    assert!(d.valid, "{}", d.to_text());
    assert_warning(&d, "DEPTH_NEAR_LIMIT", "plan_type");
    let ctx = context(json!({"path": [{}], "max_depth": 3}));
    let d = validate_plan_next(&probes(), Some(&executors()), Some(&ctx));
    assert!(d.warnings.is_empty(), "{}", d.to_text());
}

#[test]
fn a_failed_plan_is_not_repeated() {
    let plan = steps()["new_block"]["plan"].clone();
    let ctx =
        context(json!({"think": {"done": [{"goal": "x", "status": "failed", "plan": plan}]}}));
    let d = validate_plan_next(&steps(), Some(&executors()), Some(&ctx));
    assert_only(&d, "REPEATS_FAILED_ATTEMPT", "new_block.plan");
    // The same plan after a success is fine.
    let ctx =
        context(json!({"think": {"done": [{"goal": "x", "status": "completed", "plan": plan}]}}));
    assert!(validate_plan_next(&steps(), Some(&executors()), Some(&ctx)).valid);
}

#[test]
fn a_failed_command_is_not_repeated() {
    let ctx = context(json!({"think": {"done": ["执行 shell: touch login.html 失败：权限不足"]}}));
    let d = validate_plan_next(&execute(), Some(&executors()), Some(&ctx));
    assert_only(&d, "REPEATS_FAILED_ATTEMPT", "executor_call.command");
    let ctx = context(json!({"think": {"done": [
        {"executor_call": {"command": "shell: touch login.html"}, "result": "error: EACCES"}]}}));
    let d = validate_plan_next(&execute(), Some(&executors()), Some(&ctx));
    assert_only(&d, "REPEATS_FAILED_ATTEMPT", "executor_call.command");
}

#[test]
fn a_failed_goal_is_not_executed_again() {
    let ctx =
        context(json!({"think": {"done": [{"goal": "创建 login.html 骨架", "success": false}]}}));
    let doc = with(
        execute(),
        "/executor_call/command",
        json!("shell: mkdir -p web && touch web/login.html"),
    );
    let d = validate_plan_next(&doc, Some(&executors()), Some(&ctx));
    assert_only(&d, "REPEATS_FAILED_ATTEMPT", "new_block.goal");
}
