//! AWS Bedrock's Converse API.
//!
//! A call is `POST {endpoint}/model/{modelId}/converse`: the endpoint is
//! `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, else `https://bedrock-runtime.{AWS_REGION}.amazonaws.com`;
//! the model id is percent-encoded as one path segment (`anthropic.claude-3-haiku-20240307-v1:0`
//! is sent as `...-v1%3A0`). The answer is read whole: Converse's streaming twin,
//! ConverseStream, frames its events in AWS's binary event-stream encoding, so
//! [`crate::Timings::first_byte`] is the time to the first byte of the response body.
//!
//! **Credentials**, in order: a Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`) is sent as
//! `Authorization: Bearer {key}`; else the standard AWS variables (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), else what the AWS SDK's providers find
//! ([`credentials`]: the shared profile, web identity, container and instance roles)
//! sign the request with SigV4 for the service `bedrock` in the region (`AWS_REGION`,
//! `AWS_DEFAULT_REGION`, `region` in `prill.toml`, the profile's `region`, else the one
//! in a `bedrock-runtime.{region}.amazonaws.com` endpoint), with the AWS SDK's own
//! signer (`aws-sigv4`); when nothing is found, the call is an error that lists what
//! was tried. With the default endpoint, a region found only in the profile also picks
//! the endpoint (`https://bedrock-runtime.{region}.amazonaws.com`).
//!
//! | [`ModelRequest`] | request |
//! |---|---|
//! | `system` | `"system": [{"text"}]` |
//! | `messages` | `{"role", "content": [{"text"}]}` messages; consecutive turns of one role become one message with one `text` block per turn, in order, and a conversation that starts with the assistant gets a user turn ([`LEADING_USER_TURN`]) first, as Converse takes only alternating turns that start with the user's; each change is a note in [`ModelResponse::notes`] |
//! | `tools` | `"toolConfig": {"tools": [{"toolSpec": {"name", "description", "inputSchema": {"json"}}}]}` |
//! | `max_tokens`, `temperature`, `top_p`, `stop_sequences` | `inferenceConfig`'s `maxTokens`, `temperature`, `topP`, `stopSequences`, after [`super::Sampling::fit`] for the model (Claude 4.7+ takes no temperature, `top_p` or `top_k`; Claude 4.1–4.6 take temperature or `top_p`): what is left out is a note |
//! | `top_k` | `"additionalModelRequestFields": {"top_k"}` for Anthropic's models (an id containing `anthropic.`); unsupported otherwise: an error naming it, before anything is sent |
//! | `seed` | not sent: Converse has no seed (a seed is passed only where supported) |
//! | `response_format` | by the model's family ([`structured_mode`]): `"outputConfig": {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"schema": "<the schema as a JSON string>", "name"}}}}`; or a forced tool (a `toolSpec` `{"name", "description": "Record the answer.", "inputSchema": {"json"}}` after the other tools, and `"toolChoice": {"tool": {"name"}}`); or, for the rest, [`prompt_instruction`] appended to the system prompt |
//!
//! The answer to a `response_format` is the text (`outputConfig`, prompt), or the
//! forced `toolUse`'s input serialized as compact JSON, in [`ModelResponse::text`];
//! that call is not one of the tool calls. `stopReason` is kept as Converse says it
//! (`end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `guardrail_intervened`,
//! `content_filtered`, ...); with `guardrail_intervened` or `content_filtered` the text
//! is what the guardrail or filter put in place of an answer, and
//! [`ModelResponse::refusal`] is set. Converse reports no reasoning tokens apart, so
//! [`TokenUsage::reasoning`] is `None`.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio::sync::OnceCell;

pub mod credentials;
mod request;

pub use credentials::{AwsSources, ProfileOrigin, WebIdentity};

pub use request::{
    LEADING_USER_TURN, Prepared, StructuredMode, is_anthropic_model, prepare, prompt_instruction,
    request_body, structured_mode,
};

use super::settings::AwsCredentials;
use super::transport::{BodyKind, Posted, Transport, body_kind};
use super::{
    ModelRequest, ModelResponse, ModelToolCall, Provider, ProviderKind, ProviderSettings,
    RawEvents, take_forced,
};
use crate::error::{ConnectError, cut};
use crate::server::label;
use crate::types::{Timings, TokenUsage};
use crate::{BoxFuture, with_timeout};

/// The service name SigV4 signs for.
const SERVICE: &str = "bedrock";

/// How a call authenticates.
#[derive(Debug)]
enum Auth {
    /// `Authorization: Bearer` with the Bedrock API key.
    Bearer,
    /// SigV4 with what the credential chain finds (the environment keys first).
    SigV4(Box<credentials::Chain>),
}

/// Where calls go and the region they are signed for, settled on the first call.
#[derive(Debug)]
struct Place {
    base_url: Url,
    region: Option<String>,
    /// How errors name the endpoint: `bedrock (host)`.
    peer: String,
}

/// AWS Bedrock's Converse API.
///
/// Cheap to clone; clones share the transport.
#[derive(Debug, Clone)]
pub struct Bedrock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    settings: ProviderSettings,
    auth: Auth,
    place: OnceCell<Place>,
    peer: String,
    transport: Transport,
}

impl Bedrock {
    /// The provider for `settings`, reached through `transport`. Nothing is read or
    /// reached here: the credential chain and a region from the AWS profile are found on
    /// the first call. A refused SigV4 key names where it came from (`AWS_ACCESS_KEY_ID`
    /// and `AWS_SECRET_ACCESS_KEY`, the profile, ...); a refused API key names
    /// `AWS_BEARER_TOKEN_BEDROCK`.
    pub fn new(settings: ProviderSettings, transport: Transport) -> Bedrock {
        let (auth, transport) = match &settings.api_key {
            Some(_) => (Auth::Bearer, transport),
            None => {
                let sources = settings
                    .aws_sources
                    .clone()
                    .unwrap_or_else(|| AwsSources::from_env(&Default::default(), None, false));
                (
                    Auth::SigV4(Box::new(credentials::Chain::new(
                        settings.aws.clone(),
                        sources,
                    ))),
                    transport.with_key_env(Some("the AWS credentials")),
                )
            }
        };
        let peer = format!("bedrock ({})", label(&settings.base_url));
        Bedrock {
            inner: Arc::new(Inner {
                settings,
                auth,
                place: OnceCell::new(),
                peer,
                transport,
            }),
        }
    }

    /// The url a call to `model` goes to with the configured endpoint (a region found
    /// only in the AWS profile changes the default endpoint on the first call).
    pub fn url(&self, model: &str) -> Url {
        converse_url(&self.inner.settings.base_url, model)
    }

    /// Whether calls are signed with SigV4 (rather than sent with the API key).
    pub fn signs(&self) -> bool {
        matches!(self.inner.auth, Auth::SigV4(_))
    }

    /// The request body for `request`; an unsupported parameter is an error naming it.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        request_body(request)
    }

    /// The endpoint and the region, settled once: the region of the settings, else the
    /// AWS profile's `region` (read only when the settings have none), else the one in a
    /// `bedrock-runtime.{region}.amazonaws.com` endpoint. With the default endpoint, a
    /// region from the profile picks the endpoint too.
    async fn place(&self) -> Result<&Place, ConnectError> {
        let settings = &self.inner.settings;
        self.inner
            .place
            .get_or_try_init(|| async {
                let mut base_url = settings.base_url.clone();
                let mut region = settings.region.clone();
                if region.is_none()
                    && let Some(sources) = &settings.aws_sources
                {
                    region = sources.profile_region().await;
                    if let Some(r) = region.as_deref()
                        && sources.endpoint_is_default
                    {
                        let default = settings.kind.default_endpoint(Some(r));
                        base_url = Url::parse(&default).map_err(|e| {
                            ConnectError::config(format!(
                                "the bedrock endpoint `{default}` for the AWS profile's region is not a url: {e}"
                            ))
                        })?;
                    }
                }
                let region = region.or_else(|| host_region(&base_url));
                let peer = format!("bedrock ({})", label(&base_url));
                Ok(Place {
                    base_url,
                    region,
                    peer,
                })
            })
            .await
    }

    async fn call(&self, request: &ModelRequest) -> Result<ModelResponse, ConnectError> {
        let Prepared {
            body,
            notes,
            structured,
        } = prepare(request)?;
        let place = self.place().await?;
        let url = converse_url(&place.base_url, &request.model);
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let key_vars: Arc<str> = match &self.inner.auth {
            Auth::Bearer => {
                let key = self.inner.settings.require_key()?;
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                    .map_err(|_| {
                        ConnectError::config(
                            "the bedrock key (AWS_BEARER_TOKEN_BEDROCK) holds characters that cannot be sent in a header",
                        )
                    })?;
                value.set_sensitive(true);
                headers.insert(AUTHORIZATION, value);
                Arc::from("AWS_BEARER_TOKEN_BEDROCK")
            }
            Auth::SigV4(chain) => {
                let region = place.region.as_deref().ok_or_else(|| {
                    ConnectError::config(
                        "bedrock signs its requests for a region: set AWS_REGION, `region` in [providers.bedrock], or `region` in the AWS profile",
                    )
                })?;
                let found = chain.credentials(region).await?;
                // The transport sends `serde_json::to_vec(&body)`: sign those bytes.
                let bytes = serde_json::to_vec(&body)
                    .map_err(|e| ConnectError::config(format!("cannot encode the request: {e}")))?;
                for (name, value) in
                    sigv4_headers(&found.credentials, region, &url, &bytes, SystemTime::now())?
                {
                    headers.insert(name, value);
                }
                Arc::from(format!("{} (and the region they sign for)", found.source))
            }
        };
        let transport = &self.inner.transport;
        let peer = place.peer.as_str();
        let Posted {
            response,
            started,
            permit,
            cached,
            pending,
        } = transport
            .post_json_held(url, headers, &body, None, peer)
            .await
            .map_err(|e| explain_refusal(e, &key_vars))?;
        if !matches!(
            body_kind(response.headers()),
            BodyKind::Json | BodyKind::Unlabelled
        ) {
            return Err(transport
                .unexpected_body(response, peer, "application/json")
                .await);
        }
        let (value, first_byte) = transport.read_json(response, started, peer).await?;
        drop(permit);
        let forced = request
            .response_format
            .as_ref()
            .filter(|_| structured == Some(StructuredMode::ForcedTool))
            .map(|f| f.name.as_str());
        let result = converse_answer(value, peer, first_byte, started).map(|mut r| {
            let (text, calls) = take_forced(forced, std::mem::take(&mut r.text), r.tool_calls);
            ModelResponse {
                text,
                tool_calls: calls,
                notes,
                cached,
                ..r
            }
        });
        if result.is_ok() {
            pending.keep();
        }
        result
    }
}

impl Provider for Bedrock {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Bedrock
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        Box::pin(with_timeout(
            &self.inner.peer,
            self.inner.transport.limit(request.timeout),
            self.call(request),
        ))
    }
}

/// `{base}/model/{model}/converse`, the model id percent-encoded as one segment
/// (everything but `A-Z a-z 0-9 - _ . ~`, as the AWS SDKs do).
pub fn converse_url(base: &Url, model: &str) -> Url {
    let mut encoded = String::new();
    for b in model.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let mut url = base.clone();
    let path = format!(
        "{}/model/{encoded}/converse",
        base.path().trim_end_matches('/')
    );
    // `%` is kept as is by `set_path`, so the encoding above is what is sent.
    url.set_path(&path);
    url
}

/// The region in a `bedrock-runtime[-fips].{region}.amazonaws.com` endpoint.
fn host_region(url: &Url) -> Option<String> {
    let host = url.host_str()?;
    let mut parts = host.split('.');
    match (parts.next(), parts.next()) {
        (Some(service), Some(region))
            if service.starts_with("bedrock-runtime") && host.ends_with(".amazonaws.com") =>
        {
            Some(region.to_owned())
        }
        _ => None,
    }
}

/// The SigV4 headers (`authorization`, `x-amz-date`, and `x-amz-security-token` with a
/// session token) for a `POST` of `body` to `url` at `time`, signing `host`,
/// `content-type: application/json` and `x-amz-date`.
pub fn sigv4_headers(
    credentials: &AwsCredentials,
    region: &str,
    url: &Url,
    body: &[u8],
    time: SystemTime,
) -> Result<Vec<(HeaderName, HeaderValue)>, ConnectError> {
    let identity = aws_credential_types::Credentials::new(
        credentials.access_key_id.expose(),
        credentials.secret_access_key.expose(),
        credentials
            .session_token
            .as_ref()
            .map(|t| t.expose().to_owned()),
        None,
        "prill",
    )
    .into();
    // Neither error below can hold a key: the messages name only what was malformed.
    let cannot_sign = |what: &str| {
        ConnectError::config(format!(
            "cannot sign the bedrock request with SigV4: {what}"
        ))
    };
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SERVICE)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|_| cannot_sign("incomplete signing parameters"))?
        .into();
    let signable = SignableRequest::new(
        "POST",
        url.as_str(),
        [("content-type", "application/json")].into_iter(),
        SignableBody::Bytes(body),
    )
    .map_err(|_| cannot_sign("the url cannot be signed"))?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|_| cannot_sign("the credentials or the region are malformed"))?
        .into_parts();
    instructions
        .headers()
        .map(|(name, value)| {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| cannot_sign("a header name is malformed"))?;
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                cannot_sign("AWS_SESSION_TOKEN holds characters that cannot be sent")
            })?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

/// A `403` as Bedrock means it. The transport already leads with the service's own
/// error type and message, and says the key was refused when the error is about the
/// credentials (`UnrecognizedClientException`, a signature that does not match, a bad
/// API key); here that hint names where the credentials came from (`key_vars`), and a
/// 403 about access (`AccessDeniedException`: the account or role may not invoke the
/// model) says what to check instead.
fn explain_refusal(error: ConnectError, key_vars: &str) -> ConnectError {
    const REFUSED: &str = "; the key was refused: check ";
    let ConnectError::Status {
        server,
        status: 403,
        body,
        attempts,
    } = error
    else {
        return error;
    };
    let body = match body.split_once(REFUSED) {
        Some((said, _)) => format!("{said}{REFUSED}{key_vars}"),
        None => format!(
            "{body}; the credentials were accepted but lack access: check that this account or role may invoke this model in this region (model access in the Bedrock console, IAM bedrock:InvokeModel)"
        ),
    };
    ConnectError::Status {
        server,
        status: 403,
        body,
        attempts,
    }
}

/// Whether a stop reason says the text is not the model's answer but what a guardrail
/// or a content filter put in its place (`guardrail_intervened`, `content_filtered`).
pub fn blocked(stop_reason: Option<&str>) -> bool {
    matches!(
        stop_reason,
        Some("guardrail_intervened" | "content_filtered")
    )
}

/// A Converse answer: `output.message.content` (`text` and `toolUse` blocks),
/// `stopReason`, `usage`.
fn converse_answer(
    value: Value,
    peer: &str,
    first_byte: Option<Duration>,
    started: Instant,
) -> Result<ModelResponse, ConnectError> {
    let Some(content) = value["output"]["message"]["content"].as_array() else {
        let message = value["message"]
            .as_str()
            .map(|m| {
                format!(
                    "the answer has no `output.message.content`: {}",
                    cut(m, 300)
                )
            })
            .unwrap_or_else(|| "the answer has no `output.message.content`".to_owned());
        return Err(ConnectError::protocol(peer, message));
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        if let Some(t) = block["text"].as_str() {
            text.push_str(t);
        } else if let Some(call) = block.get("toolUse") {
            tool_calls.push(ModelToolCall {
                id: call["toolUseId"].as_str().map(str::to_owned),
                name: call["name"].as_str().unwrap_or_default().to_owned(),
                arguments: call.get("input").cloned().unwrap_or_else(|| json!({})),
            });
        }
    }
    let usage = value
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| TokenUsage {
            reasoning: None,
            input: u["inputTokens"].as_u64(),
            output: u["outputTokens"].as_u64(),
        });
    let stop_reason = value["stopReason"].as_str().map(str::to_owned);
    Ok(ModelResponse {
        cached: false,
        refusal: blocked(stop_reason.as_deref()) && tool_calls.is_empty(),
        notes: Vec::new(),
        text,
        tool_calls,
        usage,
        timings: Timings {
            first_byte,
            total: started.elapsed(),
        },
        stop_reason,
        raw: RawEvents::one(value),
        events: 1,
    })
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;
    use crate::provider::{ChatMessage, Role, Sampling, Secret, ToolDef};

    fn request(model: &str) -> ModelRequest {
        ModelRequest {
            model: model.into(),
            system: Some("be brief".into()),
            messages: vec![ChatMessage::text(Role::User, "hi")],
            tools: vec![ToolDef {
                name: "lookup".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {}}),
            }],
            sampling: Sampling {
                max_tokens: Some(50),
                temperature: Some(0.5),
                top_p: Some(0.9),
                top_k: Some(5),
                stop_sequences: vec!["END".into()],
                seed: Some(1),
            },
            timeout: None,
            response_format: None,
        }
    }

    #[test]
    fn body_maps_inference_config_tools_and_top_k() {
        let body = request_body(&request("anthropic.claude-3-haiku-20240307-v1:0")).unwrap();
        assert_eq!(
            body,
            json!({
                "messages": [{"role": "user", "content": [{"text": "hi"}]}],
                "system": [{"text": "be brief"}],
                "inferenceConfig": {"maxTokens": 50, "temperature": 0.5, "topP": 0.9,
                    "stopSequences": ["END"]},
                "toolConfig": {"tools": [{"toolSpec": {"name": "lookup",
                    "inputSchema": {"json": {"type": "object", "properties": {}}}}}]},
                "additionalModelRequestFields": {"top_k": 5},
            })
        );
        let e = request_body(&request("meta.llama3-1-8b-instruct-v1:0")).unwrap_err();
        assert!(e.to_string().contains("`top_k`"), "{e}");
        assert!(is_anthropic_model(
            "us.anthropic.claude-3-5-sonnet-20241022-v2:0"
        ));
    }

    #[test]
    fn model_ids_are_one_encoded_segment() {
        let base = Url::parse("https://bedrock-runtime.us-east-1.amazonaws.com").unwrap();
        assert_eq!(
            converse_url(&base, "anthropic.claude-3-haiku-20240307-v1:0").as_str(),
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
        );
        let prefixed = Url::parse("http://127.0.0.1:9/proxy/").unwrap();
        assert_eq!(
            converse_url(&prefixed, "arn:aws:bedrock:us-east-1::foundation-model/x").as_str(),
            "http://127.0.0.1:9/proxy/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fx/converse"
        );
    }

    /// The signature of a fixed request, checked against one computed independently
    /// (Python's `hmac`/`hashlib` following AWS's SigV4 steps, including the double
    /// encoding of `%3A` in the canonical path).
    #[test]
    fn sigv4_signature_of_a_known_request() {
        let credentials = AwsCredentials {
            access_key_id: Secret::new("AKIDEXAMPLE"),
            secret_access_key: Secret::new("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: None,
        };
        let url = converse_url(
            &Url::parse("https://bedrock-runtime.us-east-1.amazonaws.com").unwrap(),
            "anthropic.claude-3-haiku-20240307-v1:0",
        );
        let time = UNIX_EPOCH + Duration::from_secs(1_440_938_160); // 2015-08-30T12:36:00Z
        let body = br#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
        let headers = sigv4_headers(&credentials, "us-east-1", &url, body, time).unwrap();
        let get = |n: &str| {
            headers
                .iter()
                .find(|(name, _)| name == n)
                .map(|(_, v)| v.to_str().unwrap().to_owned())
        };
        assert_eq!(get("x-amz-date").as_deref(), Some("20150830T123600Z"));
        assert_eq!(
            get("authorization").as_deref(),
            Some(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=b2d89376425920647b8197be6560da5f53c4d9cc5ac66b56efafa43ba66c9022"
            )
        );
        assert!(get("x-amz-security-token").is_none());
        // Signing is deterministic for the same time, and a session token is sent.
        let again = sigv4_headers(&credentials, "us-east-1", &url, body, time).unwrap();
        assert_eq!(headers, again);
        let with_token = AwsCredentials {
            session_token: Some(Secret::new("token")),
            ..credentials
        };
        let signed = sigv4_headers(&with_token, "us-east-1", &url, body, time).unwrap();
        assert!(signed.iter().any(|(n, _)| n == "x-amz-security-token"));
    }

    #[test]
    fn response_format_is_a_forced_tool_spec() {
        let mut r = request(CLAUDE_TEST);
        r.response_format = Some(crate::provider::ResponseFormat {
            name: "verdict".into(),
            schema: json!({"type": "object"}),
        });
        let body = request_body(&r).unwrap();
        assert_eq!(
            body["toolConfig"],
            json!({"tools": [
                {"toolSpec": {"name": "lookup",
                    "inputSchema": {"json": {"type": "object", "properties": {}}}}},
                {"toolSpec": {"name": "verdict", "description": "Record the answer.",
                    "inputSchema": {"json": {"type": "object"}}}},
            ], "toolChoice": {"tool": {"name": "verdict"}}})
        );
    }

    const CLAUDE_TEST: &str = "anthropic.claude-3-haiku-20240307-v1:0";

    #[test]
    fn converse_answers_are_read() {
        let value = json!({
            "output": {"message": {"role": "assistant", "content": [
                {"text": "Let me look."},
                {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"q": "x"}}},
            ]}},
            "stopReason": "tool_use",
            "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
        });
        let r = converse_answer(value, "p", None, Instant::now()).unwrap();
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.tool_calls[0].arguments, json!({"q": "x"}));
        assert_eq!(r.usage.unwrap().output, Some(4));
        assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    }
}
