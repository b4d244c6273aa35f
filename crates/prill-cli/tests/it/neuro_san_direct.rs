//! `prill run` sends `direct` cases whose agent is not a command of `prill.toml` to
//! neuro-san through the bridge, set up by `[neuro_san]` (paths from the folder of
//! `prill.toml`) or by neuro-san's own `AGENT_MANIFEST_FILE`; without either, the error
//! says how to set it up. neuro-san here is `fixtures/neuro-san-stand-in`, whose answers
//! report what the session got; the real one runs in `tests/neuro_san_real`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{command, fixtures};

/// `fixtures/neuro-san-stand-in`, as an absolute path.
fn stand_in() -> PathBuf {
    fixtures("neuro-san-stand-in").canonicalize().unwrap()
}

/// A default-connection case that checks what the stand-in reports.
fn case(manifest: &str, cwd: &Path) -> String {
    format!(
        r#"{{"agent": "hello_world", "metadata": {{"user_id": "alice"}}, "use_direct": true,
            "interactions": [{{"text": "hi", "response": {{
                "text": {{"value": "hello_world says hi"}},
                "sly_data": {{"manifest": {{"value": {manifest:?}}}, "cwd": {{"value": {cwd:?}}},
                              "use_direct": {{"value": true}},
                              "metadata": {{"user_id": {{"value": "alice"}}}}}}}}}}]}}"#,
        cwd = cwd.display().to_string()
    )
}

/// `prill args...` in `cwd` with `env`, and without the caller's own neuro-san
/// variables (`AGENT_MANIFEST_FILE`, `PYTHONPATH`), which would turn the bridge on.
fn prill_without_neuro_san_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(cwd, args)
        .env_remove("AGENT_MANIFEST_FILE")
        .env_remove("PYTHONPATH")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

#[test]
fn neuro_san_settings_in_prill_toml_run_networks_through_the_bridge() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("project")).unwrap();
    let project = root.path().join("project").canonicalize().unwrap();
    std::fs::write(
        project.join("prill.toml"),
        format!(
            "[neuro_san]\npython = \"python3\"\nmanifest = \"registries/manifest.hocon\"\nenv = {{ PYTHONPATH = {:?} }}\n",
            stand_in().display().to_string()
        ),
    )
    .unwrap();
    let manifest = project.join("registries/manifest.hocon");
    std::fs::write(
        project.join("hello.json"),
        case(&manifest.display().to_string(), &project),
    )
    .unwrap();
    // Run from elsewhere: the paths are the config's, not the current folder's.
    let out = prill_without_neuro_san_env(
        root.path(),
        &[
            "run",
            "--config",
            "project/prill.toml",
            "--jsonl",
            "events.jsonl",
            "project/hello.json",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("1 passed"), "{stderr}");
    // The worker started before the run, and the run says when it was ready.
    assert!(
        stderr.contains("neuro-san: 1 warm worker ready after "),
        "{stderr}"
    );
    let events: Vec<String> = std::fs::read_to_string(root.path().join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].to_string())
        .collect();
    let at = |name: &str| {
        events
            .iter()
            .position(|e| e == &format!("\"{name}\""))
            .unwrap_or_else(|| panic!("no {name}: {events:?}"))
    };
    assert!(
        at("run_started") < at("workers_ready") && at("workers_ready") < at("run_finished"),
        "{events:?}"
    );
}

#[test]
fn agent_manifest_file_alone_turns_the_bridge_on_and_without_it_the_error_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    std::fs::write(dir.join("hello.json"), case("from-env.hocon", &dir)).unwrap();
    let stand_in = stand_in().display().to_string();
    let out = prill_without_neuro_san_env(
        &dir,
        &["run", "hello.json"],
        &[
            ("AGENT_MANIFEST_FILE", "from-env.hocon"),
            ("PYTHONPATH", &stand_in),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let out = prill_without_neuro_san_env(&dir, &["run", "hello.json"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "an error, not a failure: {stderr}"
    );
    assert!(
        stderr.contains("unknown agent `hello_world`")
            && stderr.contains("[neuro_san]")
            && stderr.contains("AGENT_MANIFEST_FILE"),
        "{stderr}"
    );
}

/// Whether `pid` is a live process (neither gone nor a zombie).
#[cfg(target_os = "linux")]
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // `pid (comm) S ...`: the state follows the last `)`.
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// `timeout_in_seconds` at the top of `prill.toml` limits a network's interaction over
/// the bridge: a session that sleeps is a timeout error (exit code 3, error kind
/// `timeout` in the report, the 1 s limit in the message), soon, and the bridge (a warm
/// worker, which a timeout ends) and what the session started are gone afterwards.
#[cfg(target_os = "linux")]
#[test]
fn prill_toml_s_timeout_reaches_a_network_run_through_the_bridge_and_ends_it() {
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    std::fs::write(
        dir.join("prill.toml"),
        format!(
            "timeout_in_seconds = 1\n\n[neuro_san]\npython = \"python3\"\nmanifest = \"registries/manifest.hocon\"\nenv = {{ PYTHONPATH = {:?} }}\n",
            stand_in().display().to_string()
        ),
    )
    .unwrap();
    let pidfile = dir.join("pids");
    std::fs::write(
        dir.join("slow.json"),
        format!(
            r#"{{"agent": "hello_world", "interactions": [{{"text": "hi",
                "sly_data": {{"sleep": 300, "pidfile": {:?}}},
                "response": {{"text": {{"value": "hello_world says hi"}}}}}}]}}"#,
            pidfile.display().to_string()
        ),
    )
    .unwrap();
    let started = Instant::now();
    let out =
        prill_without_neuro_san_env(&dir, &["run", "slow.json", "--json", "report.json"], &[]);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a timeout is an error, not a failure: {stderr}"
    );
    assert!(
        stderr.contains(
            "no complete answer from command `python3 <prill's neuro-san direct bridge> --worker` (agent `hello_world`) within 1s"
        ),
        "{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let error = &report["units"][0]["samples"][0]["interactions"][0]["error"];
    assert_eq!(error["kind"], "timeout", "{report:#}");
    assert!(
        took < Duration::from_secs(15),
        "the run took {took:?} with a 1 s limit: {stderr}"
    );
    let pids: Vec<u32> = std::fs::read_to_string(&pidfile)
        .unwrap_or_else(|e| panic!("the session never started ({e}): {stderr}"))
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "the bridge's pid and its sleep's: {pids:?}");
    // SIGTERM went to the bridge's process group when the interaction timed out; what
    // ignored it gets SIGKILL after the grace.
    let deadline = Instant::now() + prill_connect::GROUP_GRACE + Duration::from_secs(3);
    while pids.iter().any(|&p| running(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for (what, pid) in ["the bridge", "the session's sleep"].iter().zip(&pids) {
        assert!(!running(*pid), "{what} ({pid}) outlived the timeout");
    }
}
