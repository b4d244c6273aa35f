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

/// A calendar day, `YYYY-MM-DD` (a [`time::Date`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(time::Date);

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
        let month = time::Month::try_from(m.parse::<u8>().ok()?).ok()?;
        time::Date::from_calendar_date(y.parse().ok()?, month, d.parse().ok()?)
            .ok()
            .map(Date)
    }
}

impl From<time::Date> for Date {
    fn from(date: time::Date) -> Date {
        Date(date)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        write!(
            f,
            "{:04}-{:02}-{:02}",
            d.year(),
            u8::from(d.month()),
            d.day()
        )
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
    fn a_time_date_is_the_same_day() {
        let d = time::Date::from_calendar_date(2000, time::Month::February, 29).unwrap();
        assert_eq!(Date::from(d).to_string(), "2000-02-29");
        assert_eq!(Date::from(d), Date::parse("2000-02-29").unwrap());
        assert!(Date::from(d) < Date::parse("2000-03-01").unwrap());
    }
}
