//! Fuzz entry points for the spec loaders: HOCON, YAML and JSON text through the
//! whole pipeline (parse, detect, validate, plan, render every diagnostic).
//!
//! Each panics on what must never happen: a crash, a report that grows with the
//! input instead of staying a window, or a valid file with no plan.

use std::path::Path;

use prill_spec::limits::Limits;
use prill_spec::load::load_str_with;
use prill_spec::{Env, Unrecognized};

/// The most bytes one rendered report may take, whatever the input.
const MAX_REPORT_BYTES: usize = 16 * 1024;

/// Loads `data` as a file named `name` (its extension picks the syntax), with a
/// variable in the environment that substitutions may read, and renders every
/// diagnostic.
pub fn load(name: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = Env::from_pairs([("FUZZ_KEY", "sk-fuzz-secret-0123456789")]);
    let Some(loaded) = load_str_with(
        Path::new(name),
        text,
        &env,
        Unrecognized::Error,
        &Limits::default(),
    ) else {
        return;
    };
    for report in loaded.reports() {
        let plain = report.plain();
        let rendered = report.render(false);
        assert!(
            plain.len() < MAX_REPORT_BYTES && rendered.len() < MAX_REPORT_BYTES,
            "a report of {} bytes",
            rendered.len().max(plain.len())
        );
        assert!(
            !plain.contains("sk-fuzz-secret"),
            "a value from the environment in a message: {plain}"
        );
        let _ = report.diagnostic.to_json(&report.source);
    }
    if loaded.is_valid() {
        let _ = loaded.cases();
    }
}

/// A HOCON file.
pub fn hocon(data: &[u8]) {
    load("fuzz.hocon", data);
}

/// A YAML file.
pub fn yaml(data: &[u8]) {
    load("fuzz.yaml", data);
}

/// A JSON file.
pub fn json(data: &[u8]) {
    load("fuzz.json", data);
}
