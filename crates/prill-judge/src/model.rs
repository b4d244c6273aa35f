//! [`ModelJudge`]: a model behind any [`Provider`] of `prill-connect` judges, with
//! Prill's own prompt, a structured verdict in the provider's structured-output mode,
//! and the sampling the model takes ([`crate::sampling`]): temperature 0 where it takes
//! one, none for reasoning models and models that refuse it, and a token budget that
//! leaves a reasoning model room to reason. An empty answer cut at the token limit is
//! an error that says to raise `[judge] max_tokens`.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use prill_check::Judge;
//! use prill_connect::HttpOptions;
//! use prill_connect::provider::{self, Limits, ProviderKind, ProviderSettings};
//! use prill_judge::ModelJudge;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let env = std::env::vars().collect();
//! let settings = ProviderSettings::resolve(ProviderKind::Openai, &env, None)?;
//! let openai = provider::build(
//!     ProviderKind::Openai,
//!     settings,
//!     &HttpOptions::default(),
//!     Limits::default(),
//! )?;
//! let judge = ModelJudge::new(openai, "gpt-4o-mini");
//! let verdict = judge.judge("names a band", "The Beatles recorded it").await?;
//! println!("{} ({})", verdict.pass, verdict.reason);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::Duration;

use prill_check::{BoxFuture, Judge, JudgeError, JudgeVerdict};
use prill_connect::provider::{ChatMessage, ModelRequest, Provider, ResponseFormat, Role};

use crate::cache::Cache;
use crate::prompt::{
    SYSTEM_PROMPT, VERDICT_NAME, Vote, parse_structured, user_message, verdict_schema,
};
use crate::sampling::JudgeSampling;
use crate::voting::{Ask, AskError, Common, Votes};

/// The limit on one call to the judge's model, unless set otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// A judge that asks a model.
#[derive(Debug, Clone)]
pub struct ModelJudge {
    common: Common,
    backend: Backend,
}

#[derive(Debug, Clone)]
struct Backend {
    provider: Arc<dyn Provider>,
    model: String,
    timeout: Duration,
    sampling: JudgeSampling,
}

impl ModelJudge {
    /// A judge asking `model` through `provider`: one vote, no cache,
    /// [`DEFAULT_TIMEOUT`].
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>) -> ModelJudge {
        let model = model.into();
        ModelJudge {
            common: Common {
                id: format!("{}:{model}", provider.kind().name()),
                ..Common::default()
            },
            backend: Backend {
                provider,
                model,
                timeout: DEFAULT_TIMEOUT,
                sampling: JudgeSampling::default(),
            },
        }
    }

    /// Takes `votes` verdicts and the majority.
    pub fn with_votes(mut self, votes: Votes) -> ModelJudge {
        self.common.votes = votes;
        self
    }

    /// Caches verdicts in `cache`.
    pub fn with_cache(mut self, cache: Cache) -> ModelJudge {
        self.common.cache = Some(cache);
        self
    }

    /// Bounds each call to the model.
    pub fn with_timeout(mut self, timeout: Duration) -> ModelJudge {
        self.backend.timeout = timeout;
        self
    }

    /// Takes `[judge] temperature` and `max_tokens` (each where the model takes it).
    pub fn with_sampling(mut self, sampling: JudgeSampling) -> ModelJudge {
        self.backend.sampling = sampling;
        self
    }

    /// The sentence to show once when `[judge] temperature` is set and the model takes
    /// none; `None` otherwise.
    pub fn warning(&self) -> Option<String> {
        let b = &self.backend;
        b.sampling.temperature_warning(b.provider.kind(), &b.model)
    }

    /// `provider:model`, as reports name the judge.
    pub fn id(&self) -> &str {
        &self.common.id
    }

    /// The request for one vote.
    pub fn request(&self, criteria: &str, sample: &str) -> ModelRequest {
        self.backend.request(criteria, sample)
    }
}

impl Backend {
    fn request(&self, criteria: &str, sample: &str) -> ModelRequest {
        ModelRequest {
            model: self.model.clone(),
            system: Some(SYSTEM_PROMPT.to_owned()),
            messages: vec![ChatMessage::text(
                Role::User,
                user_message(criteria, sample),
            )],
            tools: Vec::new(),
            sampling: self.sampling.for_model(self.provider.kind(), &self.model),
            timeout: Some(self.timeout),
            response_format: Some(ResponseFormat {
                name: VERDICT_NAME.to_owned(),
                schema: verdict_schema(),
            }),
        }
    }
}

impl Ask for Backend {
    fn ask<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<Vote, AskError>> {
        Box::pin(async move {
            let request = self.request(criteria, sample);
            let response = self
                .provider
                .complete(&request)
                .await
                .map_err(|e| AskError::Failed(e.to_string()))?;
            if response.text.trim().is_empty() && response.truncated() {
                return Err(AskError::Failed(cut_short(
                    &request,
                    response.stop_reason.as_deref(),
                )));
            }
            parse_structured(&response.text).map_err(|e| AskError::Unparseable(e.to_string()))
        })
    }
}

/// The error for an empty answer that stopped at the token limit (`stop_reason`).
fn cut_short(request: &ModelRequest, stop_reason: Option<&str>) -> String {
    let limit = request.sampling.max_tokens.unwrap_or_default();
    format!(
        "{} stopped at its token limit ({limit} tokens, stop reason `{}`) before it gave a verdict (a reasoning model spends tokens on hidden reasoning first); raise `[judge] max_tokens` in prill.toml",
        request.model,
        stop_reason.unwrap_or("length")
    )
}

impl Judge for ModelJudge {
    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
        Box::pin(self.common.decide(&self.backend, criteria, sample))
    }
}
