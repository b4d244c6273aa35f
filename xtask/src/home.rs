//! The project's one public home: `repository` in `[workspace.package]` of `Cargo.toml`.
//!
//! Every artifact that names where Prill comes from (the workflow `prill init` writes,
//! the GitHub Action and its install script, cargo-dist's release, the docs' recipes)
//! derives from that one value, so publishing under another home is a change of that
//! line plus the places the tests below name. The tests check that every mention of a
//! `prill` repository in the tree is the home (and every `uses:` of the Action pins the
//! workspace's version), and that nothing installs from a placeholder or builds Prill
//! from a git URL.

#![cfg(test)]

use std::path::{Path, PathBuf};

use regex::Regex;

/// The home and the version every artifact names.
struct Home {
    /// `https://github.com/OWNER/NAME`.
    url: String,
    /// `OWNER/NAME`, as a GitHub Action is referenced.
    slug: String,
    /// The workspace's version, as released (`v` + this is the tag).
    version: String,
}

fn home(root: &Path) -> Home {
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let package = &manifest["workspace"]["package"];
    let url = package["repository"].as_str().unwrap().to_owned();
    let version = package["version"].as_str().unwrap().to_owned();
    let slug = url
        .strip_prefix("https://github.com/")
        .unwrap_or_else(|| panic!("the home {url} is not a GitHub repository"))
        .trim_end_matches('/')
        .to_owned();
    assert_eq!(
        slug.matches('/').count(),
        1,
        "the home {url} is not OWNER/NAME"
    );
    Home { url, slug, version }
}

/// The repository's text files, without build output, dependencies or git's own files.
fn text_files(root: &Path) -> Vec<(PathBuf, String)> {
    let skip = |name: &str| matches!(name, ".git" | "target" | "node_modules" | ".venv");
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                if !skip(&name) {
                    stack.push(path);
                }
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path, text));
            }
        }
    }
    out.sort();
    out
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_artifact_names_the_one_home() {
    let root = root();
    let home = home(&root);
    // A repository whose name is prill (or starts `prill-`), as a URL or an Action's `uses:`.
    let url = Regex::new(r"github\.com/([A-Za-z0-9_.-]+/prill(?:-[A-Za-z0-9_.-]+)?)\b").unwrap();
    let uses = Regex::new(r"uses:\s*([A-Za-z0-9_.-]+/prill)@([A-Za-z0-9_.-]+)").unwrap();
    // The container image, with the version it is tagged with when one is given.
    let image =
        Regex::new(r"ghcr\.io/([A-Za-z0-9_.-]+/prill)\b(?::([0-9][A-Za-z0-9_.-]*))?").unwrap();
    let mut wrong = Vec::new();
    for (path, text) in text_files(&root) {
        let shown = path.strip_prefix(&root).unwrap().display().to_string();
        for m in url.captures_iter(&text) {
            let slug = &m[1];
            if slug != home.slug && !slug.starts_with(&format!("{}-", home.slug)) {
                let line = line_of(&text, m.get(0).unwrap().start());
                wrong.push(format!("{shown}:{line}: names github.com/{slug}"));
            }
        }
        for m in image.captures_iter(&text) {
            let line = line_of(&text, m.get(0).unwrap().start());
            if m[1] != home.slug {
                wrong.push(format!("{shown}:{line}: names the image ghcr.io/{}", &m[1]));
            }
            if let Some(tag) = m.get(2).filter(|t| t.as_str() != home.version) {
                wrong.push(format!(
                    "{shown}:{line}: tags the image {}, not {}",
                    tag.as_str(),
                    home.version
                ));
            }
        }
        for m in uses.captures_iter(&text) {
            let line = line_of(&text, m.get(0).unwrap().start());
            if m[1] != home.slug {
                wrong.push(format!("{shown}:{line}: uses {}", &m[1]));
            }
            if m[2] != format!("v{}", home.version) {
                wrong.push(format!(
                    "{shown}:{line}: pins {}, not v{}",
                    &m[2], home.version
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the home is {} at v{} (Cargo.toml's [workspace.package]); these differ:\n{}",
        home.url,
        home.version,
        wrong.join("\n")
    );
    // The artifacts that must name it.
    let action = format!("uses: {}@v{}", home.slug, home.version);
    for (file, needle) in [
        (
            "crates/prill-app/templates/.github/workflows/prill.yml",
            action.as_str(),
        ),
        ("README.md", action.as_str()),
        ("docs/examples/github-prill.yml", action.as_str()),
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(text.contains(needle), "{file} does not have `{needle}`");
    }
}

#[test]
fn nothing_installs_from_a_placeholder_or_builds_from_git() {
    let root = root();
    // Split so that this file does not match itself.
    let placeholder = ["example", ".invalid/"].concat();
    let from_git = Regex::new(r"cargo\s+install\b[^\n]*--git\b").unwrap();
    let mut found = Vec::new();
    for (path, text) in text_files(&root) {
        let shown = path.strip_prefix(&root).unwrap().display().to_string();
        if let Some(at) = text.find(&placeholder) {
            found.push(format!("{shown}:{}: a placeholder URL", line_of(&text, at)));
        }
        if let Some(m) = from_git.find(&text) {
            let line = line_of(&text, m.start());
            found.push(format!("{shown}:{line}: builds Prill from a git URL"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
