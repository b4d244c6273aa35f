//! The crate graph must point down (`docs/architecture.md`): a test reads every crate's
//! `[dependencies]` and fails when one of ours depends on a crate it may not.

/// For each of our crates, the crates of ours it may depend on (normal dependencies;
/// dev-dependencies may also use `prill-testkit`).
#[cfg(test)]
pub(crate) const ALLOWED: [(&str, &[&str]); 14] = [
    ("prill-spec", &[]),
    ("prill-check", &["prill-spec"]),
    ("prill-target", &["prill-spec"]),
    // The replaying server (`prill serve --replay`) reads cassettes
    // (`prill_connect::cassette`); prill-connect uses prill-demo only in its tests.
    ("prill-demo", &["prill-target", "prill-connect"]),
    ("prill-connect", &["prill-spec", "prill-target"]),
    (
        "prill-judge",
        &["prill-spec", "prill-check", "prill-target", "prill-connect"],
    ),
    ("prill-assess", &["prill-spec", "prill-check"]),
    ("prill-run", &["prill-spec", "prill-check", "prill-target"]),
    (
        "prill-report",
        &["prill-spec", "prill-check", "prill-run", "prill-assess"],
    ),
    (
        "prill-history",
        &[
            "prill-spec",
            "prill-check",
            "prill-run",
            "prill-assess",
            "prill-report",
        ],
    ),
    (
        "prill-app",
        &[
            "prill-history",
            "prill-spec",
            "prill-check",
            "prill-target",
            "prill-connect",
            "prill-judge",
            "prill-run",
            "prill-report",
            "prill-assess",
            "prill-demo",
        ],
    ),
    (
        "prill-cli",
        &[
            "prill-history",
            "prill-spec",
            "prill-check",
            "prill-target",
            "prill-connect",
            "prill-demo",
            "prill-judge",
            "prill-run",
            "prill-report",
            "prill-assess",
            "prill-app",
        ],
    ),
    ("prill-testkit", &["prill-demo"]),
    // For the report schemas (`prill_report::format`) and the cassette format's
    // (`prill_connect::cassette`).
    ("xtask", &["prill-spec", "prill-report", "prill-connect"]),
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::ALLOWED;

    /// The `prill-*` crates a manifest names in `table` (`dependencies` or
    /// `dev-dependencies`), also under `[target.'cfg(..)'.table]`, by the package's name
    /// (a dependency renamed with `package = ...` counts as the package).
    fn ours(manifest: &str, table: &str) -> Vec<String> {
        let manifest: toml::Table = manifest.parse().expect("a valid Cargo.toml");
        let mut tables: Vec<&toml::Table> = manifest
            .get(table)
            .and_then(|t| t.as_table())
            .into_iter()
            .collect();
        if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
            tables.extend(targets.values().filter_map(|t| t.get(table)?.as_table()));
        }
        let mut out: Vec<String> = tables
            .into_iter()
            .flat_map(|t| t.iter())
            .map(|(key, value)| {
                value
                    .get("package")
                    .and_then(|p| p.as_str())
                    .unwrap_or(key)
                    .to_owned()
            })
            .filter(|name| name.starts_with("prill-"))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn dependencies_point_down() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut seen = 0;
        let mut problems = Vec::new();
        for (krate, allowed) in ALLOWED {
            let path = if krate == "xtask" {
                root.join("xtask/Cargo.toml")
            } else {
                root.join("crates").join(krate).join("Cargo.toml")
            };
            let manifest = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for dep in ours(&manifest, "dependencies") {
                if !allowed.contains(&dep.as_str()) {
                    problems.push(format!(
                        "{krate} depends on {dep}, which docs/architecture.md does not allow"
                    ));
                }
            }
            for dep in ours(&manifest, "dev-dependencies") {
                if dep != "prill-testkit" && !allowed.contains(&dep.as_str()) {
                    problems.push(format!("{krate} dev-depends on {dep}"));
                }
            }
            seen += 1;
        }
        let crates = std::fs::read_dir(root.join("crates")).unwrap().count();
        assert_eq!(
            seen - 1,
            crates,
            "every crate under crates/ is listed in ALLOWED"
        );
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_reader_sees_dependencies() {
        let manifest = "[package]\nname = \"x\"\n[dependencies]\nprill-spec.workspace = true\nserde = \"1\"\nrun = { package = \"prill-run\", path = \"..\" }\n[dependencies.prill-check]\nworkspace = true\n[target.'cfg(unix)'.dependencies]\nprill-connect.workspace = true\n[dev-dependencies]\nprill-testkit = { path = \"..\" }\n";
        assert_eq!(
            ours(manifest, "dependencies"),
            ["prill-check", "prill-connect", "prill-run", "prill-spec"]
        );
        assert_eq!(ours(manifest, "dev-dependencies"), ["prill-testkit"]);
    }
}
