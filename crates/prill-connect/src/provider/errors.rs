//! What a provider said in an error answer: its own error type and message, read from
//! each provider's error shape, so that a 403 leads with the provider's words and only
//! a refused credential gets the hint to check the key.
//!
//! | provider | type | message |
//! |---|---|---|
//! | Anthropic `{"type": "error", "error": {"type", "message"}}` | `error.type` | `error.message` |
//! | OpenAI and compatible `{"error": {"message", "type", "code"}}` | `error.code`, else `error.type` | `error.message` |
//! | Bedrock | the `x-amzn-ErrorType` header (before its `:`) | `message`, else `Message` |
//! | Hugging Face, TGI, Ollama `{"error": "...", "error_type"?}` | `error_type`, if any | `error` |

use std::fmt;

use serde_json::Value;

use crate::error::cut;

/// How much of a provider's message an error shows.
const MESSAGE_SHOWN: usize = 300;

/// The error types, in any provider's words, that mean the credentials themselves were
/// refused (AWS answers those with 403, not 401).
const CREDENTIAL_TYPES: [&str; 8] = [
    "authentication_error",
    "invalid_api_key",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "IncompleteSignatureException",
    "MissingAuthenticationTokenException",
    "ExpiredTokenException",
    "InvalidClientTokenId",
];

/// Words of a 403 message that speak of the credentials rather than of access to a
/// resource (AWS's `Missing Authentication Token`, `The request signature we calculated
/// does not match`, `The security token included in the request is invalid`).
const CREDENTIAL_WORDS: [&str; 4] = ["authenticat", "signature", "security token", "credential"];

/// A provider's own error type and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Said {
    /// `permission_error`, `AccessDeniedException`, `model_not_found`, ...
    pub kind: Option<String>,
    /// The provider's message.
    pub message: String,
}

impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = cut(self.message.trim(), MESSAGE_SHOWN);
        match &self.kind {
            Some(kind) => write!(f, "{kind}: {message}"),
            None => f.write_str(&message),
        }
    }
}

/// What the provider said in an error `body` (with keys already blanked out), given the
/// `x-amzn-ErrorType` header, if any; `None` when the body is in no known shape.
pub(crate) fn provider_said(aws_type: Option<&str>, body: &str) -> Option<Said> {
    let value: Value = serde_json::from_str(body.trim()).ok()?;
    let error = &value["error"];
    if let Some(message) = text(&error["message"]) {
        // Anthropic's `error.type`; OpenAI's `code` says more than its `type`
        // (`model_not_found` rather than `invalid_request_error`).
        let kind = text(&error["code"]).or_else(|| text(&error["type"]));
        return Some(Said {
            kind: kind.map(str::to_owned),
            message: message.to_owned(),
        });
    }
    if let Some(message) = text(&value["message"]).or_else(|| text(&value["Message"])) {
        let kind = aws_type
            .and_then(|t| t.split(':').next())
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .or_else(|| text(&value["__type"]).and_then(|t| t.rsplit('#').next()));
        return Some(Said {
            kind: kind.map(str::to_owned),
            message: message.to_owned(),
        });
    }
    text(error).map(|message| Said {
        kind: text(&value["error_type"]).map(str::to_owned),
        message: message.to_owned(),
    })
}

/// The text of `v`, trimmed; `None` when it is not a string or is blank.
fn text(v: &Value) -> Option<&str> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// Whether an answer with `status` says the credentials were refused: every 401, and a
/// 403 whose error type or message is about the credentials (AWS's way of refusing a
/// key). A 403 that says the key may not use a model is not.
pub(crate) fn refused_credentials(status: reqwest::StatusCode, said: Option<&Said>) -> bool {
    match status.as_u16() {
        401 => true,
        403 => said.is_some_and(|said| {
            let kind = said.kind.as_deref().unwrap_or_default();
            let message = said.message.to_ascii_lowercase();
            CREDENTIAL_TYPES.contains(&kind) || CREDENTIAL_WORDS.iter().any(|w| message.contains(w))
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use reqwest::StatusCode;

    use super::*;

    fn said(kind: Option<&str>, message: &str) -> Option<Said> {
        Some(Said {
            kind: kind.map(str::to_owned),
            message: message.to_owned(),
        })
    }

    #[test]
    fn each_provider_s_error_shape_is_read() {
        let anthropic = r#"{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified model."}}"#;
        assert_eq!(
            provider_said(None, anthropic),
            said(
                Some("permission_error"),
                "Your API key does not have permission to use the specified model."
            )
        );
        let openai = r#"{"error":{"message":"Project does not have access to model gpt-5","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#;
        assert_eq!(
            provider_said(None, openai),
            said(
                Some("model_not_found"),
                "Project does not have access to model gpt-5"
            )
        );
        let bedrock =
            r#"{"message":"You don't have access to the model with the specified model ID."}"#;
        assert_eq!(
            provider_said(
                Some("AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
                bedrock
            ),
            said(
                Some("AccessDeniedException"),
                "You don't have access to the model with the specified model ID."
            )
        );
        let capital = r#"{"Message":"User is not authorized"}"#;
        assert_eq!(
            provider_said(Some("AccessDeniedException"), capital),
            said(Some("AccessDeniedException"), "User is not authorized")
        );
        let hf = r#"{"error":"Model requires a Pro subscription","error_type":"forbidden"}"#;
        assert_eq!(
            provider_said(None, hf),
            said(Some("forbidden"), "Model requires a Pro subscription")
        );
        let ollama = r#"{"error":"unauthorized"}"#;
        assert_eq!(provider_said(None, ollama), said(None, "unauthorized"));
        assert_eq!(provider_said(None, "<html>Forbidden</html>"), None);
    }

    #[test]
    fn only_refused_credentials_get_the_hint() {
        let forbidden = StatusCode::FORBIDDEN;
        assert!(refused_credentials(StatusCode::UNAUTHORIZED, None));
        assert!(!refused_credentials(
            forbidden,
            said(
                Some("permission_error"),
                "Your API key does not have permission to use the specified model."
            )
            .as_ref()
        ));
        assert!(!refused_credentials(
            forbidden,
            said(
                Some("AccessDeniedException"),
                "You don't have access to the model"
            )
            .as_ref()
        ));
        assert!(refused_credentials(
            forbidden,
            said(
                Some("UnrecognizedClientException"),
                "The security token included in the request is invalid."
            )
            .as_ref()
        ));
        assert!(refused_credentials(
            forbidden,
            said(None, "Missing Authentication Token").as_ref()
        ));
        assert!(!refused_credentials(forbidden, None));
        assert!(!refused_credentials(StatusCode::BAD_REQUEST, None));
    }
}
