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
//! - `400 ValidationException`: a body that is not JSON or does not match the input
//!   shape of Converse in botocore's service model, vendored under
//!   `data/bedrock/` ([`ServiceModel`]: unknown members, missing required ones, wrong
//!   types, enum values, unions with other than one member, lengths, ranges and
//!   patterns such as tool names' `[a-zA-Z0-9_-]+` of 1 to 64 characters); and what the
//!   model cannot say: a conversation that does not start with `user` or does not
//!   alternate, a role other than `user`/`assistant`, blank text, two tools of one
//!   name, a `toolChoice.tool` naming no tool or sent to a model other than Claude 3+
//!   and Nova, `outputConfig` for a model other than Claude 4.5+ or with a schema that
//!   is not a JSON object, and `additionalModelRequestFields` for a model that is not
//!   Anthropic's (the real service passes them to the model, which refuses them);
//!   `toolUse`/`toolResult` blocks without a `toolConfig`, a `toolUse` the next user
//!   turn does not answer with a `toolResult` (`Expected toolResult blocks at
//!   messages.N.content for the following Ids: ...`), and a `toolResult` whose
//!   `toolUseId` answers no `toolUse` of the turn before;
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

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::reply::{Outcome, Reply, State, last_user_text, word_count};
use super::scripted::{Answer, Body, RecordedRequest, Served, json_answer, serve};

pub mod container;
pub mod shapes;
pub mod sigv4;
mod tool_turns;

pub use shapes::ServiceModel;

pub use sigv4::{Malformed, SigV4Header, canonical_request, parse_sigv4, sigv4_signature};

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
        state.record(&request);
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

/// Checks a Converse body as the service does: against the input shape of botocore's
/// service model ([`ServiceModel`]), then the rules the model cannot express
/// ([`check_rules`]).
fn check_body(body: &[u8], model: &str) -> Checked {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| format!("Malformed request body: {e}"))?;
    if !body.is_object() {
        return Err("Malformed request body: expected an object".to_owned());
    }
    ServiceModel::bedrock_runtime().validate_input("Converse", &body)?;
    check_rules(&body, model)
}

const START_WITH_USER: &str = "A conversation must start with a user message. Try again with a conversation that starts with a user message.";

/// The rules Converse enforces beyond its shapes: a conversation of alternating `user`
/// and `assistant` turns that starts with the user's, no blank text, unique tool names,
/// a `toolChoice.tool` that names a tool and only for the models that take it (Claude
/// 3 and later, Nova), `outputConfig` only for the models that take it (Claude 4.5 and
/// later) with a schema that is a JSON object, and `additionalModelRequestFields` only
/// for Anthropic's models (the service passes them to the model, which refuses them).
fn check_rules(body: &Value, model: &str) -> Checked {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut previous = None;
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            return Err(format!(
                "The role '{role}' at messages.{i} is not supported: a conversation holds user and assistant messages; put system instructions in the system field."
            ));
        }
        if i == 0 && role != "user" {
            return Err(START_WITH_USER.to_owned());
        }
        if previous == Some(role) {
            return Err("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.".to_owned());
        }
        previous = Some(role);
        for (j, block) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if block
                .get("text")
                .is_some_and(|t| t.as_str().is_none_or(|t| t.trim().is_empty()))
            {
                return Err(format!(
                    "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the text field, and try again."
                ));
            }
        }
    }
    if messages.is_empty() {
        return Err(START_WITH_USER.to_owned());
    }
    check_tools(&body["toolConfig"], model)?;
    tool_turns::check(body)?;
    if let Some(format) = body.get("outputConfig").and_then(|c| c.get("textFormat")) {
        if !takes_output_config(model) {
            return Err(format!(
                "The model {model} does not support structured outputs (outputConfig.textFormat). Remove outputConfig and try again."
            ));
        }
        let schema = format["structure"]["jsonSchema"]["schema"]
            .as_str()
            .unwrap_or_default();
        if !serde_json::from_str::<Value>(schema).is_ok_and(|s| s.is_object()) {
            return Err(
                "The JSON schema in outputConfig.textFormat is not a valid JSON object.".to_owned(),
            );
        }
    }
    if let Some(key) = body["additionalModelRequestFields"]
        .as_object()
        .and_then(|extra| extra.keys().next())
        && !model.contains("anthropic.")
    {
        return Err(format!(
            "The model returned the following errors: Malformed input request: #: extraneous key [{key}] is not permitted, please reformat your input and try again."
        ));
    }
    Ok(())
}

/// Unique tool names, and a `toolChoice.tool` naming one of them, for a model that
/// takes it.
fn check_tools(config: &Value, model: &str) -> Checked {
    let mut names = Vec::new();
    for tool in config["tools"].as_array().into_iter().flatten() {
        if let Some(name) = tool["toolSpec"]["name"].as_str() {
            if names.contains(&name) {
                return Err(format!(
                    "The toolConfig field has duplicate tool names: {name}. Tool names must be unique."
                ));
            }
            names.push(name);
        }
    }
    let Some(forced) = forced_tool_of(config) else {
        return Ok(());
    };
    if !takes_forced_tool(model) {
        return Err(format!(
            "This model doesn't support the toolConfig.toolChoice.tool field. Remove toolConfig.toolChoice.tool and try again. (model {model})"
        ));
    }
    if !names.contains(&forced) {
        return Err(format!(
            "The tool {forced} in toolConfig.toolChoice is not defined in toolConfig.tools. Add the tool to toolConfig.tools and try again."
        ));
    }
    Ok(())
}

fn forced_tool_of(config: &Value) -> Option<&str> {
    config["toolChoice"]["tool"]["name"].as_str()
}

/// The Claude generation and version in a model id, as the fake reads it:
/// `claude-3-5-sonnet` and `claude-3-haiku` (name after the number), `claude-sonnet-4-5`
/// and `claude-opus-4-1-2025...` (name before it).
fn claude(model: &str) -> Option<(u32, u32)> {
    static CLAUDE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"claude-(?:(?:opus|sonnet|haiku|instant)-)?v?(\d)(?:[-.](\d{1,2}))?(?:\D|$)")
            .expect("the Claude pattern is valid")
    });
    let caps = CLAUDE.captures(model)?;
    let major = caps[1].parse().ok()?;
    let minor = caps
        .get(2)
        .and_then(|m| m.as_str().parse().ok())
        .unwrap_or(0);
    Some((major, minor))
}

/// Whether Converse takes `toolChoice.tool` for `model`: Claude 3 and later, and Nova.
fn takes_forced_tool(model: &str) -> bool {
    model.contains("amazon.nova") || claude(model).is_some_and(|v| v >= (3, 0))
}

/// Whether Converse takes `outputConfig.textFormat` for `model`: Claude 4.5 and later.
fn takes_output_config(model: &str) -> bool {
    claude(model).is_some_and(|v| v >= (4, 5))
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
                .contains("not supported")
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
        let claude = "anthropic.claude-3-haiku-20240307-v1:0";
        assert!(check_body(choosing(json!({"tool": {"name": "v"}})).as_bytes(), claude).is_ok());
        assert!(check_body(choosing(json!({"any": {}})).as_bytes(), "m").is_ok());
        assert!(
            check_body(
                choosing(json!({"tool": {"name": "v"}})).as_bytes(),
                "meta.llama3"
            )
            .unwrap_err()
            .contains("toolChoice.tool")
        );
        assert!(
            check_body(choosing(json!({"tool": {"name": "w"}})).as_bytes(), claude)
                .unwrap_err()
                .contains("not defined in toolConfig.tools")
        );
        assert!(
            check_body(choosing(json!({"auto": {}, "any": {}})).as_bytes(), "m")
                .unwrap_err()
                .contains("union")
        );
        assert_eq!(
            forced_tool(&json!({"toolConfig": {"toolChoice": {"tool": {"name": "v"}}}})),
            Some("v")
        );
    }
}
