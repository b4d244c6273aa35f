//! Hugging Face: the OpenAI-compatible router (`https://router.huggingface.co/v1`), an
//! Inference Endpoint, or a TGI server (`http://host:8080/v1`), all Chat Completions at
//! `{base}/chat/completions` with `Authorization: Bearer {token}`.
//!
//! The mapping is [`super::openai`]'s, in one of two shapes: the router's, OpenAI's own;
//! or TGI's (TGI servers and Inference Endpoints: every host but the router's, or
//! `api = "tgi"` in `prill.toml`), which differs where TGI's router does:
//!
//! | [`ModelRequest`] | router | TGI |
//! |---|---|---|
//! | `response_format` | `{"type": "json_schema", "json_schema": {"name", "schema", "strict": true}}` | `{"type": "json", "value": schema}` |
//! | `seed` | `seed` | `seed`; a negative one is an error naming it, before anything is sent (TGI's is unsigned) |
//! | `response_format` with `tools` | both sent | an error (TGI refuses a grammar with tools) |
//! | `max_tokens` | `max_tokens` | `max_tokens` |
//! | `top_k` | unsupported: an error | unsupported: an error |
//!
//! The token is `HF_TOKEN`, else `HUGGING_FACE_HUB_TOKEN`, else the file `hf auth login`
//! writes (`HF_TOKEN_PATH`, `$HF_HOME/token`, `$XDG_CACHE_HOME/huggingface/token`,
//! `~/.cache/huggingface/token`, as `huggingface_hub` looks). It is needed by Hugging
//! Face's own hosts (`*.huggingface.co`, `*.huggingface.cloud`); a local TGI takes none.

use reqwest::Url;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::openai::ChatCompletions;
use super::transport::Transport;
use super::{ModelRequest, ModelResponse, Provider, ProviderKind, ProviderSettings};
use crate::BoxFuture;
use crate::error::ConnectError;

/// Hugging Face's router, an Inference Endpoint or a TGI server.
#[derive(Debug, Clone)]
pub struct HuggingFace(ChatCompletions);

impl HuggingFace {
    /// The provider for `settings`, reached through `transport`.
    pub fn new(settings: ProviderSettings, transport: Transport) -> HuggingFace {
        HuggingFace(ChatCompletions::new(
            ProviderKind::Huggingface,
            settings,
            transport,
        ))
    }

    /// Streams the answer (`true`, the default) or asks for it whole.
    pub fn streaming(self, stream: bool) -> HuggingFace {
        HuggingFace(self.0.streaming(stream))
    }

    /// The request body for `request`; an unsupported parameter is an error naming it.
    pub fn body(&self, request: &ModelRequest) -> Result<Value, ConnectError> {
        self.0.body(request)
    }

    /// The url, headers and body a call for `request` sends, without sending it.
    pub fn prepared(
        &self,
        request: &ModelRequest,
    ) -> Result<(Url, HeaderMap, Value), ConnectError> {
        self.0.prepared(request)
    }
}

impl Provider for HuggingFace {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Huggingface
    }

    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<ModelResponse, ConnectError>> {
        self.0.complete(request)
    }
}
