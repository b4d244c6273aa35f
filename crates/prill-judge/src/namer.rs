//! Naming failure modes with a model, for `prill assess --classify llm`: the model gives
//! every mode a short name, and modes it names alike are the same failure (the assessor
//! merges them). The deterministic signatures stay beside the names.

use std::sync::Arc;
use std::time::Duration;

use prill_check::{BoxFuture, JudgeError};
use prill_connect::provider::{ChatMessage, ModelRequest, Provider, ResponseFormat, Role};
use serde_json::{Value, json};

use prill_spec::model::family::traits;

use crate::sampling::{JudgeSampling, REASONING_MAX_TOKENS};

/// Version of the naming prompt, recorded with every named mode.
pub const NAMER_PROMPT_VERSION: &str = "prill-modes-1";

const SYSTEM: &str = "You group the ways a test of an AI agent failed. You get a numbered list of failure modes, each with how often it happened, its signature (which check failed and on what) and an example message. Give each mode a short name of 2 to 6 words that says how the agent failed, in plain words. Give the same name to modes that are the same kind of failure, and different names to different kinds. Answer with the JSON object asked for, one name per mode, in the order given.";

/// One mode as the namer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeInput {
    /// The deterministic signature.
    pub signature: String,
    /// An example failure message.
    pub example: String,
    /// How many samples failed this way.
    pub count: u64,
}

/// Names failure modes.
pub trait ModeNamer: Send + Sync {
    /// One name per mode, in order.
    fn name_modes<'a>(
        &'a self,
        modes: &'a [ModeInput],
    ) -> BoxFuture<'a, Result<Vec<String>, JudgeError>>;
}

/// A model that names modes.
#[derive(Debug, Clone)]
pub struct ModelNamer {
    provider: Arc<dyn Provider>,
    model: String,
    timeout: Duration,
    sampling: JudgeSampling,
}

/// The naming answer's budget for a model that answers at once: a name per mode.
const NAMER_MAX_TOKENS: u64 = 600;

impl ModelNamer {
    /// Names with `model` of `provider`.
    pub fn new(provider: Arc<dyn Provider>, model: impl Into<String>) -> ModelNamer {
        ModelNamer {
            provider,
            model: model.into(),
            timeout: crate::DEFAULT_TIMEOUT,
            sampling: JudgeSampling::default(),
        }
    }

    /// Takes `[judge] temperature` and `max_tokens`, as the judge does.
    pub fn with_sampling(mut self, sampling: JudgeSampling) -> ModelNamer {
        self.sampling = sampling;
        self
    }

    /// The request for `modes`.
    /// The sampling is the judge's ([`JudgeSampling::for_model`]), with a budget of
    /// 600 tokens for a model that answers at once ([`REASONING_MAX_TOKENS`] for a
    /// reasoning model) unless `[judge] max_tokens` sets one.
    pub fn request(&self, modes: &[ModeInput]) -> ModelRequest {
        let kind = self.provider.kind();
        let sampling = JudgeSampling {
            max_tokens: self
                .sampling
                .max_tokens
                .or(Some(if traits(kind, &self.model).reasoning {
                    REASONING_MAX_TOKENS
                } else {
                    NAMER_MAX_TOKENS
                })),
            ..self.sampling
        };
        let mut list = String::new();
        for (i, m) in modes.iter().enumerate() {
            list.push_str(&format!(
                "{}. ({} times) signature: {}\n   example: {}\n",
                i + 1,
                m.count,
                m.signature,
                m.example
            ));
        }
        ModelRequest {
            model: self.model.clone(),
            system: Some(SYSTEM.to_owned()),
            messages: vec![ChatMessage::text(
                Role::User,
                format!(
                    "The failure modes:\n{list}\nName each of the {} modes.",
                    modes.len()
                ),
            )],
            tools: Vec::new(),
            sampling: sampling.for_model(kind, &self.model),
            timeout: Some(self.timeout),
            response_format: Some(ResponseFormat {
                name: "mode_names".to_owned(),
                schema: json!({
                    "type": "object",
                    "properties": {"names": {"type": "array", "items": {"type": "string"}}},
                    "required": ["names"],
                    "additionalProperties": false
                }),
            }),
        }
    }
}

/// Why a reply holds no usable names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoNames {
    /// The reply is not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The reply has no `names` list.
    #[error("no `names` list")]
    NoList,
    /// The list has another number of names than there are modes.
    #[error("{found} names for {wanted} modes")]
    WrongCount {
        /// Names in the reply.
        found: usize,
        /// Modes to name.
        wanted: usize,
    },
    /// A name is empty (or not text).
    #[error("an empty name")]
    EmptyName,
}

/// The names in a reply, when it holds exactly `n` non-empty ones.
pub fn parse_names(text: &str, n: usize) -> Result<Vec<String>, NoNames> {
    let trimmed = text.trim();
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .unwrap_or(trimmed);
    let value: Value =
        serde_json::from_str(body.trim()).map_err(|e| NoNames::NotJson(e.to_string()))?;
    let names: Vec<String> = value
        .get("names")
        .and_then(Value::as_array)
        .ok_or(NoNames::NoList)?
        .iter()
        .map(|v| v.as_str().map(|s| s.trim().to_owned()).unwrap_or_default())
        .collect();
    if names.len() != n {
        return Err(NoNames::WrongCount {
            found: names.len(),
            wanted: n,
        });
    }
    if names.iter().any(String::is_empty) {
        return Err(NoNames::EmptyName);
    }
    Ok(names)
}

impl ModeNamer for ModelNamer {
    fn name_modes<'a>(
        &'a self,
        modes: &'a [ModeInput],
    ) -> BoxFuture<'a, Result<Vec<String>, JudgeError>> {
        Box::pin(async move {
            if modes.is_empty() {
                return Ok(Vec::new());
            }
            let request = self.request(modes);
            let mut last = String::new();
            for _ in 0..3 {
                let response = self
                    .provider
                    .complete(&request)
                    .await
                    .map_err(|e| JudgeError::new(format!("naming modes: {e}")))?;
                if response.text.trim().is_empty() && response.truncated() {
                    return Err(JudgeError::new(format!(
                        "naming modes: {} stopped at its token limit ({} tokens) before it answered; raise `[judge] max_tokens` in prill.toml",
                        self.model,
                        request.sampling.max_tokens.unwrap_or_default()
                    )));
                }
                match parse_names(&response.text, modes.len()) {
                    Ok(names) => return Ok(names),
                    Err(why) => last = why.to_string(),
                }
            }
            Err(JudgeError::new(format!(
                "naming modes: no usable answer after 3 tries ({last})"
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_match_the_modes() {
        assert_eq!(
            parse_names(r#"{"names": ["wrong band", "refusal"]}"#, 2).unwrap(),
            ["wrong band", "refusal"]
        );
        assert_eq!(
            parse_names("```json\n{\"names\": [\"x\"]}\n```", 1).unwrap(),
            ["x"]
        );
        assert_eq!(
            parse_names(r#"{"names": ["a"]}"#, 2),
            Err(NoNames::WrongCount {
                found: 1,
                wanted: 2
            })
        );
        assert_eq!(
            parse_names(r#"{"names": ["a", " "]}"#, 2),
            Err(NoNames::EmptyName)
        );
        assert_eq!(parse_names(r#"{"list": []}"#, 1), Err(NoNames::NoList));
        let e = parse_names("not json", 1).unwrap_err();
        assert!(e.to_string().starts_with("not JSON: "), "{e}");
        assert_eq!(
            NoNames::WrongCount {
                found: 1,
                wanted: 2
            }
            .to_string(),
            "1 names for 2 modes"
        );
    }
}
