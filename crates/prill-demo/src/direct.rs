//! The demo agents in process, for the `direct` connection: the same messages the
//! server would stream, without a socket.

use serde_json::Value;

use crate::DemoAgent;
use crate::conversation::{Exchange, Filter};

/// Answers `request` (a neuro-san ChatRequest, as the http body holds it) as `agent`
/// does over `streaming_chat`: every message the stream would carry (the `response` of
/// each line, heartbeats left out), after the agent's own wait (the `slow` agent's
/// `delay_ms`). A request with no text gets no message, as upstream answers `{}`.
///
/// Dropping the future cancels the wait.
pub async fn respond(agent: DemoAgent, request: &Value) -> Vec<Value> {
    let Some(exchange) = Exchange::run(agent, request) else {
        return Vec::new();
    };
    if let Some(delay) = exchange.delay().filter(|d| !d.is_zero()) {
        tokio::time::sleep(delay).await;
    }
    match Filter::of(request) {
        Filter::Minimal => vec![exchange.final_message()],
        Filter::Maximal => {
            let mut messages = exchange.messages_before_wait();
            messages.extend(exchange.messages_after_wait());
            messages.push(exchange.final_message());
            messages
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn direct_answers_match_the_server_s() {
        let request = json!({"user_message": {"type": "HUMAN", "text": "multiply"}, "sly_data": {"x": 847, "y": 23}});
        let messages = respond(DemoAgent::MathGuy, &request).await;
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0]["type"], "AGENT_FRAMEWORK");
        assert_eq!(messages[0]["sly_data"]["equals"].to_string(), "19481.0");
        let maximal = json!({"user_message": {"text": "multiply"}, "sly_data": {"x": 1, "y": 2},
                             "chat_filter": {"chat_filter_type": "MAXIMAL"}});
        assert_eq!(respond(DemoAgent::MathGuy, &maximal).await.len(), 6);
        assert!(
            respond(DemoAgent::Echo, &json!({"user_message": {}}))
                .await
                .is_empty()
        );
    }
}
