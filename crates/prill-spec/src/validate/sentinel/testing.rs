//! What the tests of the Sentinel validator's parts share: loading a YAML Sentinel file
//! with two named providers configured, and reading its diagnostics by code and path.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::{Diagnostic, Severity};
use crate::limits::Limits;
use crate::model::provider::ProviderKind;
use crate::{Env, Unrecognized, load::load_str_with};

/// The errors and the warnings of `text` (a YAML Sentinel file), with `vllm` (an
/// OpenAI server) and `gateway` (an Anthropic one) configured.
pub(super) fn diags(text: &str) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let limits = Limits {
        providers: BTreeMap::from([
            ("vllm".to_owned(), ProviderKind::Openai),
            ("gateway".to_owned(), ProviderKind::Anthropic),
        ]),
        ..Limits::default()
    };
    let loaded = load_str_with(
        Path::new("t.yaml"),
        text,
        &Env::default(),
        Unrecognized::Error,
        &limits,
    )
    .unwrap();
    let errors = loaded.outcome.err().unwrap_or_default();
    assert!(errors.iter().all(|d| d.severity == Severity::Error));
    (errors, loaded.warnings)
}

/// Each diagnostic's code and path.
pub(super) fn codes(d: &[Diagnostic]) -> Vec<(&str, &str)> {
    d.iter().map(|d| (d.code, d.path.as_str())).collect()
}
