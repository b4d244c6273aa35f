//! Flakiness as tracked state: each case, over its most recent kept runs, is stable,
//! flaky or broken ([`prill_stats::stability`]), with the evidence.

use prill_stats::stability::{Stability, stability, stability_between};
use serde::Serialize;

use crate::index::shown;
use crate::{History, HistoryError};

/// How many of a case's newest units [`History::stability`] looks at by default.
pub const RECENT_RUNS: usize = 10;

/// A case (by file, name and connection, so that an edit of its inputs keeps its
/// record) and what its recent runs say about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseStability {
    /// Its id in the newest run that has it.
    pub case_id: String,
    /// Its name.
    pub name: String,
    /// Its file, as reports show it.
    pub file: String,
    /// The connection or provider.
    pub connection: String,
    /// `stable`, `flaky` or `broken`.
    pub state: Stability,
    /// The runs looked at (at most the number asked for).
    pub runs: u32,
    /// Samples that passed in them.
    pub passed: u64,
    /// Samples that ran in them (an errored sample counts as not passing).
    pub samples: u64,
    /// The Wilson 95% interval of the pass rate.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

impl History {
    /// Every case of the kept runs, over its `recent` newest units (skipped ones left
    /// out): stable, flaky or broken, flaky ones first, then by file and name.
    pub fn stability(&self, recent: usize) -> Result<Vec<CaseStability>, HistoryError> {
        let mut statement = self
            .db
            .prepare(
                "SELECT MAX(CASE WHEN newest = 1 THEN case_id END), name, file, connection, \
                 COUNT(*), SUM(passed), SUM(samples), \
                 MAX(CASE WHEN newest = 1 THEN good END), MAX(CASE WHEN newest = 1 THEN bad END) \
                 FROM (SELECT u.case_id, u.name, u.file, u.connection, u.passed, u.samples, \
                       u.good, u.bad, \
                       ROW_NUMBER() OVER (PARTITION BY u.name, u.file, u.connection \
                                          ORDER BY r.started_at DESC, r.id DESC) AS newest \
                       FROM units u JOIN runs r ON r.id = u.run_id \
                       WHERE u.verdict != 'skipped' AND u.samples > 0) \
                 WHERE newest <= ?1 \
                 GROUP BY name, file, connection",
            )
            .map_err(|e| self.index_error(e))?;
        let recent = i64::try_from(recent).unwrap_or(i64::MAX);
        type Row = (
            String,
            String,
            String,
            String,
            i64,
            i64,
            i64,
            Option<f64>,
            Option<f64>,
        );
        let rows: Vec<Row> = statement
            .query_map([recent], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .and_then(Iterator::collect)
            .map_err(|e| self.index_error(e))?;
        let mut cases: Vec<CaseStability> = rows
            .into_iter()
            .map(
                |(case_id, name, file, connection, runs, passed, samples, good, bad)| {
                    let (passed, samples) = (
                        u64::try_from(passed).unwrap_or(0),
                        u64::try_from(samples).unwrap_or(0),
                    );
                    // A `reliability` gate's case (as of its newest run) is flaky between its
                    // own `bad` and `good`.
                    let (state, (low, high)) = match (bad, good) {
                        (Some(bad), Some(good)) => stability_between(passed, samples, bad, good),
                        _ => stability(passed, samples),
                    };
                    CaseStability {
                        case_id,
                        name,
                        file: shown(&file),
                        connection,
                        state,
                        runs: u32::try_from(runs).unwrap_or(u32::MAX),
                        passed,
                        samples,
                        low,
                        high,
                    }
                },
            )
            .collect();
        cases.sort_by(|a, b| {
            (a.state != Stability::Flaky, &a.file, &a.name, &a.connection).cmp(&(
                b.state != Stability::Flaky,
                &b.file,
                &b.name,
                &b.connection,
            ))
        });
        Ok(cases)
    }
}
