//! The crate graph must point down (`docs/architecture.md`): a test reads every crate's
//! `[dependencies]` and fails when one of ours depends on a crate it may not, or when a
//! crate `prill-testkit` is built on dev-depends on `prill-testkit` (a loop).

/// For each of our crates, the crates of ours it may depend on (normal dependencies;
/// dev-dependencies may also use `prill-testkit`, save the crates it is built on).
#[cfg(test)]
pub(crate) const ALLOWED: [(&str, &[&str]); 16] = [
    // Pure arithmetic: the statistics of pass rates.
    ("prill-stats", &[]),
    ("prill-spec", &["prill-stats"]),
    // The cassette format: no network; only the spec crate's file reading below it.
    ("prill-cassette", &["prill-spec"]),
    ("prill-check", &["prill-spec"]),
    ("prill-target", &["prill-spec"]),
    // The replaying server (`prill serve --replay`) reads cassettes (`prill_cassette`),
    // never `prill-connect`, whose tests reach prill-demo through prill-testkit.
    ("prill-demo", &["prill-target", "prill-cassette"]),
    (
        "prill-connect",
        &["prill-spec", "prill-target", "prill-cassette"],
    ),
    (
        "prill-judge",
        &[
            "prill-spec",
            "prill-check",
            "prill-target",
            "prill-connect",
            "prill-stats",
        ],
    ),
    (
        "prill-assess",
        &["prill-spec", "prill-check", "prill-stats"],
    ),
    (
        "prill-run",
        &["prill-spec", "prill-check", "prill-target", "prill-stats"],
    ),
    (
        "prill-report",
        &[
            "prill-spec",
            "prill-check",
            "prill-run",
            "prill-assess",
            "prill-stats",
        ],
    ),
    (
        "prill-history",
        &[
            "prill-spec",
            "prill-check",
            "prill-run",
            "prill-assess",
            "prill-report",
            "prill-stats",
        ],
    ),
    (
        "prill-app",
        &[
            "prill-history",
            "prill-spec",
            "prill-check",
            "prill-target",
            "prill-cassette",
            "prill-demo",
            "prill-connect",
            "prill-judge",
            "prill-run",
            "prill-report",
            "prill-assess",
            "prill-demo",
            "prill-stats",
        ],
    ),
    (
        "prill-cli",
        &[
            "prill-history",
            "prill-spec",
            "prill-check",
            "prill-target",
            "prill-cassette",
            "prill-demo",
            "prill-connect",
            "prill-demo",
            "prill-judge",
            "prill-run",
            "prill-report",
            "prill-assess",
            "prill-app",
            "prill-stats",
        ],
    ),
    ("prill-testkit", &["prill-demo"]),
    // For the report schemas (`prill_report::format`) and the cassette format's
    // (`prill_cassette`).
    (
        "xtask",
        &[
            "prill-spec",
            "prill-report",
            "prill-cassette",
            "prill-stats",
        ],
    ),
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::ALLOWED;

    /// The crates `krate` may reach through the normal dependencies [`ALLOWED`] permits.
    fn below(krate: &str) -> Vec<&'static str> {
        let mut found: Vec<&'static str> = Vec::new();
        let mut todo = vec![krate];
        while let Some(next) = todo.pop() {
            let allowed = ALLOWED.iter().find(|(k, _)| *k == next).map(|(_, a)| *a);
            for dep in allowed.unwrap_or_default() {
                if !found.contains(dep) {
                    found.push(dep);
                    todo.push(dep);
                }
            }
        }
        found
    }

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
        let under_testkit = below("prill-testkit");
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
                if dep == "prill-testkit" && under_testkit.contains(&krate) {
                    problems.push(format!(
                        "{krate} dev-depends on prill-testkit, which is built on it (a loop)"
                    ));
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
    fn prill_testkit_is_built_on_the_demo_server_and_not_on_the_connectors() {
        let under = below("prill-testkit");
        for krate in ["prill-demo", "prill-cassette", "prill-target", "prill-spec"] {
            assert!(under.contains(&krate), "{krate} in {under:?}");
        }
        assert!(!under.contains(&"prill-connect"), "{under:?}");
    }

    /// The crates that make an HTTP client, a TLS stack or a server.
    const NETWORK: [&str; 7] = [
        "reqwest",
        "hyper",
        "hyper-util",
        "rustls",
        "tokio-rustls",
        "native-tls",
        "openssl",
    ];

    #[test]
    fn the_engine_and_the_reporters_build_no_http_client_tls_or_server() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for krate in [
            "prill-run",
            "prill-report",
            "prill-spec",
            "prill-check",
            "prill-cassette",
        ] {
            // Normal and build dependencies, for every target, as `cargo build -p` sees them.
            let out = std::process::Command::new(env!("CARGO"))
                .args(["tree", "--locked", "-e", "normal,build", "--target", "all"])
                .args(["--prefix", "none", "--format", "{p}", "-p", krate])
                .current_dir(&root)
                .output()
                .expect("cargo tree runs");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && !text.is_empty(),
                "cargo tree -p {krate}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let found: Vec<&str> = text
                .lines()
                .filter_map(|line| line.split_whitespace().next())
                .filter(|name| NETWORK.contains(name))
                .collect();
            assert!(found.is_empty(), "{krate} builds {found:?}");
        }
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
