//! The declared MSRV (`rust-version` in the workspace's `Cargo.toml`) must be true of
//! every dependency: a test reads `cargo metadata` (offline, locked, for this machine's
//! platform) and fails when a package of `Cargo.lock`, normal, build or dev dependency,
//! declares a `rust-version` above the workspace's.
//!
//! Packages that only other platforms build (Windows, macOS, wasm) are absent from an
//! offline metadata of this platform and so are not checked here; when the MSRV was
//! last set they all declared 1.85 or less. What our own code needs (let chains: 1.88)
//! no dependency list can tell: `cargo +1.88 check --workspace --all-targets` does.

/// A `rust-version` as `(major, minor, patch)`; `1.85` is `1.85.0`.
#[cfg(test)]
fn parse(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.trim().split('.').map(str::parse::<u64>);
    let major = parts.next()?.ok()?;
    let minor = parts.next().unwrap_or(Ok(0)).ok()?;
    let patch = parts.next().unwrap_or(Ok(0)).ok()?;
    parts.next().is_none().then_some((major, minor, patch))
}

/// One package of the metadata: name, version and declared `rust-version`.
#[cfg(test)]
type Package<'a> = (&'a str, &'a str, Option<&'a str>);

/// The packages that declare a `rust-version` above `msrv`, or one that cannot be read,
/// each as a sentence.
#[cfg(test)]
fn above(packages: &[Package<'_>], msrv: &str) -> Vec<String> {
    let Some(ours) = parse(msrv) else {
        return vec![format!(
            "the workspace's rust-version `{msrv}` is not a version"
        )];
    };
    packages
        .iter()
        .filter_map(|(name, version, needs)| {
            let needs = (*needs)?;
            match parse(needs) {
                Some(v) if v <= ours => None,
                Some(_) => Some(format!(
                    "{name} {version} needs Rust {needs}, above the workspace's rust-version {msrv}"
                )),
                None => Some(format!(
                    "{name} {version} declares rust-version `{needs}`, which is not a version"
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use serde_json::Value;

    use super::{Package, above, parse};

    /// The triple of the Rust toolchain the tests run with.
    fn host() -> String {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
        let out = Command::new(rustc).arg("-vV").output().expect("rustc runs");
        let text = String::from_utf8(out.stdout).expect("rustc -vV is text");
        text.lines()
            .find_map(|l| l.strip_prefix("host: "))
            .expect("rustc -vV names the host")
            .to_owned()
    }

    /// `cargo metadata` of the workspace: every package of Cargo.lock this platform
    /// builds, read from the local registry cache (no network).
    fn metadata() -> Value {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
        let out = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--offline", "--locked"])
            .args(["--manifest-path", manifest, "--filter-platform", &host()])
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
    }

    #[test]
    fn no_dependency_needs_a_newer_rust_than_the_workspace_declares() {
        let metadata = metadata();
        let members: Vec<&str> = metadata["workspace_members"]
            .as_array()
            .expect("workspace_members")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let packages = metadata["packages"].as_array().expect("packages");
        let ours: Vec<Option<String>> = packages
            .iter()
            .filter(|p| members.contains(&p["id"].as_str().unwrap_or_default()))
            .map(|p| p["rust_version"].as_str().map(str::to_owned))
            .collect();
        assert!(!ours.is_empty(), "the workspace has members");
        let msrv = ours[0]
            .clone()
            .expect("the workspace declares a rust-version");
        assert!(
            ours.iter().all(|v| v.as_deref() == Some(msrv.as_str())),
            "every crate inherits the workspace's rust-version: {ours:?}"
        );
        let theirs: Vec<Package<'_>> = packages
            .iter()
            .filter(|p| !members.contains(&p["id"].as_str().unwrap_or_default()))
            .map(|p| {
                (
                    p["name"].as_str().unwrap_or_default(),
                    p["version"].as_str().unwrap_or_default(),
                    p["rust_version"].as_str(),
                )
            })
            .collect();
        let declaring = theirs.iter().filter(|(_, _, v)| v.is_some()).count();
        assert!(
            declaring > 50,
            "only {declaring} of {} dependencies declare a rust-version; is the metadata read right?",
            theirs.len()
        );
        let problems = above(&theirs, &msrv);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(parse("1.85"), Some((1, 85, 0)));
        assert_eq!(parse("1.85.1"), Some((1, 85, 1)));
        assert_eq!(parse("1"), Some((1, 0, 0)));
        assert_eq!(parse("1.x"), None);
        assert_eq!(parse("1.2.3.4"), None);
        assert!(parse("1.9") < parse("1.10"));
    }

    #[test]
    fn a_package_above_the_workspace_is_named() {
        let packages = [
            ("old", "1.0.0", Some("1.56")),
            ("same", "0.1.0", Some("1.88.0")),
            ("silent", "2.0.0", None),
            ("new", "0.8.2", Some("1.89")),
            ("odd", "0.1.0", Some("one")),
        ];
        assert_eq!(
            above(&packages, "1.88"),
            [
                "new 0.8.2 needs Rust 1.89, above the workspace's rust-version 1.88",
                "odd 0.1.0 declares rust-version `one`, which is not a version",
            ]
        );
        assert_eq!(above(&packages[..3], "1.88"), Vec::<String>::new());
        assert_eq!(
            above(&packages[..1], "1.55"),
            ["old 1.0.0 needs Rust 1.56, above the workspace's rust-version 1.55"]
        );
    }
}
