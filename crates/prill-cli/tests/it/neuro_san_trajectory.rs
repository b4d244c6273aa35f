//! The `trajectory` part of data-driven files, run for real through `prill run --demo`
//! over `direct` and `http`: the demo's `math_guy` front man invokes its coded tool
//! `Calculator`, which its `MAXIMAL` stream shows (`Received arguments:` and
//! `Got result:` messages in neuro-san's shapes). Checks that hold pass, checks that do
//! not fail with a message naming what was invoked, and a `MINIMAL` interaction with a
//! trajectory check is refused before anything runs.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{command, json_or_null, output_text};

const PASSING: &str = r#"
# Every trajectory check holds for math_guy, which invokes Calculator once.
agent = math_guy
connections = [direct, http]
interactions = [
  {
    text = multiply
    sly_data { x = 847, y = 23 }
    chat_filter = MAXIMAL
    response {
      sly_data { equals { value = 19481 } }
      trajectory {
        tool_sequence { tools = [Calculator], strict = true }
        must_call_tool = Calculator
        must_not_call_tool = [Accountant, MathGuy]
        tool_args { tool = Calculator, args { operation = multiply, x { schema { type = integer } } } }
        max_tool_calls = 1
        min_tool_calls = 1
      }
    }
  }
]
"#;

const FAILING: &str = r#"
# Every trajectory check fails for math_guy, which invokes Calculator once.
agent = math_guy
connections = [direct, http]
interactions = [
  {
    text = multiply
    sly_data { x = 847, y = 23 }
    chat_filter = MAXIMAL
    response {
      trajectory {
        tool_sequence = [Calculator, Calculator]
        must_not_call_tool = Calculator
        tool_args { tool = Calculator, args { operation = add } }
        min_tool_calls = 2
      }
    }
  }
]
"#;

const MINIMAL: &str = r#"
agent = math_guy
interactions = [
  { text = multiply, response { trajectory { must_not_call_tool = Accountant } } }
]
"#;

/// `prill run --demo <file>` in `dir`; its output and JSON report (`null` when none).
fn run_demo(dir: &Path, file: &str) -> (Output, Value) {
    run_demo_with(dir, file, &[])
}

/// [`run_demo`] with `extra` arguments; the report is removed once read, so that the
/// next run's cannot be mistaken for it.
fn run_demo_with(dir: &Path, file: &str, extra: &[&str]) -> (Output, Value) {
    let out = command(dir, &["run", "--demo", file, "--json", "report.json"])
        .args(extra)
        .output()
        .unwrap();
    let report = json_or_null(&dir.join("report.json"));
    let _ = std::fs::remove_file(dir.join("report.json"));
    (out, report)
}

/// Each unit's connection and verdict, sorted.
fn connection_verdicts(report: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = report["units"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            (
                u["unit"]["connection"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                u["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

fn pairs(verdict: &str) -> Vec<(String, String)> {
    ["direct", "http"]
        .iter()
        .map(|c| ((*c).to_owned(), verdict.to_owned()))
        .collect()
}

#[test]
fn trajectory_checks_pass_and_fail_on_the_demo_agents_invocations() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("pass.hocon", PASSING),
        ("fail.hocon", FAILING),
        ("minimal.hocon", MINIMAL),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }

    let (out, report) = run_demo(dir.path(), "pass.hocon");
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(connection_verdicts(&report), pairs("passed"), "{all}");

    let (out, report) = run_demo(dir.path(), "fail.hocon");
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert_eq!(connection_verdicts(&report), pairs("failed"), "{all}");
    for message in [
        "must_not_call_tool: expected no call to Calculator, found Calculator",
        r#"tool_args: expected a call to Calculator with arguments matching {"operation":"add"}, found Calculator({"operation":"multiply","x":847,"y":23})"#,
        "tool_sequence: expected calls in the order Calculator → Calculator, found Calculator (no call to Calculator after Calculator)",
        "min_tool_calls: expected at least 2 tool calls, found 1: Calculator",
    ] {
        assert!(all.contains(message), "missing {message:?} in:\n{all}");
    }

    let (out, _) = run_demo(dir.path(), "minimal.hocon");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "error[trajectory-needs-maximal]: interactions[0].response.trajectory: a trajectory \
             check needs the interaction's intermediate messages, and a MINIMAL stream holds \
             only the final one"
        ) && stderr.contains("nothing was run"),
        "{stderr}"
    );

    // Over `--connection mcp` nothing shows the invocations: the checks error, they
    // never pass on nothing.
    let (out, report) = run_demo_with(dir.path(), "pass.hocon", &["--connection", "mcp"]);
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert_eq!(
        connection_verdicts(&report),
        [("mcp".to_owned(), "errored".to_owned())],
        "{all}"
    );
    assert!(
        all.contains("the mcp connection carries only the agent's final message, so no trajectory can be read"),
        "{all}"
    );
}
