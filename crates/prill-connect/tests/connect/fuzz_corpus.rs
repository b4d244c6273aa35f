//! The stream fuzz targets' entry points (`fuzz/src/connect.rs`), run on every seed
//! in `fuzz/corpus/` and on every chunk size: the deterministic smoke of the fuzzing
//! that `docs/reliability.md` describes.

use std::path::{Path, PathBuf};

#[allow(dead_code, unreachable_pub)]
#[path = "../../../../fuzz/src/connect.rs"]
mod connect;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Each seed with every first byte from 0 to 63: every chunk size from 1 to 64.
fn replay(target: fn(&[u8]), name: &str) {
    let seeds = corpus(name);
    assert!(seeds.len() >= 2, "only {} seeds for {name}", seeds.len());
    for seed in seeds {
        let body = seed.get(1..).unwrap_or_default();
        for first in 0..64u8 {
            let mut data = vec![first];
            data.extend_from_slice(body);
            target(&data);
        }
    }
}

#[test]
fn jsonl_target_on_its_seeds() {
    replay(connect::jsonl, "jsonl");
}

#[test]
fn sse_target_on_its_seeds() {
    replay(connect::sse, "sse");
}
