//! Tests of the trajectory assertions: each rule passing and failing.

use prill_spec::model::sentinel::{ArgSchema, Pattern};

use prill_spec::model::sentinel::{ArgsMode, ExpectedCall, SequenceMode, ToolSequence};

use super::super::sequence::{graph_steps, sequence};
use super::*;
use crate::status::Status;

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(name, arguments)
}

fn calls(names: &[&str]) -> Vec<ToolCall> {
    names.iter().map(|n| call(n, json!({}))).collect()
}

fn seq(tools: &[&str], strict: bool) -> ToolSequence {
    let mode = if strict {
        SequenceMode::Strict
    } else {
        SequenceMode::InOrder
    };
    in_mode(tools, mode)
}

fn in_mode(tools: &[&str], mode: SequenceMode) -> ToolSequence {
    ToolSequence {
        mode,
        ..ToolSequence::in_order(tools.iter().map(|s| (*s).to_owned()).collect())
    }
}

#[test]
fn a_sequence_allows_other_calls_around_and_between() {
    let made = calls(&[
        "plan",
        "search",
        "search",
        "fetch",
        "log",
        "summarize",
        "end",
    ]);
    let (e, m) = sequence(&seq(&["search", "fetch", "summarize"], false), &made);
    assert_eq!(e.status(), Status::Passed, "{m}");
    assert_eq!(m, "called search → fetch → summarize in order");
}

#[test]
fn a_sequence_fails_on_a_missing_call_or_the_wrong_order() {
    let want = seq(&["search", "fetch", "summarize"], false);
    let (e, m) = sequence(&want, &calls(&["search", "summarize"]));
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        "expected calls in the order search → fetch → summarize, found search → summarize \
         (no call to fetch after search)"
    );
    // search and summarize are matched in order; fetch is missing.
    assert_eq!(e.metadata["matched"], json!(2));
    assert_eq!(e.metadata["missing"], json!(["fetch"]));
    let (e, m) = sequence(&want, &calls(&["fetch", "search", "summarize"]));
    assert_eq!(e.status(), Status::Failed, "{m}");
    let (e, m) = sequence(&want, &[]);
    assert_eq!(e.status(), Status::Failed);
    assert!(
        m.ends_with("found no tool calls (no call to search after the start)"),
        "{m}"
    );
}

#[test]
fn a_strict_sequence_is_exactly_the_calls() {
    let want = seq(&["search", "fetch"], true);
    let (e, m) = sequence(&want, &calls(&["search", "fetch"]));
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(m, "called exactly search → fetch");
    for made in [
        &["search", "log", "fetch"][..],
        &["plan", "search", "fetch"],
        &["search", "fetch", "end"],
        &["search"],
    ] {
        let (e, m) = sequence(&want, &calls(made));
        assert_eq!(e.status(), Status::Failed, "{made:?}");
        assert_eq!(
            m,
            format!(
                "expected exactly the calls search → fetch, found {}",
                made.join(" → ")
            )
        );
    }
}

#[test]
fn must_not_call_tool_names_the_forbidden_call_and_the_calls_made() {
    let forbid = vec!["delete_user".to_owned(), "drop_table".to_owned()];
    let (e, m) = must_not(&forbid, &calls(&["search"]));
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(m, "no call to delete_user, drop_table");
    let (e, m) = must_not(&forbid, &calls(&["search", "delete_user"]));
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        "expected no call to delete_user, found search → delete_user"
    );
    assert_eq!(e.metadata["forbidden_called"], json!(["delete_user"]));
}

fn tool_args(args: Vec<(&str, ArgMatcher)>) -> ToolArgs {
    ToolArgs {
        tool: "search".into(),
        args: args.into_iter().map(|(k, m)| (k.to_owned(), m)).collect(),
    }
}

#[test]
fn tool_args_passes_when_some_call_of_the_tool_matches() {
    let want = tool_args(vec![(
        "query",
        ArgMatcher::Regex(Pattern::new("lap(top)?").unwrap()),
    )]);
    let made = vec![
        call("search", json!({"query": "phones"})),
        call("fetch", json!({"query": "laptop"})),
        call("search", json!({"query": "cheap laptops", "limit": 3})),
    ];
    let (e, m) = args(&want, &made);
    assert_eq!(e.status(), Status::Passed, "{m}");
    assert_eq!(
        m,
        r#"call 2 of search had arguments matching {"query":{"regex":"lap(top)?"}}"#
    );
}

#[test]
fn tool_args_fails_naming_the_calls_of_the_tool_or_the_calls_made() {
    let want = tool_args(vec![("query", ArgMatcher::Contains(json!("laptop")))]);
    let (e, m) = args(&want, &[call("search", json!({"query": "phones"}))]);
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        r#"expected a call to search with arguments matching {"query":{"contains":"laptop"}}, found search({"query":"phones"})"#
    );
    let (e, m) = args(&want, &calls(&["fetch"]));
    assert_eq!(e.status(), Status::Failed);
    assert!(m.ends_with("found fetch"), "{m}");
    // A missing argument does not match, whatever the matcher.
    let (e, _) = args(&want, &[call("search", json!({"q": "laptop"}))]);
    assert_eq!(e.status(), Status::Failed);
}

#[test]
fn arguments_given_as_json_text_are_read_as_json() {
    let want = tool_args(vec![("limit", ArgMatcher::Equals(json!(3)))]);
    let (e, m) = args(&want, &[call("search", json!(r#"{"limit": 3.0}"#))]);
    assert_eq!(e.status(), Status::Passed, "{m}");
}

#[test]
fn each_matcher_on_both_sides() {
    let eq = ArgMatcher::Equals(json!({"a": [1, "x"]}));
    assert!(matches(&eq, &json!({"a": [1.0, "x"]})));
    assert!(!matches(&eq, &json!({"a": [1, "x"], "b": 2})));
    let re = ArgMatcher::Regex(Pattern::new("^lap").unwrap());
    assert!(matches(&re, &json!("laptop")));
    assert!(!matches(&re, &json!("a laptop")));
    assert!(!matches(&re, &json!(3)), "a regex matches strings only");
    let text = ArgMatcher::Contains(json!("top"));
    assert!(matches(&text, &json!("laptop")));
    assert!(!matches(&text, &json!("LAPTOP")), "letter case counts");
    assert!(matches(&text, &json!(["top", "x"])));
    assert!(
        !matches(&text, &json!(["laptop"])),
        "an item equals, not contains"
    );
    assert!(!matches(&text, &json!(7)));
    let schema = ArgMatcher::Schema(
        ArgSchema::new(json!({"type": "integer", "minimum": 1, "maximum": 10})).unwrap(),
    );
    assert!(matches(&schema, &json!(5)));
    assert!(!matches(&schema, &json!(50)));
    assert!(!matches(&schema, &json!("5")));
}

#[test]
fn tool_call_counts_on_both_sides_of_the_bound() {
    let made = calls(&["a", "b", "c"]);
    let (e, m) = count(Bound::AtMost, 3, &made);
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(m, "made 3 tool calls, at most 3");
    let (e, m) = count(Bound::AtMost, 2, &made);
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(m, "expected at most 2 tool calls, found 3: a → b → c");
    let (e, _) = count(Bound::AtMost, 0, &[]);
    assert_eq!(e.status(), Status::Passed);
    let (e, m) = count(Bound::AtLeast, 3, &made);
    assert_eq!(e.status(), Status::Passed, "{m}");
    let (e, m) = count(Bound::AtLeast, 1, &[]);
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(m, "expected at least 1 tool call, found 0: no tool calls");
}

#[test]
fn iterations_on_both_sides_and_unknown_is_an_error() {
    let (e, m) = iterations(1, Some(1)).unwrap();
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(m, "used 1 model call, within 1");
    let (e, m) = iterations(3, Some(4)).unwrap();
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(m, "expected at most 3 model calls, used 4");
    assert_eq!(
        iterations(3, None).unwrap_err(),
        AssertionError::IterationsNotRecorded
    );
}

/// Each mode, from the calls' side, with a tool called twice: `any_order` needs the
/// same calls, `subset` no call outside the tools, `superset` every tool called.
#[test]
fn each_mode_matches_repeated_tools_as_it_says() {
    let want = |mode| in_mode(&["search", "search", "fetch"], mode);
    let status = |mode, made: &[&str]| sequence(&want(mode), &calls(made)).0.status();
    use SequenceMode::{AnyOrder, InOrder, Strict, Subset, Superset};
    let cases: [(&[&str], [Status; 5]); 5] = [
        // strict, in_order, any_order, subset, superset
        (&["search", "search", "fetch"], [Status::Passed; 5]),
        (
            &["fetch", "search", "search"],
            [
                Status::Failed,
                Status::Failed,
                Status::Passed,
                Status::Passed,
                Status::Passed,
            ],
        ),
        (
            &["search", "fetch"],
            [
                Status::Failed,
                Status::Failed,
                Status::Failed,
                Status::Passed,
                Status::Failed,
            ],
        ),
        (
            &["search", "log", "search", "fetch"],
            [
                Status::Failed,
                Status::Passed,
                Status::Failed,
                Status::Failed,
                Status::Passed,
            ],
        ),
        (
            &["search", "search", "search", "fetch"],
            [
                Status::Failed,
                Status::Passed,
                Status::Failed,
                Status::Failed,
                Status::Passed,
            ],
        ),
    ];
    for (made, expected) in cases {
        for (mode, want) in [Strict, InOrder, AnyOrder, Subset, Superset]
            .into_iter()
            .zip(expected)
        {
            assert_eq!(status(mode, made), want, "{} on {made:?}", mode.name());
        }
    }
    let (e, m) = sequence(&want(Superset), &calls(&["fetch", "search"]));
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        "expected calls to search, search, fetch, in any order, found fetch → search; missing: search"
    );
    assert_eq!(e.metadata["missing"], json!(["search"]));
    let (_, m) = sequence(&want(Subset), &calls(&["search", "delete"]));
    assert_eq!(
        m,
        "expected every call to be one of search, search, fetch, found search → delete; not expected: delete"
    );
}

/// `score: f1` scores the matched calls: precision over the calls made, recall over
/// the tools, their harmonic mean against the threshold.
#[test]
fn an_f1_score_gives_partial_credit() {
    let mut want = in_mode(&["search", "fetch", "summarize"], SequenceMode::AnyOrder);
    want.f1_threshold = Some(0.7);
    let (e, m) = sequence(&want, &calls(&["fetch", "search", "log"]));
    // 2 matched of 3 made and 3 expected: precision = recall = F1 = 2/3.
    assert!((e.score - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(e.status(), Status::Failed);
    assert!(
        m.starts_with("F1 0.67 (precision 0.67, recall 0.67) is below the threshold 0.7 for search → fetch → summarize in any order (any_order)"),
        "{m}"
    );
    want.f1_threshold = Some(0.6);
    assert_eq!(
        sequence(&want, &calls(&["fetch", "search", "log"]))
            .0
            .status(),
        Status::Passed
    );
}

/// A call written with arguments fits only a call whose arguments fit it, under the
/// sequence's `args_mode`; the first such call left unmatched names the nearest call
/// to its tool and the argument that differs. With a matcher that is not an equality
/// (`contains`), taking the first fitting call would use up the only call the second
/// expectation fits: the matching is maximal.
#[test]
fn calls_with_arguments_are_matched_one_to_one_and_a_miss_names_the_argument() {
    let search = |q: Value| ExpectedCall {
        tool: "search".into(),
        args: Some(vec![("q".into(), ArgMatcher::Contains(q))]),
    };
    let mut want = in_mode(&[], SequenceMode::Superset);
    want.tools = vec![search(json!("lap")), search(json!("laptop deals"))];
    let made = [
        call("search", json!({"q": "laptop deals", "page": 2})),
        call("search", json!({"q": "laptops"})),
    ];
    let (e, m) = sequence(&want, &made);
    assert_eq!(e.status(), Status::Passed, "{m}");
    // Exactly the arguments written: `page` is one too many on the first call.
    want.args_mode = ArgsMode::Exact;
    let (e, m) = sequence(&want, &made);
    assert_eq!(e.status(), Status::Failed);
    assert!(
        m.ends_with("; nearest: search call 1, argument `page` expected not written, found 2"),
        "{m}"
    );
    // Ignored, any two searches do.
    want.args_mode = ArgsMode::Ignore;
    assert_eq!(sequence(&want, &made).0.status(), Status::Passed);
    // A value that differs is named with what was expected.
    want.args_mode = ArgsMode::Superset;
    let (e, m) = sequence(
        &want,
        &[call("search", json!({"q": "phones"})), made[1].clone()],
    );
    assert_eq!(e.status(), Status::Failed);
    assert!(
        m.ends_with("; nearest: search call 1, argument `q` expected {\"contains\":\"laptop deals\"}, found \"phones\""),
        "{m}"
    );
    // `subset`: every argument the call has is written and fits; one written may be absent.
    want.args_mode = ArgsMode::Subset;
    let partial = [
        call("search", json!({})),
        call("search", json!({"q": "laptop deals"})),
    ];
    assert_eq!(sequence(&want, &partial).0.status(), Status::Passed);
}

/// The message `docs/checks.md` shows for a missed call with arguments.
#[test]
fn the_documented_miss_is_what_a_miss_says() {
    let search = |q: &str| ExpectedCall {
        tool: "search".into(),
        args: Some(vec![("q".into(), ArgMatcher::Contains(json!(q)))]),
    };
    let mut want = in_mode(&[], SequenceMode::Superset);
    want.tools = vec![search("lap"), search("laptop deals")];
    let made = [
        call("search", json!({"q": "phones"})),
        call("search", json!({"q": "laptops"})),
    ];
    let (_, m) = sequence(&want, &made);
    assert_eq!(
        m,
        "expected calls to search, search, in any order, found search → search; missing: search; nearest: search call 1, argument `q` expected {\"contains\":\"laptop deals\"}, found \"phones\""
    );
}

/// `args: {}` is a call with no arguments: `exact` and `subset` hold a call to it, and
/// `superset` lets any call fit, as the name alone does.
#[test]
fn a_call_written_with_no_arguments_takes_none_under_exact_and_subset() {
    let mut want = in_mode(&[], SequenceMode::Strict);
    want.tools = vec![ExpectedCall::with_args("now", [])];
    let bare = [call("now", json!({}))];
    let given = [call("now", json!({"tz": "UTC"}))];
    for (mode, bare_passes, given_passes) in [
        (ArgsMode::Exact, true, false),
        (ArgsMode::Subset, true, false),
        (ArgsMode::Superset, true, true),
        (ArgsMode::Ignore, true, true),
    ] {
        want.args_mode = mode;
        let status = |made: &[ToolCall]| sequence(&want, made).0.status() == Status::Passed;
        assert_eq!(status(&bare), bare_passes, "{mode:?} on now()");
        assert_eq!(status(&given), given_passes, "{mode:?} on now(tz)");
    }
    want.args_mode = ArgsMode::Exact;
    let (_, m) = sequence(&want, &given);
    assert!(
        m.ends_with("; nearest: now call 1, argument `tz` expected not written, found \"UTC\""),
        "{m}"
    );
}

/// An empty list (taken only in `strict`, `any_order` and `subset`) is no call at all.
#[test]
fn no_calls_expected_passes_only_when_none_was_made() {
    for mode in [
        SequenceMode::Strict,
        SequenceMode::AnyOrder,
        SequenceMode::Subset,
    ] {
        let want = in_mode(&[], mode);
        let (e, m) = sequence(&want, &[]);
        assert_eq!(e.status(), Status::Passed, "{mode:?}: {m}");
        assert_eq!(m, "no tool calls, as expected");
        let (e, m) = sequence(&want, &calls(&["search"]));
        assert_eq!(e.status(), Status::Failed, "{mode:?}");
        assert!(m.starts_with("expected no tool calls, found search"), "{m}");
    }
}

/// In order, names that all come in order but with arguments that do not fit: the
/// message says which tool had no fitting call (this once indexed past the list).
#[test]
fn an_in_order_miss_on_arguments_alone_names_the_tool() {
    let mut want = in_mode(&[], SequenceMode::InOrder);
    want.tools = vec![ExpectedCall::with_args(
        "notify",
        [("urgent".to_owned(), ArgMatcher::Equals(json!(1)))],
    )];
    let (e, m) = sequence(&want, &[call("notify", json!({"urgent": true}))]);
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        "expected calls in the order notify, found notify (no call to notify after the start); nearest: notify call 1, argument `urgent` expected 1, found true"
    );
}

/// `graph_steps` matches node names to the steps a graph ran, in every mode, and speaks
/// of steps; a response with no steps recorded errors, never passes.
#[test]
fn graph_steps_match_the_nodes_that_ran_and_speak_of_steps() {
    let ran: Vec<String> = ["agent", "tools", "agent", "tools", "agent"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let (e, m) = graph_steps(
        &in_mode(&["agent", "tools", "agent"], SequenceMode::InOrder),
        Some(&ran),
    )
    .unwrap();
    assert_eq!(e.status(), Status::Passed, "{m}");
    assert_eq!(m, "ran agent → tools → agent in order");
    let (e, m) = graph_steps(
        &in_mode(&["tools", "tools", "tools"], SequenceMode::Superset),
        Some(&ran),
    )
    .unwrap();
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        "expected runs of tools, tools, tools, in any order, found agent → tools → agent → tools → agent; missing: tools"
    );
    let (e, m) = graph_steps(
        &in_mode(&["agent", "review"], SequenceMode::InOrder),
        Some(&ran),
    )
    .unwrap();
    assert_eq!(e.status(), Status::Failed);
    assert_eq!(
        m,
        "expected steps in the order agent → review, found agent → tools → agent → tools → agent (no run of review after agent)"
    );
    let (e, m) = graph_steps(&in_mode(&[], SequenceMode::Strict), Some(&[])).unwrap();
    assert_eq!(e.status(), Status::Passed);
    assert_eq!(m, "no steps, as expected");
    let err = graph_steps(&in_mode(&["agent"], SequenceMode::InOrder), None).unwrap_err();
    assert_eq!(err, AssertionError::StepsNotRecorded);
}
