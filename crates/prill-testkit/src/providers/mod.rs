//! Fake model providers: real http servers on 127.0.0.1 that validate requests the way
//! the real APIs do, answer from a script, and record every request they receive.
//!
//! Each fake has its own module; they share the server plumbing of `scripted` and the
//! provider-neutral script of [`reply`].

/// The scripting API every fake offers, over its `state: Arc<State>` field: the same
/// methods, written once.
macro_rules! scripting {
    ($fake:ident) => {
        impl $fake {
            /// Queues `reply` for the next request (replies are taken in order).
            pub fn script(&self, reply: $crate::providers::Reply) -> &$fake {
                self.state.push(reply);
                self
            }

            /// Answers `reply` whenever the last user message contains `text` (and the
            /// queue is empty).
            pub fn on_message(&self, text: &str, reply: $crate::providers::Reply) -> &$fake {
                self.state.rule(text, reply);
                self
            }

            /// Answers every request that `responder` answers (it sees the whole JSON
            /// body) when no queued reply is left; a `None` passes it to the rules.
            pub fn respond_with(
                &self,
                responder: impl Fn(&serde_json::Value) -> Option<$crate::providers::Reply>
                + Send
                + Sync
                + 'static,
            ) -> &$fake {
                self.state.set_responder(std::sync::Arc::new(responder));
                self
            }

            /// Answers `reply` when nothing else applies.
            pub fn default_reply(&self, reply: $crate::providers::Reply) -> &$fake {
                self.state.set_default(reply);
                self
            }

            /// Keeps every request for [`Self::requests`] when `on` (the default),
            /// none from now on when not: a fake that serves a benchmark, or any long
            /// run, does not grow with the requests it answers.
            pub fn record_requests(&self, on: bool) -> &$fake {
                self.state.set_recording(on);
                self
            }

            /// Every request received so far (while recording), valid or not, in order.
            pub fn requests(&self) -> Vec<$crate::providers::RecordedRequest> {
                self.state.requests()
            }

            /// The body of the last request, as JSON.
            ///
            /// # Panics
            ///
            /// When there was no request, or its body was not JSON.
            pub fn last_body(&self) -> serde_json::Value {
                self.requests()
                    .last()
                    .expect("a request was received")
                    .json()
            }
        }
    };
}

pub mod anthropic;
pub mod bedrock;
pub(crate) mod clock;
pub mod ollama;
pub mod openai;
pub mod reply;
pub(crate) mod scripted;
pub mod shop;
pub mod tgi;

pub use reply::{Reply, ScriptedToolCall};
pub use scripted::RecordedRequest;
