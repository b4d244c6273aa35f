//! The crate graph must point down (`docs/architecture.md`): a test reads every crate's
//! `[dependencies]` and fails when one of ours depends on a crate it may not.

/// For each of our crates, the crates of ours it may depend on (normal dependencies;
/// dev-dependencies may also use `assay-testkit`).
#[cfg(test)]
pub(crate) const ALLOWED: [(&str, &[&str]); 14] = [
    ("assay-spec", &[]),
    ("assay-check", &["assay-spec"]),
    ("assay-target", &["assay-spec"]),
    // The replaying server (`assay serve --replay`) reads cassettes
    // (`assay_connect::cassette`); assay-connect uses assay-demo only in its tests.
    ("assay-demo", &["assay-target", "assay-connect"]),
    ("assay-connect", &["assay-spec", "assay-target"]),
    (
        "assay-judge",
        &["assay-spec", "assay-check", "assay-target", "assay-connect"],
    ),
    ("assay-assess", &["assay-spec", "assay-check"]),
    ("assay-run", &["assay-spec", "assay-check", "assay-target"]),
    (
        "assay-report",
        &["assay-spec", "assay-check", "assay-run", "assay-assess"],
    ),
    (
        "assay-history",
        &[
            "assay-spec",
            "assay-check",
            "assay-run",
            "assay-assess",
            "assay-report",
        ],
    ),
    (
        "assay-settings",
        &[
            "assay-history",
            "assay-spec",
            "assay-check",
            "assay-target",
            "assay-connect",
            "assay-judge",
            "assay-run",
            "assay-report",
            "assay-assess",
            "assay-demo",
        ],
    ),
    (
        "assay-cli",
        &[
            "assay-history",
            "assay-spec",
            "assay-check",
            "assay-target",
            "assay-connect",
            "assay-demo",
            "assay-judge",
            "assay-run",
            "assay-report",
            "assay-assess",
            "assay-settings",
        ],
    ),
    ("assay-testkit", &["assay-demo"]),
    // For the report schemas (`assay_report::format`) and the cassette format's
    // (`assay_connect::cassette`).
    ("xtask", &["assay-spec", "assay-report", "assay-connect"]),
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::ALLOWED;

    /// The `assay-*` names in one table of a Cargo.toml.
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
                && name.starts_with("assay-")
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
                if dep != "assay-testkit" && !allowed.contains(&dep.as_str()) {
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
        let manifest = "[package]\nname = \"x\"\n[dependencies]\nassay-spec.workspace = true\nserde = \"1\"\n[dev-dependencies]\nassay-testkit = { path = \"..\" }\n";
        assert_eq!(ours(manifest, "dependencies"), ["assay-spec"]);
        assert_eq!(ours(manifest, "dev-dependencies"), ["assay-testkit"]);
    }

    /// A Rust user who only wants `run_test_suite` (with their own function and
    /// evaluators) and the reporters builds no HTTP client, TLS stack or server:
    /// `cargo tree -e normal -p assay-run -p assay-report` names none of them
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
                "assay-run",
                "-p",
                "assay-report",
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
        assert!(names.contains(&"assay-run"), "{tree}");
        let forbidden = [
            "reqwest",
            "hyper",
            "hyper-util",
            "axum",
            "rustls",
            "tokio-rustls",
            "ring",
            "aws-sigv4",
            "assay-connect",
            "assay-demo",
        ];
        let found: Vec<&&str> = forbidden.iter().filter(|f| names.contains(*f)).collect();
        assert!(found.is_empty(), "the suite API pulls in {found:?}");
    }
}
