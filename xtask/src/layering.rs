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
        "prill-settings",
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
            "prill-settings",
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

    /// The `prill-*` names in one table of a Cargo.toml.
    fn ours(manifest: &str, table: &str) -> Vec<String> {
        let mut inside = false;
        let mut out = Vec::new();
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                inside = line == format!("[{table}]");
                continue;
            }
            if inside
                && let Some(name) = line.split(['.', ' ', '=']).next()
                && name.starts_with("prill-")
            {
                out.push(name.to_owned());
            }
        }
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
        let manifest = "[package]\nname = \"x\"\n[dependencies]\nprill-spec.workspace = true\nserde = \"1\"\n[dev-dependencies]\nprill-testkit = { path = \"..\" }\n";
        assert_eq!(ours(manifest, "dependencies"), ["prill-spec"]);
        assert_eq!(ours(manifest, "dev-dependencies"), ["prill-testkit"]);
    }

    /// A Rust user who only wants `run_test_suite` (with their own function and
    /// evaluators) and the reporters builds no HTTP client, TLS stack or server:
    /// `cargo tree -e normal -p prill-run -p prill-report` names none of them
    /// (`docs/architecture.md`).
    #[test]
    fn the_suite_api_and_the_reporters_build_no_network_stack() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::process::Command::new(env!("CARGO"))
            .args([
                "tree",
                "-e",
                "normal",
                "-p",
                "prill-run",
                "-p",
                "prill-report",
                "--prefix",
                "none",
                "--offline",
                "--locked",
            ])
            .current_dir(&root)
            .output()
            .expect("cargo tree runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = String::from_utf8_lossy(&out.stdout);
        let names: Vec<&str> = tree
            .lines()
            .filter_map(|line| line.split_whitespace().next())
            .collect();
        assert!(names.contains(&"prill-run"), "{tree}");
        let forbidden = [
            "reqwest",
            "hyper",
            "hyper-util",
            "axum",
            "rustls",
            "tokio-rustls",
            "ring",
            "aws-sigv4",
            "prill-connect",
            "prill-demo",
        ];
        let found: Vec<&&str> = forbidden.iter().filter(|f| names.contains(*f)).collect();
        assert!(found.is_empty(), "the suite API pulls in {found:?}");
    }
}
