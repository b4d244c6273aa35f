//! Cases that check nothing: a warning on a valid file, because such a case passes
//! whatever the agent answers.
//!
//! A data-driven case checks nothing when none of its interactions has a check and it
//! has no `failure_patterns`: no `response` at all, or only checks under an unknown
//! response part such as `texts:` (upstream ignores those). A Sentinel test cannot: its
//! `assertions` must be a non-empty list, an error otherwise. `--strict` makes this
//! warning an error, like every warning.

use std::path::Path;

use crate::diag::Diagnostic;
use crate::load::Document;
use crate::node::{Node, Span};
use crate::plan::Case;

/// A `no-checks` warning when `doc` is a data-driven case that checks nothing.
pub(crate) fn warnings(doc: &Document, tree: &Node) -> Vec<Diagnostic> {
    let Document::DataDriven(_) = doc else {
        return Vec::new();
    };
    doc.cases(Path::new(""))
        .iter()
        .filter(|case| !checks_something(case))
        .map(|_| {
            Diagnostic::new(
                "no-checks",
                "",
                "this case checks nothing: no interaction has a check under `response`, so it passes whatever the agent answers",
            )
            .warning()
            .at(key_span(tree, "interactions"))
            .expected("at least one check, e.g. `response: { text: { keywords: \"...\" } }`")
            .help("a check under an unknown part of `response` (such as `texts:`) is never run")
        })
        .collect()
}

/// Whether a case has anything that can fail it.
fn checks_something(case: &Case) -> bool {
    !case.failure_patterns.is_empty() || case.interactions.iter().any(|s| !s.checks.is_empty())
}

/// The span of `name`'s key in `node`, else the node's first byte.
fn key_span(node: &Node, name: &str) -> Span {
    node.entry(name).map_or_else(
        || Span::new(node.span.start, node.span.start + 1.min(node.span.len())),
        |(key, _)| key.span,
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::diag::Severity;
    use crate::{Env, Unrecognized, load_str};

    fn load(text: &str) -> crate::Loaded {
        load_str(
            Path::new("case.yaml"),
            text,
            &Env::default(),
            Unrecognized::Error,
        )
        .unwrap()
    }

    fn codes(loaded: &crate::Loaded) -> Vec<&'static str> {
        loaded.warnings.iter().map(|d| d.code).collect()
    }

    #[test]
    fn a_case_with_no_check_or_only_ignored_ones_is_a_warning() {
        let none = load("agent: echo\ninteractions:\n  - text: hi\n");
        assert!(none.is_valid());
        assert_eq!(codes(&none), ["no-checks"]);
        assert!(
            none.reports()[0]
                .plain()
                .starts_with("case.yaml:2:1: warning[no-checks]")
        );

        let typo = load(
            "agent: echo\ninteractions:\n  - text: hi\n    response: {texts: {keywords: hi}}\n",
        );
        assert_eq!(codes(&typo), ["ignored-check", "no-checks"]);

        for checked in [
            "agent: echo\ninteractions:\n  - text: hi\n    response: {text: {keywords: hi}}\n",
            "agent: echo\nfailure_patterns: [error]\ninteractions:\n  - text: hi\n",
            "agent: echo\ninteractions:\n  - text: hi\n  - text: again\n    response: {sly_data: {x: {}}}\n",
        ] {
            assert_eq!(codes(&load(checked)), Vec::<&str>::new(), "{checked}");
        }
    }

    #[test]
    fn strict_makes_every_warning_an_error() {
        let loaded = load(
            "agent: echo\ninteractions:\n  - text: hi\n    response: {texts: {keywords: hi}}\n",
        )
        .strict();
        assert!(!loaded.is_valid());
        assert!(loaded.warnings.is_empty());
        let errors = loaded.outcome.as_ref().unwrap_err();
        assert_eq!(errors.len(), 2);
        assert!(errors.iter().all(|d| d.severity == Severity::Error));
        assert!(loaded.cases().is_empty(), "nothing of it runs");
        let clean = load(
            "agent: echo\ninteractions:\n  - text: hi\n    response: {text: {keywords: hi}}\n",
        );
        assert!(clean.strict().is_valid());
    }
}
