//! Every check of a loaded file knows where it is written (`Check::location`), so a
//! failure can point at `file:line:col`. Checked on known places, and over every valid
//! fixture: the place holds the check's key (or list item) as written.

use std::num::NonZeroU32;
use std::path::Path;

use prill_spec::Source;
use prill_spec::load::{self, Unrecognized};
use prill_spec::plan::{Case, Location};

use crate::support;
use support::{env, fixture_files, fixtures};

fn cases(path: &Path) -> (Vec<Case>, Source) {
    let loaded = load::load_file(path, &env(), Unrecognized::Error)
        .unwrap()
        .unwrap_or_else(|| panic!("{} was skipped", path.display()));
    assert!(loaded.is_valid(), "{} is invalid", path.display());
    (loaded.cases(), loaded.source.clone())
}

fn location(cases: &[Case], path: &str) -> Location {
    cases
        .iter()
        .flat_map(|c| &c.interactions)
        .flat_map(|s| &s.checks)
        .find(|c| &*c.path == path)
        .unwrap_or_else(|| panic!("no check at {path}"))
        .location
        .unwrap_or_else(|| panic!("the check at {path} has no location"))
}

/// The text at a 1-based line and column.
fn text_at(source: &Source, at: Location) -> &str {
    let offset = source.offset(at.line.get() as usize, at.column as usize);
    &source.text[offset..]
}

#[test]
fn hocon_checks_point_at_their_keys_and_items() {
    let (cases, source) = cases(&fixtures().join("data-driven/music_trivia.hocon"));
    // `answer { keywords = "Beatles" }` on line 15: the key.
    let at = location(&cases, "interactions[0].response.structure.answer.keywords");
    assert_eq!(
        at,
        Location {
            line: NonZeroU32::new(15).unwrap(),
            column: 20
        }
    );
    assert!(text_at(&source, at).starts_with("keywords"));
    // `keywords: ["Liverpool"],` on line 25: the list item.
    let at = location(&cases, "interactions[1].response.text.keywords[0]");
    assert_eq!(
        at,
        Location {
            line: NonZeroU32::new(25).unwrap(),
            column: 22
        }
    );
    assert!(text_at(&source, at).starts_with("\"Liverpool\""));
    // `running_cost: { value: 6.0, greater: 3.0 }` on line 29.
    let at = location(
        &cases,
        "interactions[1].response.structure.running_cost.greater",
    );
    assert_eq!(at.line.get(), 29);
    assert!(text_at(&source, at).starts_with("greater"));
}

#[test]
fn sentinel_suite_assertions_point_at_their_names() {
    let (cases, source) = cases(&fixtures().join("sentinel/suite.yaml"));
    let checks: Vec<_> = cases
        .iter()
        .flat_map(|c| &c.interactions)
        .flat_map(|s| &s.checks)
        .collect();
    assert!(checks.len() >= 2, "the suite has too few assertions");
    for check in checks {
        let at = check.location.expect("every assertion has a location");
        let name = check.path.rsplit('.').next().unwrap();
        assert!(
            text_at(&source, at).starts_with(name),
            "{} at {at}: {:?}",
            check.path,
            &text_at(&source, at)[..20.min(text_at(&source, at).len())]
        );
    }
}

/// The key a check's path ends in, quoted or not, or the list item it names; or the
/// HOCON substitution (`${common}`) its object comes from.
fn written_at(text: &str, path: &str) -> bool {
    if path.ends_with(']') || text.starts_with("${") {
        return !text.is_empty();
    }
    let key = path.rsplit('.').next().unwrap();
    let lower = text.to_ascii_lowercase();
    lower.starts_with(key) || lower[1..].starts_with(key)
}

#[test]
fn every_check_of_every_valid_fixture_has_its_place() {
    let mut files = Vec::new();
    fixture_files(&fixtures(), &mut files);
    let mut located = 0;
    for path in files {
        let Some(loaded) = load::load_file(&path, &env(), Unrecognized::Skip).unwrap() else {
            continue;
        };
        if !loaded.is_valid() {
            continue;
        }
        for case in loaded.cases() {
            for check in case.interactions.iter().flat_map(|s| &s.checks) {
                let at = check.location.unwrap_or_else(|| {
                    panic!("{}: {} has no location", path.display(), check.path)
                });
                let text = text_at(&loaded.source, at);
                assert!(
                    written_at(text, &check.path),
                    "{}:{at}: {} points at {:?}",
                    path.display(),
                    check.path,
                    text.chars().take(30).collect::<String>()
                );
                located += 1;
            }
        }
    }
    assert!(located >= 100, "only {located} checks located");
}

#[test]
fn moving_a_file_into_its_cases_places_every_check_as_copying_does() {
    // `Loaded::into_cases` frees a suite's tree test by test as it makes the cases;
    // the cases, their checks' places included, are those `Loaded::cases` makes.
    let mut files = Vec::new();
    fixture_files(&fixtures(), &mut files);
    let mut suites = 0;
    for path in files {
        let Some(loaded) = load::load_file(&path, &env(), Unrecognized::Skip).unwrap() else {
            continue;
        };
        if !loaded.is_valid() {
            continue;
        }
        let copied = loaded.cases();
        suites += usize::from(loaded.dialect == Some(prill_spec::plan::Dialect::SentinelSuite));
        let (moved, planned) = loaded.into_cases().expect("a valid file");
        assert_eq!(moved, copied, "{}", path.display());
        assert_eq!(planned.cases, copied.len());
    }
    assert!(suites >= 3, "only {suites} suites compared");
}

#[test]
fn a_check_a_test_takes_from_the_suite_defaults_points_at_the_default() {
    let text = "\
name: inherited
defaults:
  model: gpt-4o-mini
  provider: openai
  assertions:
    - must_contain: Paris
tests:
  - name: takes the default
    inputs: {query: capital of France?}
  - name: writes its own
    inputs: {query: capital of Italy?}
    assertions:
      - must_contain: Rome
";
    let loaded = load::load_str(
        Path::new("inherited.yaml"),
        text,
        &env(),
        Unrecognized::Error,
    )
    .expect("a test file");
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    let source = loaded.source.clone();
    let copied = loaded.cases();
    let (moved, _) = loaded.into_cases().expect("a valid file");
    assert_eq!(moved, copied);
    // A suite's test is a case of its own: its checks' paths are written within it.
    let inherited = location(&moved[..1], "assertions[0].must_contain");
    let own = location(&moved[1..], "assertions[0].must_contain");
    assert_eq!((inherited.line.get(), own.line.get()), (6, 13));
    assert!(text_at(&source, inherited).starts_with("must_contain: Paris"));
    assert!(text_at(&source, own).starts_with("must_contain: Rome"));
}
