//! [`GraphScript`]: the graph a [`super::FakeLanggraph`] runs, a ReAct agent written
//! out: AI turns that call tools (several calls in one turn run in parallel, as
//! LangGraph's `ToolNode` runs them), the tool messages that answer them, and a final
//! AI message; or a run that raises, or a stream that breaks off.

use serde_json::{Value, json};

/// One tool call of a scripted turn, with what the tool answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub args: Value,
    /// The tool message's content (a string as it is, anything else serialized).
    pub result: Value,
    /// Whether the tool failed (`status: error`).
    pub error: bool,
}

impl Call {
    /// A call of `name` with `args` that returns `result`.
    pub fn new(name: &str, args: Value, result: Value) -> Call {
        Call {
            name: name.to_owned(),
            args,
            result,
            error: false,
        }
    }

    /// A call of `name` with `args` whose tool fails with `message`.
    pub fn failing(name: &str, args: Value, message: &str) -> Call {
        Call {
            error: true,
            ..Call::new(name, args, Value::String(message.to_owned()))
        }
    }
}

/// How a scripted run ends after its turns.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Ending {
    /// The stream closes after the last state, as `langgraph dev` and the Agent Server
    /// close it (no `end` event); the run's status is then `success`.
    #[default]
    End,
    /// An `end` event after the last state, as some servers and proxies send.
    EndEvent,
    /// An `error` event (`{"error": error, "message": message}`), as the server sends
    /// when the graph raises.
    Raise {
        /// The exception's name.
        error: String,
        /// Its message.
        message: String,
    },
    /// The stream stops while the run still runs (its status stays `running`).
    Cut,
    /// The stream closes without any `values` event before it.
    NoValues,
    /// The stream stays open, with nothing more, for an hour.
    Hang,
}

/// One AI turn: its text and its tool calls.
#[derive(Debug, Clone, PartialEq)]
struct Turn {
    text: String,
    calls: Vec<Call>,
}

/// A scripted ReAct graph.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphScript {
    turns: Vec<Turn>,
    ending: Ending,
}

/// What a run streams: its events, as `(event, data)`.
pub(crate) type Events = Vec<(&'static str, Value)>;

impl GraphScript {
    /// The status `GET /threads/{thread_id}/runs/{run_id}` gives a run of this graph
    /// once its stream is over: `error` when it raised, `running` when its stream was cut
    /// or hangs, `success` otherwise. (A run past its recursion limit raises too.)
    pub(crate) fn status(&self, events: &Events) -> &'static str {
        if events.iter().any(|(name, _)| *name == "error") {
            return "error";
        }
        match self.ending {
            Ending::Cut | Ending::Hang => "running",
            _ => "success",
        }
    }

    /// A graph that answers `text` straight away.
    pub fn answering(text: &str) -> GraphScript {
        GraphScript::default().answer(text)
    }

    /// An AI turn that calls `calls` (in parallel when there are several); the tools
    /// answer each.
    pub fn call(mut self, calls: Vec<Call>) -> GraphScript {
        self.turns.push(Turn {
            text: String::new(),
            calls,
        });
        self
    }

    /// The final AI message.
    pub fn answer(mut self, text: &str) -> GraphScript {
        self.turns.push(Turn {
            text: text.to_owned(),
            calls: Vec::new(),
        });
        self
    }

    /// After the turns, the graph raises `error` with `message`.
    pub fn raise(mut self, error: &str, message: &str) -> GraphScript {
        self.ending = Ending::Raise {
            error: error.to_owned(),
            message: message.to_owned(),
        };
        self
    }

    /// After the turns, an `end` event before the stream closes.
    pub fn with_end_event(mut self) -> GraphScript {
        self.ending = Ending::EndEvent;
        self
    }

    /// After the turns, the stream breaks off.
    pub fn cut(mut self) -> GraphScript {
        self.ending = Ending::Cut;
        self
    }

    /// After the turns, the stream stays open and sends nothing more.
    pub fn hang(mut self) -> GraphScript {
        self.ending = Ending::Hang;
        self
    }

    /// The run streams no state at all.
    pub fn without_values(mut self) -> GraphScript {
        self.ending = Ending::NoValues;
        self
    }

    /// The events of a run of this graph on `input` (the run's input messages, as
    /// sent) with `recursion_limit` steps at most: the agent node and the tools node
    /// are one step each, and a run past the limit raises `GraphRecursionError` as
    /// LangGraph does.
    ///
    /// With `updates` among the run's stream modes, each step is also an `updates`
    /// event before its state, keyed by the node that ran: `agent` for an AI turn,
    /// `tools` for the tools' answers, as `create_react_agent`'s graph names them.
    pub(crate) fn events(
        &self,
        run_id: &str,
        input: &[Value],
        recursion_limit: u64,
        updates: bool,
    ) -> Events {
        let mut events: Events = vec![("metadata", json!({"run_id": run_id, "attempt": 1}))];
        let mut messages: Vec<Value> = input
            .iter()
            .enumerate()
            .map(|(i, m)| with_id(m, &format!("in-{i}")))
            .collect();
        let values = |messages: &[Value]| ("values", json!({"messages": messages}));
        if self.ending != Ending::NoValues {
            events.push(values(&messages));
        }
        let mut steps = 0;
        let mut call_no = 0;
        for (t, turn) in self.turns.iter().enumerate() {
            steps += 1;
            if steps > recursion_limit {
                events.push(recursion_error(recursion_limit));
                return events;
            }
            let calls: Vec<(String, &Call)> = turn
                .calls
                .iter()
                .map(|c| {
                    call_no += 1;
                    (format!("call_{call_no}"), c)
                })
                .collect();
            messages.push(ai_message(t, &turn.text, &calls));
            if updates {
                let wrote = messages[messages.len() - 1..].to_vec();
                events.push(("updates", json!({"agent": {"messages": wrote}})));
            }
            if self.ending != Ending::NoValues {
                events.push(values(&messages));
            }
            if calls.is_empty() {
                continue;
            }
            steps += 1;
            if steps > recursion_limit {
                events.push(recursion_error(recursion_limit));
                return events;
            }
            for (id, call) in &calls {
                messages.push(tool_message(id, call));
            }
            if updates {
                let wrote = messages[messages.len() - calls.len()..].to_vec();
                events.push(("updates", json!({"tools": {"messages": wrote}})));
            }
            if self.ending != Ending::NoValues {
                events.push(values(&messages));
            }
        }
        match &self.ending {
            Ending::End | Ending::NoValues | Ending::Cut => {}
            Ending::EndEvent => events.push(("end", Value::Null)),
            Ending::Raise { error, message } => {
                events.push(("error", json!({"error": error, "message": message})));
            }
            Ending::Hang => events.push(("hang", Value::Null)),
        }
        events
    }
}

fn with_id(message: &Value, id: &str) -> Value {
    let mut m = message.clone();
    if let Some(o) = m.as_object_mut() {
        o.entry("id").or_insert_with(|| json!(id));
        o.entry("additional_kwargs").or_insert_with(|| json!({}));
        o.entry("response_metadata").or_insert_with(|| json!({}));
    }
    m
}

fn ai_message(turn: usize, text: &str, calls: &[(String, &Call)]) -> Value {
    let input = 20 + 10 * turn as u64;
    let output = 5 + text.split_whitespace().count() as u64;
    json!({
        "type": "ai",
        "content": text,
        "additional_kwargs": {},
        "response_metadata": {
            "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" },
            "model_name": "fake-model"
        },
        "name": null,
        "id": format!("run-ai-{turn}"),
        "example": false,
        "tool_calls": calls.iter().map(|(id, c)| json!({
            "name": c.name, "args": c.args, "id": id, "type": "tool_call"
        })).collect::<Vec<_>>(),
        "invalid_tool_calls": [],
        "usage_metadata": {"input_tokens": input, "output_tokens": output, "total_tokens": input + output}
    })
}

fn tool_message(id: &str, call: &Call) -> Value {
    let content = match &call.result {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    json!({
        "type": "tool",
        "content": content,
        "additional_kwargs": {},
        "response_metadata": {},
        "name": call.name,
        "id": format!("tool-{id}"),
        "tool_call_id": id,
        "artifact": null,
        "status": if call.error { "error" } else { "success" }
    })
}

fn recursion_error(limit: u64) -> (&'static str, Value) {
    (
        "error",
        json!({
            "error": "GraphRecursionError",
            "message": format!(
                "Recursion limit of {limit} reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key."
            )
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_react_run_streams_each_step_and_closes_as_the_real_server_does() {
        let script = GraphScript::default()
            .call(vec![
                Call::new("search", json!({"q": "a"}), json!({"hits": 1})),
                Call::new("weather", json!({}), json!("sunny")),
            ])
            .answer("done");
        let input = [json!({"type": "human", "content": "hi"})];
        let events = script.events("r1", &input, 25, false);
        let names: Vec<&str> = events.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["metadata", "values", "values", "values", "values"]);
        assert_eq!(script.status(&events), "success");
        let last = &events[4].1["messages"];
        assert_eq!(last.as_array().unwrap().len(), 5);
        assert_eq!(last[1]["tool_calls"][1]["id"], "call_2");
        assert_eq!(last[3]["tool_call_id"], "call_2");
        assert_eq!(last[3]["content"], "sunny");
        let events = script.events("r1", &input, 2, false);
        assert_eq!(events.last().unwrap().1["error"], "GraphRecursionError");
        assert_eq!(script.status(&events), "error");
        let ended = script.clone().with_end_event();
        let events = ended.events("r1", &input, 25, false);
        assert_eq!(events.last().unwrap().0, "end");
        let cut = script.clone().cut();
        assert_eq!(cut.status(&cut.events("r1", &input, 25, false)), "running");
        // Asked for updates: each step names its node before its state.
        let events = script.events("r1", &input, 25, true);
        let names: Vec<&str> = events.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "metadata", "values", "updates", "values", "updates", "values", "updates", "values"
            ]
        );
        let nodes: Vec<&str> = events
            .iter()
            .filter(|(n, _)| *n == "updates")
            .flat_map(|(_, d)| d.as_object().unwrap().keys().map(String::as_str))
            .collect();
        assert_eq!(nodes, ["agent", "tools", "agent"]);
        assert_eq!(events[4].1["tools"]["messages"][1]["content"], "sunny");
    }
}
