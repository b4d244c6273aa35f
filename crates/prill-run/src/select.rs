//! Choosing which cases run, and what a run with nothing to run comes to.
//!
//! A [`Selection`] keeps the cases that match its filters and tags (`--filter`,
//! `--tag`), then one [`Partition`] of them (`--partition`), so that CI machines split a
//! suite with no overlap and no gap:
//!
//! - `hash:i/n` puts a case in bucket `i` by a stable hash of its id: a case stays in its
//!   bucket whatever other cases are added or removed, but a small suite can leave a
//!   bucket empty. `--shard i/n` is this partition.
//! - `count:i/n` sorts the selected ids and deals them out round-robin: buckets differ
//!   in size by at most one, so none is empty while there are at least `n` cases; adding
//!   a case can move others to another bucket.
//!
//! A run with nothing to run is judged by [`NoTests`] (`--no-tests=pass|warn|fail`),
//! as nextest does: by default it *fails*, so that a typo in a filter or a wrong path
//! never turns CI green. The one exception is an empty partition of a suite that does
//! have cases: the other buckets run them, so by default that bucket passes with a
//! note (a CI matrix of 4 over a 3-case suite is not an error). An explicit `--no-tests`
//! applies to every empty run, that one included.
//!
//! # Example
//!
//! ```
//! use prill_run::select::{Level, Partition, Selection};
//!
//! let partition: Partition = "count:2/2".parse()?;
//! let selection = Selection::all().filter("smoke")?.partition(partition);
//! let selected = selection.select(Vec::new());
//! let empty = selected.empty_run(None).expect("nothing to run");
//! assert_eq!(empty.level, Level::Error, "no case at all fails by default");
//! # Ok::<(), prill_run::select::SelectError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use prill_spec::model::data_driven::Connection;
use prill_spec::plan::Case;
use sha2::{Digest, Sha256};

/// A selection that cannot be made: a bad filter or partition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// A glob filter that does not parse.
    #[error("invalid filter `{pattern}`: {reason}")]
    Filter {
        /// The filter as given.
        pattern: String,
        /// Why it does not parse.
        reason: String,
    },
    /// A partition that does not parse.
    #[error("invalid partition `{text}`: {reason}")]
    Partition {
        /// The partition as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `--no-tests` value that is not `pass`, `warn` or `fail`.
    #[error("invalid --no-tests `{0}`: expected `pass`, `warn` or `fail`")]
    NoTests(String),
}

/// Which cases to run.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    filters: Vec<Filter>,
    tags: Vec<String>,
    partition: Option<Partition>,
}

#[derive(Debug, Clone)]
enum Filter {
    Substring(String),
    Glob(globset::GlobMatcher),
}

/// How a [`Partition`] assigns cases to buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKind {
    /// By a stable hash of the case id.
    Hash,
    /// Round-robin over the sorted ids of the selected cases.
    Count,
}

/// One bucket of a suite split across machines: bucket `index` (from 1) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How cases are assigned.
    pub kind: PartitionKind,
    /// Which bucket, from 1.
    pub index: u32,
    /// How many buckets.
    pub count: u32,
}

impl Partition {
    /// Parses `hash:i/n` or `count:i/n` with `1 <= i <= n`.
    pub fn parse(text: &str) -> Result<Partition, SelectError> {
        let error = |reason: &str| SelectError::Partition {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (kind, rest) = text
            .split_once(':')
            .ok_or_else(|| error("expected `hash:i/n` or `count:i/n`, e.g. `count:1/4`"))?;
        let kind = match kind.trim() {
            "hash" => PartitionKind::Hash,
            "count" => PartitionKind::Count,
            _ => return Err(error("the kind is `hash` or `count`")),
        };
        let (index, count) = bucket(rest).map_err(|reason| error(&reason))?;
        Ok(Partition { kind, index, count })
    }

    /// Parses `--shard i/n`: the same as `hash:i/n`.
    pub fn shard(text: &str) -> Result<Partition, SelectError> {
        let (index, count) = bucket(text).map_err(|reason| SelectError::Partition {
            text: text.to_owned(),
            reason,
        })?;
        Ok(Partition {
            kind: PartitionKind::Hash,
            index,
            count,
        })
    }

    /// Keeps the cases of this bucket, in their order.
    pub fn apply(&self, cases: Vec<Case>) -> Vec<Case> {
        match self.kind {
            PartitionKind::Hash => cases
                .into_iter()
                .filter(|c| self.hash_contains(&c.id))
                .collect(),
            PartitionKind::Count => {
                let mut ids: Vec<&str> = cases.iter().map(|c| &*c.id).collect();
                ids.sort_unstable();
                let n = self.count as usize;
                let mine: std::collections::HashSet<String> = ids
                    .iter()
                    .enumerate()
                    .filter(|(position, _)| position % n == self.index as usize - 1)
                    .map(|(_, id)| (*id).to_owned())
                    .collect();
                cases
                    .into_iter()
                    .filter(|c| mine.contains(&*c.id))
                    .collect()
            }
        }
    }

    /// Whether a case id falls in this bucket by its hash (the `hash` kind): the same
    /// on every machine, whatever else the suite holds.
    fn hash_contains(&self, id: &str) -> bool {
        let digest = Sha256::digest(id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first) % u64::from(self.count) == u64::from(self.index - 1)
    }
}

/// `i/n` with `1 <= i <= n`.
fn bucket(text: &str) -> Result<(u32, u32), String> {
    let (i, n) = text
        .split_once('/')
        .ok_or_else(|| format!("expected `i/n`, e.g. `1/4`, found `{text}`"))?;
    let whole = |s: &str| {
        let s = s.trim();
        s.parse::<u32>().map_err(|_| {
            // Too large to hold is not "not a whole number".
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                format!("`{s}` is too large: the limit is {}", u32::MAX)
            } else {
                format!("`{s}` is not a whole number")
            }
        })
    };
    let (index, count) = (whole(i)?, whole(n)?);
    if count == 0 || index == 0 || index > count {
        return Err(format!("bucket {index}/{count}: need 1 <= i <= n"));
    }
    Ok((index, count))
}

impl FromStr for Partition {
    type Err = SelectError;

    fn from_str(text: &str) -> Result<Partition, SelectError> {
        Partition::parse(text)
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PartitionKind::Hash => "hash",
            PartitionKind::Count => "count",
        };
        write!(f, "{kind}:{}/{}", self.index, self.count)
    }
}

impl Selection {
    /// The `--filter` patterns, as given.
    pub fn filter_patterns(&self) -> Vec<String> {
        self.filters
            .iter()
            .map(|f| match f {
                Filter::Substring(text) => text.clone(),
                Filter::Glob(glob) => glob.glob().glob().to_owned(),
            })
            .collect()
    }

    /// The `--tag`s.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// The partition, when there is one.
    pub fn bucket(&self) -> Option<Partition> {
        self.partition
    }

    /// Everything.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// Adds a filter: a glob when it has `*`, `?` or `[`, else a substring. A case
    /// matches when its name, id, file path or one of its tags matches. Several
    /// filters: any may match.
    pub fn filter(mut self, pattern: &str) -> Result<Selection, SelectError> {
        let filter = if pattern.contains(['*', '?', '[']) {
            let glob = globset::Glob::new(pattern).map_err(|e| SelectError::Filter {
                pattern: pattern.to_owned(),
                reason: e.kind().to_string(),
            })?;
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

    /// Keeps one bucket of the cases that match.
    pub fn partition(mut self, partition: Partition) -> Selection {
        self.partition = Some(partition);
        self
    }

    /// Whether `case` passes the filters and tags (the partition needs every case: see
    /// [`Selection::select`]).
    pub fn matches(&self, case: &Case) -> bool {
        let file = case.file.to_string_lossy();
        let fields: Vec<&str> = [&*case.name, &*case.id, file.as_ref()]
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
        filtered && tagged
    }

    /// The cases to run out of `cases` (ids unique, as [`prill_spec::Plan::new`] makes
    /// them), and how many there were at each step.
    pub fn select(&self, cases: Vec<Case>) -> Selected {
        let found = cases.len();
        let matched: Vec<Case> = cases.into_iter().filter(|c| self.matches(c)).collect();
        let selected = matched.len();
        let cases = match &self.partition {
            Some(partition) => partition.apply(matched),
            None => matched,
        };
        Selected {
            cases,
            found,
            selected,
            partition: self.partition,
        }
    }
}

/// The suite a run's units were selected from, before its partition: every bucket of
/// one suite (`--shard 1/3`, `2/3`, `3/3`) has the same one, which is how `prill report
/// merge` knows shards belong together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteId {
    /// The first 16 hex digits of the SHA-256 of the sorted unit ids (case id and
    /// connection) that matched the filters and tags.
    pub fingerprint: String,
    /// How many units that is.
    pub units: usize,
}

impl Selection {
    /// The suite `cases` make under this selection's filters and tags, before its
    /// partition, each agent case over `connections` when given (they replace every
    /// case's own, as [`crate::RunOptions::connections`] does).
    pub fn suite(&self, cases: &[Case], connections: Option<&[Connection]>) -> SuiteId {
        // Each unit is `case_id<TAB>connection<LF>`, sorted as that text and hashed in
        // that order; the ids and connections are borrowed from the cases, not copied
        // (a suite of 100,000 tests made 600,000 copies here).
        let mut ids: Vec<(&str, std::borrow::Cow<'_, str>)> = Vec::new();
        for case in cases.iter().filter(|c| self.matches(c)) {
            for connection in crate::engine::connections_of(case, connections) {
                ids.push((&case.id, crate::engine::connection_name(case, connection)));
            }
        }
        ids.sort_by(|a, b| unit_text(a).cmp(unit_text(b)));
        let mut hasher = Sha256::new();
        for (id, connection) in &ids {
            hasher.update(id.as_bytes());
            hasher.update(b"\t");
            hasher.update(connection.as_bytes());
            hasher.update(b"\n");
        }
        let digest = hasher.finalize();
        SuiteId {
            fingerprint: digest.iter().take(8).map(|b| format!("{b:02x}")).collect(),
            units: ids.len(),
        }
    }
}

/// A unit of [`Selection::suite`] as the text it is sorted and hashed as:
/// `case_id<TAB>connection<LF>`.
fn unit_text<'a>(
    (id, connection): &'a (&str, std::borrow::Cow<'_, str>),
) -> impl Iterator<Item = u8> + 'a {
    id.bytes()
        .chain(std::iter::once(b'\t'))
        .chain(connection.bytes())
        .chain(std::iter::once(b'\n'))
}

/// The outcome of [`Selection::select`].
#[derive(Debug, Clone)]
pub struct Selected {
    /// The cases to run.
    pub cases: Vec<Case>,
    /// How many cases the files held.
    pub found: usize,
    /// How many of them passed the filters and tags, before the partition.
    pub selected: usize,
    /// The partition, if any.
    pub partition: Option<Partition>,
}

impl Selected {
    /// What left the run empty, or `None` when there is something to run.
    pub fn emptied(&self) -> Option<Emptied> {
        if !self.cases.is_empty() {
            None
        } else if self.found == 0 {
            Some(Emptied::NoCases)
        } else if self.selected == 0 {
            Some(Emptied::Selection { of: self.found })
        } else {
            Some(Emptied::Partition {
                partition: self.partition?,
                of: self.selected,
            })
        }
    }

    /// What an empty run comes to under `no_tests` (`None`: the default); `None` when
    /// there is something to run.
    pub fn empty_run(&self, no_tests: Option<NoTests>) -> Option<EmptyRun> {
        self.emptied().map(|why| why.judge(no_tests))
    }
}

/// Why there is nothing to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emptied {
    /// No test file at all (`prill validate`, `prill list`).
    NoFiles,
    /// No test file, or none that holds a case.
    NoCases,
    /// The filters and tags kept none of `of` cases.
    Selection {
        /// How many cases there were.
        of: usize,
    },
    /// The partition holds none of the `of` selected cases; other buckets run them.
    Partition {
        /// The partition.
        partition: Partition,
        /// How many cases were selected.
        of: usize,
    },
}

impl Emptied {
    /// What this empty run comes to under `no_tests` (`None`: the default, which fails
    /// except for an empty partition of a suite that has cases).
    pub fn judge(self, no_tests: Option<NoTests>) -> EmptyRun {
        let message = match self {
            Emptied::NoFiles => format!("no test file found {INIT_HINT}"),
            Emptied::NoCases => format!("no test case to run: no test file holds one {INIT_HINT}"),
            Emptied::Selection { of } => format!(
                "no test case to run: the selection left none of {of} {}",
                cases(of)
            ),
            Emptied::Partition { partition, of } => format!(
                "partition {partition} holds none of the {of} selected {}; nothing to run here",
                cases(of)
            ),
        };
        let level = match (no_tests, self) {
            (Some(NoTests::Pass), _) => Level::Silent,
            (Some(NoTests::Warn), _) => Level::Warning,
            (Some(NoTests::Fail), _) => Level::Error,
            (None, Emptied::Partition { .. }) => Level::Note,
            (None, _) => Level::Error,
        };
        EmptyRun { level, message }
    }
}

/// Where a newcomer in a folder with no test starts.
const INIT_HINT: &str =
    "(`prill init` writes a first project with tests, or name the files to run)";

fn cases(n: usize) -> &'static str {
    if n == 1 { "case" } else { "cases" }
}

/// What to do when there is nothing to run (`--no-tests`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTests {
    /// An empty run passes, silently.
    Pass,
    /// An empty run passes with a warning.
    Warn,
    /// An empty run fails.
    Fail,
}

impl FromStr for NoTests {
    type Err = SelectError;

    fn from_str(text: &str) -> Result<NoTests, SelectError> {
        match text {
            "pass" => Ok(NoTests::Pass),
            "warn" => Ok(NoTests::Warn),
            "fail" => Ok(NoTests::Fail),
            _ => Err(SelectError::NoTests(text.to_owned())),
        }
    }
}

/// How loud an empty run is, and whether it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// It passes and says nothing.
    Silent,
    /// It passes with a one-line note.
    Note,
    /// It passes with a warning.
    Warning,
    /// It fails.
    Error,
}

/// What an empty run comes to: whether it fails, and the line that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmptyRun {
    /// Whether it fails, and how loud it is.
    pub level: Level,
    /// What left it empty.
    pub message: String,
}

impl EmptyRun {
    /// Whether the run fails.
    pub fn fails(&self) -> bool {
        self.level == Level::Error
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use prill_spec::plan::{Dialect, Target};

    use super::*;

    fn case(id: &str, name: &str, tags: &[&str]) -> Case {
        Case {
            id: id.into(),
            name: name.into(),
            dialect: Dialect::SentinelSpec,
            file: std::path::Path::new(&format!("tests/{name}.yaml")).into(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            category: None,
            target: Target::Agent {
                agent: "a".into(),
                connections: vec![],
                use_direct: false,
                metadata: None,
                trajectory: Default::default(),
                state_endpoint: None,
            },
            gate: prill_spec::plan::Gate::default(),
            gate_stated: false,
            timeout: None,
            interactions: vec![],
            failure_patterns: Box::default(),
            user: None,
            quarantine: None,
            first_sample: 0,
        }
    }

    fn many(n: usize) -> Vec<Case> {
        (0..n)
            .map(|i| case(&format!("{i:012x}"), &format!("c{i}"), &[]))
            .collect()
    }

    #[test]
    fn every_part_of_a_suite_has_the_suite_of_the_whole() {
        use prill_spec::model::data_driven::Connection;
        let cases = many(10);
        let over = [Connection::Direct, Connection::Http];
        let whole = Selection::all().suite(&cases, Some(&over));
        assert_eq!(whole.units, 20, "each case over each connection");
        assert_eq!(whole.fingerprint.len(), 16);
        for i in 1..=3 {
            let part = Selection::all().partition(Partition::shard(&format!("{i}/3")).unwrap());
            assert_eq!(part.suite(&cases, Some(&over)), whole);
        }
        // Order does not matter; what is selected does.
        let mut reversed = cases.clone();
        reversed.reverse();
        assert_eq!(Selection::all().suite(&reversed, Some(&over)), whole);
        let filtered = Selection::all()
            .filter("c1")
            .unwrap()
            .suite(&cases, Some(&over));
        assert_ne!(filtered.fingerprint, whole.fingerprint);
        let direct = Selection::all().suite(&cases, Some(&over[..1]));
        assert_eq!(direct.units, 10);
        assert_ne!(direct.fingerprint, whole.fingerprint);
    }

    #[test]
    fn a_suite_is_the_hash_of_its_sorted_unit_lines() {
        use prill_spec::model::data_driven::Connection;
        // Ids where one is the start of another, so that sorting the lines and sorting
        // the ids could differ.
        let cases: Vec<Case> = ["ab", "ab-2", "abc", "a", "b0"]
            .iter()
            .map(|id| case(id, &format!("n{id}"), &[]))
            .collect();
        let over = [Connection::Http, Connection::Direct];
        let mut lines: Vec<String> = cases
            .iter()
            .flat_map(|c| {
                over.iter()
                    .map(move |o| format!("{}\t{}\n", c.id, o.name()))
            })
            .collect();
        lines.sort();
        let digest = Sha256::digest(lines.concat().as_bytes());
        let expected: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let suite = Selection::all().suite(&cases, Some(&over));
        assert_eq!(suite.fingerprint, expected);
        assert_eq!(suite.units, 10);
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

    /// Every kind, every count: each case in exactly one bucket.
    #[test]
    fn partitions_split_cases_with_no_overlap_and_no_gap() {
        for total in [0, 1, 3, 10, 1000] {
            let cases = many(total);
            for kind in [PartitionKind::Hash, PartitionKind::Count] {
                for count in [1, 2, 3, 7] {
                    let mut seen = HashSet::new();
                    for index in 1..=count {
                        let bucket = Partition { kind, index, count }.apply(cases.clone());
                        for c in bucket {
                            assert!(seen.insert(c.id.clone()), "{} in two buckets", c.id);
                        }
                    }
                    assert_eq!(
                        seen.len(),
                        total,
                        "a gap: {kind:?} over {count}, {total} cases"
                    );
                }
            }
        }
    }

    /// `count:` deals sorted ids round-robin: buckets differ by at most one, so none is
    /// empty while there are at least n cases; `hash:` can leave one empty.
    #[test]
    fn count_partitions_are_never_empty_with_at_least_n_cases() {
        for total in 1..=12usize {
            for count in 1..=total as u32 {
                let sizes: Vec<usize> = (1..=count)
                    .map(|index| {
                        Partition {
                            kind: PartitionKind::Count,
                            index,
                            count,
                        }
                        .apply(many(total))
                        .len()
                    })
                    .collect();
                let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(
                    *min >= 1 && max - min <= 1,
                    "{total} over {count}: {sizes:?}"
                );
            }
        }
        // The order the files gave does not matter: the ids are sorted first.
        let mut reversed = many(5);
        reversed.reverse();
        let first = Partition::parse("count:1/2").unwrap();
        let ids = |cases: Vec<Case>| -> Vec<String> {
            let mut ids: Vec<String> = cases.into_iter().map(|c| c.id.into()).collect();
            ids.sort();
            ids
        };
        assert_eq!(ids(first.apply(reversed)), ids(first.apply(many(5))));
        assert_eq!(
            ids(first.apply(many(5))),
            ["000000000000", "000000000002", "000000000004"]
        );
        // Three cases over two hash buckets can leave one empty (the quickstart does).
        let hash_sizes: Vec<usize> = (1..=4)
            .map(|index| {
                Partition {
                    kind: PartitionKind::Hash,
                    index,
                    count: 4,
                }
                .apply(many(3))
                .len()
            })
            .collect();
        assert!(hash_sizes.contains(&0), "{hash_sizes:?}");
    }

    /// A hash bucket keeps its cases whatever else is added to the suite.
    #[test]
    fn hash_partitions_are_stable_as_the_suite_grows() {
        let bucket = Partition::parse("hash:2/3").unwrap();
        let small: HashSet<Box<str>> = bucket.apply(many(10)).into_iter().map(|c| c.id).collect();
        let large: HashSet<Box<str>> = bucket.apply(many(100)).into_iter().map(|c| c.id).collect();
        assert!(small.is_subset(&large));
        assert_eq!(Partition::shard("2/3").unwrap(), bucket);
    }

    #[test]
    fn partition_syntax() {
        assert_eq!(
            Partition::parse("count:2/4"),
            Ok(Partition {
                kind: PartitionKind::Count,
                index: 2,
                count: 4
            })
        );
        assert_eq!(
            Partition::parse("hash:1/1").unwrap().to_string(),
            "hash:1/1"
        );
        for bad in [
            "0/4",
            "hash:0/4",
            "count:5/4",
            "hash:1",
            "slice:1/2",
            "count:a/2",
        ] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
        assert!(Partition::shard("5/4").is_err());
        assert!(Partition::shard("1").is_err());
        assert_eq!(
            bucket("1/18446744073709551615"),
            Err("`18446744073709551615` is too large: the limit is 4294967295".to_owned())
        );
        assert_eq!(bucket("x/2"), Err("`x` is not a whole number".to_owned()));
        assert_eq!("warn".parse(), Ok(NoTests::Warn));
        assert!("maybe".parse::<NoTests>().is_err());
    }

    /// No case, or none selected, fails by default; an empty bucket of a suite that has
    /// cases passes with a note; `--no-tests` decides every empty run.
    #[test]
    fn an_empty_run_fails_by_default_except_an_empty_partition() {
        let none = Selection::all().select(Vec::new());
        assert_eq!(none.emptied(), Some(Emptied::NoCases));
        assert_eq!(none.empty_run(None).unwrap().level, Level::Error);
        // A newcomer's first run, in a folder with no test, says where to start.
        for why in [Emptied::NoCases, Emptied::NoFiles] {
            assert!(why.judge(None).message.contains("`prill init`"));
        }

        let filtered = Selection::all().filter("nothing").unwrap().select(many(3));
        assert_eq!(filtered.emptied(), Some(Emptied::Selection { of: 3 }));
        assert!(filtered.empty_run(None).unwrap().fails());

        let empty_bucket = (1..=4)
            .map(|index| {
                Selection::all()
                    .partition(Partition {
                        kind: PartitionKind::Hash,
                        index,
                        count: 4,
                    })
                    .select(many(3))
            })
            .find(|s| s.cases.is_empty())
            .expect("4 hash buckets over 3 cases leave one empty");
        let run = empty_bucket.empty_run(None).unwrap();
        assert_eq!(run.level, Level::Note);
        assert!(
            run.message.contains("holds none of the 3 selected cases"),
            "{}",
            run.message
        );
        assert_eq!(
            empty_bucket.empty_run(Some(NoTests::Fail)).unwrap().level,
            Level::Error
        );
        assert_eq!(
            none.empty_run(Some(NoTests::Warn)).unwrap().level,
            Level::Warning
        );
        assert_eq!(
            none.empty_run(Some(NoTests::Pass)).unwrap().level,
            Level::Silent
        );
        assert_eq!(Selection::all().select(many(1)).empty_run(None), None);
    }
}
