//! [`FakeBedrock`]: Bedrock Runtime's Converse API (`POST /model/{modelId}/converse`) on
//! 127.0.0.1.
//!
//! It checks requests as the real service does and refuses bad ones with the real shape,
//! `{"message": "..."}` and an `x-amzn-ErrorType` header:
//!
//! - `403`: no `Authorization`; a bearer token that is not the one of
//!   [`FakeBedrock::expect_bearer`]; a SigV4 header that is malformed (it must read
//!   `AWS4-HMAC-SHA256 Credential=<id>/<yyyymmdd>/<region>/bedrock/aws4_request,
//!   SignedHeaders=...;host;...;x-amz-date..., Signature=<64 hex>`), that comes without
//!   `x-amz-date`, whose key id, date or region is wrong, or (with
//!   [`FakeBedrock::expect_sigv4`]) whose signature does not match the one the fake
//!   computes itself from the secret key;
//! - `400 ValidationException`: a body that is not JSON, an unknown field, no messages,
//!   a conversation that does not start with `user` or does not alternate, a role other
//!   than `user`/`assistant`, empty text, unknown `inferenceConfig` keys or out-of-range
//!   values, malformed tools (or two of the same name), a `toolChoice` that is not one
//!   of `{"auto": {}}`, `{"any": {}}`, `{"tool": {"name"}}` or names no tool of
//!   `toolConfig.tools`, and `additionalModelRequestFields` for a model that is not
//!   Anthropic's (the real service passes them to the model, which refuses them);
//! - `404`: any other path.
//!
//! A valid request gets the next [`Reply`] as a whole Converse response
//! (`output.message.content` with `text` and `toolUse` blocks, `stopReason`, `usage`);
//! when `toolChoice` forces a tool, the answer is a call of it (`toolUse`), as the
//! service's is: a [`Reply::structured`] answer is its input, and a reply without one
//! (and without a call of that tool) has its text, as is, for input;
//! a [`Reply::error`] gets the service's error shape with the error type of its status
//! (`ThrottlingException` for 429, `InternalServerException` for 500, ...). Converse is
//! not streamed (ConverseStream's binary event-stream framing is not faked).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::reply::{Outcome, Reply, State, last_user_text, word_count};
use super::scripted::{Answer, Body, RecordedRequest, Served, json_answer, serve};

pub mod sigv4;

pub use sigv4::{Malformed, SigV4Header, canonical_request, parse_sigv4, sigv4_signature};

/// The top-level fields Converse accepts.
const FIELDS: [&str; 10] = [
    "messages",
    "system",
    "inferenceConfig",
    "toolConfig",
    "guardrailConfig",
    "additionalModelRequestFields",
    "additionalModelResponseFieldPaths",
    "promptVariables",
    "requestMetadata",
    "performanceConfig",
];

/// The tool a request forces with `"toolChoice": {"tool": {"name"}}`.
fn forced_tool(body: &Value) -> Option<&str> {
    body["toolConfig"]["toolChoice"]["tool"]["name"].as_str()
}

/// The service's error type for a status.
fn error_type(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// Which credentials the fake takes.
#[derive(Debug, Clone, Default)]
enum Auth {
    /// A bearer token, or a well-formed SigV4 header with any key.
    #[default]
    Any,
    /// Only this bearer token.
    Bearer(String),
    /// Only SigV4 with this key, checked for real.
    SigV4 {
        access_key_id: String,
        secret_access_key: String,
        region: String,
    },
}

/// A fake Bedrock Runtime Converse API on 127.0.0.1; stops when dropped.
#[derive(Debug)]
pub struct FakeBedrock {
    served: Served,
    state: Arc<State>,
    auth: Arc<Mutex<Auth>>,
}

scripting!(FakeBedrock);

impl FakeBedrock {
    /// Starts the fake on a free port of 127.0.0.1. Until told otherwise it takes any
    /// bearer token and any well-formed SigV4 header, and answers `ok`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    pub async fn start() -> FakeBedrock {
        let state = State::new();
        let auth = Arc::new(Mutex::new(Auth::Any));
        let (shared, shared_auth) = (Arc::clone(&state), Arc::clone(&auth));
        let served =
            serve(move |request| handle(Arc::clone(&shared), Arc::clone(&shared_auth), request))
                .await;
        FakeBedrock {
            served,
            state,
            auth,
        }
    }

    fn set_auth(&self, auth: Auth) {
        *self.auth.lock().unwrap_or_else(|e| e.into_inner()) = auth;
    }

    /// Takes only `Authorization: Bearer <token>` (a Bedrock API key) from now on.
    pub fn expect_bearer(&self, token: &str) -> &FakeBedrock {
        self.set_auth(Auth::Bearer(token.to_owned()));
        self
    }

    /// Takes only SigV4 signatures made with this key for `region` from now on, and
    /// checks the signature itself.
    pub fn expect_sigv4(
        &self,
        access_key_id: &str,
        secret_access_key: &str,
        region: &str,
    ) -> &FakeBedrock {
        self.set_auth(Auth::SigV4 {
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            region: region.to_owned(),
        });
        self
    }

    /// `http://127.0.0.1:<port>`: what `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` would say.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.served.addr)
    }
}

fn handle(state: Arc<State>, auth: Arc<Mutex<Auth>>, request: RecordedRequest) -> Answer {
    Box::pin(async move {
        state.record(request.clone());
        let Some(model) = model_id(&request) else {
            return error_answer(404, "UnknownOperationException", "Unknown operation", None);
        };
        let auth = auth.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Err(message) = check_auth(&request, &auth) {
            let kind = if message.contains("security token") {
                "UnrecognizedClientException"
            } else {
                "AccessDeniedException"
            };
            return error_answer(403, kind, &message, None);
        }
        if let Err(message) = check_body(&request.body, &model) {
            return error_answer(400, "ValidationException", &message, None);
        }
        let body = request.json();
        let reply = state.next_for(&body, &last_user_text(&body));
        answer(&body, reply).await
    })
}

/// The model id of `/model/{modelId}/converse`, percent-decoded.
fn model_id(request: &RecordedRequest) -> Option<String> {
    if request.method != "POST" {
        return None;
    }
    let id = request
        .path
        .strip_prefix("/model/")?
        .strip_suffix("/converse")?;
    if id.is_empty() || id.contains('/') {
        return None;
    }
    Some(percent_decode(id))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The service's error answer: `{"message": ...}` and `x-amzn-ErrorType`.
fn error_answer(
    status: u16,
    kind: &str,
    message: &str,
    retry_after: Option<u64>,
) -> hyper::Response<Body> {
    let mut headers = vec![(
        "x-amzn-errortype",
        format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
    )];
    if let Some(seconds) = retry_after {
        headers.push(("retry-after", seconds.to_string()));
    }
    json_answer(status, &headers, &json!({"message": message}))
}

/// The answer to a valid request: a whole Converse response.
async fn answer(body: &Value, reply: Reply) -> hyper::Response<Body> {
    tokio::time::sleep(reply.first_delay).await;
    let (text, calls) = match &reply.outcome {
        Outcome::Answer {
            text,
            tool_calls,
            structured,
        } => Reply::as_forced_call(text, tool_calls, structured.as_ref(), forced_tool(body)),
        Outcome::Fail {
            status,
            message,
            retry_after,
        } => return error_answer(*status, error_type(*status), message, *retry_after),
        Outcome::Raw { status, body } => {
            return json_answer(
                *status,
                &[],
                &serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.clone())),
            );
        }
    };
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"text": text}));
    }
    for (i, call) in calls.iter().enumerate() {
        let input = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        content.push(json!({"toolUse": {"toolUseId": format!("tooluse_fake_{i}"),
            "name": call.name, "input": input}}));
    }
    let (input, output) = reply.usage.unwrap_or_else(|| {
        (
            word_count(body),
            text.split_whitespace().count() as u64 + calls.len() as u64,
        )
    });
    let stop = reply.finish_reason.clone().unwrap_or_else(|| {
        if calls.is_empty() {
            "end_turn".to_owned()
        } else {
            "tool_use".to_owned()
        }
    });
    let output_body = json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": input, "outputTokens": output, "totalTokens": input + output},
        "metrics": {"latencyMs": reply.first_delay.as_millis()},
    });
    json_answer(
        200,
        &[(
            "x-amzn-requestid",
            "00000000-0000-0000-0000-000000000000".to_owned(),
        )],
        &output_body,
    )
}

/// Checks the credentials as the service does.
fn check_auth(request: &RecordedRequest, auth: &Auth) -> Result<(), String> {
    let Some(header) = request.header("authorization") else {
        return Err("Missing Authentication Token".to_owned());
    };
    if let Some(token) = header.strip_prefix("Bearer ") {
        return match auth {
            Auth::Bearer(want) if token != want => {
                Err("Authentication failed: Please make sure your API Key is valid.".to_owned())
            }
            Auth::SigV4 { .. } => Err("Authentication failed: this fake expects SigV4.".to_owned()),
            _ => Ok(()),
        };
    }
    if matches!(auth, Auth::Bearer(_)) {
        return Err("Authentication failed: Please make sure your API Key is valid.".to_owned());
    }
    let parsed = parse_sigv4(header).map_err(|e| e.0)?;
    let Some(amz_date) = request.header("x-amz-date") else {
        return Err(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
                .to_owned(),
        );
    };
    if amz_date.len() != 16 || !amz_date.ends_with('Z') || !amz_date.starts_with(&parsed.date) {
        return Err(format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}'",
            parsed.date,
            amz_date.get(..8).unwrap_or(amz_date)
        ));
    }
    for needed in ["host", "x-amz-date"] {
        if !parsed.signed_headers.iter().any(|h| h == needed) {
            return Err(format!(
                "'{needed}' must be a 'SignedHeader' in the AWS Authorization."
            ));
        }
    }
    if parsed.service != "bedrock" {
        return Err(format!(
            "Credential should be scoped to correct service: 'bedrock'. (got '{}')",
            parsed.service
        ));
    }
    let Auth::SigV4 {
        access_key_id,
        secret_access_key,
        region,
    } = auth
    else {
        return Ok(());
    };
    if &parsed.access_key_id != access_key_id {
        return Err("The security token included in the request is invalid.".to_owned());
    }
    if &parsed.region != region {
        return Err(format!(
            "Credential should be scoped to a valid region, not '{}'.",
            parsed.region
        ));
    }
    let mut headers = Vec::new();
    for name in &parsed.signed_headers {
        let values: Vec<&str> = request
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        if values.is_empty() {
            return Err(format!("The signed header '{name}' is missing."));
        }
        headers.push((name.clone(), values.join(",")));
    }
    let canonical = canonical_request(
        &request.method,
        &request.path,
        request.query.as_deref().unwrap_or(""),
        &headers,
        &request.body,
    );
    let want = sigv4_signature(secret_access_key, amz_date, region, "bedrock", &canonical);
    if want != parsed.signature {
        return Err("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.".to_owned());
    }
    Ok(())
}

type Checked = Result<(), String>;

/// `1 validation error detected: ...`, Coral's way of saying a value is wrong.
fn constraint(path: &str, what: &str) -> String {
    format!("1 validation error detected: Value at '{path}' failed to satisfy constraint: {what}")
}

/// Checks a Converse body as the service does.
fn check_body(body: &[u8], model: &str) -> Checked {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| format!("Malformed request body: {e}"))?;
    let Some(body) = body.as_object() else {
        return Err("Malformed request body: expected an object".to_owned());
    };
    for key in body.keys() {
        if !FIELDS.contains(&key.as_str()) {
            return Err(format!("Unknown field '{key}' in the request body."));
        }
    }
    check_messages(body.get("messages"))?;
    if let Some(system) = body.get("system") {
        let ok = system.as_array().is_some_and(|blocks| {
            blocks.iter().all(|b| {
                b.get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty())
            })
        });
        if !ok {
            return Err(constraint(
                "system",
                "Member must be a list of {\"text\": ...} blocks with non-empty text",
            ));
        }
    }
    if let Some(config) = body.get("inferenceConfig") {
        check_inference(config)?;
    }
    if let Some(tools) = body.get("toolConfig") {
        check_tools(tools)?;
    }
    if let Some(extra) = body.get("additionalModelRequestFields") {
        let Some(extra) = extra.as_object() else {
            return Err(constraint(
                "additionalModelRequestFields",
                "Member must be an object",
            ));
        };
        if !model.contains("anthropic.")
            && let Some(key) = extra.keys().next()
        {
            return Err(format!(
                "The model returned the following errors: Malformed input request: #: extraneous key [{key}] is not permitted, please reformat your input and try again."
            ));
        }
    }
    Ok(())
}

fn check_messages(messages: Option<&Value>) -> Checked {
    let Some(messages) = messages.and_then(Value::as_array) else {
        return Err(constraint("messages", "Member must not be null"));
    };
    if messages.is_empty() {
        return Err("A conversation must start with a user message. Try again with a conversation that starts with a user message.".to_owned());
    }
    let mut previous = None;
    for (i, message) in messages.iter().enumerate() {
        let Some(message) = message.as_object() else {
            return Err(constraint(
                &format!("messages.{}.member", i + 1),
                "Member must be an object",
            ));
        };
        if let Some(key) = message.keys().find(|k| *k != "role" && *k != "content") {
            return Err(format!("Unknown field '{key}' in messages.{i}."));
        }
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if role != "user" && role != "assistant" {
            return Err(format!(
                "1 validation error detected: Value '{role}' at 'messages.{}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]",
                i + 1
            ));
        }
        if i == 0 && role != "user" {
            return Err("A conversation must start with a user message. Try again with a conversation that starts with a user message.".to_owned());
        }
        if previous == Some(role) {
            return Err("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.".to_owned());
        }
        previous = Some(role);
        let Some(content) = message
            .get("content")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty())
        else {
            return Err(constraint(
                &format!("messages.{}.member.content", i + 1),
                "Member must have length greater than or equal to 1",
            ));
        };
        for (j, block) in content.iter().enumerate() {
            let keys: Vec<&String> = block
                .as_object()
                .map(|b| b.keys().collect())
                .unwrap_or_default();
            if keys.len() != 1 {
                return Err(format!(
                    "The content block at messages.{i}.content.{j} must have exactly one member."
                ));
            }
            if let Some(text) = block.get("text") {
                if text.as_str().is_none_or(|t| t.trim().is_empty()) {
                    return Err(format!(
                        "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the text field, and try again."
                    ));
                }
            } else if ![
                "image",
                "document",
                "toolUse",
                "toolResult",
                "video",
                "reasoningContent",
                "cachePoint",
            ]
            .contains(&keys[0].as_str())
            {
                return Err(format!(
                    "Unknown content block '{}' at messages.{i}.content.{j}.",
                    keys[0]
                ));
            }
        }
    }
    Ok(())
}

fn check_inference(config: &Value) -> Checked {
    let Some(config) = config.as_object() else {
        return Err(constraint("inferenceConfig", "Member must be an object"));
    };
    for (key, value) in config {
        let ok = match key.as_str() {
            "maxTokens" => value.as_u64().is_some_and(|n| n >= 1),
            "temperature" | "topP" => value.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)),
            "stopSequences" => value.as_array().is_some_and(|s| {
                s.len() <= 2500 && s.iter().all(|x| x.as_str().is_some_and(|x| !x.is_empty()))
            }),
            _ => return Err(format!("Unknown field '{key}' in inferenceConfig.")),
        };
        if !ok {
            return Err(constraint(
                &format!("inferenceConfig.{key}"),
                "Member is out of range or of the wrong type",
            ));
        }
    }
    Ok(())
}

fn check_tools(config: &Value) -> Checked {
    let Some(tools) = config
        .get("tools")
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
    else {
        return Err(constraint(
            "toolConfig.tools",
            "Member must have length greater than or equal to 1",
        ));
    };
    if let Some(key) = config
        .as_object()
        .and_then(|c| c.keys().find(|k| *k != "tools" && *k != "toolChoice"))
    {
        return Err(format!("Unknown field '{key}' in toolConfig."));
    }
    let mut names = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let path = format!("toolConfig.tools.{}.member.toolSpec", i + 1);
        let Some(spec) = tool.get("toolSpec").and_then(Value::as_object) else {
            return Err(constraint(&path, "Member must not be null"));
        };
        if let Some(name) = spec.get("name").and_then(Value::as_str) {
            if names.contains(&name) {
                return Err(format!(
                    "The toolConfig field has duplicate tool names: {name}. Tool names must be unique."
                ));
            }
            names.push(name);
        }
        if let Some(key) = spec
            .keys()
            .find(|k| !["name", "description", "inputSchema"].contains(&k.as_str()))
        {
            return Err(format!("Unknown field '{key}' in {path}."));
        }
        let name_ok = spec.get("name").and_then(Value::as_str).is_some_and(|n| {
            !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        if !name_ok {
            return Err(constraint(
                &format!("{path}.name"),
                "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
            ));
        }
        if spec
            .get("description")
            .is_some_and(|d| d.as_str().is_none_or(|d| d.is_empty()))
        {
            return Err(constraint(
                &format!("{path}.description"),
                "Member must have length greater than or equal to 1",
            ));
        }
        let schema = spec.get("inputSchema").and_then(|s| s.get("json"));
        if !schema.is_some_and(|s| s.is_object()) {
            return Err(constraint(
                &format!("{path}.inputSchema.json"),
                "Member must not be null",
            ));
        }
    }
    if let Some(choice) = config.get("toolChoice") {
        check_tool_choice(choice, &names)?;
    }
    Ok(())
}

/// Checks `toolChoice`: exactly one of `auto`, `any` (both `{}`) or `tool`, whose
/// `name` is one of `names`.
fn check_tool_choice(choice: &Value, names: &[&str]) -> Checked {
    let members: Vec<(&String, &Value)> = choice
        .as_object()
        .map(|c| c.iter().collect())
        .unwrap_or_default();
    let [(kind, value)] = members.as_slice() else {
        return Err(
            "The toolConfig.toolChoice field must have exactly one member: auto, any or tool."
                .to_owned(),
        );
    };
    match kind.as_str() {
        "auto" | "any" if value.as_object().is_some_and(|v| v.is_empty()) => Ok(()),
        "auto" | "any" => Err(format!("Unknown field in toolConfig.toolChoice.{kind}.")),
        "tool" => {
            let Some(name) = value.get("name").and_then(Value::as_str) else {
                return Err(constraint(
                    "toolConfig.toolChoice.tool.name",
                    "Member must not be null",
                ));
            };
            if names.contains(&name) {
                Ok(())
            } else {
                Err(format!(
                    "The tool {name} in toolConfig.toolChoice is not defined in toolConfig.tools. Add the tool to toolConfig.tools and try again."
                ))
            }
        }
        other => Err(format!("Unknown field '{other}' in toolConfig.toolChoice.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_are_decoded() {
        assert_eq!(percent_decode("a.b-v1%3A0"), "a.b-v1:0");
        assert_eq!(percent_decode("x%2"), "x%2");
    }

    #[test]
    fn bodies_are_checked_like_the_service() {
        let ok = json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]});
        assert!(check_body(ok.to_string().as_bytes(), "meta.llama3").is_ok());
        let top_k = json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "additionalModelRequestFields": {"top_k": 5}});
        assert!(
            check_body(
                top_k.to_string().as_bytes(),
                "anthropic.claude-3-haiku-20240307-v1:0"
            )
            .is_ok()
        );
        assert!(
            check_body(top_k.to_string().as_bytes(), "meta.llama3")
                .unwrap_err()
                .contains("extraneous key [top_k]")
        );
        let system_role = json!({"messages": [{"role": "system", "content": [{"text": "hi"}]}]});
        assert!(
            check_body(system_role.to_string().as_bytes(), "m")
                .unwrap_err()
                .contains("enum value set")
        );
        let bad_config = json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "inferenceConfig": {"topK": 3}});
        assert!(
            check_body(bad_config.to_string().as_bytes(), "m")
                .unwrap_err()
                .contains("topK")
        );
        let choosing = |choice: Value| {
            json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
                "toolConfig": {"tools": [{"toolSpec": {"name": "v",
                    "inputSchema": {"json": {"type": "object"}}}}], "toolChoice": choice}})
            .to_string()
        };
        assert!(check_body(choosing(json!({"tool": {"name": "v"}})).as_bytes(), "m").is_ok());
        assert!(check_body(choosing(json!({"any": {}})).as_bytes(), "m").is_ok());
        assert!(
            check_body(choosing(json!({"tool": {"name": "w"}})).as_bytes(), "m")
                .unwrap_err()
                .contains("not defined in toolConfig.tools")
        );
        assert!(
            check_body(choosing(json!({"auto": {}, "any": {}})).as_bytes(), "m")
                .unwrap_err()
                .contains("exactly one member")
        );
        assert_eq!(
            forced_tool(&json!({"toolConfig": {"toolChoice": {"tool": {"name": "v"}}}})),
            Some("v")
        );
    }
}
