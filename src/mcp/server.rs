//! The MCP server's handler: [`ResearchServer`] as `rmcp` calls it, one value shared by every
//! connection (the stdio one, or each HTTP session). It gives the server's description, lists the
//! tools ([`super::tools`]) and the resources ([`super::resources`]), and sends each tool call to
//! its function in [`super::calls`]; a call's failure (a path outside the roots, a setting that
//! cannot be used, an unknown argument) is a tool result with `isError`, its message saying what to
//! change. Every answer goes out with the server's secrets masked ([`super::mask`]). A `tools/call`
//! whose params do not fit (`arguments` given as a string) is invalid params that say which part is
//! wrong, not "method not found". Nothing here writes to stdout: the transport owns it.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::plan_check::kind;
use super::setup::ResearchServer;
use super::{calls, resources, tools};

/// What a client is told the server is for.
const INSTRUCTIONS: &str = "researchflow researches a question: `research` plans rounds of searches and summaries and returns a report with numbered sources (long: it sends progress, and cancelling it saves what was done, so `resume` can continue). `thinkon` works on a goal with a tree of planned blocks (also long, with progress; cancelling saves the tree, and calling it again with its `dir` continues it). `list_runs` and `get_report` read earlier workflow runs; every run's plan and report are also resources. Paths must be under the server's roots.";

impl ServerHandler for ResearchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "researchflow",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let name = request.name.as_ref();
        let result = match name {
            "research" => match parse(name, args) {
                Ok(input) => calls::research(self, input, context).await,
                Err(e) => Err(e),
            },
            "resume" => match parse(name, args) {
                Ok(input) => calls::resume(self, input, context).await,
                Err(e) => Err(e),
            },
            "thinkon" => match parse(name, args) {
                Ok(input) => super::thinkon::thinkon(self, input, context).await,
                Err(e) => Err(e),
            },
            "get_report" => match parse(name, args) {
                Ok(input) => calls::get_report(self, input).await,
                Err(e) => Err(e),
            },
            "list_runs" => match parse(name, args) {
                Ok(input) => calls::list_runs(self, input).await,
                Err(e) => Err(e),
            },
            "validate_plan" => {
                parse(name, args).and_then(|input| calls::validate_plan(self, input))
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool `{other}`: `tools/list` names the tools"),
                    None,
                ));
            }
        };
        let mask = &self.setup.mask;
        let result = result.unwrap_or_else(|message| {
            let message = mask.text(&message);
            tracing::warn!("tool `{name}`: {message}");
            CallToolResult::error(vec![ContentBlock::text(message)])
        });
        Ok(mask.tool_result(result).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.active.settled_all().await;
        // Runs come and go: a client must not keep this list.
        let listed = ListResourcesResult::with_all_items(resources::list(self)).with_ttl_ms(0);
        self.setup
            .mask
            .message(&listed)
            .ok_or_else(|| ErrorData::internal_error("cannot list the resources", None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.active.settled_all().await;
        let mask = &self.setup.mask;
        let read = resources::read(self, &request.uri)
            .map_err(|message| ErrorData::resource_not_found(mask.text(&message), None))?;
        mask.message(&read)
            .map(Into::into)
            .ok_or_else(|| ErrorData::internal_error("cannot send this resource", None))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // A request of a known method lands here when its params do not fit its type.
        if request.method == "tools/call" {
            return Err(ErrorData::invalid_params(
                unfit_tool_call(request.params.as_ref()),
                None,
            ));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("no method `{}`", request.method),
            None,
        ))
    }
}

/// What is wrong with the params of a `tools/call` that do not fit: the part, and its kind
/// (never its value).
fn unfit_tool_call(params: Option<&Value>) -> String {
    let Some(params) = params.and_then(Value::as_object) else {
        return "`tools/call` needs params: an object with `name` and `arguments`".into();
    };
    match (params.get("name"), params.get("arguments")) {
        (Some(Value::String(_)), Some(arguments)) if !arguments.is_object() => format!(
            "`arguments` is {}: it must be an object of the tool's arguments by name (e.g. {{\"plan_file\": \"runs/x.json\"}}), not JSON text in a string; `tools/list` gives each tool's input schema",
            kind(arguments)
        ),
        (Some(Value::String(_)), _) => {
            "the params of `tools/call` do not fit: give `name` (a string) and `arguments` (an object)".into()
        }
        _ => "`tools/call` needs `name`, the tool's name as a string: `tools/list` names them"
            .into(),
    }
}

/// A tool's arguments as its input type, checked against its input schema first (the schema
/// `tools/list` shows is the one the server holds calls to: a bound declared there, such as
/// `max_time`'s 30 days, is checked nowhere else). The message names what is wrong: an
/// argument the schema does not name, with the ones it does; a value out of its bounds.
fn parse<T: DeserializeOwned + JsonSchema>(tool: &str, args: Value) -> Result<T, String> {
    let unfit =
        |what: String| format!("`{tool}`: the arguments do not fit its input schema: {what}");
    let schema = schemars::schema_for!(T);
    let known = schema.get("properties").and_then(Value::as_object);
    if let (Some(known), Value::Object(given)) = (known, &args)
        && let Some(unknown) = given.keys().find(|k| !known.contains_key(*k))
    {
        let expected: Vec<String> = known.keys().map(|k| format!("`{k}`")).collect();
        return Err(unfit(format!(
            "unknown field `{unknown}`, expected one of {}",
            expected.join(", ")
        )));
    }
    let validator = jsonschema::validator_for(schema.as_value())
        .map_err(|e| unfit(format!("the schema does not compile: {e}")))?;
    if let Some(e) = validator.iter_errors(&args).next() {
        let at = e.instance_path().to_string();
        let field = at.trim_start_matches('/').replace('/', ".");
        return Err(unfit(match field.is_empty() {
            true => e.to_string(),
            false => format!("`{field}`: {e}"),
        }));
    }
    serde_json::from_value(args).map_err(|e| unfit(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::{ResearchInput, ResumeInput};
    use serde_json::json;

    #[test]
    fn shared_run_bounds_are_read_and_an_unknown_argument_is_named() {
        let input: ResearchInput = parse(
            "research",
            json!({"query": "Q?", "max_rounds": 2, "offline": true}),
        )
        .expect("fits");
        assert_eq!(input.run.bounds.max_rounds.map(|n| n.count()), Some(2));
        assert_eq!(input.run.offline, Some(true));
        let refused = parse::<ResumeInput>("resume", json!({"plan_file": "p.json", "plan": "x"}))
            .expect_err("refused");
        assert!(refused.contains("unknown field `plan`"), "{refused}");
        assert!(
            refused.contains("`max_time`"),
            "the shared ones are known: {refused}"
        );
        let schema = schemars::schema_for!(ResumeInput);
        assert_eq!(schema.get("additionalProperties"), Some(&json!(false)));
        assert!(
            schema
                .get("properties")
                .is_some_and(|p| p.get("corpus").is_some())
        );
    }

    #[test]
    fn a_bound_of_the_input_schema_is_checked_and_named() {
        let refused = |args: Value| parse::<ResearchInput>("research", args).expect_err("refused");
        let zero = refused(json!({"query": "Q?", "max_rounds": 0}));
        assert!(
            zero.contains("`max_rounds`: 0 is less than the minimum of 1"),
            "{zero}"
        );
        let long = refused(json!({"query": "Q?", "max_time": 2_592_001}));
        assert!(
            long.contains("`max_time`") && long.contains("2592000"),
            "{long}"
        );
        let text = refused(json!({"query": "Q?", "offline": "yes"}));
        assert!(text.contains("`offline`"), "{text}");
        assert!(
            parse::<ResearchInput>("research", json!({"query": "Q?", "max_time": 2_592_000}))
                .is_ok()
        );
    }

    /// The bounds are the run flags' own (`cli::RunBounds`): each flag's range is refused by the
    /// schema with its message, for every tool that takes it.
    #[test]
    fn every_run_flag_bound_is_an_argument_with_the_flags_range() {
        let grace = parse::<ResumeInput>("resume", json!({"plan_file": "p", "grace": -1}))
            .expect_err("refused");
        assert!(
            grace.contains("`grace`: -1 is less than the minimum of 0"),
            "{grace}"
        );
        let last = parse::<ResumeInput>("resume", json!({"plan_file": "p", "final_time": 0}))
            .expect_err("refused");
        assert!(
            last.contains("`final_time`: 0 is less than the minimum of 1"),
            "{last}"
        );
        let ok: ResumeInput = parse(
            "resume",
            json!({"plan_file": "p", "grace": 0, "final_time": 60, "max_tokens": 9}),
        )
        .expect("fits");
        assert_eq!(ok.run.bounds.budget.grace(), std::time::Duration::ZERO);
        assert_eq!(ok.run.bounds.budget.max_tokens(), Some(9));

        let thinkon = |args: Value| parse::<tools::ThinkonInput>("thinkon", args);
        let long = thinkon(json!({"goal": "G", "max_time": 2_592_001})).expect_err("refused");
        assert!(
            long.contains("`max_time`: 2592001 is greater than the maximum of 2592000"),
            "{long}"
        );
        let unknown = thinkon(json!({"goal": "G", "grace": 5})).expect_err("refused");
        assert!(unknown.contains("unknown field `grace`"), "{unknown}");
        let input = thinkon(json!({"goal": "G", "max_tokens": 40, "max_blocks": 3})).expect("fits");
        assert_eq!(input.limits.max_tokens.map(|n| n.get()), Some(40));
        assert_eq!(input.max_blocks.map(|n| n.count()), Some(3));
    }
}
