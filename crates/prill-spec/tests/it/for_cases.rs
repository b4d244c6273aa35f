//! Loading a file for its cases (`load_file_for_cases`, what `prill run` and `prill
//! list` do) gives what loading it whole and then taking its cases gives: the same
//! cases, each check at the same place, the same warnings, and for a file that is not
//! valid the same diagnostics. A YAML suite is read test by test on that path, so the
//! comparison is made over every fixture, valid or not, and over suites written in
//! every shape that decides whether a suite can be read so.

use std::path::{Path, PathBuf};

use prill_spec::Syntax;
use prill_spec::limits::Limits;
use prill_spec::load::{self, ForCases, Unrecognized};

use crate::support;
use support::{env, fixtures};

/// Every file under `dir` in a syntax Prill reads, the invalid ones included.
fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all_files(&path, out);
        } else if Syntax::from_path(&path).is_some() {
            out.push(path);
        }
    }
}

/// The plain text of every diagnostic of a taken file, valid or not.
fn diagnostics(taken: &ForCases) -> Vec<String> {
    match taken {
        Ok((_, planned)) => planned
            .warnings
            .iter()
            .map(|d| prill_spec::Report::new(d.clone(), &planned.source).plain())
            .collect(),
        Err(loaded) => loaded.reports().iter().map(|r| r.plain()).collect(),
    }
}

/// `path`, a test file, loaded for its cases (not strict).
fn for_cases(path: &Path) -> ForCases {
    load::load_file_for_cases(path, &env(), Unrecognized::Error, &Limits::default(), false)
        .unwrap()
        .expect("a test file")
}

/// Loads `path` both ways and says how they differ, if they do; `true` when the file
/// was a valid one, with cases.
fn same_both_ways(path: &Path, strict: bool) -> bool {
    let limits = Limits::default();
    let for_cases =
        load::load_file_for_cases(path, &env(), Unrecognized::Skip, &limits, strict).unwrap();
    let whole = load::load_file_with(path, &env(), Unrecognized::Skip, &limits)
        .unwrap()
        .map(|loaded| {
            let loaded = if strict { loaded.strict() } else { loaded };
            loaded.take_cases()
        });
    let (for_cases, whole) = match (for_cases, whole) {
        (None, None) => return false,
        (Some(a), Some(b)) => (a, b),
        (a, b) => panic!(
            "{}: skipped one way only ({} / {})",
            path.display(),
            a.is_some(),
            b.is_some()
        ),
    };
    let shown = format!("{} (strict: {strict})", path.display());
    assert_eq!(diagnostics(&for_cases), diagnostics(&whole), "{shown}");
    match (for_cases, whole) {
        (Ok((cases, planned)), Ok((expected, kept))) => {
            assert_eq!(cases, expected, "{shown}");
            assert_eq!(planned.cases, kept.cases, "{shown}");
            assert_eq!(planned.dialect, kept.dialect, "{shown}");
            assert_eq!(planned.syntax, kept.syntax, "{shown}");
            assert_eq!(planned.redactor, kept.redactor, "{shown}");
            assert_eq!(planned.source.text, kept.source.text, "{shown}");
            !cases.is_empty()
        }
        (Err(loaded), Err(expected)) => {
            assert_eq!(loaded.outcome, expected.outcome, "{shown}");
            assert_eq!(loaded.dialect, expected.dialect, "{shown}");
            false
        }
        (a, b) => panic!(
            "{shown}: valid one way only ({} / {})",
            a.is_ok(),
            b.is_ok()
        ),
    }
}

#[test]
fn every_fixture_loads_for_its_cases_as_it_loads_whole() {
    let mut files = Vec::new();
    all_files(&fixtures(), &mut files);
    let mut valid = 0;
    for path in &files {
        for strict in [false, true] {
            valid += usize::from(same_both_ways(path, strict));
        }
    }
    assert!(files.len() >= 100, "only {} files", files.len());
    assert!(valid >= 40, "only {valid} valid loads compared");
}

/// Suites in the shapes that decide whether one is read test by test: keys after
/// `tests`, merge keys, anchors shared between tests, a flow list, an anchored list,
/// warnings said once for the whole suite, and errors in the middle.
const SHAPES: &[(&str, &str)] = &[
    (
        "plain",
        "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions:\n    - must_contain: x\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {query: two}\n    assertions:\n      - regex_match: \"\\\\d+\"\n",
    ),
    (
        "defaults-after-tests",
        "name: s\ntests:\n  - name: a\n    inputs: {query: one}\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\n",
    ),
    (
        "name-after-tests",
        "tests:\n  - name: a\n    model: gpt-4o\n    provider: openai\n    inputs: {query: one}\n    assertions: [{must_contain: x}]\nname: late\n",
    ),
    (
        "agent-after-tests",
        "name: s\ntests:\n  - name: a\n    model: gpt-4o\n    inputs: {query: one}\n    assertions: [{must_contain: x}]\nagent: hello\n",
    ),
    (
        "holder-after-tests",
        "name: s\ntests:\n  - name: a\n    model: gpt-4o\n    provider: openai\n    inputs: {query: one}\n    assertions: [{must_contain: x}]\nx-later: 1\n",
    ),
    (
        "holder-before-tests",
        "x-common: &common\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\nname: s\ntests:\n  - <<: *common\n    name: a\n    inputs: {query: one}\n  - <<: *common\n    name: b\n    inputs: {query: two}\n",
    ),
    (
        "merge-before-tests",
        "x-top: &top\n  name: merged\n  tags: [t]\n<<: *top\ntests:\n  - name: a\n    model: gpt-4o\n    provider: openai\n    inputs: {query: one}\n    assertions: [{must_contain: x}]\n",
    ),
    (
        "merge-after-tests",
        "x-top: &top\n  defaults: {model: gpt-4o, provider: openai, assertions: [{must_contain: x}]}\nname: s\ntests:\n  - name: a\n    inputs: {query: one}\n<<: *top\n",
    ),
    (
        "anchor-in-one-test-alias-in-another",
        "name: s\ntests:\n  - name: a\n    model: gpt-4o\n    provider: openai\n    inputs: &in {query: one}\n    assertions: &checks [{must_contain: x}, {regex_match: \"\\\\d\"}]\n  - name: b\n    model: gpt-4o\n    provider: openai\n    inputs: *in\n    assertions: *checks\n",
    ),
    (
        "whole-test-aliased",
        "name: s\ntests:\n  - &first\n    name: a\n    model: gpt-4o\n    provider: openai\n    inputs: {query: one}\n    assertions: [{must_contain: x}]\n  - *first\n",
    ),
    (
        "anchored-list",
        "name: s\ntests: &all\n  - name: a\n    model: gpt-4o\n    provider: openai\n    inputs: {query: one}\n    assertions: [{must_contain: x}]\n",
    ),
    (
        "flow-list",
        "name: s\ndefaults: {model: gpt-4o, provider: openai, assertions: [{must_contain: x}]}\ntests: [{name: a, inputs: {query: one}}, {name: b, inputs: {query: two}}]\n",
    ),
    (
        "suite-tags-and-category",
        "name: s\ncategory: geo\ntags: [smoke, geo]\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n    tags: [own]\n  - name: b\n    category: other\n    inputs: {query: two}\n",
    ),
    (
        "warning-from-defaults-said-once",
        "name: s\ndefaults:\n  model: my-model\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {query: two}\n  - name: c\n    inputs: {query: three}\n",
    ),
    (
        "unused-framework-config-in-defaults",
        "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  framework_config: {max_turns: 3}\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    framework_config: {max_turns: 2}\n    inputs: {query: two}\n",
    ),
    (
        "refused-value-in-defaults",
        "name: s\ndefaults:\n  model: claude-sonnet-4-5\n  provider: anthropic\n  model_config: {temperature: 1.5}\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {query: two}\n",
    ),
    (
        "error-in-the-middle",
        "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {querry: two}\n  - name: c\n    inputs: {query: three}\n",
    ),
    (
        "error-in-the-header",
        "name: s\nversoin: 1\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n",
    ),
    (
        "syntax-error-after-tests",
        "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {query: [two}\n",
    ),
    (
        "duplicate-key-in-a-test",
        "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\ntests:\n  - name: a\n    name: again\n    inputs: {query: one}\n",
    ),
    ("no-tests", "name: s\ntests: []\n"),
    ("tests-not-a-list", "name: s\ntests: {a: 1}\n"),
    (
        "data-driven-with-tests-key",
        "agent: hello\ninteractions:\n  - text: hi\n    response: {text: {keywords: hi}}\ntests:\n  - a\n",
    ),
    (
        "spec-not-suite",
        "name: t\nmodel: gpt-4o\nprovider: openai\ninputs: {query: hi}\nassertions: [{must_contain: x}]\n",
    ),
];

#[test]
fn suites_of_every_shape_load_for_their_cases_as_they_load_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut valid = 0;
    for (name, text) in SHAPES {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, text).unwrap();
        for strict in [false, true] {
            valid += usize::from(same_both_ways(&path, strict));
        }
    }
    assert!(valid >= 12, "only {valid} valid loads compared");
}

#[test]
fn hostile_suites_are_refused_for_their_cases_as_they_are_whole() {
    // An alias bomb whose anchors are written before `tests` and expanded in a test,
    // and a test nested too deep: read test by test, each is refused as it is whole,
    // by the same bounds, and nothing of it is run.
    let mut bomb = String::from("x-a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!(
            "x-a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    bomb.push_str("name: s\ntests:\n  - name: a\n    model: gpt-4o\n    inputs: {query: *a11}\n    assertions: [{must_contain: x}]\n");
    let deep = format!(
        "name: s\ntests:\n  - name: a\n    model: gpt-4o\n    inputs: {{query: {}{}}}\n    assertions: [{{must_contain: x}}]\n",
        "[".repeat(2000),
        "]".repeat(2000)
    );
    let dir = tempfile::tempdir().unwrap();
    for (name, text, why) in [
        ("bomb", bomb, "aliases expand to more than"),
        ("deep", deep, "nest"),
    ] {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, text).unwrap();
        assert!(!same_both_ways(&path, false), "{name} is refused");
        let taken = for_cases(&path);
        let said = diagnostics(&taken);
        assert!(said.iter().any(|d| d.contains(why)), "{name}: {said:#?}");
    }
}

#[test]
fn a_large_suite_loads_for_its_cases_as_it_loads_whole() {
    // Large enough that room for the cases is reserved from the first tests read.
    let mut text = String::from(
        "name: big\ndefaults:\n  model: gpt-4o-mini\n  provider: openai\n  assertions:\n    - must_contain: Paris\ntests:\n",
    );
    for i in 0..500 {
        text.push_str(&format!(
            "  - name: \"test {i}\"\n    inputs:\n      query: \"city {i}?\"\n"
        ));
        if i % 7 == 0 {
            text.push_str("    assertions:\n      - regex_match: \"\\\\d+\"\n");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    std::fs::write(&path, &text).unwrap();
    assert!(same_both_ways(&path, false));
    let taken = for_cases(&path);
    let (cases, _) = taken.expect("valid");
    assert_eq!(cases.len(), 500);
    assert!(
        cases.capacity() < 500 + 500 / 8,
        "room for {} cases reserved for 500",
        cases.capacity()
    );
}
