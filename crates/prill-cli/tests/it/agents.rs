//! `prill agents` against the real demo server on loopback, and against nothing.

use prill_testkit::start_demo_background;

use crate::support::{prill, prill_env, text};

#[test]
fn lists_the_agents_one_per_line() {
    let demo = start_demo_background();
    let dir = tempfile::tempdir().unwrap();
    let out = prill(dir.path(), &["agents", "--server", &demo.http_url()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let math = stdout
        .lines()
        .find(|l| l.starts_with("math_guy\t"))
        .unwrap_or_else(|| panic!("no math_guy line in {stdout}"));
    assert!(math.split('\t').nth(1).is_some_and(|d| !d.is_empty()));
    assert!(stdout.lines().all(|l| l.split('\t').count() == 2));
}

#[test]
fn json_output() {
    let demo = start_demo_background();
    let dir = tempfile::tempdir().unwrap();
    let out = prill(
        dir.path(),
        &["agents", "--server", &demo.http_url(), "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let document: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(document["server"], serde_json::json!(demo.http_url()));
    let agents = document["agents"].as_array().unwrap();
    assert!(agents.iter().any(|a| a["name"] == "music_nerd_pro"));
    assert!(agents.iter().all(|a| a["tags"].is_array()));
}

#[test]
fn the_server_comes_from_the_environment_then_prill_toml() {
    let demo = start_demo_background();
    let dir = tempfile::tempdir().unwrap();
    let out = prill_env(
        dir.path(),
        &["agents"],
        &[("PRILL_SERVER", &demo.http_url())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("math_guy\t"));

    std::fs::write(
        dir.path().join("prill.toml"),
        format!("server = \"{}\"\n", demo.http_url()),
    )
    .unwrap();
    let out = prill(dir.path(), &["agents"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("math_guy\t"));

    std::fs::write(dir.path().join("prill.toml"), "servr = \"x\"\n").unwrap();
    let out = prill(dir.path(), &["agents"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn https_needs_the_certificate_or_insecure() {
    let demo = start_demo_background();
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("demo.pem");
    std::fs::write(&cert, demo.cert_pem()).unwrap();
    let https = demo.https_url();

    let out = prill(dir.path(), &["agents", "--server", &https]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("error: tls with {https} failed")),
        "{stderr}"
    );
    assert!(stderr.contains("--ca-cert"), "{stderr}");

    let cert_arg = cert.display().to_string();
    let out = prill(
        dir.path(),
        &["agents", "--server", &https, "--ca-cert", &cert_arg],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("math_guy\t"));

    let out = prill(dir.path(), &["agents", "--server", &https, "--insecure"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).starts_with("warning: --insecure"));

    let out = prill(
        dir.path(),
        &["agents", "--server", &https, "--ca-cert", "missing.pem"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read the CA certificate file `missing.pem`"));
}

#[test]
fn an_unreachable_server_is_an_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let server = format!("http://127.0.0.1:{port}");
    let out = prill(dir.path(), &["agents", "--server", &server]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("error: cannot reach {server}: ")),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());

    let out = prill(dir.path(), &["agents", "--server", "ftp://x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("must start with http:// or https://"));
}

#[test]
fn retries_are_logged_at_debug_and_not_by_default() {
    // Nothing listens: the connection is tried three times (the default policy), and
    // each retry is a debug line with its attempt, its wait and its cause.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let retries = |stderr: &str| {
        stderr
            .lines()
            .filter(|l| l.contains("cannot connect; trying again"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let quiet = prill(dir.path(), &["agents", "--server", &server]);
    assert_eq!(quiet.status.code(), Some(3));
    let stderr = text(&quiet.stderr);
    assert!(retries(&stderr).is_empty(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "only the error: {stderr}");

    let flag = ["agents", "--server", &server, "--log-level", "debug"];
    let logged = prill(dir.path(), &flag);
    assert_eq!(logged.status.code(), Some(3));
    let stderr = text(&logged.stderr);
    let lines = retries(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    for (line, attempt) in lines.iter().zip(["attempt=1", "attempt=2"]) {
        assert!(line.contains(" DEBUG prill_connect::http:"), "{line}");
        assert!(
            line.contains(attempt) && line.contains("wait=") && line.contains("cause="),
            "{line}"
        );
    }
    assert!(stderr.contains("error: cannot reach"), "{stderr}");

    // The variables, when the flag is not given: PRILL_LOG before RUST_LOG.
    for (name, value, shown) in [
        ("PRILL_LOG", "prill_connect=debug", 2),
        ("RUST_LOG", "prill_connect=debug", 2),
        ("RUST_LOG", "warn", 0),
    ] {
        let out = prill_env(
            dir.path(),
            &["agents", "--server", &server],
            &[(name, value)],
        );
        let stderr = text(&out.stderr);
        assert_eq!(retries(&stderr).len(), shown, "{name}={value}: {stderr}");
    }
}

#[test]
fn the_command_agents_of_prill_toml_are_listed_and_marked() {
    let demo = start_demo_background();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prill.toml"),
        format!(
            "server = \"{}\"\n[agents.local_echo]\ncommand = [\"python3\", \"echo.py\"]\n[agents.remote]\nurl = \"http://127.0.0.1:1\"\n",
            demo.http_url()
        ),
    )
    .unwrap();
    let out = prill(dir.path(), &["agents"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("math_guy\t"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l == "local_echo\t(command: python3 echo.py)"),
        "{stdout}"
    );
    assert!(!stdout.contains("remote"), "only commands: {stdout}");

    let out = prill(dir.path(), &["agents", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let document: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let agents = document["agents"].as_array().unwrap();
    let local = agents.iter().find(|a| a["name"] == "local_echo").unwrap();
    assert_eq!(local["command"], serde_json::json!(["python3", "echo.py"]));
    let math = agents.iter().find(|a| a["name"] == "math_guy").unwrap();
    assert!(math.get("command").is_none(), "{math}");

    // The commands are listed when the server cannot be reached, and the exit says so.
    std::fs::write(
        dir.path().join("prill.toml"),
        "server = \"http://127.0.0.1:1\"\n[agents.local_echo]\ncommand = [\"python3\", \"echo.py\"]\n",
    )
    .unwrap();
    let out = prill(dir.path(), &["agents"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "local_echo\t(command: python3 echo.py)\n"
    );
    assert!(
        text(&out.stderr).contains("cannot reach"),
        "{}",
        text(&out.stderr)
    );
}
