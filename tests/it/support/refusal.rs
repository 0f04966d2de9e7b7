//! Requests a real server refuses outright, whatever the model would have answered: a
//! `response_format` it does not support, a parameter the model does not take, or an argument
//! the server does not know at all (`stream_options` on older servers). A [`Refusal`]
//! says which requests to refuse and with which status; the body is the one real servers send
//! for that status, naming the refused field as they do:
//!
//! - 500: llama-cpp-python 0.3.x, a pydantic validation error wrapped in an
//!   `internal_server_error` (observed against Gemma 3 270M);
//! - 422: vLLM, `{"object":"error","message":..,"type":"BadRequestError","code":422}`;
//! - 400 and any other status: OpenAI, an `invalid_request_error` with `param` set.
//!
//! Only matching and bodies live here; `mock_llm.rs` checks the rules before its reply queue.

use serde_json::{Value, json};

use super::fault::Fault;

/// Which `response_format` a [`Refusal::format`] rule refuses.
// The shared `Json` prefix is the point: the names read like the `type` values they match.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatKind {
    /// `{"type": "json_schema", ...}` (OpenAI structured outputs).
    JsonSchema,
    /// `{"type": "json_object", "schema": {...}}` (llama-cpp-python's grammar-backed form).
    JsonObjectWithSchema,
    /// `{"type": "json_object"}` without a `schema` (plain JSON mode).
    JsonObject,
}

impl FormatKind {
    /// The kind of a request's `response_format`, `None` if it has none or another type.
    pub fn of(body: &Value) -> Option<FormatKind> {
        let format = body.get("response_format")?;
        match format.get("type")?.as_str()? {
            "json_schema" => Some(FormatKind::JsonSchema),
            "json_object" if format.get("schema").is_some() => {
                Some(FormatKind::JsonObjectWithSchema)
            }
            "json_object" => Some(FormatKind::JsonObject),
            _ => None,
        }
    }

    /// The `response_format.type` value this kind stands for.
    pub fn type_name(self) -> &'static str {
        match self {
            FormatKind::JsonSchema => "json_schema",
            FormatKind::JsonObjectWithSchema | FormatKind::JsonObject => "json_object",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Target {
    Format(FormatKind),
    Param(String),
    /// A parameter the server's API does not know (OpenAI: "Unrecognized request argument").
    Unrecognized(String),
}

/// A rule: refuse every chat request it matches with `status` and a realistic body.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    target: Target,
    status: u16,
}

impl Refusal {
    /// Refuses requests whose `response_format` is of `kind`.
    pub fn format(kind: FormatKind, status: u16) -> Refusal {
        Refusal {
            target: Target::Format(kind),
            status,
        }
    }

    /// Refuses requests whose top-level body has the key `name` (e.g. `max_tokens`,
    /// `temperature`), whatever its value.
    pub fn param(name: &str, status: u16) -> Refusal {
        Refusal {
            target: Target::Param(name.to_owned()),
            status,
        }
    }

    /// Refuses requests whose top-level body has the key `name`, as a server that does not
    /// know the argument at all: with 400, OpenAI's `Unrecognized request argument supplied:
    /// {name}` (`param` set, `code` null); with 422 or 500, the same validation error as
    /// [`Refusal::param`].
    pub fn unrecognized(name: &str, status: u16) -> Refusal {
        Refusal {
            target: Target::Unrecognized(name.to_owned()),
            status,
        }
    }

    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether this rule refuses a request with this JSON body.
    pub fn matches(&self, body: &Value) -> bool {
        match &self.target {
            Target::Format(kind) => FormatKind::of(body) == Some(*kind),
            Target::Param(name) | Target::Unrecognized(name) => body.get(name.as_str()).is_some(),
        }
    }

    /// The error response for a request this rule matched.
    pub fn fault(&self, body: &Value) -> Fault {
        let text = match self.status {
            500 => llama_cpp_python_body(&self.target, body),
            422 => vllm_body(&self.target, body),
            _ => openai_body(&self.target, body),
        };
        Fault::status(self.status, &text)
    }
}

/// What a pydantic validation error says about the refused field: (loc, error type, msg,
/// input, ctx).
struct Validation {
    loc: Vec<String>,
    kind: &'static str,
    msg: String,
    input: Value,
    expected: Option<&'static str>,
}

fn validation(target: &Target, body: &Value) -> Validation {
    let format = &body["response_format"];
    match target {
        Target::Format(FormatKind::JsonSchema) => Validation {
            loc: path(&["body", "response_format", "type"]),
            kind: "literal_error",
            msg: "Input should be 'text' or 'json_object'".to_owned(),
            input: json!("json_schema"),
            expected: Some("'text' or 'json_object'"),
        },
        Target::Format(FormatKind::JsonObject) => Validation {
            loc: path(&["body", "response_format", "type"]),
            kind: "literal_error",
            msg: "Input should be 'text'".to_owned(),
            input: json!("json_object"),
            expected: Some("'text'"),
        },
        Target::Format(FormatKind::JsonObjectWithSchema) => Validation {
            loc: path(&["body", "response_format", "schema"]),
            kind: "extra_forbidden",
            msg: "Extra inputs are not permitted".to_owned(),
            input: format["schema"].clone(),
            expected: None,
        },
        Target::Param(name) | Target::Unrecognized(name) => Validation {
            loc: path(&["body", name]),
            kind: "extra_forbidden",
            msg: "Extra inputs are not permitted".to_owned(),
            input: body[name.as_str()].clone(),
            expected: None,
        },
    }
}

fn path(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_owned()).collect()
}

/// llama-cpp-python wraps the pydantic error in a 500, with a Python traceback line.
fn llama_cpp_python_body(target: &Target, body: &Value) -> String {
    let v = validation(target, body);
    let loc: Vec<String> = v.loc.iter().map(|p| py_repr(&json!(p))).collect();
    let ctx = match v.expected {
        Some(expected) => format!(", 'ctx': {{'expected': {}}}", py_str(expected)),
        None => String::new(),
    };
    let message = format!(
        "1 validation error:\n  {{'type': '{}', 'loc': ({}), 'msg': {}, 'input': {}{}}}\n\n  \
         File \"/root/.cache/local-llm/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", \
         line 376, in create_chat_completion\n    POST /v1/chat/completions",
        v.kind,
        loc.join(", "),
        py_str(&v.msg),
        py_repr(&v.input),
        ctx,
    );
    json!({
        "error": {
            "message": message,
            "type": "internal_server_error",
            "param": null,
            "code": null,
        }
    })
    .to_string()
}

/// vLLM's OpenAI-compatible server answers a failed validation with 422 and pydantic's own
/// rendering of the error in `message`.
fn vllm_body(target: &Target, body: &Value) -> String {
    let v = validation(target, body);
    let field = v.loc[1..].join(".");
    let message = format!(
        "1 validation error for ChatCompletionRequest\n{field}\n  {} [type={}, input_value={}, input_type={}]",
        v.msg,
        v.kind,
        py_repr(&v.input),
        py_type(&v.input),
    );
    json!({
        "object": "error",
        "message": message,
        "type": "BadRequestError",
        "param": null,
        "code": 422,
    })
    .to_string()
}

/// OpenAI names the parameter in `param` and, for unsupported parameters, in `code`.
fn openai_body(target: &Target, body: &Value) -> String {
    let (message, param, code) = match target {
        Target::Format(FormatKind::JsonObjectWithSchema) => (
            "Additional properties are not allowed ('schema' was unexpected) - 'response_format'"
                .to_owned(),
            "response_format".to_owned(),
            Value::Null,
        ),
        Target::Format(kind) => (
            format!(
                "Invalid parameter: 'response_format' of type '{}' is not supported with this model.",
                kind.type_name()
            ),
            "response_format".to_owned(),
            Value::Null,
        ),
        Target::Param(name) if name == "max_tokens" => (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use \
             'max_completion_tokens' instead."
                .to_owned(),
            name.clone(),
            json!("unsupported_parameter"),
        ),
        Target::Param(name) if name == "temperature" => (
            format!(
                "Unsupported value: 'temperature' does not support {} with this model. Only the \
                 default (1) value is supported.",
                body["temperature"]
            ),
            name.clone(),
            json!("unsupported_value"),
        ),
        Target::Param(name) => (
            format!("Unsupported parameter: '{name}' is not supported with this model."),
            name.clone(),
            json!("unsupported_parameter"),
        ),
        Target::Unrecognized(name) => (
            format!("Unrecognized request argument supplied: {name}"),
            name.clone(),
            Value::Null,
        ),
    };
    json!({
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    })
    .to_string()
}

/// A Python string literal as `repr` writes it: single quotes unless the text holds one.
fn py_str(s: &str) -> String {
    if s.contains('\'') && !s.contains('"') {
        format!("\"{s}\"")
    } else {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// A JSON value as Python's `repr` of the decoded value.
fn py_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_repr(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

fn py_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}
