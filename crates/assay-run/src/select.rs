//! Choosing which cases run: `--filter`, `--tag` and `--shard i/n`.

use assay_spec::plan::Case;
use sha2::{Digest, Sha256};

/// Which cases to run.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    filters: Vec<Filter>,
    tags: Vec<String>,
    shard: Option<Shard>,
}

#[derive(Debug, Clone)]
enum Filter {
    Substring(String),
    Glob(globset::GlobMatcher),
}

/// One part of a suite split across machines: part `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// Parses `i/n` with `1 <= i <= n`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("expected `i/n`, e.g. `1/4`, found `{text}`"))?;
        let whole = |s: &str| {
            let s = s.trim();
            s.parse::<u32>().map_err(|_| {
                if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                    format!("`{s}` is too large: the limit is {}", u32::MAX)
                } else {
                    format!("`{s}` is not a whole number")
                }
            })
        };
        let index = whole(i)?;
        let count = whole(n)?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: need 1 <= i <= n"));
        }
        Ok(Shard { index, count })
    }

    /// Whether a case id falls in this shard: a stable hash of the id, so that every
    /// machine splits a suite the same way, with no overlap and no gap.
    pub fn contains(&self, id: &str) -> bool {
        let digest = Sha256::digest(id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first) % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl Selection {
    /// Everything.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// Adds a filter: a glob when it has `*`, `?` or `[`, else a substring. A case
    /// matches when its name, id, file path or one of its tags matches. Several
    /// filters: any may match.
    pub fn filter(mut self, pattern: &str) -> Result<Selection, String> {
        let filter = if pattern.contains(['*', '?', '[']) {
            let glob = globset::Glob::new(pattern)
                .map_err(|e| format!("invalid filter `{pattern}`: {e}"))?;
            Filter::Glob(glob.compile_matcher())
        } else {
            Filter::Substring(pattern.to_owned())
        };
        self.filters.push(filter);
        Ok(self)
    }

    /// Adds a tag: the case must carry one of the tags given.
    pub fn tag(mut self, tag: &str) -> Selection {
        self.tags.push(tag.to_owned());
        self
    }

    /// Keeps one shard.
    pub fn shard(mut self, shard: Shard) -> Selection {
        self.shard = Some(shard);
        self
    }

    /// Whether `case` is selected.
    pub fn matches(&self, case: &Case) -> bool {
        let file = case.file.to_string_lossy();
        let fields: Vec<&str> = [case.name.as_str(), case.id.as_str(), file.as_ref()]
            .into_iter()
            .chain(case.tags.iter().map(String::as_str))
            .collect();
        let filtered = self.filters.is_empty()
            || self.filters.iter().any(|f| {
                fields.iter().any(|field| match f {
                    Filter::Substring(s) => field.contains(s.as_str()),
                    Filter::Glob(g) => g.is_match(field),
                })
            });
        let tagged = self.tags.is_empty() || self.tags.iter().any(|t| case.tags.contains(t));
        let sharded = self.shard.is_none_or(|s| s.contains(&case.id));
        filtered && tagged && sharded
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::path::PathBuf;

    use assay_spec::model::data_driven::SuccessRatio;
    use assay_spec::plan::{Dialect, Target};

    use super::*;

    fn case(id: &str, name: &str, tags: &[&str]) -> Case {
        Case {
            id: id.to_owned(),
            name: name.to_owned(),
            dialect: Dialect::SentinelSpec,
            file: PathBuf::from(format!("tests/{name}.yaml")),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            target: Target::Agent {
                agent: "a".into(),
                connections: vec![],
                use_direct: false,
                metadata: None,
            },
            success_ratio: SuccessRatio::default(),
            timeout: None,
            interactions: vec![],
            failure_patterns: vec![],
        }
    }

    #[test]
    fn filters_match_name_id_path_or_tag() {
        let c = case("abc123", "music_nerd/beatles", &["smoke"]);
        assert!(Selection::all().filter("beatles").unwrap().matches(&c));
        assert!(Selection::all().filter("abc1").unwrap().matches(&c));
        assert!(Selection::all().filter("tests/*").unwrap().matches(&c));
        assert!(Selection::all().filter("smo*").unwrap().matches(&c));
        assert!(!Selection::all().filter("stones").unwrap().matches(&c));
        assert!(Selection::all().tag("smoke").matches(&c));
        assert!(!Selection::all().tag("slow").matches(&c));
        assert!(Selection::all().filter("[").is_err());
    }

    #[test]
    fn shards_partition_ids_with_no_overlap_and_no_gap() {
        let ids: Vec<String> = (0..1000).map(|i| format!("{i:012x}")).collect();
        for count in [1, 2, 3, 7] {
            let mut seen = HashSet::new();
            for index in 1..=count {
                let shard = Shard { index, count };
                let mine: Vec<&String> = ids.iter().filter(|id| shard.contains(id)).collect();
                assert!(!mine.is_empty() || count > ids.len() as u32);
                for id in mine {
                    assert!(seen.insert(id.clone()), "{id} in two shards");
                }
            }
            assert_eq!(seen.len(), ids.len(), "a gap with {count} shards");
        }
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert!(Shard::parse("0/4").is_err());
        assert!(Shard::parse("5/4").is_err());
        assert!(Shard::parse("1").is_err());
        // Too large to hold is not "not a whole number" (issue 16).
        assert_eq!(
            Shard::parse("1/18446744073709551615"),
            Err("`18446744073709551615` is too large: the limit is 4294967295".to_owned())
        );
        assert_eq!(
            Shard::parse("x/2"),
            Err("`x` is not a whole number".to_owned())
        );
    }
}
