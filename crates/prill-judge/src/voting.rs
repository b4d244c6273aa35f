//! What every backend shares: asking again after an unparseable answer, taking `votes`
//! verdicts and the majority, the cache, and the verdict's metadata.
//!
//! ```
//! use prill_judge::voting::Votes;
//!
//! assert_eq!(Votes::new(3).unwrap().get(), 3);
//! assert!(Votes::new(2).is_err());
//! assert_eq!(
//!     Votes::new(0).unwrap_err().to_string(),
//!     "the judge's votes must be an odd number of at least 1, not 0"
//! );
//! ```

use prill_check::{BoxFuture, JudgeError, JudgeVerdict};
use serde_json::{Value, json};

use crate::cache::{Cache, Entry};
use crate::prompt::{PROMPT_VERSION, Vote};

/// How many times one vote is asked for when the answer cannot be parsed: once, then
/// two more.
pub const ATTEMPTS: u32 = 3;

/// How many votes to take: odd and at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Votes(u32);

impl Votes {
    /// One vote.
    pub const ONE: Votes = Votes(1);

    /// `n` votes, when `n` is odd.
    pub fn new(n: u32) -> Result<Votes, VotesError> {
        if n.is_multiple_of(2) {
            Err(VotesError(n))
        } else {
            Ok(Votes(n))
        }
    }

    /// The number.
    pub fn get(self) -> u32 {
        self.0
    }
}

/// A number of votes that is not odd (zero included): a tie could not be broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the judge's votes must be an odd number of at least 1, not {0}")]
pub struct VotesError(pub u32);

impl Default for Votes {
    fn default() -> Self {
        Votes::ONE
    }
}

/// Why one attempt gave no vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AskError {
    /// An answer came that holds no verdict: worth asking again.
    Unparseable(String),
    /// The judge could not be asked (unreachable, timeout, an error status).
    Failed(String),
}

/// One backend: asks once for one vote.
pub(crate) trait Ask: Send + Sync {
    fn ask<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<Vote, AskError>>;
}

/// Settings shared by every judge.
#[derive(Debug, Clone, Default)]
pub(crate) struct Common {
    /// `provider:model` or `neuro-san:agent`.
    pub(crate) id: String,
    pub(crate) votes: Votes,
    pub(crate) cache: Option<Cache>,
}

impl Common {
    /// The verdict: from the cache, else from `votes` votes of `backend`.
    pub(crate) async fn decide(
        &self,
        backend: &dyn Ask,
        criteria: &str,
        sample: &str,
    ) -> Result<JudgeVerdict, JudgeError> {
        let key = Cache::key(&self.id, PROMPT_VERSION, self.votes.get(), criteria, sample);
        if let Some(entry) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            return Ok(self.verdict(entry, true));
        }
        let mut votes = Vec::with_capacity(self.votes.get() as usize);
        for _ in 0..self.votes.get() {
            votes.push(self.one_vote(backend, criteria, sample).await?);
        }
        let passes = votes.iter().filter(|v| v.pass).count();
        let pass = passes * 2 > votes.len();
        let reason = votes
            .iter()
            .find(|v| v.pass == pass)
            .map(|v| v.reason.clone())
            .unwrap_or_default();
        let entry = Entry {
            pass,
            reason,
            votes,
        };
        if let Some(cache) = &self.cache
            && let Err(e) = cache.put(&key, &entry)
        {
            tracing::warn!(dir = %cache.dir().display(), error = %e, "cannot cache the verdict");
        }
        Ok(self.verdict(entry, false))
    }

    async fn one_vote(
        &self,
        backend: &dyn Ask,
        criteria: &str,
        sample: &str,
    ) -> Result<Vote, JudgeError> {
        let mut last = String::new();
        for attempt in 1..=ATTEMPTS {
            match backend.ask(criteria, sample).await {
                Ok(vote) => return Ok(vote),
                Err(AskError::Failed(message)) => {
                    return Err(JudgeError::new(format!("{}: {message}", self.id)));
                }
                Err(AskError::Unparseable(message)) => {
                    tracing::debug!(judge = %self.id, attempt, %message, "unparseable verdict");
                    last = message;
                }
            }
        }
        Err(JudgeError::new(format!(
            "{} gave no verdict that could be read after {ATTEMPTS} attempts: {last}",
            self.id
        )))
    }

    fn verdict(&self, entry: Entry, cached: bool) -> JudgeVerdict {
        let mut verdict = JudgeVerdict::new(entry.pass, entry.reason);
        let metadata = &mut verdict.metadata;
        metadata.insert("judge".to_owned(), Value::String(self.id.clone()));
        metadata.insert("prompt_version".to_owned(), json!(PROMPT_VERSION));
        metadata.insert(
            "votes".to_owned(),
            Value::Array(entry.votes.iter().map(Vote::to_json).collect()),
        );
        metadata.insert("cached".to_owned(), Value::Bool(cached));
        verdict
    }
}
