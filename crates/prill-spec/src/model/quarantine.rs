//! The quarantine file, `prill-quarantine.toml`, committed beside `prill.toml`: cases
//! that still run and are reported but do not gate, each with why, who owns it and
//! until when.
//!
//! ```toml
//! [[quarantine]]
//! file = "tests/search.hocon"      # from the project folder (where prill.toml is)
//! case = "search"                  # the case's name, as `prill list` shows it
//! reason = "the search backend times out under load; #412"
//! owner = "ana@example.com"
//! expires = "2026-12-31"           # the last day it holds
//! ```
//!
//! A case is named by its file and name, not its id, so an edit of its inputs keeps it
//! quarantined. An entry past its date is an error that names its owner: a quarantine
//! is a promise to come back.
//!
//! ```
//! use prill_spec::model::quarantine::{Date, load_quarantine};
//!
//! let text = "[[quarantine]]\nfile = \"tests/a.hocon\"\ncase = \"a\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2026-12-31\"\n";
//! let q = load_quarantine(std::path::Path::new("prill-quarantine.toml"), text).unwrap();
//! assert_eq!(q.entries[0].expires, Date::parse("2026-12-31").unwrap());
//! assert!(!q.entries[0].expired(Date::parse("2026-12-31").unwrap()));
//! assert!(q.entries[0].expired(Date::parse("2027-01-01").unwrap()));
//! ```

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::diag::Report;
use crate::source::Source;

/// The name of the quarantine file, beside `prill.toml`.
pub const QUARANTINE_FILE: &str = "prill-quarantine.toml";

/// Every entry of the quarantine file, in file order.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Quarantine {
    /// The entries.
    pub entries: Vec<Entry>,
}

/// One quarantined case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// The case's file, from the project folder, `/`-separated.
    pub file: String,
    /// The case's name.
    pub case: String,
    /// Why it is quarantined.
    pub reason: String,
    /// Who answers for it.
    pub owner: String,
    /// The last day the entry holds.
    pub expires: Date,
    /// Where the entry starts in the file, `line:column`, for messages.
    #[serde(skip)]
    pub at: (usize, usize),
}

impl Entry {
    /// Whether the entry no longer holds on `today`.
    pub fn expired(&self, today: Date) -> bool {
        today > self.expires
    }
}

/// A calendar day, `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// The year.
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day, 1 to the month's last.
    pub day: u32,
}

impl Date {
    /// `YYYY-MM-DD`, a real day of the Gregorian calendar.
    pub fn parse(text: &str) -> Option<Date> {
        let mut parts = text.split('-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return None;
        }
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !(digits(y) && digits(m) && digits(d)) {
            return None;
        }
        let date = Date {
            year: y.parse().ok()?,
            month: m.parse().ok()?,
            day: d.parse().ok()?,
        };
        ((1..=12).contains(&date.month) && (1..=date.month_days()).contains(&date.day))
            .then_some(date)
    }

    /// The day `days` after 1970-01-01 (a Unix time's day, UTC).
    pub fn from_unix_days(days: i64) -> Date {
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date { year, month, day }
    }

    fn month_days(self) -> u32 {
        match self.month {
            2 if self.year % 4 == 0 && (self.year % 100 != 0 || self.year % 400 == 0) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Reads `text` as the quarantine file at `path`: its entries, or every problem with
/// its line and column.
pub fn load_quarantine(path: &Path, text: &str) -> Result<Quarantine, Vec<Report>> {
    let source = Source::new(path, text);
    let reports = |diags: Vec<crate::diag::Diagnostic>| -> Vec<Report> {
        diags.into_iter().map(|d| Report::new(d, &source)).collect()
    };
    let tree = crate::syntax::toml::parse(&source).map_err(reports)?;
    let mut cx = crate::validate::cx::Cx::new(crate::validate::cx::Style::Plain);
    let quarantine = crate::validate::quarantine::quarantine(&tree, &source, &mut cx);
    let diags = cx.finish();
    match quarantine {
        Some(q) if diags.is_empty() => Ok(q),
        _ => Err(reports(diags)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_real_days() {
        assert!(Date::parse("2024-02-29").is_some());
        assert!(Date::parse("2023-02-29").is_none());
        assert!(Date::parse("2026-13-01").is_none());
        assert!(Date::parse("2026-1-01").is_none());
        assert!(Date::parse("26-01-01").is_none());
        assert!(Date::parse("2026-04-31").is_none());
        assert_eq!(Date::parse("2026-11-29").unwrap().to_string(), "2026-11-29");
    }

    #[test]
    fn unix_days_are_civil_days() {
        assert_eq!(Date::from_unix_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_unix_days(11_016).to_string(), "2000-02-29");
        assert_eq!(Date::from_unix_days(20_786).to_string(), "2026-11-29");
        assert_eq!(Date::from_unix_days(-1).to_string(), "1969-12-31");
    }
}
