//! Settings resolved once: which `prill.toml` (walking up), what the environment and the
//! overrides add, and what a run gets from them.

use prill_app::{Found, Overrides, Settings, SettingsError, find_config};
use prill_spec::Env;

#[test]
fn prill_toml_is_found_by_walking_up_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("tests/agents/deep");
    std::fs::create_dir_all(&nested).unwrap();
    assert_eq!(find_config(&nested), None);
    let settings =
        Settings::load_from(&nested, None, Env::default(), Overrides::default()).unwrap();
    assert_eq!(
        settings.found,
        Found::None {
            from: nested.clone()
        }
    );
    assert!(
        settings
            .found
            .to_string()
            .starts_with("config: no prill.toml in ")
    );

    std::fs::write(dir.path().join("prill.toml"), "[concurrency]\njobs = 7\n").unwrap();
    let settings =
        Settings::load_from(&nested, None, Env::default(), Overrides::default()).unwrap();
    assert_eq!(settings.found, Found::File(dir.path().join("prill.toml")));
    assert_eq!(settings.project_dir(), dir.path());
    // A nearer one wins.
    std::fs::write(dir.path().join("tests/prill.toml"), "strict = true\n").unwrap();
    let settings =
        Settings::load_from(&nested, None, Env::default(), Overrides::default()).unwrap();
    assert_eq!(
        settings.found,
        Found::File(dir.path().join("tests/prill.toml"))
    );
    assert!(settings.strict());
}

#[test]
fn jobs_come_from_the_flag_else_prill_toml_else_32() {
    let dir = tempfile::tempdir().unwrap();
    let load =
        |overrides| Settings::load_from(dir.path(), None, Env::default(), overrides).unwrap();
    assert_eq!(load(Overrides::default()).run_options(None).jobs, 32);
    std::fs::write(
        dir.path().join("prill.toml"),
        "[concurrency]\njobs = 7\nmax_test_case_concurrency = 3\n",
    )
    .unwrap();
    let options = load(Overrides::default()).run_options(None);
    assert_eq!((options.jobs, options.max_cases), (7, Some(3)));
    let flag = Overrides {
        jobs: Some(2),
        samples: Some(5),
        ..Overrides::default()
    };
    let options = load(flag).run_options(None);
    assert_eq!((options.jobs, options.samples), (2, Some(5)));
}

#[test]
fn an_invalid_prill_toml_is_an_error_with_its_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prill.toml"), "jbos = 3\n").unwrap();
    let error =
        Settings::load_from(dir.path(), None, Env::default(), Overrides::default()).unwrap_err();
    let SettingsError::InvalidConfig { reports, .. } = error else {
        panic!("{error}")
    };
    let text: Vec<String> = reports.iter().map(|r| r.plain()).collect();
    assert!(text.join("\n").contains("jbos"), "{text:?}");
}

#[test]
fn the_server_comes_from_the_flag_else_the_environment_else_prill_toml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        "server = \"http://toml:1\"\n",
    )
    .unwrap();
    let env = Env::from_pairs([("PRILL_SERVER", "http://env:2")]);
    let with = |env: Env, server: Option<&str>| {
        let overrides = Overrides {
            server: server.map(str::to_owned),
            ..Overrides::default()
        };
        Settings::load_from(dir.path(), None, env, overrides)
            .unwrap()
            .server()
            .unwrap()
            .to_string()
    };
    assert_eq!(with(Env::default(), None), "http://toml:1/");
    assert_eq!(with(env.clone(), None), "http://env:2/");
    assert_eq!(with(env, Some("http://flag:3")), "http://flag:3/");
}

/// Tool programs (`framework_config.tool_command`) are started by the run's launcher,
/// whose limit on a call the loop gives none is `timeout_in_seconds` of `prill.toml`.
#[test]
fn tool_programs_get_prill_toml_s_time_limit() {
    use prill_target::tools::{ToolCallRequest, ToolProgram};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prill.toml"), "timeout_in_seconds = 0.3\n").unwrap();
    let settings =
        Settings::load_from(dir.path(), None, Env::default(), Overrides::default()).unwrap();
    let launcher = settings.tool_launcher().unwrap();
    let program = ToolProgram::new(
        vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "read line; echo '{\"result\": 1}'; sleep 300".to_owned(),
        ],
        Some(dir.path()),
        "sleepy",
    );
    let call = ToolCallRequest {
        name: "search".to_owned(),
        arguments: serde_json::json!({}),
        call_id: None,
        turn: 1,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut session = launcher.start(&program).unwrap();
        let first = session.call(&call, None).await.unwrap();
        assert_eq!(
            first,
            prill_target::tools::ToolAnswer::ok(serde_json::json!(1))
        );
        let e = session.call(&call, None).await.unwrap_err();
        assert_eq!(e.kind(), prill_connect::ErrorKind::Timeout, "{e}");
        assert!(e.to_string().contains("within 300ms"), "{e}");
    });
}
