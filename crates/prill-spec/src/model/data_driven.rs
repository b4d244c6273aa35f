//! The neuro-san data-driven test case (`../shared/specs/neuro-san-data-driven-test-cases.md`).
//!
//! These types are what a validated file holds. Their `JsonSchema` derives describe the
//! file format and generate `schemas/data-driven.schema.json`.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Serialize, Serializer};

pub use super::trajectory::TrajectoryChecks;

/// A JSON object, as sly_data and metadata hold.
pub type JsonMap = serde_json::Map<String, serde_json::Value>;

/// One data-driven test case file.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "DataDrivenTestCase")]
// A trajectory check read from the stream reads its intermediate messages: only a
// MAXIMAL stream has them. One read from spans (`trajectory: otel`) needs none.
#[schemars(extend("allOf" = [{
    "if": {"properties": {"trajectory": {"not": {"const": "otel"}}}},
    "then": {"properties": {"interactions": {"items": {
        "if": {
            "properties": {"response": {"required": ["trajectory"]}},
            "required": ["response"]
        },
        "then": {
            "properties": {"chat_filter": {"pattern": "^[Mm][Aa][Xx][Ii][Mm][Aa][Ll]$"}},
            "required": ["chat_filter"]
        }
    }}}}
}]))]
// A case has one gate.
#[schemars(extend("not" = {"required": ["success_ratio", "reliability"]}))]
// The end state is read from the state endpoint.
#[schemars(extend("dependentRequired" = {"expect_state": ["state_endpoint"]}))]
// A conversation: scripted interactions, a simulated user, or both.
#[schemars(extend("anyOf" = [{"required": ["interactions"]}, {"required": ["user"]}]))]
// Over `mcp` neuro-san answers with the final message only: no trajectory to check.
#[schemars(extend(
    "if" = {
        "properties": {"connections": {"anyOf": [
            {"const": "mcp"},
            {"type": "array", "contains": {"const": "mcp"}}
        ]}},
        "required": ["connections"],
        "not": {"properties": {"trajectory": {"const": "otel"}}, "required": ["trajectory"]}
    },
    "then" = {
        "properties": {"interactions": {"items": {"properties": {
            "response": {"not": {"required": ["trajectory"]}}
        }}}}
    }
))]
pub struct DataDrivenCase {
    /// The agent to test: the stem of its network file, possibly with a path (`deep/math_guy`).
    #[schemars(length(min = 1))]
    pub agent: String,
    /// How to reach the agent; each connection runs the whole conversation afresh.
    #[serde(default = "default_connections")]
    #[schemars(schema_with = "connections_schema")]
    pub connections: Vec<Connection>,
    /// How many samples must pass, of how many run: `"k/n"`; `1/1` when the case
    /// states no gate (neither this nor `reliability`) and `prill.toml` gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "1/1"))]
    pub success_ratio: Option<SuccessRatio>,
    /// A gate with stated error rates instead of `success_ratio` (Prill's extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<super::gate::ReliabilitySchema>")]
    pub reliability: Option<super::gate::Reliability>,
    /// Whether external agents are reached in-process rather than over http.
    #[serde(default)]
    pub use_direct: bool,
    /// Request metadata sent with every interaction (as headers over http).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonMap>,
    /// A limit on each sample, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub timeout_in_seconds: Option<f64>,
    /// The conversation, in order (may be left out when a `user` carries it).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub interactions: Vec<Interaction>,
    /// Texts that must not appear in any answer (neuro-san's load-test files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_patterns: Option<Vec<String>>,
    /// Where the `trajectory` checks read the agent's tool calls from (a Prill
    /// extension): `stream`, its `MAXIMAL` messages (the default), or `otel`, the
    /// OpenTelemetry spans it exports to the run's receiver.
    #[serde(default, skip_serializing_if = "TrajectorySource::is_stream")]
    pub trajectory: TrajectorySource,
    /// A simulated user that carries the conversation on after `interactions` (a Prill
    /// extension, `docs/conversations.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<DataDrivenUser>,
    /// Where the state of the agent's environment is read when the conversation is over,
    /// for `expect_state` (a Prill extension, `docs/conversations.md`): a path on the
    /// agent's server (`/shop/state`), or an `http`/`https` URL; read with `GET` and the
    /// conversation's headers (`x-prill-sample` among them), its body JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1), regex(pattern = r"^(/|https?://)"))]
    pub state_endpoint: Option<String>,
    /// Checks on that state when the conversation is over (a Prill extension): Sentinel's
    /// `expect_state`, but `replay`, which needs a tool program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_state: Option<Box<super::state::ExpectState>>,
}

/// A data-driven case's `user`: the simulated user's brief, and the settings and checks
/// of its turns: `chat_filter` and `timeout_in_seconds` apply to every simulated turn,
/// `response` checks the agent's last answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataDrivenUser {
    /// The brief.
    #[serde(flatten)]
    pub brief: super::user::SimulatedUser,
    /// Its turns' settings and the checks on the last answer (`text` is always `None`).
    #[serde(flatten)]
    pub turns: Interaction,
}

/// The keys of a data-driven `user` beyond the brief's.
pub const USER_TURN_KEYS: [&str; 3] = ["response", "chat_filter", "timeout_in_seconds"];

impl JsonSchema for DataDrivenUser {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DataDrivenUser".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = super::user::SimulatedUser::json_schema(generator);
        let response = generator.subschema_for::<ResponseChecks>();
        let filter = generator.subschema_for::<ChatFilter>();
        if let Some(properties) = schema
            .get_mut("properties")
            .and_then(serde_json::Value::as_object_mut)
        {
            properties.insert("response".into(), serde_json::json!({
                "description": "The checks on the agent's last answer, when the user has ended the conversation.",
                "allOf": [response]
            }));
            properties.insert(
                "chat_filter".into(),
                serde_json::json!({
                    "description": "How much the server sends back on each simulated turn.",
                    "allOf": [filter]
                }),
            );
            properties.insert(
                "timeout_in_seconds".into(),
                serde_json::json!({"description": "A limit on each simulated turn, in seconds.", "type": "number", "exclusiveMinimum": 0}),
            );
        }
        schema
    }
}

/// Where a case's trajectory comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrajectorySource {
    /// The agent's own messages: neuro-san's `MAXIMAL` stream, a command's lines.
    #[default]
    Stream,
    /// The OpenTelemetry spans the agent exports, under the trace context each request
    /// carries: its `execute_tool` spans (and MCP `tools/call` ones) in order.
    Otel,
}

impl TrajectorySource {
    /// Every source's name.
    pub const NAMES: [&'static str; 2] = ["stream", "otel"];

    /// Whether this is the default, [`TrajectorySource::Stream`].
    pub fn is_stream(&self) -> bool {
        *self == TrajectorySource::Stream
    }
}

fn default_connections() -> Vec<Connection> {
    vec![Connection::Direct]
}

fn connections_schema(generator: &mut SchemaGenerator) -> Schema {
    let one = generator.subschema_for::<Connection>();
    json_schema!({
        "description": "One connection or a list of them.",
        "anyOf": [one, {"type": "array", "items": one, "minItems": 1, "uniqueItems": true}],
        "default": ["direct"]
    })
}

// The one enum for connections: in specs, on the command line (`--connection`, through
// `clap::ValueEnum` with the `clap` feature) and in the engine.
/// How the agent is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Connection {
    /// In-process, or a command named in `prill.toml`.
    Direct,
    /// A neuro-san server over http.
    Http,
    /// A neuro-san server over https.
    Https,
    /// A neuro-san server's MCP endpoint.
    Mcp,
}

impl Connection {
    /// Every connection's name.
    pub const NAMES: [&'static str; 4] = ["direct", "http", "https", "mcp"];

    /// The connection named `name`.
    pub fn from_name(name: &str) -> Option<Connection> {
        match name {
            "direct" => Some(Connection::Direct),
            "http" => Some(Connection::Http),
            "https" => Some(Connection::Https),
            "mcp" => Some(Connection::Mcp),
            _ => None,
        }
    }

    /// The connection's name.
    pub fn name(self) -> &'static str {
        match self {
            Connection::Direct => "direct",
            Connection::Http => "http",
            Connection::Https => "https",
            Connection::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `k/n`: at least `k` of `n` samples must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SuccessRatio {
    /// How many must pass.
    pub need: u32,
    /// How many run at most.
    pub of: u32,
}

impl Default for SuccessRatio {
    fn default() -> Self {
        SuccessRatio { need: 1, of: 1 }
    }
}

/// The most samples a unit takes: the largest `n` of a `k/n` ratio, and of `--samples`.
pub const MAX_SAMPLES: u32 = 100_000;

/// Why a `k/n` ratio was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RatioError {
    /// Not of the form `k/n`.
    #[error("expected `k/n`, e.g. `3/5`")]
    Shape,
    /// A part is not a whole number.
    #[error("the {part} `{text}` is not a whole number")]
    NotANumber {
        /// `numerator` or `denominator`.
        part: &'static str,
        /// What was written.
        text: String,
    },
    /// A part is a whole number above [`MAX_SAMPLES`].
    #[error("the {part} `{text}` is more than {MAX_SAMPLES}, the most samples a case can take")]
    TooMany {
        /// `numerator` or `denominator`.
        part: &'static str,
        /// What was written.
        text: String,
    },
    /// `n` is 0.
    #[error("the denominator must be at least 1")]
    NoSamples,
    /// `k > n`.
    #[error("{need} of {of} can never pass: the numerator must not exceed the denominator")]
    NeverPasses {
        /// `k`.
        need: u32,
        /// `n`.
        of: u32,
    },
}

impl SuccessRatio {
    /// Parses `"k/n"` (spaces around the numbers allowed), requiring `1 <= n <=`
    /// [`MAX_SAMPLES`] and `k <= n`.
    pub fn parse(text: &str) -> Result<SuccessRatio, RatioError> {
        let Some((k, n)) = text.split_once('/') else {
            return Err(RatioError::Shape);
        };
        let parse = |s: &str, part: &'static str| {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(RatioError::NotANumber {
                    part,
                    text: s.to_owned(),
                });
            }
            match s.parse::<u32>() {
                Ok(v) if v <= MAX_SAMPLES => Ok(v),
                _ => Err(RatioError::TooMany {
                    part,
                    text: s.to_owned(),
                }),
            }
        };
        let need = parse(k, "numerator")?;
        let of = parse(n, "denominator")?;
        if of == 0 {
            return Err(RatioError::NoSamples);
        }
        if need > of {
            return Err(RatioError::NeverPasses { need, of });
        }
        Ok(SuccessRatio { need, of })
    }

    /// The same pass rate over `samples` samples: `k/n` becomes `ceil(k * N / n) / N`,
    /// so more samples never loosen the rate a case must reach (`3/3` over 10 is
    /// `10/10`, `7/10` over 20 is `14/20`). `samples` of 0 counts as 1.
    pub fn scaled_to(self, samples: u32) -> SuccessRatio {
        let of = samples.max(1);
        let need = (u64::from(self.need) * u64::from(of)).div_ceil(u64::from(self.of.max(1)));
        SuccessRatio {
            need: u32::try_from(need).unwrap_or(of).min(of),
            of,
        }
    }
}

impl fmt::Display for SuccessRatio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.need, self.of)
    }
}

impl Serialize for SuccessRatio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl JsonSchema for SuccessRatio {
    fn schema_name() -> Cow<'static, str> {
        "SuccessRatio".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "`k/n`: at least k of n samples must pass (1 <= n <= 100000, k <= n).",
            "type": "string",
            "pattern": r"^\s*0*(?:[0-9]{1,5}|100000)\s*/\s*0*(?:[1-9][0-9]{0,4}|100000)\s*$",
            "default": "1/1"
        })
    }
}

/// One turn of the conversation and the checks on its response.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// The user message; `null` sends none.
    #[serde(default)]
    pub text: Option<String>,
    /// Private data sent with the message; when absent, the carried sly_data is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<JsonMap>,
    /// A limit on this interaction, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub timeout_in_seconds: Option<f64>,
    /// How much the server sends back.
    #[serde(default)]
    pub chat_filter: ChatFilter,
    /// Whether the next interaction continues this conversation.
    #[serde(default = "yes")]
    pub continue_conversation: bool,
    /// The checks on the response.
    #[serde(default)]
    pub response: ResponseChecks,
}

fn yes() -> bool {
    true
}

/// How much the server sends back. Written in any letter case (`maximal`), as neuro-san's
/// server upper-cases it; Prill always sends it upper-cased.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum ChatFilter {
    /// The answer and what is needed to continue.
    #[default]
    #[serde(rename = "MINIMAL")]
    Minimal,
    /// Every intermediate message too.
    #[serde(rename = "MAXIMAL")]
    Maximal,
}

impl JsonSchema for ChatFilter {
    fn schema_name() -> Cow<'static, str> {
        "ChatFilter".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "How much the server sends back, in any letter case: `MINIMAL` (the answer and what is needed to continue) or `MAXIMAL` (every intermediate message too).",
            "anyOf": [
                {"type": "string", "enum": ["MINIMAL", "MAXIMAL"]},
                {"type": "string", "pattern": "^(?:[Mm][Ii][Nn]|[Mm][Aa][Xx])[Ii][Mm][Aa][Ll]$"}
            ]
        })
    }
}

impl ChatFilter {
    /// The filter's name as sent.
    pub fn name(self) -> &'static str {
        match self {
            ChatFilter::Minimal => "MINIMAL",
            ChatFilter::Maximal => "MAXIMAL",
        }
    }
}

/// Checks on the three parts of a response, and (a Prill extension) on the trajectory.
///
/// Upstream ignores any other key here (some of its own files rely on that to switch
/// checks off), so other keys are accepted with a warning that nothing under them runs.
/// It ignores `trajectory` too, so a file that uses it still runs in neuro-san's driver.
#[derive(Debug, Clone, PartialEq, Default, Serialize, JsonSchema)]
#[schemars(extend("additionalProperties" = {
    "deprecated": true,
    "deprecationMessage": "not a part of the response (text, sly_data, structure, trajectory): nothing under it is checked"
}))]
pub struct ResponseChecks {
    /// Checks on the answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextChecks>,
    /// Checks on fields of the returned sly_data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sly_data: Option<FieldChecks>,
    /// Checks on fields of the returned structure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<FieldChecks>,
    /// Checks on the agents and tools the agent invoked, as a `MAXIMAL` stream shows
    /// them (a Prill extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<TrajectoryChecks>,
}

/// A stock test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StockTest {
    /// Equality (JSON equality; `1 == 1.0`).
    Value,
    /// The response value is less than the given one.
    Less,
    /// The response value is greater than the given one.
    Greater,
    /// The given value is in the response (substring, element or key).
    Keywords,
    /// An LLM judge finds that the response meets the given criteria.
    Gist,
}

impl StockTest {
    /// Every check name, with the negations.
    pub const NAMES: [&'static str; 10] = [
        "value",
        "not_value",
        "less",
        "not_less",
        "greater",
        "not_greater",
        "keywords",
        "not_keywords",
        "gist",
        "not_gist",
    ];

    /// The test and whether it is negated, for a name matched case-insensitively as upstream does.
    pub fn from_name(name: &str) -> Option<(StockTest, bool)> {
        let lower = name.to_ascii_lowercase();
        let (negated, base) = match lower.strip_prefix("not_") {
            Some(rest) => (true, rest),
            None => (false, lower.as_str()),
        };
        let test = match base {
            "value" => StockTest::Value,
            "less" => StockTest::Less,
            "greater" => StockTest::Greater,
            "keywords" => StockTest::Keywords,
            "gist" => StockTest::Gist,
            _ => return None,
        };
        Some((test, negated))
    }

    /// The test's name, without negation.
    pub fn name(self) -> &'static str {
        match self {
            StockTest::Value => "value",
            StockTest::Less => "less",
            StockTest::Greater => "greater",
            StockTest::Keywords => "keywords",
            StockTest::Gist => "gist",
        }
    }

    /// The name as written in a file: `not_` + name when negated.
    pub fn spelled(self, negated: bool) -> String {
        if negated {
            format!("not_{}", self.name())
        } else {
            self.name().to_owned()
        }
    }
}

/// One stock test in a file: a name and the value(s) it checks against.
#[derive(Debug, Clone, PartialEq)]
pub struct StockCheck {
    /// Which test.
    pub test: StockTest,
    /// Whether it is the `not_` form.
    pub negated: bool,
    /// The given values; a list means every one must pass.
    pub expected: Expected,
}

/// The value a check was given: one, or a list of which every one must pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// A single value.
    One(serde_json::Value),
    /// A list: every value must pass.
    All(Vec<serde_json::Value>),
}

impl Expected {
    /// The values, one or many.
    pub fn values(&self) -> Vec<&serde_json::Value> {
        match self {
            Expected::One(v) => vec![v],
            Expected::All(vs) => vs.iter().collect(),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        match self {
            Expected::One(v) => v.clone(),
            Expected::All(vs) => serde_json::Value::Array(vs.clone()),
        }
    }
}

/// Stock tests on the answer text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextChecks {
    /// The tests, in file order.
    pub tests: Vec<StockCheck>,
}

/// Stock tests on a dictionary value and on its fields, nested as deep as needed.
/// An empty one (`{}`) checks only that the field is present.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldChecks {
    /// Tests on this value itself.
    pub tests: Vec<StockCheck>,
    /// Checks on the fields below, by name, in file order.
    pub fields: Vec<(String, FieldChecks)>,
}

fn tests_to_map(tests: &[StockCheck], map: &mut JsonMap) {
    for t in tests {
        map.insert(t.test.spelled(t.negated), t.expected.to_json());
    }
}

impl Serialize for TextChecks {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = JsonMap::new();
        tests_to_map(&self.tests, &mut map);
        map.serialize(s)
    }
}

impl Serialize for FieldChecks {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl FieldChecks {
    /// The checks as they are written in a file.
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = JsonMap::new();
        tests_to_map(&self.tests, &mut map);
        for (name, checks) in &self.fields {
            map.insert(name.clone(), checks.to_json());
        }
        serde_json::Value::Object(map)
    }
}

/// A pattern that matches a stock test name in any letter case, as JSON Schema
/// regexes have no case-insensitive flag.
fn any_case_pattern() -> String {
    let alternatives: Vec<String> = StockTest::NAMES
        .iter()
        .map(|name| {
            name.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                    } else {
                        c.to_string()
                    }
                })
                .collect()
        })
        .collect();
    format!("^({})$", alternatives.join("|"))
}

fn check_value_schema() -> Schema {
    json_schema!({
        "description": "A value to check against, or a list of which every one must pass.",
        "type": ["string", "number", "boolean", "array"],
        "items": {"type": ["string", "number", "boolean", "array"]},
        "minItems": 1
    })
}

impl JsonSchema for TextChecks {
    fn schema_name() -> Cow<'static, str> {
        "TextChecks".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Stock tests on the answer text: value, less, greater, keywords, gist and their not_ forms (any letter case).",
            "type": "object",
            "patternProperties": { any_case_pattern(): check_value_schema() },
            "additionalProperties": false
        })
    }
}

impl JsonSchema for FieldChecks {
    fn schema_name() -> Cow<'static, str> {
        "FieldChecks".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let me = generator.subschema_for::<FieldChecks>();
        json_schema!({
            "description": "Checks on a dictionary: a key holding an object checks the field of that name (`{}` checks only that it is present); a key holding anything else must be a stock test.",
            "type": "object",
            "patternProperties": {
                any_case_pattern(): {"anyOf": [me, check_value_schema()]}
            },
            "additionalProperties": me
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_ratio_rules() {
        assert_eq!(
            SuccessRatio::parse(" 3 / 5 "),
            Ok(SuccessRatio { need: 3, of: 5 })
        );
        assert_eq!(
            SuccessRatio::parse("0/1"),
            Ok(SuccessRatio { need: 0, of: 1 })
        );
        assert!(SuccessRatio::parse("3").is_err());
        assert!(
            SuccessRatio::parse("5/3")
                .unwrap_err()
                .to_string()
                .contains("never pass")
        );
        assert!(
            SuccessRatio::parse("1/0")
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        assert!(
            SuccessRatio::parse("a/2")
                .unwrap_err()
                .to_string()
                .contains("numerator")
        );
        assert!(SuccessRatio::parse("1/2/3").is_err());
    }

    #[test]
    fn a_ratio_names_the_sample_limit() {
        assert_eq!(
            SuccessRatio::parse("1/100000"),
            Ok(SuccessRatio {
                need: 1,
                of: MAX_SAMPLES
            })
        );
        for text in ["1/100001", "1/200000", "4294967296/4294967296"] {
            let why = SuccessRatio::parse(text).unwrap_err().to_string();
            assert!(why.contains("more than 100000"), "{text}: {why}");
        }
        assert!(matches!(
            SuccessRatio::parse("-1/2"),
            Err(RatioError::NotANumber { .. })
        ));
    }

    #[test]
    fn more_samples_keep_the_pass_rate() {
        let r = |need, of| SuccessRatio { need, of };
        assert_eq!(r(3, 3).scaled_to(10), r(10, 10));
        assert_eq!(r(7, 10).scaled_to(20), r(14, 20));
        assert_eq!(r(1, 1).scaled_to(3), r(3, 3));
        assert_eq!(r(1, 3).scaled_to(10), r(4, 10));
        assert_eq!(r(2, 3).scaled_to(2), r(2, 2));
        assert_eq!(r(0, 5).scaled_to(7), r(0, 7));
        assert_eq!(r(3, 5).scaled_to(1), r(1, 1));
        assert_eq!(
            r(MAX_SAMPLES, MAX_SAMPLES).scaled_to(MAX_SAMPLES),
            r(MAX_SAMPLES, MAX_SAMPLES)
        );
        // Never a lower rate than asked for.
        for (k, n, m) in [(7, 10, 3), (2, 3, 5), (5, 9, 11), (1, 100, 7)] {
            let s = r(k, n).scaled_to(m);
            assert!(u64::from(s.need) * u64::from(n) >= u64::from(k) * u64::from(m));
        }
    }

    #[test]
    fn stock_names_are_case_insensitive() {
        assert_eq!(
            StockTest::from_name("Not_Keywords"),
            Some((StockTest::Keywords, true))
        );
        assert_eq!(StockTest::from_name("GIST"), Some((StockTest::Gist, false)));
        assert_eq!(StockTest::from_name("keyword"), None);
        assert_eq!(StockTest::from_name("not_"), None);
    }

    #[test]
    fn any_case_pattern_matches_names_only() {
        let re = regex::Regex::new(&any_case_pattern()).unwrap();
        assert!(re.is_match("Not_Value"));
        assert!(re.is_match("keywords"));
        assert!(!re.is_match("keyword"));
        assert!(!re.is_match("answer"));
    }
}
