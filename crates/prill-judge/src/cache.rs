//! The verdict cache: one JSON file per judged (judge, prompt version, votes, criteria,
//! sample), named by the SHA-256 of the five, under `.prill/cache/judge/` by default.
//!
//! A hit costs no call. Writes are atomic (a temporary file, then a rename), so a
//! crash never leaves half an entry; an entry that cannot be read is ignored (and
//! overwritten by the next verdict).
//!
//! ```
//! use prill_judge::cache::Cache;
//!
//! let a = Cache::key("openai:gpt-4o-mini", "v1", 1, "names a band", "The Beatles");
//! let b = Cache::key("openai:gpt-4o-mini", "v1", 1, "names a band", "The Stones");
//! assert_ne!(a, b);
//! assert_eq!(a.len(), 64);
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::prompt::Vote;

/// Where verdicts are cached when nothing says otherwise, relative to the working
/// directory.
pub const DEFAULT_DIR: &str = ".prill/cache/judge";

/// A directory of cached verdicts.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// A cached verdict: the majority and every vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The majority's verdict.
    pub pass: bool,
    /// The reason reported.
    pub reason: String,
    /// Every vote, in order.
    pub votes: Vec<Vote>,
}

impl Cache {
    /// A cache in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    /// The cache in [`DEFAULT_DIR`].
    pub fn default_dir() -> Cache {
        Cache::new(DEFAULT_DIR)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key: hex SHA-256 of the five parts as one JSON array, so no two different
    /// sets of parts share a key.
    pub fn key(
        judge: &str,
        prompt_version: &str,
        votes: u32,
        criteria: &str,
        sample: &str,
    ) -> String {
        let text = json!([judge, prompt_version, votes, criteria, sample]).to_string();
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The entry under `key`; `None` when there is none or it cannot be read.
    pub fn get(&self, key: &str) -> Option<Entry> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let value: Value = serde_json::from_str(&text).ok()?;
        let pass = value.get("pass")?.as_bool()?;
        let reason = value.get("reason")?.as_str()?.to_owned();
        let votes = value
            .get("votes")?
            .as_array()?
            .iter()
            .map(Vote::from_json)
            .collect::<Option<Vec<_>>>()?;
        if votes.is_empty() {
            return None;
        }
        Some(Entry {
            pass,
            reason,
            votes,
        })
    }

    /// Stores `entry` under `key`, atomically.
    pub fn put(&self, key: &str, entry: &Entry) -> std::io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(&self.dir)?;
        let body = json!({
            "pass": entry.pass,
            "reason": entry.reason,
            "votes": entry.votes.iter().map(Vote::to_json).collect::<Vec<_>>(),
        });
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .dir
            .join(format!(".{key}.{}.{n}.tmp", std::process::id()));
        std::fs::write(&temp, format!("{body:#}\n"))?;
        std::fs::rename(&temp, self.path(key)).inspect_err(|_| {
            // Best effort: a leftover temporary file is harmless but untidy.
            let _ = std::fs::remove_file(&temp);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corrupt_entries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("judge"));
        let key = Cache::key("openai:m", "v", 1, "c", "s");
        assert_eq!(cache.get(&key), None);
        let entry = Entry {
            pass: true,
            reason: "ok".to_owned(),
            votes: vec![Vote {
                pass: true,
                reason: "ok".to_owned(),
            }],
        };
        cache.put(&key, &entry).unwrap();
        assert_eq!(cache.get(&key), Some(entry));
        std::fs::write(cache.path(&key), "{not json").unwrap();
        assert_eq!(cache.get(&key), None);
        std::fs::write(
            cache.path(&key),
            r#"{"pass": true, "reason": "x", "votes": []}"#,
        )
        .unwrap();
        assert_eq!(cache.get(&key), None);
        let leftovers: Vec<_> = std::fs::read_dir(cache.dir())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn every_part_changes_the_key() {
        let base = Cache::key("openai:m", "v", 1, "c", "s");
        for other in [
            Cache::key("openai:n", "v", 1, "c", "s"),
            Cache::key("openai:m", "w", 1, "c", "s"),
            Cache::key("openai:m", "v", 3, "c", "s"),
            Cache::key("openai:m", "v", 1, "d", "s"),
            Cache::key("openai:m", "v", 1, "c", "t"),
            Cache::key("openai:m", "v", 1, "cs", ""),
        ] {
            assert_ne!(base, other);
        }
    }
}
