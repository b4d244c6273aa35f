//! `--rerun-failed`'s selection from the library: the last run's failed units, by case
//! id and connection, narrow a plan's cases to those units only; so does a list of
//! units (`--units`), and [`prill_run::plan_units`] lists a plan's units (`--list`).

use std::path::Path;

use prill_run::last_run::{LastRun, LastUnit, Rerun};
use prill_run::plan_units;
use prill_spec::model::data_driven::Connection;
use prill_spec::plan::Target;
use prill_spec::{Case, Env, Plan, Unrecognized};

fn cases(name: &str, text: &str) -> Vec<Case> {
    let loaded =
        prill_spec::load_str(Path::new(name), text, &Env::default(), Unrecognized::Error).unwrap();
    assert!(loaded.is_valid(), "{:?}", loaded.outcome);
    Plan::new(loaded.cases()).cases
}

fn agent_case() -> Vec<Case> {
    cases(
        "echo.yaml",
        "agent: echo\nconnections: [direct, http]\ninteractions:\n  - text: hi\n    response:\n      text: {keywords: hi}\n",
    )
}

fn unit(case: &Case, connection: &str, verdict: &str) -> LastUnit {
    LastUnit {
        case_id: case.id.to_string(),
        file: case.file.to_path_buf(),
        name: case.name.to_string(),
        connection: connection.to_owned(),
        verdict: verdict.to_owned(),
    }
}

fn connections(case: &Case) -> Vec<Connection> {
    match &case.target {
        Target::Agent { connections, .. } => connections.clone(),
        Target::Model { .. } => Vec::new(),
    }
}

#[test]
fn a_case_reruns_over_the_connections_it_failed_over_only() {
    let loaded = agent_case();
    let last = LastRun::new(vec![
        unit(&loaded[0], "direct", "passed"),
        unit(&loaded[0], "http", "errored"),
    ]);
    let rerun = LastRun::parse(&last.to_json()).unwrap().rerun();
    assert_eq!(rerun.len(), 1);
    let kept = rerun.apply(agent_case(), None);
    assert_eq!(kept.len(), 1);
    assert_eq!(connections(&kept[0]), [Connection::Http]);
    // `--connection direct` replaces the case's own: nothing failed over it.
    assert!(
        rerun
            .apply(agent_case(), Some(&[Connection::Direct]))
            .is_empty()
    );
}

#[test]
fn passed_and_skipped_units_are_not_rerun_and_other_versions_are_refused() {
    let loaded = agent_case();
    let last = LastRun::new(vec![
        unit(&loaded[0], "direct", "passed"),
        unit(&loaded[0], "http", "skipped"),
    ]);
    assert!(last.rerun().is_empty());
    let newer = last
        .to_json()
        .replace("\"schema_version\": 1", "\"schema_version\": 2");
    assert!(LastRun::parse(&newer).is_err());
}

#[test]
fn a_model_case_is_matched_by_its_provider() {
    let spec = "name: s\ntests:\n  - name: hello\n    model: gpt-4o-mini\n    inputs: {query: hi}\n    assertions:\n      - must_contain: hi\n";
    let loaded = cases("suite.yaml", spec);
    let failed = LastRun::new(vec![unit(&loaded[0], "openai", "failed")]).rerun();
    assert_eq!(failed.apply(cases("suite.yaml", spec), None).len(), 1);
    let elsewhere = LastRun::new(vec![unit(&loaded[0], "anthropic", "failed")]).rerun();
    assert!(elsewhere.apply(cases("suite.yaml", spec), None).is_empty());
}

#[test]
fn a_list_of_units_narrows_as_the_last_run_does() {
    // `prill run --units FILE`: the pairs come from a list, not from verdicts.
    let loaded = agent_case();
    let listed: Rerun = [(loaded[0].id.to_string(), "http".to_owned())]
        .into_iter()
        .collect();
    let kept = listed.apply(agent_case(), None);
    assert_eq!(connections(&kept[0]), [Connection::Http]);
}

#[test]
fn plan_units_are_the_units_a_run_runs() {
    let spec = "name: s\ntests:\n  - name: hello\n    model: gpt-4o-mini\n    inputs: {query: hi}\n    assertions:\n      - must_contain: hi\n";
    let mut all = agent_case();
    all.extend(cases("suite.yaml", spec));
    let plan = Plan::new(all);
    let shown = |units: Vec<prill_run::UnitId>| -> Vec<String> {
        units.iter().map(prill_run::UnitId::label).collect()
    };
    // Each agent case over each of its connections, each model case on its provider.
    assert_eq!(
        shown(plan_units(&plan, None)),
        ["echo [direct]", "echo [http]", "hello [openai]"]
    );
    // `--connection` replaces an agent case's own, and leaves model cases alone.
    assert_eq!(
        shown(plan_units(&plan, Some(&[Connection::Mcp]))),
        ["echo [mcp]", "hello [openai]"]
    );
}

/// A case whose inputs were edited since it failed has another id: it is rerun as the
/// case of the same file and name that the last run does not know, over the
/// connection it failed over, and named; a case of another file is not.
#[test]
fn a_failed_case_whose_inputs_changed_is_rerun_as_the_same_case() {
    let before = agent_case();
    let last = LastRun::new(vec![
        unit(&before[0], "direct", "failed"),
        unit(&before[0], "http", "passed"),
    ]);
    let edited = || {
        let mut loaded = cases(
            "./echo.yaml",
            "agent: echo\nconnections: [direct, http]\ninteractions:\n  - text: hello again\n    response:\n      text: {keywords: hi}\n",
        );
        loaded.extend(cases(
            "other.yaml",
            "agent: echo\nconnections: [direct]\ninteractions:\n  - text: other\n",
        ));
        loaded
    };
    assert_ne!(
        edited()[0].id,
        before[0].id,
        "an input changed, so did the id"
    );
    assert!(
        last.rerun().apply(edited(), None).is_empty(),
        "not by its id"
    );
    let (rerun, named) = last.rerun_among(&edited());
    assert_eq!(named, ["echo (echo.yaml)"]);
    let kept = rerun.apply(edited(), None);
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].name.as_ref(), "echo");
    assert_eq!(connections(&kept[0]), [Connection::Direct]);
}
