//! The Chat Completions request: where it goes (OpenAI, Azure OpenAI's two url forms,
//! any compatible server), its headers, and its body in OpenAI's or TGI's shape.

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use prill_spec::model::config::{ChatApi, MaxTokensField};
use prill_spec::model::family::traits;

use super::super::settings::azure_host;
use super::super::{
    ChatMessage, ModelRequest, ModelToolCall, ProviderKind, ProviderSettings, Secret, call_id,
    result_id, result_text, unsupported,
};
use crate::error::ConnectError;
use crate::server::endpoint;

/// How one endpoint wants its requests, decided once from its settings.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    /// Which provider.
    pub(super) kind: ProviderKind,
    /// The endpoint as configured.
    pub(super) base: Url,
    /// An Azure OpenAI resource: `api-key` header, `api-version`, deployment urls.
    pub(super) azure: bool,
    /// OpenAI's own host, `api.openai.com`.
    pub(super) openai_host: bool,
    /// OpenAI's body or TGI's.
    pub(super) api: ChatApi,
    /// The token limit's name when `prill.toml` sets it.
    pub(super) max_tokens_field: Option<MaxTokensField>,
    /// Azure's `api-version`.
    pub(super) api_version: Option<String>,
    /// `OpenAI-Organization`.
    pub(super) organization: Option<String>,
    /// `OpenAI-Project`.
    pub(super) project: Option<String>,
}

impl Shape {
    /// The shape of `settings`' endpoint.
    pub(super) fn of(kind: ProviderKind, settings: &ProviderSettings) -> Shape {
        let base = settings.base_url.clone();
        let host = base.host_str().unwrap_or_default().to_ascii_lowercase();
        let chat = &settings.chat;
        let api = match kind {
            ProviderKind::Huggingface => chat.api.unwrap_or(if host == "router.huggingface.co" {
                ChatApi::Openai
            } else {
                ChatApi::Tgi
            }),
            _ => chat.api.unwrap_or(ChatApi::Openai),
        };
        Shape {
            kind,
            azure: kind == ProviderKind::Openai && azure_host(&base),
            openai_host: host == "api.openai.com",
            base,
            api,
            max_tokens_field: chat.max_tokens_field,
            api_version: chat.api_version.clone(),
            organization: chat.organization.clone(),
            project: chat.project.clone(),
        }
    }

    /// Where a call for `model` goes. Elsewhere than Azure, `{base}/chat/completions`.
    /// On an Azure resource: a base that already ends in `/openai/v1` or names a
    /// deployment gets `/chat/completions`; the resource itself (or its `/openai`) gets
    /// `/openai/deployments/{model}/chat/completions` when an `api-version` is set, else
    /// the v1 API's `/openai/v1/chat/completions`. Every url but the v1 API's carries
    /// `?api-version=`; a deployment url without one is an error that says how to set it.
    pub(super) fn url(&self, model: &str) -> Result<Url, ConnectError> {
        if !self.azure {
            return Ok(endpoint(&self.base, &["chat/completions"]));
        }
        let path = self.base.path().trim_end_matches('/').to_owned();
        if path.contains("/openai/deployments/") && self.api_version.is_none() {
            return Err(ConnectError::config(format!(
                "openai: the Azure deployment url {} needs an api-version: set `api_version` \
                 in [providers.openai] of prill.toml or OPENAI_API_VERSION, or use the v1 API \
                 at {{resource}}/openai/v1",
                self.base
            )));
        }
        let given = path.ends_with("/openai/v1") || path.contains("/openai/deployments/");
        let mut url = if given {
            endpoint(&self.base, &["chat/completions"])
        } else {
            let mut root = self.base.clone();
            root.set_path(path.strip_suffix("/openai").unwrap_or(&path));
            match &self.api_version {
                Some(_) => {
                    let mut url = endpoint(&root, &["openai", "deployments"]);
                    if let Ok(mut segments) = url.path_segments_mut() {
                        segments.push(model);
                    }
                    endpoint(&url, &["chat/completions"])
                }
                None => endpoint(&root, &["openai/v1/chat/completions"]),
            }
        };
        let v1 = url.path().contains("/openai/v1/");
        if let (Some(version), false) = (&self.api_version, v1) {
            url.query_pairs_mut().append_pair("api-version", version);
        }
        Ok(url)
    }

    /// The headers that authenticate: `api-key` on Azure, else `Authorization: Bearer`
    /// (when there is a key); `OpenAI-Organization` and `OpenAI-Project` when set.
    pub(super) fn auth_headers(&self, key: Option<&Secret>) -> Result<HeaderMap, ConnectError> {
        let mut headers = HeaderMap::new();
        let value = |text: &str, what: &str| {
            HeaderValue::from_str(text).map_err(|_| {
                ConnectError::config(format!(
                    "the {} {what} holds characters that cannot be sent in a header",
                    self.kind.name()
                ))
            })
        };
        if let Some(key) = key {
            let (name, text) = if self.azure {
                (HeaderName::from_static("api-key"), key.expose().to_owned())
            } else {
                (AUTHORIZATION, format!("Bearer {}", key.expose()))
            };
            let mut secret = value(&text, "key")?;
            secret.set_sensitive(true);
            headers.insert(name, secret);
        }
        if let Some(org) = &self.organization {
            let name = HeaderName::from_static("openai-organization");
            headers.insert(name, value(org, "organization (OPENAI_ORG_ID)")?);
        }
        if let Some(project) = &self.project {
            let name = HeaderName::from_static("openai-project");
            headers.insert(name, value(project, "project (OPENAI_PROJECT_ID)")?);
        }
        Ok(headers)
    }

    /// The name the token limit goes under for `model`: `max_tokens_field` when set;
    /// else `max_completion_tokens` for OpenAI's and Azure's hosts and for reasoning
    /// models anywhere; else `max_tokens`.
    pub(super) fn token_field(&self, model: &str) -> &'static str {
        let field = self.max_tokens_field.unwrap_or(
            if self.openai_host || self.azure || traits(self.kind, model).reasoning {
                MaxTokensField::MaxCompletionTokens
            } else {
                MaxTokensField::MaxTokens
            },
        );
        match field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// The body for `request` and the notes on what was left out of it (by
    /// [`crate::provider::Sampling::fit`]); an unsupported parameter is an error naming
    /// it, before anything is sent.
    pub(super) fn body(
        &self,
        request: &ModelRequest,
        stream: bool,
    ) -> Result<(Value, Vec<String>), ConnectError> {
        let kind = self.kind;
        let (sampling, notes) = request.sampling.fit(kind, &request.model);
        if sampling.top_k.is_some() {
            return Err(unsupported(kind, "top_k"));
        }
        let tgi = self.api == ChatApi::Tgi;
        if tgi {
            check_tgi(request)?;
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(request.model));
        body.insert("messages".into(), messages(kind, request)?);
        if !request.tools.is_empty() {
            body.insert("tools".into(), tools(request));
        }
        if let Some(t) = sampling.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = sampling.top_p {
            body.insert("top_p".into(), json!(p));
        }
        if let Some(n) = sampling.max_tokens {
            body.insert(self.token_field(&request.model).into(), json!(n));
        }
        if !sampling.stop_sequences.is_empty() {
            body.insert("stop".into(), json!(sampling.stop_sequences));
        }
        if let Some(seed) = sampling.seed {
            body.insert("seed".into(), json!(seed));
        }
        if let Some(format) = &request.response_format {
            let value = if tgi {
                // TGI's grammar: `json` takes the schema itself, in every TGI version.
                json!({"type": "json", "value": format.schema})
            } else {
                json!({"type": "json_schema", "json_schema": {
                    "name": format.name, "schema": format.schema, "strict": true}})
            };
            body.insert("response_format".into(), value);
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Ok((Value::Object(body), notes))
    }
}

/// What TGI refuses that OpenAI takes, as errors naming it: a negative `seed` (TGI's is
/// unsigned) and a `response_format` together with tools (TGI: "Grammar and tools are
/// mutually exclusive").
fn check_tgi(request: &ModelRequest) -> Result<(), ConnectError> {
    if let Some(seed) = request.sampling.seed.filter(|s| *s < 0) {
        return Err(ConnectError::config(format!(
            "huggingface: seed {seed} is negative, and TGI takes only a seed from 0 to \
             18446744073709551615; use a positive seed"
        )));
    }
    if request.response_format.is_some() && !request.tools.is_empty() {
        return Err(ConnectError::config(
            "huggingface: TGI cannot constrain the answer to a response format when tools \
             are offered; offer no tools, or set `api = \"openai\"` for a server that can",
        ));
    }
    Ok(())
}

/// The system prompt, then the conversation: the model's tool calls as `tool_calls`
/// (`{id, type: "function", function: {name, arguments}}`, the arguments a JSON
/// string) and each tool result as a `tool` message naming its `tool_call_id`.
fn messages(kind: ProviderKind, request: &ModelRequest) -> Result<Value, ConnectError> {
    let mut messages = Vec::new();
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User(text) => json!({"role": "user", "content": text}),
            ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let calls = tool_calls
                    .iter()
                    .map(|call| {
                        Ok(json!({
                            "id": call_id(kind, call)?,
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments_text(call)},
                        }))
                    })
                    .collect::<Result<Vec<_>, ConnectError>>()?;
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            ChatMessage::ToolResult(result) => json!({
                "role": "tool",
                "tool_call_id": result_id(kind, result)?,
                "content": result_text(result),
            }),
        });
    }
    Ok(Value::Array(messages))
}

/// A call's arguments as the JSON string OpenAI takes (a string the model sent that
/// was not JSON goes back as it came).
fn arguments_text(call: &ModelToolCall) -> String {
    match &call.arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// The tools as functions (`{"type": "function", "function": {"name", "description",
/// "parameters"}}`), the shape Chat Completions and Ollama's `/api/chat` share.
pub(crate) fn tools(request: &ModelRequest) -> Value {
    request
        .tools
        .iter()
        .map(|tool| {
            let mut function = Map::new();
            function.insert("name".into(), json!(tool.name));
            if let Some(description) = &tool.description {
                function.insert("description".into(), json!(description));
            }
            function.insert("parameters".into(), tool.parameters.clone());
            json!({"type": "function", "function": function})
        })
        .collect()
}
