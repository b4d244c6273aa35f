//! A Sentinel suite written in YAML, loaded test by test: each test is validated and
//! made into its case as soon as the parser has read it, and its part of the tree is
//! then freed. The whole tree and the whole validated suite are never held, so loading
//! a suite of 100,000 tests needs little more than its text and its cases.
//!
//! This is only a faster way to the same result. The suite is read so only when its
//! `tests` is its last key and no merge key (`<<`) comes before it (what comes after
//! `tests` could change every test); and what it gives is used only when the file
//! turns out valid, with no warning under `--strict`. In every other case the file is
//! loaded again, whole ([`super::load_source`]), which alone says what is wrong with
//! it. Both ways give the same cases and the same warnings: the tests of this module
//! hold them side by side.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Severity};
use crate::model::provider::ProviderKind;
use crate::node::{Node, Value};
use crate::plan::{Case, Dialect, Shared};
use crate::redact::Redactor;
use crate::source::{Source, Syntax};
use crate::syntax::yaml::{self, Items};
use crate::validate::cx::{Cx, Style};
use crate::validate::sentinel::{Header, SuiteTests, drop_anchor_holders, suite_header};

use super::Planned;

/// How many tests are read before the room for the cases is reserved, from how many
/// bytes those tests took.
const SAMPLE: usize = 64;

/// Loads `source`, a YAML file, as a suite read test by test: its cases and what is
/// kept of the file. `Err` gives the source back when the file cannot be read so or
/// is not valid (or, when `strict`, has a warning), for loading it whole.
pub(super) fn suite_cases(
    source: Source,
    providers: &BTreeMap<String, ProviderKind>,
    strict: bool,
) -> Result<(Vec<Case>, Planned), Source> {
    let mut stream = Stream::new(&source, providers);
    let Ok(tree) = yaml::parse_items(&source, "tests", Some(&mut stream)) else {
        return Err(source);
    };
    let Some(warnings) = stream.finish(tree, strict) else {
        return Err(source);
    };
    let cases = stream.cases;
    let planned = Planned {
        source,
        syntax: Syntax::Yaml,
        dialect: Some(Dialect::SentinelSuite),
        warnings,
        redactor: Redactor::default(),
        cases: cases.len(),
    };
    Ok((cases, planned))
}

/// What a suite read test by test has given so far.
struct Stream<'a> {
    source: &'a Source,
    cx: Cx,
    /// The suite as written before `tests`, and its fields validated.
    before: Option<(Node, Header)>,
    suite_tags: Vec<String>,
    tests: SuiteTests,
    /// How many tests were read, valid or not.
    read: usize,
    cases: Vec<Case>,
    shared: Shared,
}

impl<'a> Stream<'a> {
    fn new(source: &'a Source, providers: &BTreeMap<String, ProviderKind>) -> Self {
        let mut cx = Cx::new(Style::Sentinel);
        cx.providers = providers.clone();
        Stream {
            source,
            cx,
            before: None,
            suite_tags: Vec::new(),
            tests: SuiteTests::default(),
            read: 0,
            cases: Vec::new(),
            shared: Shared::new(&source.path),
        }
    }

    /// The file's warnings, when `tree` (the file with `tests` empty) shows that the
    /// tests were read as the suite's and the file is valid (with no warning, when
    /// `strict`); `None` when it must be loaded whole.
    fn finish(&mut self, mut tree: Node, strict: bool) -> Option<Vec<Diagnostic>> {
        let (before, _) = self.before.take()?;
        drop_anchor_holders(&mut tree);
        let (Value::Object(written), Value::Object(kept)) = (&tree.value, &before.value) else {
            return None;
        };
        // `tests` is the last key, and nothing else came after what was read before it.
        let last_is_tests = written.last().is_some_and(|(k, _)| k.name == "tests");
        if !last_is_tests || written.len() != kept.len() + 1 || self.read == 0 {
            return None;
        }
        let mut cx = std::mem::replace(&mut self.cx, Cx::new(Style::Sentinel));
        std::mem::take(&mut self.tests).finish(before.get("defaults"), &mut cx);
        let (errors, warnings): (Vec<Diagnostic>, Vec<Diagnostic>) = cx
            .finish()
            .into_iter()
            .partition(|d| d.severity == Severity::Error);
        let strict_ok = !strict || warnings.is_empty();
        (errors.is_empty() && strict_ok).then_some(warnings)
    }

    /// Reserves room for the cases once [`SAMPLE`] tests are read, from the bytes
    /// they took and the bytes left: a vector grown by doubling would hold up to twice
    /// the room, and copy the cases at each step.
    fn reserve(&mut self, tests_start: usize, read_to: usize) {
        let per_test = (read_to.saturating_sub(tests_start) / SAMPLE).max(1);
        let left = self.source.text.len().saturating_sub(read_to) / per_test;
        self.cases.reserve_exact(left + left / 32 + 16);
    }
}

impl Items for Stream<'_> {
    fn begin(&mut self, mut before: Node) -> bool {
        if before.get("agent").is_some() || before.get("interactions").is_some() {
            return false;
        }
        drop_anchor_holders(&mut before);
        let Some(header) = suite_header(&before, &mut self.cx) else {
            return false;
        };
        self.suite_tags = header.suite_tags();
        self.before = Some((before, header));
        true
    }

    fn item(&mut self, index: usize, node: Node) {
        self.read += 1;
        let Some((before, header)) = &self.before else {
            return;
        };
        let defaults = before.get("defaults");
        let test = self
            .tests
            .test(index, &node, &header.test_defaults, defaults, &mut self.cx);
        let Some(test) = test else {
            return;
        };
        let mut case = test.into_case(&mut self.shared, &self.suite_tags, Dialect::SentinelSuite);
        for check in case.interactions.iter_mut().flat_map(|s| &mut s.checks) {
            let span = super::place_in_test(&node, before, &check.path);
            check.location = span.map(|span| super::location(self.source, span));
        }
        if self.read == SAMPLE {
            let tests_start = before.span.end;
            self.reserve(tests_start, node.span.end);
        }
        self.cases.push(case);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "name: s\ndefaults:\n  model: gpt-4o\n  provider: openai\n  assertions: [{must_contain: x}]\n";

    /// Whether `text` is read test by test, and how many cases it gave.
    fn streamed(text: &str, strict: bool) -> Option<usize> {
        let source = Source::new("s.yaml", text);
        suite_cases(source, &BTreeMap::new(), strict)
            .ok()
            .map(|(cases, planned)| {
                assert_eq!(cases.len(), planned.cases);
                cases.len()
            })
    }

    #[test]
    fn the_cases_read_test_by_test_share_their_file_model_and_check_paths() {
        use crate::plan::Target;
        use std::sync::Arc;
        let tests = "tests:\n  - {name: a, inputs: {query: one}}\n  - {name: b, inputs: {query: two}}\n  - {name: c, model: gpt-4o-mini, inputs: {query: three}}\n";
        let source = Source::new("s.yaml", format!("{HEAD}{tests}"));
        let (cases, _) = suite_cases(source, &BTreeMap::new(), false).expect("read test by test");
        let model = |i: usize| match &cases[i].target {
            Target::Model { model, .. } => Arc::clone(model),
            other => panic!("{other:?}"),
        };
        let path = |i: usize| Arc::clone(&cases[i].interactions[0].checks[0].path);
        assert!(Arc::ptr_eq(&cases[0].file, &cases[2].file));
        assert!(Arc::ptr_eq(&model(0), &model(1)), "the suite's model, once");
        assert_eq!((&*model(1), &*model(2)), ("gpt-4o", "gpt-4o-mini"));
        assert!(Arc::ptr_eq(&path(0), &path(2)));
        assert_eq!(&*path(0), "assertions[0].must_contain");
    }

    #[test]
    fn a_suite_whose_tests_come_last_is_read_test_by_test() {
        let tests = "tests:\n  - name: a\n    inputs: {query: one}\n  - name: b\n    inputs: {query: two}\n";
        assert_eq!(streamed(&format!("{HEAD}{tests}"), false), Some(2));
        assert_eq!(streamed(&format!("{HEAD}{tests}"), true), Some(2));
        // Anchors before the tests, and shared between them, are fine; so is a flow list.
        let anchored = "x-in: &in {query: one}\nname: s\ndefaults: {model: gpt-4o, provider: openai}\ntests:\n  - &a {name: a, inputs: *in, assertions: &c [{must_contain: x}]}\n  - {name: b, inputs: *in, assertions: *c}\n  - *a\n";
        assert_eq!(streamed(anchored, false), Some(3));
        let flow = format!("{HEAD}tests: [{{name: a, inputs: {{query: one}}}}]\n");
        assert_eq!(streamed(&flow, false), Some(1));
        // A warning keeps a file valid, unless strict.
        let warned = "name: s\ndefaults: {model: my-model, assertions: [{must_contain: x}]}\ntests:\n  - {name: a, inputs: {query: one}}\n";
        assert_eq!(streamed(warned, false), Some(1));
        assert_eq!(streamed(warned, true), None);
    }

    #[test]
    fn a_suite_that_cannot_be_read_test_by_test_is_given_back() {
        let test = "  - {name: a, inputs: {query: one}}\n";
        for text in [
            // Something after `tests` could change every test.
            format!(
                "name: s\ntests:\n{test}defaults: {{model: gpt-4o, provider: openai, assertions: [{{must_contain: x}}]}}\n"
            ),
            format!("x-h: &h {{tags: [t]}}\n{HEAD}tests:\n{test}<<: *h\n"),
            // A merge before `tests` may bring anything.
            format!(
                "x-h: &h {{name: s}}\n<<: *h\ndefaults: {{model: gpt-4o, provider: openai, assertions: [{{must_contain: x}}]}}\ntests:\n{test}"
            ),
            // An anchored list may be aliased whole.
            format!("{HEAD}tests: &all\n{test}"),
            // Not valid: the file is loaded whole to say why.
            format!("{HEAD}tests:\n{test}  - {{name: b, inputs: {{querry: two}}}}\n"),
            format!("{HEAD}tests:\n{test}  - {{name: b, inputs: [two}}\n"),
            format!("{HEAD}tests: []\n"),
            format!("{HEAD}tests: {{a: 1}}\n"),
            // Not a suite.
            format!("agent: x\n{HEAD}tests:\n{test}"),
            "name: t\nmodel: gpt-4o\ninputs: {query: hi}\nassertions: [{must_contain: x}]\n"
                .to_owned(),
        ] {
            assert_eq!(streamed(&text, false), None, "{text}");
        }
    }
}
