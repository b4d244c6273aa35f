//! Warm neuro-san workers (`NeuroSanDirect::with_workers`): one bridge process serves
//! one conversation after another, each in a fresh session; a conversation that ends
//! badly ends its worker and the next one gets a new process; no more workers live
//! than the pool's size. Against the real bridge and the stand-in `neuro_san` package
//! (`fixtures/neuro-san-stand-in`), whose answers say which process answered (`pid`)
//! and how many sessions it made (`sessions`).

use std::path::Path;
use std::time::Duration;

use prill_connect::{AgentRequest, Connector, ErrorKind, NeuroSanDirect};
use serde_json::{Value, json};

fn stand_in() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/neuro-san-stand-in")
}

/// The stand-in networks on `workers` warm workers (0: a process per conversation).
fn direct(dir: &Path, workers: usize) -> NeuroSanDirect {
    NeuroSanDirect::new("python3")
        .with_env("PYTHONPATH", stand_in().display().to_string())
        .with_cwd(dir)
        .with_workers(workers)
}

/// One conversation with `agent`, one request: the final message's sly_data.
async fn talk(connector: &NeuroSanDirect, agent: &str) -> Value {
    let mut conversation = connector.open(agent).await.unwrap();
    let answer = conversation.send(&AgentRequest::new("hi")).await.unwrap();
    assert_eq!(
        answer.text.as_deref(),
        Some(format!("{agent} says hi").as_str())
    );
    answer.sly_data.unwrap()
}

#[tokio::test]
async fn a_warm_worker_serves_one_conversation_after_another_each_in_a_fresh_session() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 1);
    let first = talk(&connector, "hello_world").await;
    let second = talk(&connector, "math_guy").await;
    assert_eq!(first["pid"], second["pid"], "the same process answered");
    assert_eq!(
        (first["sessions"].as_u64(), second["sessions"].as_u64()),
        (Some(1), Some(2)),
        "a session of its own for each conversation"
    );
    assert_eq!(second["resets"], 1, "nothing of the first session is left");

    // A process per conversation, as before, with no workers.
    let fresh = direct(dir.path(), 0);
    let (a, b) = (talk(&fresh, "a").await, talk(&fresh, "b").await);
    assert_ne!(a["pid"], b["pid"]);
    assert_eq!(
        (a["sessions"].as_u64(), b["sessions"].as_u64()),
        (Some(1), Some(1))
    );
}

/// `pid` still runs.
fn alive(pid: u64) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// A request the stand-in answers after 30 s, writing its pid to `pidfile` once it
/// waits.
fn slow_request(pidfile: &Path) -> AgentRequest {
    let mut slow = AgentRequest::new("take your time");
    slow.sly_data = json!({"sleep": 30, "pidfile": pidfile.display().to_string()})
        .as_object()
        .cloned();
    slow
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_conversation_that_times_out_ends_its_worker_and_the_next_gets_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 1);
    let before = talk(&connector, "hello_world").await;
    let worker = before["pid"].as_u64().unwrap();

    let pidfile = dir.path().join("slow.pid");
    let mut conversation = connector.open("hello_world").await.unwrap();
    let mut slow = slow_request(&pidfile);
    slow.timeout = Some(Duration::from_millis(1500));
    let error = conversation.send(&slow).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    drop(conversation);

    let after = talk(&connector, "hello_world").await;
    assert_ne!(after["pid"], before["pid"], "a new worker");
    assert_eq!(after["sessions"], 1, "a new process");
    for _ in 0..100 {
        if !alive(worker) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!alive(worker), "the worker that timed out was ended");
}

/// A worker killed in the middle of a conversation: that conversation errs, and the
/// next one runs on a fresh process, never on the dead one.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_worker_killed_mid_conversation_errs_that_conversation_and_the_next_gets_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 1);
    let before = talk(&connector, "hello_world").await;

    let pidfile = dir.path().join("slow.pid");
    let mut conversation = connector.open("hello_world").await.unwrap();
    let slow = slow_request(&pidfile);
    let killer = {
        let pidfile = pidfile.clone();
        tokio::spawn(async move {
            // The session writes its own pid once it is waiting on its "model".
            for _ in 0..200 {
                if let Ok(text) = std::fs::read_to_string(&pidfile)
                    && let Some(pid) = text.lines().next()
                {
                    let killed = std::process::Command::new("kill")
                        .args(["-KILL", pid])
                        .status()
                        .unwrap();
                    return killed.success();
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            false
        })
    };
    let error = conversation.send(&slow).await.unwrap_err();
    assert!(killer.await.unwrap(), "the worker was killed");
    assert!(
        error.to_string().contains("signal") || error.to_string().contains("exited"),
        "{error}"
    );
    drop(conversation);

    let after = talk(&connector, "hello_world").await;
    assert_ne!(after["pid"], before["pid"], "a new worker");
    assert_eq!(after["sessions"], 1, "a fresh process");
}

#[tokio::test]
async fn no_more_workers_live_than_the_pool_holds() {
    let dir = tempfile::tempdir().unwrap();
    let connector = std::sync::Arc::new(direct(dir.path(), 1));
    let mut holding = connector.open("hello_world").await.unwrap();
    let first = holding.send(&AgentRequest::new("hi")).await.unwrap();
    let first_pid = first.sly_data.unwrap()["pid"].clone();

    // A second conversation waits for the one worker, whatever its time limit.
    let other = std::sync::Arc::clone(&connector);
    let waiting = tokio::spawn(async move {
        let mut conversation = other.open("math_guy").await.unwrap();
        let mut request = AgentRequest::new("hi");
        request.timeout = Some(Duration::from_millis(500));
        conversation.send(&request).await
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!waiting.is_finished(), "it waits for the worker in use");
    drop(holding);
    let answer = tokio::time::timeout(Duration::from_secs(60), waiting)
        .await
        .expect("it got the worker once it was free")
        .unwrap()
        .expect("the wait was not counted against its time limit");
    assert_eq!(
        answer.sly_data.unwrap()["pid"],
        first_pid,
        "the same worker"
    );
}

#[tokio::test]
async fn an_unknown_network_is_an_error_and_the_next_conversation_gets_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 1);
    let mut conversation = connector.open("missing").await.unwrap();
    let error = conversation
        .send(&AgentRequest::new("hi"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("not found in manifest file"),
        "neuro-san's own message: {error}"
    );
    drop(conversation);
    talk(&connector, "hello_world").await;
}

/// An idle worker that dies while it waits (killed, out of memory) is replaced: the next
/// conversation gets a new process, not an error.
#[cfg(unix)]
#[tokio::test]
async fn an_idle_worker_that_died_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 1);
    let before = talk(&connector, "hello_world").await;
    let pid = before["pid"].as_u64().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = talk(&connector, "hello_world").await;
    assert_ne!(after["pid"], before["pid"], "a new worker");
}

/// Seconds since the epoch, as the stand-in's `loaded`.
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[tokio::test]
async fn warm_workers_load_before_the_first_conversation_and_say_when_they_are_ready() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 2);
    let before = now();
    let warmed = connector.warm(5).expect("workers start").wait().await;
    let ready = now();
    assert_eq!(
        (warmed.ready, warmed.failed),
        (2, 0),
        "no more than the pool holds"
    );
    assert!(connector.warm(1).is_none(), "every worker is alive already");

    // Two conversations at once, each on a worker that loaded before it began.
    let mut first = connector.open("hello_world").await.unwrap();
    let mut second = connector.open("math_guy").await.unwrap();
    let a = first.send(&AgentRequest::new("hi")).await.unwrap();
    let b = second.send(&AgentRequest::new("hi")).await.unwrap();
    let (a, b) = (a.sly_data.unwrap(), b.sly_data.unwrap());
    assert_ne!(a["pid"], b["pid"], "one worker each");
    for answer in [&a, &b] {
        let loaded = answer["loaded"].as_f64().unwrap();
        assert!(
            (before..=ready).contains(&loaded),
            "loaded at {loaded}, warmed from {before} to {ready}"
        );
        assert_eq!(answer["sessions"], 1);
    }
}

#[tokio::test]
async fn a_conversation_takes_the_worker_started_early_rather_than_starting_another() {
    let dir = tempfile::tempdir().unwrap();
    let connector = direct(dir.path(), 2).with_env("PRILL_STAND_IN_LOAD_SECONDS", "1");
    let warming = connector.warm(1).expect("one starts");
    // A conversation that comes while it loads waits for it: the pool could start a
    // second worker, but does not.
    let first = talk(&connector, "hello_world").await;
    let warmed = warming.wait().await;
    assert_eq!((warmed.ready, warmed.failed), (1, 0));
    let after_first = now();

    // Two at once: that worker, and a new one, since no other was alive.
    let mut a = connector.open("hello_world").await.unwrap();
    let mut b = connector.open("math_guy").await.unwrap();
    let hi = AgentRequest::new("hi");
    let (a, b) = tokio::join!(a.send(&hi), b.send(&hi));
    let answers = [a.unwrap().sly_data.unwrap(), b.unwrap().sly_data.unwrap()];
    assert!(
        answers.iter().any(|a| a["pid"] == first["pid"]),
        "{first} {answers:?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["loaded"].as_f64().unwrap() > after_first),
        "a worker started for the second conversation: {first} {answers:?}"
    );
}

#[tokio::test]
async fn a_worker_that_cannot_start_is_counted_and_the_conversation_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // A Python without neuro-san.
    let connector = NeuroSanDirect::new("python3")
        .with_env("PYTHONPATH", dir.path().display().to_string())
        .with_cwd(dir.path())
        .with_workers(1);
    let warmed = connector.warm(1).expect("one starts").wait().await;
    assert_eq!((warmed.ready, warmed.failed), (0, 1));
    let mut conversation = connector.open("hello_world").await.unwrap();
    let error = conversation
        .send(&AgentRequest::new("hi"))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("No module named 'neuro_san'"),
        "{error}"
    );
}
