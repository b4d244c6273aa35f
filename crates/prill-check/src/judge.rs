//! The [`Judge`] trait that `gist` and `not_gist` call. `prill-judge` implements it
//! over real models; this crate only declares it, so the engine stays free of I/O.

use std::future::Future;
use std::pin::Pin;

/// A boxed future that can cross threads, as trait objects return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A judge's answer for one sample against one set of criteria.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeVerdict {
    /// Whether the sample meets the criteria.
    pub pass: bool,
    /// Why, in the judge's words.
    pub reason: String,
    /// Anything else worth reporting (model, votes, cache hit, ...).
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

impl JudgeVerdict {
    /// A verdict with a reason and no metadata.
    pub fn new(pass: bool, reason: impl Into<String>) -> JudgeVerdict {
        JudgeVerdict {
            pass,
            reason: reason.into(),
            metadata: serde_json::Map::new(),
        }
    }
}

/// Why a judge could not give a verdict. A gist check with a judge error *errors*;
/// it never passes or fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JudgeError {
    /// What went wrong, lowercase, no trailing period.
    pub message: String,
}

impl JudgeError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> JudgeError {
        JudgeError {
            message: message.into(),
        }
    }
}

/// Decides whether a text sample meets criteria written in words.
pub trait Judge: Send + Sync {
    /// Judges `sample` against `criteria`. Non-string values reach the judge as their
    /// JSON text.
    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>>;
}
