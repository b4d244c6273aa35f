//! What the loader's tests over every fixture share: the environment the fixtures read
//! (`${OPENAI_API_KEY}`) and the list of valid fixture files.
//!
//! Each test binary includes it with `mod support;` and uses what it needs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use prill_spec::Syntax;
use prill_spec::syntax::Env;

/// The environment the fixtures read, with a dummy key.
pub(crate) fn env() -> Env {
    Env::from_pairs([("OPENAI_API_KEY", "sk-dummy-for-prill-tests")])
}

/// The repository's `fixtures/` folder.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// Every file under `dir` in a syntax Prill reads, leaving out the invalid ones
/// (`invalid/` folders and the real neuro-san `cases/invalid-*`).
pub(crate) fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("invalid") {
                fixture_files(&path, out);
            }
        } else if Syntax::from_path(&path).is_some()
            && !path.to_string_lossy().contains("/cases/invalid-")
        {
            out.push(path);
        }
    }
}
