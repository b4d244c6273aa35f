//! What a case's recordings were made under ([`Under`]): a short hash of each part of the
//! case that shapes what it sends and how its answers are judged, kept on every exchange
//! a cassette records (`docs/cassettes.md`). A replay compares them with the case as it
//! is now ([`Under::changes`]), and so does `prill cassettes check`, to say which
//! recordings are stale and what changed since.
//!
//! The parts:
//!
//! - `inputs`: what is sent (the target: its agent and metadata, or its model settings
//!   and the mocks of `framework_config`; and each interaction's input);
//! - `tools`: the tool definitions offered to a model;
//! - `user`: the simulated user's brief and model;
//! - `program`: the command line of the `tool_command` program (or `tool_mcp` server),
//!   and `file:<word>` the bytes of each file its words name (relative to the spec's
//!   folder);
//! - `checks`: the checks, the failure patterns and the gate. A change here leaves the
//!   recording good: the recorded answers are judged by the new checks.
//!
//! ```
//! use prill_spec::plan::under::Under;
//!
//! let recorded = Under::from_parts([("inputs", "0123456789ab"), ("checks", "aaaaaaaaaaaa")]);
//! let now = Under::from_parts([("inputs", "0123456789ab"), ("checks", "bbbbbbbbbbbb")]);
//! let changes = recorded.changes(&now);
//! assert_eq!(changes.len(), 1);
//! assert_eq!(changes[0].to_string(), "checks changed");
//! assert!(!changes[0].stales());
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Case, Target, hash_inputs};
use crate::model::data_driven::JsonMap;

/// The most bytes of one file of a tool program that are hashed (64 MiB); a larger file,
/// or one that cannot be read, is kept as `unreadable`.
const MAX_PROGRAM_FILE: u64 = 64 * 1024 * 1024;

/// The prefix of the part that holds a file of the tool program.
const FILE_PART: &str = "file:";

/// What a recording was made under: each part's short hash (12 hex digits), by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Under(BTreeMap<String, String>);

impl Under {
    /// The parts of `case` as it is now, reading the files its tool program names.
    pub fn of(case: &Case) -> Under {
        let mut parts = BTreeMap::new();
        parts.insert("inputs".to_owned(), hash_inputs(&inputs(case)));
        parts.insert("checks".to_owned(), hash_inputs(&checks(case)));
        if let Target::Model { tools, .. } = &case.target
            && !tools.is_empty()
        {
            parts.insert("tools".to_owned(), hash_of(tools));
        }
        if let Some(user) = &case.user {
            parts.insert("user".to_owned(), hash_of(user));
        }
        if let Some(command) = tool_command(case) {
            parts.insert("program".to_owned(), hash_of(command));
            let dir = case.file.parent().unwrap_or(Path::new(""));
            for word in words(command) {
                if let Some(hash) = file_hash(&dir.join(&word)) {
                    parts.insert(format!("{FILE_PART}{word}"), hash);
                }
            }
        }
        Under(parts)
    }

    /// Parts given by name and hash (for tests and tools that build them).
    pub fn from_parts<'a>(parts: impl IntoIterator<Item = (&'a str, &'a str)>) -> Under {
        Under(
            parts
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        )
    }

    /// Each part's name and hash, in name order.
    pub fn parts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// What differs in `now` from these parts (those a recording was made under), in
    /// part order: a part whose hash changed, one that is new, one that is gone. A file
    /// of an unchanged tool program that is not there now is not a change: a replay
    /// needs none of the program's files, so a job may leave them out.
    pub fn changes(&self, now: &Under) -> Vec<Change> {
        let mut changes = Vec::new();
        let same_program = self.0.get("program") == now.0.get("program");
        for (part, hash) in &self.0 {
            match now.0.get(part) {
                Some(h) if h == hash => {}
                Some(_) => changes.push(Change::new(part, ChangeKind::Changed)),
                None if same_program && part.starts_with(FILE_PART) => {}
                None => changes.push(Change::new(part, ChangeKind::Removed)),
            }
        }
        for part in now.0.keys().filter(|p| !self.0.contains_key(*p)) {
            changes.push(Change::new(part, ChangeKind::Added));
        }
        changes.sort_by(|a, b| a.part.cmp(&b.part));
        changes
    }
}

/// How one part differs from when a recording was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Its hash is another.
    Changed,
    /// The case has it now, and did not then (a tool program or a simulated user added).
    Added,
    /// The case had it then, and does not now.
    Removed,
}

/// One part that differs from when a recording was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The part: `inputs`, `tools`, `user`, `program`, `checks`, or `file:<path>`.
    pub part: String,
    /// How it differs.
    pub kind: ChangeKind,
}

impl Change {
    fn new(part: &str, kind: ChangeKind) -> Change {
        Change {
            part: part.to_owned(),
            kind,
        }
    }

    /// Whether the change makes the recorded answers stale: every part but `checks`,
    /// which judge the answers rather than shape them.
    pub fn stales(&self) -> bool {
        self.part != "checks"
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ChangeKind::Changed => "changed",
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
        };
        match self.part.strip_prefix(FILE_PART) {
            Some(file) => write!(f, "{file} (a file of the tool program) {kind}"),
            None => write!(f, "{} {kind}", self.part),
        }
    }
}

/// Joins `changes` for a sentence: `inputs changed, tools.py (a file of the tool
/// program) changed`.
pub fn describe(changes: &[Change]) -> String {
    changes
        .iter()
        .map(Change::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn hash_of(value: &impl Serialize) -> String {
    hash_inputs(&serde_json::to_value(value).unwrap_or(Value::Null))
}

/// What `case` sends: the target without its connections, its tools and tool program
/// (parts of their own) and the mocks' `expect_calls` (checks), and each interaction's
/// input.
fn inputs(case: &Case) -> Value {
    let mut target = serde_json::to_value(&case.target).unwrap_or(Value::Null);
    if let Some(target) = target.as_object_mut() {
        // Each connection records exchanges of its own: one added or removed leaves the
        // others' recordings good.
        target.remove("connections");
        target.remove("tools");
        if let Some(Value::Object(config)) = target.get_mut("framework_config") {
            config.remove("tool_command");
            config.remove("tool_mcp");
            if let Some(Value::Object(results)) = config.get_mut("tool_results") {
                for result in results.values_mut() {
                    if let Value::Object(result) = result {
                        result.remove("expect_calls");
                    }
                }
            }
        }
    }
    let steps: Vec<Value> = case
        .interactions
        .iter()
        .map(|s| {
            json!({
                "input": s.input,
                "chat_filter": s.chat_filter,
                "continue_conversation": s.continue_conversation,
            })
        })
        .collect();
    json!({"target": target, "interactions": steps})
}

/// How `case`'s answers are judged: each check by its path and kind (not its line), the
/// failure patterns and the gate.
fn checks(case: &Case) -> Value {
    let checks: Vec<Value> = case
        .interactions
        .iter()
        .flat_map(|s| &s.checks)
        .map(|c| json!({"path": &*c.path, "kind": c.kind}))
        .collect();
    json!({
        "checks": checks,
        "failure_patterns": case.failure_patterns,
        "gate": case.gate.to_string(),
    })
}

fn tool_command(case: &Case) -> Option<&Value> {
    match &case.target {
        Target::Model {
            framework_config: Some(config),
            ..
        } => framework_config_command(config),
        _ => None,
    }
}

fn framework_config_command(config: &JsonMap) -> Option<&Value> {
    ["tool_command", "tool_mcp"]
        .iter()
        .find_map(|key| config.get(*key).filter(|c| !c.is_null()))
}

/// The words of a command: a list's items, or a command line split at white space.
fn words(command: &Value) -> Vec<String> {
    match command {
        Value::Array(items) => items
            .iter()
            .filter_map(|w| w.as_str().map(str::to_owned))
            .collect(),
        Value::String(line) => line.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The hash of the regular file at `path`, when there is one: `unreadable` for a file
/// that cannot be read or is over [`MAX_PROGRAM_FILE`].
fn file_hash(path: &Path) -> Option<String> {
    let path: PathBuf = path.to_owned();
    if !path.is_file() {
        return None;
    }
    Some(match crate::files::read_within(&path, MAX_PROGRAM_FILE) {
        Ok((_, bytes)) => {
            use sha2::{Digest, Sha256};
            let digest = Sha256::digest(&bytes);
            digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
        }
        Err(_) => "unreadable".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_each_part_that_differs_and_only_checks_leave_a_recording_good() {
        let then = Under::from_parts([("inputs", "a"), ("checks", "b"), ("user", "c")]);
        let now = Under::from_parts([
            ("inputs", "a"),
            ("checks", "x"),
            ("program", "p"),
            ("file:tools.py", "f"),
        ]);
        let changes = then.changes(&now);
        let shown: Vec<String> = changes.iter().map(Change::to_string).collect();
        assert_eq!(
            shown,
            [
                "checks changed",
                "tools.py (a file of the tool program) added",
                "program added",
                "user removed",
            ]
        );
        let stale: Vec<bool> = changes.iter().map(Change::stales).collect();
        assert_eq!(stale, [false, true, true, true]);
        assert!(then.changes(&then).is_empty());
    }

    /// The one case of the Sentinel spec `text` at `dir/t.yaml`.
    fn case(dir: &Path, text: &str) -> Case {
        let loaded = crate::load::load_str(
            &dir.join("t.yaml"),
            text,
            &crate::Env::default(),
            crate::Unrecognized::Error,
        )
        .expect("a test file");
        assert!(loaded.is_valid(), "{:?}", loaded.outcome);
        loaded.cases().remove(0)
    }

    const SPEC: &str = "name: t\nmodel: m\ninputs: {query: q}\ntools: [{name: look, description: d, parameters: {type: object}}]\nframework: openai-sdk\nframework_config: {tool_command: [python3, tools.py, db.json], tool_results: {clock: {value: noon, expect_calls: 1}}}\nuser: {goal: g, model: m}\nassertions: [{must_contain: x}]\n";

    /// What changed between `SPEC` and `SPEC` with `from` replaced by `to`.
    fn changed(dir: &Path, from: &str, to: &str) -> Vec<String> {
        assert!(SPEC.contains(from), "{from}");
        let then = Under::of(&case(dir, SPEC));
        let now = Under::of(&case(dir, &SPEC.replace(from, to)));
        then.changes(&now).iter().map(|c| c.part.clone()).collect()
    }

    #[test]
    fn each_part_of_a_case_is_hashed_apart() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::write(dir.join("tools.py"), "print()").unwrap();
        std::fs::write(dir.join("db.json"), "{}").unwrap();
        let under = Under::of(&case(dir, SPEC));
        let parts: Vec<&str> = under.parts().map(|(p, _)| p).collect();
        assert_eq!(
            parts,
            [
                "checks",
                "file:db.json",
                "file:tools.py",
                "inputs",
                "program",
                "tools",
                "user"
            ]
        );
        assert!(changed(dir, "query: q", "query: q").is_empty());
        assert_eq!(changed(dir, "query: q", "query: r"), ["inputs"]);
        assert_eq!(
            changed(dir, "must_contain: x", "must_contain: y"),
            ["checks"]
        );
        assert_eq!(
            changed(dir, "expect_calls: 1", "expect_calls: 2"),
            ["checks"]
        );
        assert_eq!(changed(dir, "value: noon", "value: dusk"), ["inputs"]);
        assert_eq!(changed(dir, "description: d", "description: e"), ["tools"]);
        assert_eq!(changed(dir, "goal: g", "goal: h"), ["user"]);
        assert_eq!(
            changed(dir, "tools.py, db.json", "tools.py"),
            ["file:db.json", "program"]
        );
        // The bytes of a file the command names.
        let then = Under::of(&case(dir, SPEC));
        std::fs::write(dir.join("db.json"), "{\"orders\": []}").unwrap();
        let now = Under::of(&case(dir, SPEC));
        let shown: Vec<String> = then.changes(&now).iter().map(Change::to_string).collect();
        assert_eq!(shown, ["db.json (a file of the tool program) changed"]);
    }

    #[test]
    fn a_file_of_the_same_program_that_is_not_there_now_is_no_change() {
        let then = Under::from_parts([("program", "p"), ("file:db.json", "d")]);
        let gone = Under::from_parts([("program", "p")]);
        assert!(then.changes(&gone).is_empty());
        let other = Under::from_parts([("program", "q")]);
        let shown: Vec<String> = then.changes(&other).iter().map(Change::to_string).collect();
        assert_eq!(
            shown,
            [
                "db.json (a file of the tool program) removed",
                "program changed"
            ]
        );
    }
}
