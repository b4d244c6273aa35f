//! In-process agents for Rust users: an [`InProcessAgent`] is called directly, and a
//! [`Registry`] of them is a [`Connector`]. A request without a timeout of its own gets
//! [`crate::DEFAULT_TIMEOUT`], as every connector's does.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use crate::error::ConnectError;
use crate::types::{AgentRequest, AgentResponse};
use crate::{BoxFuture, Connector, Conversation, with_timeout};

/// An agent that runs inside the test process.
pub trait InProcessAgent: Send + Sync {
    /// Answers one request. The agent fills in what it has; `timings` are measured by
    /// the conversation and overwrite whatever the agent puts there.
    fn chat<'a>(
        &'a self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>>;
}

/// An [`InProcessAgent`] made of an async function that takes the request by value.
pub fn from_fn<F, Fut>(f: F) -> impl InProcessAgent
where
    F: Fn(AgentRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AgentResponse, ConnectError>> + Send + 'static,
{
    FnAgent(f)
}

struct FnAgent<F>(F);

impl<F, Fut> InProcessAgent for FnAgent<F>
where
    F: Fn(AgentRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AgentResponse, ConnectError>> + Send + 'static,
{
    fn chat<'a>(
        &'a self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        Box::pin((self.0)(request.clone()))
    }
}

/// In-process agents by name.
#[derive(Clone, Default)]
pub struct Registry {
    agents: BTreeMap<String, Arc<dyn InProcessAgent>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The registry with `agent` added as `name` (replacing any agent of that name).
    pub fn with(mut self, name: impl Into<String>, agent: Arc<dyn InProcessAgent>) -> Registry {
        self.insert(name, agent);
        self
    }

    /// Adds `agent` as `name`, replacing any agent of that name.
    pub fn insert(&mut self, name: impl Into<String>, agent: Arc<dyn InProcessAgent>) {
        self.agents.insert(name.into(), agent);
    }

    /// The agent named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn InProcessAgent>> {
        self.agents.get(name)
    }

    /// Every agent's name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }
}

impl Connector for Registry {
    fn open<'a>(
        &'a self,
        agent: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Conversation>, ConnectError>> {
        let found = self.agents.get(agent).cloned();
        Box::pin(async move {
            let Some(found) = found else {
                return Err(ConnectError::UnknownAgent {
                    agent: agent.to_owned(),
                    server: "the in-process registry".to_owned(),
                });
            };
            Ok(Box::new(InProcessConversation {
                peer: format!("in-process agent `{agent}`"),
                agent: found,
            }) as Box<dyn Conversation>)
        })
    }
}

struct InProcessConversation {
    peer: String,
    agent: Arc<dyn InProcessAgent>,
}

impl Conversation for InProcessConversation {
    fn send<'a>(
        &'a mut self,
        request: &'a AgentRequest,
    ) -> BoxFuture<'a, Result<AgentResponse, ConnectError>> {
        Box::pin(async move {
            let start = Instant::now();
            let limit = request.timeout.or(Some(crate::DEFAULT_TIMEOUT));
            let mut response = with_timeout(&self.peer, limit, self.agent.chat(request)).await?;
            response.timings.total = start.elapsed();
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ErrorKind;

    #[tokio::test]
    async fn timeouts_apply_to_in_process_agents() {
        let slow = from_fn(|_request| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(AgentResponse::default())
        });
        let registry = Registry::new().with("slow", Arc::new(slow));
        let mut conversation = registry.open("slow").await.unwrap();
        let request = AgentRequest::new("x").with_timeout(Duration::from_millis(50));
        let e = conversation.send(&request).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
        assert_eq!(
            e.to_string(),
            "no complete answer from in-process agent `slow` within 50ms"
        );
    }

    #[tokio::test]
    async fn unknown_names_are_unknown_agents() {
        let e = Registry::new().open("x").await.err().unwrap();
        assert_eq!(
            e.to_string(),
            "unknown agent `x` on the in-process registry"
        );
    }
}
