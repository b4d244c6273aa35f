//! The demo agents: what each one is called, how it describes itself, and how it answers.
//!
//! Every agent is a pure function of its request (text, sly_data and the conversation so
//! far), so a test can predict every answer. Each one is shaped like a small neuro-san
//! network: a front man that calls one tool, which is what the `MAXIMAL` stream shows.

mod echo;
mod flaky;
mod math;
mod music;
mod slow;

use std::time::Duration;

use serde_json::{Map, Value, json};

pub use flaky::uniform_draw;

/// One turn of a conversation, as an agent sees it.
#[derive(Debug)]
pub(crate) struct Turn<'a> {
    /// `user_message.text`.
    pub(crate) text: &'a str,
    /// The request's `sly_data`, when it is an object.
    pub(crate) sly_data: Option<&'a Map<String, Value>>,
    /// The front man's messages so far, from the request's `chat_context`.
    pub(crate) history: &'a [Value],
}

impl Turn<'_> {
    /// The sly_data value under `key`.
    fn sly(&self, key: &str) -> Option<&Value> {
        self.sly_data.and_then(|sly| sly.get(key))
    }

    /// How many turns came before this one: the HUMAN messages in the history.
    fn previous_turns(&self) -> usize {
        self.history
            .iter()
            .filter(|message| message.get("type").and_then(Value::as_str) == Some("HUMAN"))
            .count()
    }
}

/// What an agent answers.
#[derive(Debug, Default)]
pub(crate) struct Reply {
    /// The answer text.
    pub(crate) text: String,
    /// The final message's `structure`, when the agent has one.
    pub(crate) structure: Option<Map<String, Value>>,
    /// The final message's `sly_data`, when the agent returns any.
    pub(crate) sly_data: Option<Map<String, Value>>,
    /// What the front man passed its tool (the `Received arguments:` message).
    pub(crate) tool_args: Value,
    /// What the tool gave back (the `Got result:` message).
    pub(crate) tool_result: Value,
    /// How long the tool takes before it answers.
    pub(crate) delay: Option<Duration>,
}

/// A demo agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DemoAgent {
    /// Arithmetic on sly_data `x` and `y`; the result is sly_data `equals`.
    MathGuy,
    /// Songs to bands to home towns, remembering the band across turns, with a running cost.
    MusicNerdPro,
    /// Answers with the text it was sent, and returns its sly_data.
    Echo,
    /// Waits sly_data `delay_ms`, then answers.
    Slow,
    /// Answers `ok`, or `failure <mode>` with each mode's seeded probability.
    Flaky,
}

impl DemoAgent {
    /// Every demo agent, in the order `/api/v1/list` gives them (by name).
    pub const ALL: [DemoAgent; 5] = [
        DemoAgent::Echo,
        DemoAgent::Flaky,
        DemoAgent::MathGuy,
        DemoAgent::MusicNerdPro,
        DemoAgent::Slow,
    ];

    /// The agent's name, as used in urls and as its MCP tool name.
    pub fn name(self) -> &'static str {
        match self {
            DemoAgent::MathGuy => "math_guy",
            DemoAgent::MusicNerdPro => "music_nerd_pro",
            DemoAgent::Echo => "echo",
            DemoAgent::Slow => "slow",
            DemoAgent::Flaky => "flaky",
        }
    }

    /// The agent with this name.
    pub fn from_name(name: &str) -> Option<DemoAgent> {
        DemoAgent::ALL
            .into_iter()
            .find(|agent| agent.name() == name)
    }

    /// The name of the agent's front man, the first element of every origin.
    pub fn front_man(self) -> &'static str {
        match self {
            DemoAgent::MathGuy => "MathGuy",
            DemoAgent::MusicNerdPro => "MusicNerdPro",
            DemoAgent::Echo => "Echo",
            DemoAgent::Slow => "Slow",
            DemoAgent::Flaky => "Flaky",
        }
    }

    /// The name of the one tool the front man calls, the second element of its origins.
    pub fn tool(self) -> &'static str {
        match self {
            DemoAgent::MathGuy => "Calculator",
            DemoAgent::MusicNerdPro => "Accountant",
            DemoAgent::Echo => "Mirror",
            DemoAgent::Slow => "Sleeper",
            DemoAgent::Flaky => "Dice",
        }
    }

    /// What the agent does, for `/api/v1/list`, `function` and MCP `tools/list`.
    pub fn description(self) -> &'static str {
        match self {
            DemoAgent::MathGuy => {
                "I do arithmetic on sly_data x and y. Tell me to add, subtract, multiply or \
                 divide; the result is in sly_data['equals']."
            }
            DemoAgent::MusicNerdPro => {
                "I know which band recorded a few famous songs and where each band is from. \
                 My structure holds the answer and the running cost of the conversation."
            }
            DemoAgent::Echo => {
                "I answer with the text you send me, and return your sly_data as my sly_data \
                 and my structure."
            }
            DemoAgent::Slow => {
                "I wait sly_data['delay_ms'] milliseconds (1000 by default), then answer."
            }
            DemoAgent::Flaky => {
                "I answer 'ok', or 'failure <mode>' with the probability sly_data['modes'] gives \
                 each mode, drawn from sly_data['seed'] and sly_data['sample']."
            }
        }
    }

    /// The agent's tags, for `/api/v1/list`.
    pub fn tags(self) -> &'static [&'static str] {
        match self {
            DemoAgent::MathGuy => &["demo", "math", "sly_data"],
            DemoAgent::MusicNerdPro => &["demo", "music", "structure", "conversation"],
            DemoAgent::Echo => &["demo", "echo"],
            DemoAgent::Slow => &["demo", "latency"],
            DemoAgent::Flaky => &["demo", "flaky", "seeded"],
        }
    }

    /// The agent's `function` entry: `description`, and `parameters` or `sly_data_schema`
    /// where they apply.
    pub fn function(self) -> Value {
        let mut function = Map::new();
        function.insert("description".to_owned(), self.description().into());
        match self {
            DemoAgent::MathGuy => {
                function.insert(
                    "sly_data_schema".to_owned(),
                    json!({
                        "type": "object",
                        "properties": {
                            "x": {"type": "number", "description": "The first operand."},
                            "y": {"type": "number", "description": "The second operand."}
                        },
                        "required": ["x", "y"]
                    }),
                );
            }
            DemoAgent::MusicNerdPro => {
                function.insert(
                    "parameters".to_owned(),
                    json!({
                        "type": "object",
                        "properties": {
                            "inquiry": {"type": "string", "description": "A question about a song or a band."}
                        },
                        "required": ["inquiry"]
                    }),
                );
            }
            DemoAgent::Echo => {}
            DemoAgent::Slow => {
                function.insert(
                    "sly_data_schema".to_owned(),
                    json!({
                        "type": "object",
                        "properties": {
                            "delay_ms": {"type": "integer", "minimum": 0, "description": "How long to wait."}
                        }
                    }),
                );
            }
            DemoAgent::Flaky => {
                function.insert(
                    "sly_data_schema".to_owned(),
                    json!({
                        "type": "object",
                        "properties": {
                            "seed": {"type": "integer", "description": "The seed of every draw."},
                            "sample": {"type": "integer", "minimum": 0, "description": "Which draw of the seed; 0 by default."},
                            "modes": {
                                "type": "object",
                                "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
                                "description": "The probability of each failure mode."
                            }
                        }
                    }),
                );
            }
        }
        Value::Object(function)
    }

    /// The agent's answer to one turn.
    pub(crate) fn reply(self, turn: &Turn<'_>) -> Reply {
        match self {
            DemoAgent::MathGuy => math::reply(turn),
            DemoAgent::MusicNerdPro => music::reply(turn),
            DemoAgent::Echo => echo::reply(turn),
            DemoAgent::Slow => slow::reply(turn),
            DemoAgent::Flaky => flaky::reply(turn),
        }
    }
}

/// A number from sly_data as an `f64`.
fn number(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64)
}

/// A non-negative integer from sly_data (a float is truncated, a negative number is 0).
fn count(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    value
        .as_u64()
        .or_else(|| value.as_i64().map(|n| n.max(0).unsigned_abs()))
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.max(0.0) as u64)
        })
}

/// A one-entry JSON object.
fn object(key: &str, value: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert(key.to_owned(), value);
    map
}
