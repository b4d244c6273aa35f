//! Verdicts of both sides and the comparison.
//!
//! Each case file says in its name what Prill's verdict must be (`pass-`, `fail-`,
//! `error-`, `invalid-`), on every connection. neuro-san's driver must reach the same
//! verdict, except on the lines of `deviations.tsv`:
//!
//! ```text
//! file<TAB>connection<TAB>prill<TAB>neuro-san<TAB>why
//! ```
//!
//! and except where neuro-san's connection itself cannot do what a file asks, on the
//! lines of `limits.tsv`, where both sides reach the verdict the line gives:
//!
//! ```text
//! file<TAB>connection<TAB>verdict<TAB>why
//! ```
//!
//! A connection of `*` stands for all four. A line that does not happen (on any
//! connection it names) is a failure too, so both lists stay exact.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The connections the test runs.
pub(crate) const CONNECTIONS: [&str; 4] = ["direct", "http", "https", "mcp"];

/// A test file's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every check held, in enough samples.
    Pass,
    /// A check did not hold.
    Fail,
    /// The agent could not be reached, timed out or broke the protocol (Prill), or the
    /// driver raised something other than an assertion (neuro-san).
    Error,
    /// Prill refuses the file.
    Invalid,
}

impl Verdict {
    pub(crate) fn parse(word: &str) -> Option<Verdict> {
        match word {
            "pass" | "passed" => Some(Verdict::Pass),
            "fail" | "failed" => Some(Verdict::Fail),
            "error" | "errored" => Some(Verdict::Error),
            "invalid" => Some(Verdict::Invalid),
            _ => None,
        }
    }

    /// The verdict a file's name promises Prill.
    pub(crate) fn of_name(file: &str) -> Option<Verdict> {
        Verdict::parse(file.split('-').next()?)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::Invalid => "invalid",
        })
    }
}

/// One line of `deviations.tsv` (Prill and the driver differ) or of `limits.tsv`
/// (neuro-san's connection cannot do it: both reach `prill`, which `neuro_san` repeats).
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub(crate) table: &'static str,
    pub(crate) line: usize,
    pub(crate) prill: Verdict,
    pub(crate) neuro_san: Verdict,
    pub(crate) why: String,
}

impl Line {
    fn at(&self) -> String {
        format!("{}:{}", self.table, self.line)
    }
}

/// The lines of a table by (file, connection). `deviations.tsv` lines have both verdicts,
/// `limits.tsv` lines one.
pub(crate) fn read_table(path: &Path) -> Result<BTreeMap<(String, String), Line>, String> {
    let table: &'static str = match path.file_name().and_then(|n| n.to_str()) {
        Some("deviations.tsv") => "deviations.tsv",
        Some("limits.tsv") => "limits.tsv",
        _ => return Err(format!("{}: not a table of this test", path.display())),
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for (i, row) in text.lines().enumerate() {
        let n = i + 1;
        if row.trim().is_empty() || row.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = row.split('\t').collect();
        let verdict = |w: &str| {
            Verdict::parse(w).ok_or_else(|| format!("{table}:{n}: unknown verdict `{w}`"))
        };
        let (file, connection, line) = match (table, &fields[..]) {
            ("deviations.tsv", [file, connection, prill, neuro_san, why]) => {
                let line = Line {
                    table,
                    line: n,
                    prill: verdict(prill)?,
                    neuro_san: verdict(neuro_san)?,
                    why: why.trim().to_owned(),
                };
                if line.prill == line.neuro_san {
                    return Err(format!(
                        "{table}:{n}: a deviation has two different verdicts"
                    ));
                }
                (*file, *connection, line)
            }
            ("limits.tsv", [file, connection, both, why]) => {
                let both = verdict(both)?;
                let line = Line {
                    table,
                    line: n,
                    prill: both,
                    neuro_san: both,
                    why: why.trim().to_owned(),
                };
                (*file, *connection, line)
            }
            _ => return Err(format!("{table}:{n}: wrong number of tab-separated fields")),
        };
        if line.why.is_empty() {
            return Err(format!("{table}:{n}: every line says why"));
        }
        let connections: Vec<&str> = match connection {
            "*" => CONNECTIONS.to_vec(),
            c if CONNECTIONS.contains(&c) => vec![c],
            c => return Err(format!("{table}:{n}: unknown connection `{c}`")),
        };
        for c in connections {
            if out
                .insert((file.to_owned(), c.to_owned()), line.clone())
                .is_some()
            {
                return Err(format!("{table}:{n}: {file} on {c} is listed twice"));
            }
        }
    }
    Ok(out)
}

/// What each side said about one file on one connection, with their explanations.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) prill: Verdict,
    pub(crate) prill_detail: String,
    pub(crate) neuro_san: Verdict,
    pub(crate) neuro_san_detail: String,
}

/// Every disagreement with the files' names, the limits and the deviations, for one
/// connection.
pub(crate) fn compare(
    connection: &str,
    seen: &BTreeMap<String, Seen>,
    limits: &BTreeMap<(String, String), Line>,
    deviations: &BTreeMap<(String, String), Line>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (file, s) in seen {
        let key = (file.clone(), connection.to_owned());
        let Some(named) = Verdict::of_name(file) else {
            problems.push(format!("{file}: the name does not say the verdict"));
            continue;
        };
        let limit = limits.get(&key);
        let promised = limit.map_or(named, |l| l.prill);
        if s.prill != promised {
            let why = match limit {
                Some(l) => format!(
                    "{} expects {} ({}), which no longer happens",
                    l.at(),
                    l.prill,
                    l.why
                ),
                None => format!("the file's name promises {named}"),
            };
            problems.push(format!(
                "{file} [{connection}]: Prill says {}; {why}; Prill: {}",
                s.prill, s.prill_detail
            ));
        }
        let deviation = deviations.get(&key);
        if let Some(d) = deviation
            && d.prill != promised
        {
            problems.push(format!(
                "{}: {file} [{connection}]: the line says Prill {}, the file promises {promised}",
                d.at(),
                d.prill
            ));
        }
        let wanted = deviation.map_or(promised, |d| d.neuro_san);
        if s.neuro_san != wanted {
            let why = match deviation.or(limit) {
                Some(l) => format!(
                    "{} expects {} ({}), which no longer happens",
                    l.at(),
                    l.neuro_san,
                    l.why
                ),
                None => "not a listed deviation".to_owned(),
            };
            problems.push(format!(
                "{file} [{connection}]: neuro-san's driver says {}, Prill {}; {why}; driver: {}",
                s.neuro_san, s.prill, s.neuro_san_detail
            ));
        }
    }
    for ((file, c), l) in limits.iter().chain(deviations) {
        if c == connection && !seen.contains_key(file) {
            problems.push(format!("{}: {file} is not a case file", l.at()));
        }
    }
    problems
}

/// The comparison fails on an unlisted difference, on a listed one that no longer
/// happens, and on a limit that no longer holds; it passes on what the tables say.
pub(crate) fn comparison_is_exact_both_ways() -> Result<(), String> {
    let seen = |prill: Verdict, neuro_san: Verdict| {
        BTreeMap::from([(
            "pass-x.hocon".to_owned(),
            Seen {
                prill,
                prill_detail: String::new(),
                neuro_san,
                neuro_san_detail: String::new(),
            },
        )])
    };
    let key = ("pass-x.hocon".to_owned(), "http".to_owned());
    let line = |table, prill, neuro_san| Line {
        table,
        line: 1,
        prill,
        neuro_san,
        why: "because".to_owned(),
    };
    let none = BTreeMap::new();
    let deviation = BTreeMap::from([(
        key.clone(),
        line("deviations.tsv", Verdict::Pass, Verdict::Fail),
    )]);
    let limit = BTreeMap::from([(key, line("limits.tsv", Verdict::Fail, Verdict::Fail))]);
    let cases = [
        (
            "agreement",
            seen(Verdict::Pass, Verdict::Pass),
            &none,
            &none,
            0,
        ),
        (
            "unlisted",
            seen(Verdict::Pass, Verdict::Fail),
            &none,
            &none,
            1,
        ),
        (
            "listed",
            seen(Verdict::Pass, Verdict::Fail),
            &none,
            &deviation,
            0,
        ),
        (
            "stopped",
            seen(Verdict::Pass, Verdict::Pass),
            &none,
            &deviation,
            1,
        ),
        (
            "name broken",
            seen(Verdict::Fail, Verdict::Fail),
            &none,
            &none,
            2,
        ),
        (
            "limit",
            seen(Verdict::Fail, Verdict::Fail),
            &limit,
            &none,
            0,
        ),
        (
            "limit gone",
            seen(Verdict::Pass, Verdict::Pass),
            &limit,
            &none,
            2,
        ),
    ];
    for (what, seen, limits, deviations, problems) in cases {
        let found = compare("http", &seen, limits, deviations);
        if found.len() != problems {
            return Err(format!(
                "{what}: expected {problems} problem(s), found {found:?}"
            ));
        }
    }
    Ok(())
}
