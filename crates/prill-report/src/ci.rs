//! What the CI reports (JUnit and GitHub annotations) say the same way: a unit's file
//! relative to the run, its file as a dotted module path, the line that stands for the
//! unit, and the expected and found values of a failing check.

use std::path::{Component, Path, PathBuf};

use prill_run::UnitReport;
use prill_spec::plan::{Dialect, Location};

use crate::digest::{Kind, Problem, clean, cut};

/// The most characters of an expected or found value a CI report shows.
const VALUE_CHARS: usize = 500;

/// `file` as CI tools want it: relative to `base` when it lies under it (an absolute
/// path named on the command line), without `./` components, with `/` separators.
pub(crate) fn relative(file: &Path, base: Option<&Path>) -> String {
    let file = base
        .and_then(|base| file.strip_prefix(base).ok())
        .unwrap_or(file);
    let parts: Vec<String> = file
        .components()
        .filter_map(|c| match c {
            Component::CurDir => None,
            Component::RootDir => Some(String::new()),
            other => Some(other.as_os_str().to_string_lossy().into_owned()),
        })
        .collect();
    if parts.is_empty() {
        return file.display().to_string();
    }
    parts.join("/")
}

/// The file as a dotted module path, as JUnit consumers group a `classname`:
/// `tests/agents/failing_multiturn.hocon` is `tests.agents.failing_multiturn`. `..`
/// becomes `_` and a leading `/` is dropped, so the name never starts or doubles a dot.
pub(crate) fn module_path(relative: &str) -> String {
    let path = PathBuf::from(relative);
    let stem_of_last = path.with_extension("");
    let parts: Vec<String> = stem_of_last
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            Component::ParentDir => Some("_".to_owned()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .filter(|part| !part.is_empty())
        .collect();
    if parts.is_empty() {
        return relative.to_owned();
    }
    parts.join(".")
}

/// Whether the unit's `file` names a file: a Rust suite's units (run by
/// `prill_run::run_test_suite`) carry the suite's name there instead.
pub(crate) fn in_a_file(unit: &UnitReport) -> bool {
    unit.unit.dialect != Dialect::RustSuite
}

/// The place that stands for `unit` in its file: the first failing check's, else the
/// first erroring check's (for a unit that did not pass), else its first check's.
/// `None` when no check has a known place.
pub(crate) fn unit_location(unit: &UnitReport, problems: &[Problem]) -> Option<Location> {
    let failing = [Kind::Failure, Kind::Error].into_iter().find_map(|kind| {
        problems
            .iter()
            .filter(|p| p.kind == kind)
            .find_map(|p| p.location)
    });
    failing.or_else(|| {
        let mut samples: Vec<_> = unit.samples.iter().collect();
        samples.sort_by_key(|s| s.index);
        samples
            .into_iter()
            .flat_map(|s| &s.interactions)
            .flat_map(|i| &i.checks)
            .find_map(|c| c.location)
    })
}

/// The expected and found values of a check's problem, as the first sample that had it
/// recorded them (compact JSON, control characters escaped, long values cut).
pub(crate) fn expected_found(
    unit: &UnitReport,
    problem: &Problem,
) -> (Option<String>, Option<String>) {
    let (Some(path), Some(&first)) = (&problem.check_path, problem.sample_indices.first()) else {
        return (None, None);
    };
    let check = unit
        .samples
        .iter()
        .filter(|s| s.index == first)
        .flat_map(|s| &s.interactions)
        .flat_map(|i| &i.checks)
        .find(|c| *c.path == **path && c.message() == problem.message);
    let show = |value: &Option<serde_json::Value>| {
        value
            .as_ref()
            .map(|v| cut(&clean(&v.to_string()), VALUE_CHARS).into_owned())
    };
    match check {
        Some(c) => (show(&c.expected), show(&c.found)),
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_becomes_a_dotted_module_path() {
        assert_eq!(
            module_path("tests/agents/failing_multiturn.hocon"),
            "tests.agents.failing_multiturn"
        );
        assert_eq!(module_path("a.b.yaml"), "a.b");
        assert_eq!(module_path("../up/x.json"), "_.up.x");
        assert_eq!(module_path("/abs/x.json"), "abs.x");
    }

    #[test]
    fn files_are_made_relative_to_the_run() {
        let base = Path::new("/work/repo");
        assert_eq!(
            relative(Path::new("/work/repo/tests/a.hocon"), Some(base)),
            "tests/a.hocon"
        );
        assert_eq!(
            relative(Path::new("./tests/a.hocon"), None),
            "tests/a.hocon"
        );
        assert_eq!(
            relative(Path::new("/elsewhere/a.hocon"), Some(base)),
            "/elsewhere/a.hocon"
        );
    }
}
