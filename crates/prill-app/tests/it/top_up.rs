//! `Settings::top_up` (`prill compare --top-up`): a head's undecided case drawn again
//! from the files its run line names, against the demo's `flaky` agent, each wave kept
//! as a `top-up` run that a later comparison adds back; and the heads it refuses.

use std::path::Path;

use prill_app::{Overrides, RunQuery, Settings, TopUpError, prepare, runtime};
use prill_history::compare::{Ended, Side, TopUpPlan};
use prill_report::Reporters;
use prill_report::format::{RunCassettes, RunInfo, RunSettings};
use prill_run::Selection;
use prill_spec::Env;

/// The case: the demo's `flaky` agent, passing while its draw (the same for the same
/// sample index) is below `under`.
fn roll(under: f64) -> String {
    format!(
        r#"{{ agent = flaky, connections = [direct], success_ratio = "8/10",
             interactions = [{{ text = "Roll", sly_data {{ seed = 11, modes {{ x = 0.0 }} }},
                               response {{ structure {{ draw {{ less = {under} }} }} }} }}] }}"#
    )
}

/// The settings of a project in `dir` on the demo agents, one sample at a time.
fn settings(dir: &Path, samples: Option<u32>) -> Settings {
    let overrides = Overrides {
        demo: true,
        jobs: Some(1),
        samples,
        ..Overrides::default()
    };
    Settings::load_from(dir, None, Env::default(), overrides).unwrap()
}

/// Runs `roll.hocon` in `dir` with `samples` samples, kept in the history.
fn kept_run(dir: &Path, samples: u32) {
    let settings = settings(dir, Some(samples));
    let paths = vec![dir.join("roll.hocon")];
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
    assert!(kept.warnings.is_empty(), "{:?}", kept.warnings);
    runtime().unwrap().block_on(async {
        let session = prill_app::Session::new(&settings, &prepared.plan)
            .await
            .unwrap();
        session.run_reported(&prepared.plan, reporters).await;
        session.shutdown().await;
    });
}

#[test]
fn the_undecided_case_is_drawn_again_and_kept_with_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("prill.toml"), "").unwrap();
    std::fs::write(p.join("roll.hocon"), roll(0.95)).unwrap();
    kept_run(p, 60);
    std::fs::write(p.join("roll.hocon"), roll(0.75)).unwrap();
    kept_run(p, 10);
    let settings = settings(p, None);
    let (base, head) = settings.compare_sides(&RunQuery::default()).unwrap();
    let head_id = head.info.as_ref().unwrap().id.clone();
    let own = head.units[0].tally;
    let done = runtime()
        .unwrap()
        .block_on(settings.top_up(base, head, TopUpPlan::default()))
        .unwrap();
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    let report = done.comparison.top_up.as_ref().unwrap();
    assert_eq!(report.looks, 3);
    let case = &report.cases[0];
    assert_eq!(
        (case.samples, case.ended),
        (20, Ended::Decided),
        "{report:?}"
    );
    assert_eq!(done.comparison.regressions.len(), 1);
    // The wave is a kept run of the head, its samples numbered from 10 (8/10's gate
    // could have started 0 to 9).
    assert_eq!(report.runs.len(), 1);
    let wave = settings.kept_run(&report.runs[0]).unwrap();
    let info = wave.info.as_ref().unwrap();
    assert_eq!(info.command, "top-up");
    assert_eq!(info.settings.top_up.as_ref().unwrap().head, head_id);
    let mut indices: Vec<u32> = wave.units[0].samples.iter().map(|s| s.index).collect();
    indices.sort_unstable();
    assert_eq!(indices, (10..30).collect::<Vec<_>>());
    // Read again, the head has its added samples and the looks they took; the wave is
    // neither side.
    let (_, again) = settings.compare_sides(&RunQuery::default()).unwrap();
    assert_eq!(again.label, head_id);
    assert_eq!(again.looks, 3);
    let tally = again.units[0].tally;
    assert_eq!(
        tally.passed + tally.failed + tally.errored,
        own.passed + own.failed + own.errored + 20
    );
    assert_eq!(
        again.units[0].rates,
        prill_report::format::PassRates::of(&tally)
    );
}

/// A head whose samples more draws would not extend: no run line, replayed cassettes,
/// or a plan that cannot run. Nothing is drawn.
#[test]
fn a_head_that_cannot_be_topped_up_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prill.toml"), "").unwrap();
    let settings = settings(dir.path(), None);
    let side = |info: Option<RunInfo>| Side {
        label: "head".into(),
        info,
        units: Vec::new(),
        finished: true,
        summary: None,
        looks: 1,
        topped_up_by: Vec::new(),
    };
    let top_up = |head: Side, plan: TopUpPlan| {
        runtime()
            .unwrap()
            .block_on(settings.top_up(side(None), head, plan))
            .unwrap_err()
    };
    let e = top_up(side(None), TopUpPlan::default());
    assert!(matches!(e, TopUpError::NoRunLine { .. }), "{e}");
    let replayed = RunInfo::starting(
        "run",
        None,
        RunSettings {
            cassettes: Some(RunCassettes {
                mode: "replay".into(),
                dir: "tapes".into(),
            }),
            ..RunSettings::default()
        },
    );
    let e = top_up(side(Some(replayed)), TopUpPlan::default());
    assert!(e.to_string().contains("(--replay tapes)"), "{e}");
    let e = top_up(
        side(None),
        TopUpPlan {
            drop: 0.0,
            ..TopUpPlan::default()
        },
    );
    assert!(matches!(e, TopUpError::Plan(_)), "{e}");
    assert!(!settings.runs_dir().exists(), "nothing was drawn or kept");
}
