//! Cases with the same inputs, hence the same id: each gets its own (`x`, `x-2`,
//! `x-3`, ...), and the file that had an id keeps it when a copy of its case is added
//! elsewhere, whatever order the files are found in.
//!
//! The plan cannot know which file had an id, so whoever builds it says so: a map of
//! ids to the file (as reports show it, without a leading `./`) that last had each
//! ([`Plan::claimed`](super::Plan::claimed); `prill-app` reads it from the history). An
//! id claimed by a file that still has such a case goes to it; the others are numbered
//! in the order their cases were found, the first unclaimed one bare.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::Case;

/// The ids claimed by files: id → the file that had it.
pub type Claims = HashMap<String, PathBuf>;

/// Every id cases of `cases` would get for being repeats (`x`, `x-2`, ...: all the ids
/// of each group of cases with the same inputs), so that their claims can be looked up;
/// empty when every case's inputs are its own.
pub fn repeated_ids(cases: &[Case]) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(cases.len());
    for case in cases {
        *seen.entry(&case.id).or_insert(0) += 1;
    }
    let mut ids = Vec::new();
    for (id, n) in seen {
        if n > 1 {
            ids.extend(names(id, n));
        }
    }
    ids.sort();
    ids
}

/// The ids of a group of `n` cases whose inputs hash to `id`.
fn names(id: &str, n: usize) -> impl Iterator<Item = String> + '_ {
    (1..=n).map(move |k| {
        if k == 1 {
            id.to_owned()
        } else {
            format!("{id}-{k}")
        }
    })
}

/// Gives each case of a group of repeats its id, as the module says.
pub(super) fn number(cases: &mut [Case], claims: &Claims) {
    // The ids are counted by reference, then only the repeated ones copied: a large
    // plan has one per case.
    let mut count: HashMap<&str, usize> = HashMap::with_capacity(cases.len());
    for case in cases.iter() {
        *count.entry(&case.id).or_insert(0) += 1;
    }
    let mut groups: HashMap<Box<str>, Vec<usize>> = HashMap::new();
    for (i, case) in cases.iter().enumerate() {
        if count.get(&*case.id).is_some_and(|n| *n > 1) {
            groups.entry(case.id.clone()).or_default().push(i);
        }
    }
    drop(count);
    for (id, members) in groups {
        let ids: Vec<String> = names(&id, members.len()).collect();
        let mut given: Vec<Option<&str>> = vec![None; members.len()];
        let mut taken = vec![false; ids.len()];
        for (k, name) in ids.iter().enumerate() {
            let Some(file) = claims.get(name) else {
                continue;
            };
            let holder = members
                .iter()
                .zip(&given)
                .position(|(&i, g)| g.is_none() && shown(&cases[i].file) == shown(file));
            if let Some(j) = holder {
                given[j] = Some(name);
                taken[k] = true;
            }
        }
        let mut free = ids.iter().zip(&taken).filter(|(_, t)| !**t).map(|(n, _)| n);
        for (j, &i) in members.iter().enumerate() {
            let name = match given[j] {
                Some(name) => name,
                None => free.next().map_or(&*id, String::as_str),
            };
            cases[i].id = name.into();
        }
    }
}

/// A file as reports show it: without leading `./` parts.
fn shown(file: &Path) -> PathBuf {
    let mut parts = file.components().peekable();
    while parts.peek() == Some(&Component::CurDir) {
        parts.next();
    }
    parts.collect()
}
