//! [`NeuroSanJudge`]: a neuro-san agent judges (`neuro-san:<agent>`), reached over
//! http like any agent under test. It gets the criteria and the sample in Prill's own
//! words and answers `pass` or `fail` as a word; the whole answer is the reason.
//!
//! ```no_run
//! use prill_check::Judge;
//! use prill_connect::{HttpOptions, NeuroSanHttp, Url};
//! use prill_judge::NeuroSanJudge;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = NeuroSanHttp::new(Url::parse("http://localhost:8080")?, &HttpOptions::default())?;
//! let judge = NeuroSanJudge::new(server, "gist");
//! let verdict = judge.judge("names a band", "The Beatles recorded it").await?;
//! println!("{} ({})", verdict.pass, verdict.reason);
//! # Ok(())
//! # }
//! ```

use std::time::Duration;

use prill_check::{BoxFuture, Judge, JudgeError, JudgeVerdict};
use prill_connect::{AgentRequest, NeuroSanHttp};

use crate::cache::Cache;
use crate::model::DEFAULT_TIMEOUT;
use crate::prompt::{Vote, agent_message, parse_word};
use crate::voting::{Ask, AskError, Common, Votes};

/// A judge that asks a neuro-san agent.
#[derive(Debug, Clone)]
pub struct NeuroSanJudge {
    common: Common,
    backend: Backend,
}

#[derive(Debug, Clone)]
struct Backend {
    server: NeuroSanHttp,
    agent: String,
    timeout: Duration,
}

impl NeuroSanJudge {
    /// A judge asking `agent` on `server`: one vote, no cache, [`DEFAULT_TIMEOUT`].
    pub fn new(server: NeuroSanHttp, agent: impl Into<String>) -> NeuroSanJudge {
        let agent = agent.into();
        NeuroSanJudge {
            common: Common {
                id: format!("neuro-san:{agent}"),
                ..Common::default()
            },
            backend: Backend {
                server,
                agent,
                timeout: DEFAULT_TIMEOUT,
            },
        }
    }

    /// Takes `votes` verdicts and the majority.
    pub fn with_votes(mut self, votes: Votes) -> NeuroSanJudge {
        self.common.votes = votes;
        self
    }

    /// Caches verdicts in `cache`.
    pub fn with_cache(mut self, cache: Cache) -> NeuroSanJudge {
        self.common.cache = Some(cache);
        self
    }

    /// Bounds each exchange with the agent.
    pub fn with_timeout(mut self, timeout: Duration) -> NeuroSanJudge {
        self.backend.timeout = timeout;
        self
    }

    /// `neuro-san:<agent>`.
    pub fn id(&self) -> &str {
        &self.common.id
    }
}

impl Ask for Backend {
    fn ask<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<Vote, AskError>> {
        Box::pin(async move {
            let request =
                AgentRequest::new(agent_message(criteria, sample)).with_timeout(self.timeout);
            let response = self
                .server
                .chat(&self.agent, &request)
                .await
                .map_err(|e| AskError::Failed(e.to_string()))?;
            let text = response.text.unwrap_or_default();
            parse_word(&text).map_err(|e| AskError::Unparseable(e.to_string()))
        })
    }
}

impl Judge for NeuroSanJudge {
    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        sample: &'a str,
    ) -> BoxFuture<'a, Result<JudgeVerdict, JudgeError>> {
        Box::pin(self.common.decide(&self.backend, criteria, sample))
    }
}
