//! The processes of the real-server test: neuro-san's own server (its
//! `server_main_loop`, as `python -m` runs it), and commands run with a deadline.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long neuro-san's server may take to start serving.
const STARTUP: Duration = Duration::from_secs(180);

/// The variables neuro-san reads to find the test's networks and its model, for the
/// server, the driver and (through `[neuro_san]` and Prill's environment) the bridge.
#[derive(Debug, Clone)]
pub(crate) struct NeuroSanEnv {
    /// `fixtures/neuro-san-real`.
    pub(crate) fixtures: PathBuf,
    /// The fake OpenAI server's base url (`.../v1`).
    pub(crate) model_url: String,
}

impl NeuroSanEnv {
    /// Variables for a neuro-san process: where the networks, coded tools and model
    /// settings are, and the model's url and key.
    pub(crate) fn vars(&self) -> Vec<(String, String)> {
        let f = |p: &str| self.fixtures.join(p).display().to_string();
        vec![
            ("AGENT_MANIFEST_FILE".into(), f("registries/manifest.hocon")),
            ("AGENT_TOOL_PATH".into(), f("coded_tools")),
            ("AGENT_LLM_INFO_FILE".into(), f("llm_info.hocon")),
            ("PYTHONPATH".into(), self.fixtures.display().to_string()),
            ("OPENAI_API_BASE".into(), self.model_url.clone()),
            ("OPENAI_API_KEY".into(), "sk-fake-for-prill-tests".into()),
            // A fixed user, so that neuro-san's driver's default metadata is the same
            // everywhere.
            ("USER".into(), "prill-ci".into()),
        ]
    }
}

/// neuro-san's server, killed when dropped.
#[derive(Debug)]
pub(crate) struct NeuroSanServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl NeuroSanServer {
    /// Starts the server on a free port of 127.0.0.1 and waits until it lists agents.
    pub(crate) fn start(
        python: &Path,
        env: &NeuroSanEnv,
        dir: &Path,
    ) -> Result<NeuroSanServer, String> {
        let port = free_port()?;
        let log = dir.join("neuro-san-server.log");
        let file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let child = Command::new(python)
            .args(["-m", "neuro_san.service.main_loop.server_main_loop"])
            .args(["--http_port", &port.to_string()])
            .envs(env.vars())
            // No health-probe server on its default port 8081, which parallel runs share.
            .env("AGENT_HEALTH_PROBE_PORT", "0")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().map_err(|e| e.to_string())?)
            .stderr(file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
        let mut server = NeuroSanServer { child, port, log };
        server.wait_until_serving()?;
        Ok(server)
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The end of the server's log.
    pub(crate) fn log_tail(&self) -> String {
        tail(
            &std::fs::read_to_string(&self.log).unwrap_or_default(),
            4000,
        )
    }

    fn wait_until_serving(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "neuro-san's server exited with {status} before serving:\n{}",
                    self.log_tail()
                ));
            }
            if get(self.port, "/api/v1/list").is_some_and(|body| body.contains("\"agents\"")) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(format!(
            "neuro-san's server did not serve within {STARTUP:?}:\n{}",
            self.log_tail()
        ))
    }
}

impl Drop for NeuroSanServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free port of 127.0.0.1 (free when asked: the server binds it right after).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// The body of `GET path`, when the answer is a 200.
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response
        .starts_with("HTTP/1.1 200")
        .then(|| response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()))
        .flatten()
}

/// The last `n` bytes of `text` (on a character boundary).
pub(crate) fn tail(text: &str, n: usize) -> String {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_owned()
}

/// Runs `command` to its end, killing it after `limit`.
pub(crate) fn run(mut command: Command, limit: Duration) -> Result<Output, String> {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    // Read both pipes on threads so that a chatty command never blocks on a full pipe.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{shown} did not finish within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}
