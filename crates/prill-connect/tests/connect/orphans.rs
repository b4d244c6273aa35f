//! Nothing a direct agent starts outlives its conversation, even what leaves the
//! agent's process group (`setsid`, a double fork): Prill adopts such orphans as a
//! child subreaper and ends them (Linux).

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prill_connect::{AgentRequest, Connector, ErrorKind, StdioCommand, StdioConnector};

/// How long an orphan may take to be gone once its conversation has ended: the group's
/// grace, the orphan's `SIGTERM`, and slack for a loaded machine.
fn within() -> Duration {
    prill_connect::GROUP_GRACE + Duration::from_secs(5)
}

/// When process `pid` started (clock ticks since boot), while it exists, zombie or not.
fn started_at(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// A helper process a test agent started, killed when the test ends however it ends,
/// so that a failing test leaves nothing behind.
struct Helper {
    pid: u32,
    start: u64,
}

impl Helper {
    /// The helper whose pid an agent writes to `path`, waiting for it.
    fn from_file(path: &Path) -> Helper {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(pid) = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                && let Some(start) = started_at(pid)
            {
                return Helper { pid, start };
            }
            assert!(
                Instant::now() < deadline,
                "the agent never wrote its helper's pid to {}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process still exists: running, or a zombie nobody has reaped.
    fn exists(&self) -> bool {
        started_at(self.pid) == Some(self.start)
    }

    /// Whether the process is still there after `within`, polling.
    async fn still_there_after(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while self.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.exists()
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        if self.exists() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.pid.to_string()])
                .status();
        }
    }
}

/// An `sh` agent written to `dir`: `body`, with `$PIDFILE` the file for its helper's pid.
fn agent(dir: &Path, name: &str, body: &str) -> (StdioCommand, PathBuf) {
    let pidfile = dir.join(format!("{name}.pid"));
    let script = dir.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!("export PIDFILE='{}'\n{body}", pidfile.display()),
    )
    .unwrap();
    let command = StdioCommand::new(["sh".to_owned(), script.display().to_string()]);
    (command, pidfile)
}

/// The helper writes its own pid (`$$`, the same after `exec`), atomically.
const WRITE_PID: &str = r#"echo $$ > "$PIDFILE.tmp"; mv "$PIDFILE.tmp" "$PIDFILE""#;

/// An agent that never answers, whose helper leaves its process group with `setsid`
/// (while the agent, its parent, waits for it), is gone soon after the conversation
/// times out: the agent's group is ended, the helper is adopted and ended too.
#[tokio::test]
async fn a_helper_that_left_the_group_ends_with_a_timed_out_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("setsid sh -c '{WRITE_PID}; exec sleep 300' &\nwait\n");
    let (command, pidfile) = agent(dir.path(), "setsid", &body);
    let connector = StdioConnector::new().with("setsid", command);
    let mut conversation = connector.open("setsid").await.unwrap();
    let request = AgentRequest::new("x").with_timeout(Duration::from_millis(1500));
    let error = conversation.send(&request).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Timeout);
    let helper = Helper::from_file(&pidfile);
    assert!(
        !helper.still_there_after(within()).await,
        "the helper {} that left the agent's group outlived the timed-out conversation",
        helper.pid
    );
    drop(conversation);
}

/// A daemon whose parent exited at once (a double fork) is adopted while its
/// conversation goes on, and ended only when that conversation ends: another
/// conversation's daemon runs on until its own conversation ends.
#[tokio::test]
async fn each_conversation_ends_only_its_own_daemons() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "( setsid sh -c '{WRITE_PID}; exec sleep 300' & )\n\
         while read line; do echo '{{\"response\": {{\"type\": \"AGENT_FRAMEWORK\", \"text\": \"ok\"}}}}'; done\n"
    );
    let (first, first_pid) = agent(dir.path(), "first", &body);
    let (second, second_pid) = agent(dir.path(), "second", &body);
    let connector = StdioConnector::new()
        .with("first", first)
        .with("second", second);
    let request = AgentRequest::new("x").with_timeout(Duration::from_secs(20));
    let mut one = connector.open("first").await.unwrap();
    let mut two = connector.open("second").await.unwrap();
    assert_eq!(
        one.send(&request).await.unwrap().text.as_deref(),
        Some("ok")
    );
    assert_eq!(
        two.send(&request).await.unwrap().text.as_deref(),
        Some("ok")
    );
    let first = Helper::from_file(&first_pid);
    let second = Helper::from_file(&second_pid);
    assert!(first.exists() && second.exists());

    drop(one);
    assert!(
        !first.still_there_after(within()).await,
        "the first conversation's daemon {} outlived it",
        first.pid
    );
    assert!(
        second.exists(),
        "the second conversation's daemon was ended while it went on"
    );
    drop(two);
    assert!(
        !second.still_there_after(within()).await,
        "the second conversation's daemon {} outlived it",
        second.pid
    );
}

/// A process of the agent's group that outlives its parent (it ignores `SIGTERM`) is
/// adopted, killed with the group after the grace, and reaped: no zombie is left.
#[tokio::test]
async fn an_adopted_member_of_the_group_is_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("sh -c 'trap \"\" TERM; {WRITE_PID}; exec sleep 300' &\nwait\n");
    let (command, pidfile) = agent(dir.path(), "stubborn", &body);
    let connector = StdioConnector::new().with("stubborn", command);
    let mut conversation = connector.open("stubborn").await.unwrap();
    let request = AgentRequest::new("x").with_timeout(Duration::from_millis(1500));
    assert!(conversation.send(&request).await.is_err());
    let helper = Helper::from_file(&pidfile);
    assert!(
        !helper.still_there_after(within()).await,
        "the group's member {} was left running or a zombie",
        helper.pid
    );
    drop(conversation);
}
