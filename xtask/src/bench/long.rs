//! The long-answer workload (`--long-answers`): how much memory a run takes when every
//! answer is long, as a model stuck repeating itself up to the response cap answers.
//!
//! Every answer is [`ANSWER_BYTES`] of text, from either [`Source`]: a second fake
//! server (streamed 64 KiB an event), or a direct agent (this program's hidden
//! `long-agent` task, one JSON line an answer, as a Python agent prints one). `prill
//! run` of [`TESTS`] tests runs at each of [`JOBS`], with the history (on by default),
//! `--json` and `--html`: the reports that held every answer before. Its peak RSS is
//! measured against the answers in flight: Prill keeps each answer whole once (in its
//! sample's record) and quotes it elsewhere, so memory follows the answers in flight,
//! not the number of tests.

use std::fmt;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use super::Bench;
use super::measure::{self, Sample, measure};
use super::suites;

/// The tests of the suite.
pub(crate) const TESTS: usize = 20;

/// Each answer's length: 20 MiB, within the 32 MiB response cap.
pub(crate) const ANSWER_BYTES: usize = 20 * 1024 * 1024;

/// The concurrency levels measured: one answer at a time, and all at once.
pub(crate) const JOBS: [usize; 2] = [1, TESTS];

/// Who answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The fake OpenAI-compatible server.
    Provider,
    /// A direct agent, one JSON line an answer.
    Direct,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Provider => "the fake server",
            Source::Direct => "a direct agent",
        })
    }
}

/// `cargo xtask long-agent --bytes N`: for each request line on stdin, one final
/// `AGENT_FRAMEWORK` message whose text is the main suites' answer repeated to `bytes`.
pub(crate) fn agent(bytes: usize) -> Result<(), String> {
    let mut text = String::with_capacity(bytes + 32);
    while text.len() < bytes {
        text.push_str("Paris has 2 million people. ");
    }
    text.truncate(bytes);
    let line = format!(
        "{{\"response\": {{\"type\": \"AGENT_FRAMEWORK\", \"text\": \"{text}\", \"chat_context\": {{}}}}}}\n"
    );
    let mut out = std::io::stdout().lock();
    for request in std::io::stdin().lock().lines() {
        request.map_err(|e| format!("cannot read a request: {e}"))?;
        out.write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot answer: {e}"))?;
    }
    Ok(())
}

impl Bench<'_> {
    /// The folder of the direct agent's project: its `prill.toml` names this program's
    /// `long-agent` task, and [`TESTS`] data-driven cases ask it.
    pub(crate) fn direct_project(&self) -> Result<PathBuf, String> {
        let dir = self.dir.join("long-direct");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let config = format!(
            "[agents.long]\ncommand = [{:?}, \"long-agent\", \"--bytes\", \"{ANSWER_BYTES}\"]\n",
            me.display().to_string()
        );
        let write = |name: String, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
        };
        write("prill.toml".to_owned(), &config)?;
        for i in 1..=TESTS {
            write(
                format!("case{i:02}.json"),
                &format!(
                    r#"{{"agent": "long", "connections": ["direct"], "interactions": [{{"text": "{}", "response": {{"text": {{"keywords": ["Paris"], "not_keywords": ["London"]}}}}}}]}}"#,
                    suites::question(i)
                ),
            )?;
        }
        Ok(dir)
    }

    /// One `prill run` of the long-answer `suite` (in the folder `project`, else in the
    /// benchmark's) at `-j jobs`, with the history, `--json` and `--html`; it must pass
    /// all [`TESTS`] tests.
    pub(crate) fn prill_run_long(
        &self,
        suite: &Path,
        project: Option<&Path>,
        jobs: usize,
    ) -> Result<Sample, String> {
        let mut args = super::run_args(suite, jobs);
        args.extend([
            "--json".into(),
            self.dir.join("long.json").into(),
            "--html".into(),
            self.dir.join("long.html").into(),
        ]);
        let mut invocation = self.invocation(&self.prill, args, false);
        if let Some(project) = project {
            invocation.cwd = project.to_owned();
        }
        let finished = measure(&invocation, &self.time_file())?;
        // The history is not what is measured from one run to the next: each starts
        // with an empty one.
        let _ = std::fs::remove_dir_all(invocation.cwd.join(".prill"));
        finished.require_success("prill run (long answers)")?;
        match super::prill_summary(&finished.stderr) {
            Some(counts) if counts == [TESTS, 0, 0, 0] => Ok(finished.sample),
            counts => Err(format!(
                "prill run did not pass all {TESTS} long-answer tests: {counts:?}\n{}",
                measure::tail(&finished.stderr, 2000)
            )),
        }
    }
}

/// The long-answer suite: [`TESTS`] tests of the main suites' kind.
pub(crate) fn suite() -> String {
    suites::prill_suite(TESTS)
}

/// The answer's size in MB (10^6 bytes, as RSS is reported).
pub(crate) fn answer_mb() -> f64 {
    ANSWER_BYTES as f64 / 1e6
}
