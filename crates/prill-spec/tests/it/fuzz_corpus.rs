//! The fuzz targets' entry points (`fuzz/src/spec.rs`), run on every seed they
//! start from and on a fixed set of mutations of each: the deterministic smoke of
//! the fuzzing that `docs/reliability.md` describes. A crash the fuzzers find goes
//! into `fuzz/corpus/<target>/` and is replayed here for good.

use std::path::{Path, PathBuf};

#[allow(dead_code, unreachable_pub)]
#[path = "../../../../fuzz/src/spec.rs"]
mod spec;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files under `dirs` whose extension is one of `exts`.
fn seeds(dirs: &[&str], exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in dirs {
        for entry in walkdir::WalkDir::new(repo().join(dir)).sort_by_file_name() {
            let entry = entry.unwrap();
            if entry.file_type().is_file()
                && entry
                    .path()
                    .extension()
                    .is_some_and(|e| exts.iter().any(|x| e == *x))
            {
                out.push(entry.into_path());
            }
        }
    }
    out
}

/// `data`, then cut at eight places, then with eight bytes changed: the same inputs
/// on every run.
fn variants(data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![data.to_vec()];
    let n = data.len();
    for k in 1..=8 {
        out.push(data[..n * k / 9].to_vec());
    }
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ n as u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    if n > 0 {
        for _ in 0..8 {
            let mut mutated = data.to_vec();
            let at = (next() % n as u64) as usize;
            mutated[at] = b"{}[]$\"\\.:=\n,#&*!|"[(next() % 17) as usize];
            out.push(mutated);
        }
    }
    out
}

fn replay(target: fn(&[u8]), dirs: &[&str], exts: &[&str]) -> usize {
    let files = seeds(dirs, exts);
    for file in &files {
        let data = std::fs::read(file).unwrap();
        for variant in variants(&data) {
            target(&variant);
        }
    }
    files.len()
}

#[test]
fn hocon_target_on_its_seeds() {
    let n = replay(
        spec::hocon,
        &["fixtures", "fuzz/corpus/hocon"],
        &["hocon", "conf"],
    );
    assert!(n >= 20, "only {n} seeds");
}

#[test]
fn yaml_target_on_its_seeds() {
    let n = replay(
        spec::yaml,
        &["fixtures", "fuzz/corpus/yaml"],
        &["yaml", "yml"],
    );
    assert!(n >= 20, "only {n} seeds");
}

#[test]
fn json_target_on_its_seeds() {
    let n = replay(spec::json, &["fixtures", "fuzz/corpus/json"], &["json"]);
    assert!(n >= 5, "only {n} seeds");
}
