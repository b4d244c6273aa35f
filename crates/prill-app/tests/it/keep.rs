//! What a run keeps beside its reports (`Settings::keep_run`): the last run and the
//! history as bookkeeping (a warning when they cannot be written), `--jsonl` as a report
//! the user asked for (an error), starting with the history's own `run` line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use prill_app::{LAST_RUN_LOST, Overrides, Settings, prepare, runtime};
use prill_report::{JsonLines, Reporters};
use prill_run::Selection;
use prill_spec::Env;

/// A project in `dir` with the quickstart's echo test, run against the demo agents.
fn project(dir: &Path) -> (Settings, Vec<PathBuf>) {
    std::fs::write(dir.join("prill.toml"), "").unwrap();
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/quickstart");
    std::fs::copy(quickstart.join("echo.yaml"), dir.join("echo.yaml")).unwrap();
    let overrides = Overrides {
        demo: true,
        ..Overrides::default()
    };
    let settings = Settings::load_from(dir, None, Env::default(), overrides).unwrap();
    (settings, vec![dir.join("echo.yaml")])
}

#[test]
fn a_run_keeps_its_last_run_and_history_and_the_stream_starts_with_its_run_line() {
    let dir = tempfile::tempdir().unwrap();
    let (settings, paths) = project(dir.path());
    let prepared = prepare(&settings, &paths, &Selection::all(), None);
    assert!(!prepared.plan.cases.is_empty());
    let mut reporters = Reporters::new();
    let stream = dir.path().join("events.jsonl");
    let jsonl = (stream.clone(), JsonLines::create(&stream).unwrap());
    let kept = settings
        .keep_run(
            &paths,
            Some(&Selection::all()),
            &prepared,
            &mut reporters,
            Some(jsonl),
        )
        .unwrap();
    assert!(kept.warnings.is_empty(), "{:?}", kept.warnings);
    let info = kept.info.expect("the history's run line");
    assert_eq!(reporters.len(), 3, "{reporters:?}");

    let rt = runtime().unwrap();
    let ran = rt.block_on(async {
        let session = prill_app::Session::new(&settings, &prepared.plan)
            .await
            .unwrap();
        let ran = session.run_reported(&prepared.plan, reporters).await;
        session.shutdown().await;
        ran
    });
    assert!(ran.unwritten.is_empty());
    assert!(settings.last_run_path().is_file());
    let kept_run = settings.runs_dir().join(format!("{}.jsonl", info.id));
    assert!(kept_run.is_file(), "{}", kept_run.display());
    let first = std::fs::read_to_string(&stream).unwrap();
    let first = first.lines().next().unwrap();
    assert!(
        first.contains(&format!("\"id\":\"{}\"", info.id)),
        "the stream names the run the history keeps: {first}"
    );
}

#[test]
fn bookkeeping_that_cannot_be_written_is_a_warning_that_says_what_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let (settings, paths) = project(dir.path());
    // `.prill` is a file: neither the last run nor the history can be written.
    std::fs::write(dir.path().join(".prill"), "").unwrap();
    let prepared = prepare(&settings, &paths, &Selection::all(), None);
    let mut reporters = Reporters::new();
    let kept = settings
        .keep_run(
            &paths,
            Some(&Selection::all()),
            &prepared,
            &mut reporters,
            None,
        )
        .unwrap();
    assert_eq!(reporters.len(), 0);
    assert_eq!(kept.warnings.len(), 2, "{:?}", kept.warnings);
    assert!(
        kept.warnings[0].ends_with(LAST_RUN_LOST),
        "{:?}",
        kept.warnings
    );
    assert!(
        kept.warnings[1].starts_with("warning: this run is not kept in the history"),
        "{:?}",
        kept.warnings
    );
    assert!(kept.info.is_none());
}

/// A writer that always fails.
struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::other("disk full"))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_stream_that_cannot_be_written_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (settings, paths) = project(dir.path());
    let prepared = prepare(&settings, &paths, &Selection::all(), None);
    let mut reporters = Reporters::new();
    let jsonl = (PathBuf::from("out/events.jsonl"), JsonLines::new(Broken));
    let error = settings
        .keep_run(&paths, None, &prepared, &mut reporters, Some(jsonl))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot write out/events.jsonl: disk full"
    );
}
