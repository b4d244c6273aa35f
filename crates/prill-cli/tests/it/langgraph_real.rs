//! `framework: langgraph` against a real `langgraph dev` (`PRILL_LANGGRAPH`, the path of
//! its `langgraph` command; `.ci/langgraph/venv` makes it and CI sets it), serving the
//! graphs of `fixtures/langgraph-real/`, which need no model: the real server's stream
//! (no `end` event, CRLF, heartbeats, its message fields) read into the same
//! trajectory, node steps, usage and verdicts as the fake's.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{fixtures, run_file, stderr, unit, write};

/// `langgraph dev` on a free loopback port, offline, in a copy of the fixture (it keeps
/// its runs in the folder it runs in); its process group is killed when dropped.
struct LanggraphDev {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl LanggraphDev {
    fn start() -> LanggraphDev {
        use std::os::unix::process::CommandExt;
        let command = std::env::var("PRILL_LANGGRAPH")
            .expect("PRILL_LANGGRAPH names the `langgraph` command (.ci/langgraph/venv prints it)");
        let dir = tempfile::tempdir().unwrap();
        for file in ["graph.py", "langgraph.json"] {
            std::fs::copy(fixtures("langgraph-real").join(file), dir.path().join(file)).unwrap();
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new(command);
        cmd.args(["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .current_dir(dir.path())
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for key in [
            "LANGSMITH_API_KEY",
            "LANGCHAIN_API_KEY",
            "LANGGRAPH_API_KEY",
            "LANGGRAPH_CLOUD_LICENSE_KEY",
        ] {
            cmd.env_remove(key);
        }
        // Without the first two it reaches off the machine at start (its usage report,
        // its version check).
        for (key, value) in [
            ("LANGGRAPH_CLI_NO_ANALYTICS", "1"),
            ("LANGGRAPH_NO_VERSION_CHECK", "true"),
            ("LANGSMITH_TRACING", "false"),
            ("LANGCHAIN_TRACING_V2", "false"),
        ] {
            cmd.env(key, value);
        }
        let server = LanggraphDev {
            child: cmd.spawn().expect("langgraph dev starts"),
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !server.ready() {
            assert!(
                Instant::now() < deadline,
                "langgraph dev was not ready within 120 s"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        server
    }

    /// Whether `GET /ok` answers 200.
    fn ready(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let request = "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        // The status line is all it takes; the server may keep the connection open.
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut head = [0u8; 12];
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_exact(&mut head).is_ok()
            && head.starts_with(b"HTTP/1.1 200")
    }
}

impl Drop for LanggraphDev {
    fn drop(&mut self) {
        // `--`: a negative pid (the whole group) is not an option.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &group])
            .status();
        let _ = self.child.wait();
    }
}

const SUITE: &str = r#"name: langgraph dev
defaults:
  model: gpt-4o
  framework: langgraph
  tools: [search, weather]
  inputs: {system_prompt: "You plan trips.", query: "Plan a day in Paris"}
tests:
  - name: the trip
    framework_config: {assistant_id: trip, max_iterations: 3}
    assertions:
      - graph_steps: {tools: [agent, tools, agent, tools, agent], mode: strict}
      - graph_steps: {tools: [tools, tools], mode: superset}
      - tool_sequence: {tools: [{tool: search, args: {q: Paris}}, {tool: weather, args: {city: Paris}}], mode: strict, args_mode: exact}
      - tool_sequence: {tools: [weather, search], mode: any_order}
      - must_not_call_tool: book_hotel
      - tool_args: {tool: weather, args: {city: {regex: "^Par"}}}
      - max_iterations_used: 3
      - must_contain: "21 C"
  - name: the trip out of order
    framework_config: {assistant_id: trip}
    assertions:
      - graph_steps: {tools: [agent, agent, tools], mode: strict}
  - name: the broken trip
    framework_config: {assistant_id: broken}
    assertions:
      - must_call_tool: search
"#;

#[test]
#[cfg_attr(
    not(prill_langgraph),
    ignore = "needs langgraph dev: set PRILL_LANGGRAPH to its `langgraph` command (.ci/langgraph/venv makes it; .ci/run does)"
)]
fn a_real_langgraph_dev_run_is_read_and_checked() {
    let server = LanggraphDev::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "prill.toml",
        &format!(
            "[frameworks.langgraph]\nurl = \"http://127.0.0.1:{}\"\ntimeout_in_seconds = 60\n",
            server.port
        ),
    );
    write(dir.path(), "suite.yaml", SUITE);
    let (out, report) = run_file(dir.path(), "suite.yaml", &[]);
    let err = stderr(&out);
    let verdict = |name: &str| unit(&report, name)["verdict"].as_str().unwrap().to_owned();
    assert_eq!(verdict("the trip"), "passed", "{err}");
    assert_eq!(verdict("the trip out of order"), "failed", "{err}");
    assert_eq!(verdict("the broken trip"), "errored", "{err}");
    let trip = &unit(&report, "the trip")["samples"][0]["interactions"][0];
    let tools: Vec<&str> = trip["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["search", "weather"], "{trip:#}");
    assert_eq!(trip["turns"].as_array().unwrap().len(), 3, "{trip:#}");
    let broken =
        unit(&report, "the broken trip")["samples"][0]["interactions"][0]["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(broken.contains("ValueError"), "{broken}");
}
