//! What `cargo test` prints for a spec case that fails: the harness runs a two-turn
//! case whose second turn fails against the demo agents (in a child process, since a
//! failing trial fails its binary), and the test reads the failure it printed: the
//! check's `file:line:col`, the interaction and the sample.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use libtest_mimic::{Arguments, Trial};

/// Set in the child: run the harness itself.
const CHILD: &str = "PRILL_TEST_HARNESS_CHILD";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/examples/second_turn")
}

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return prill_app::harness::Harness::new(dir())
            .agents(prill_app::harness::Agents::Demo)
            .main();
    }
    let trial = Trial::test("a_failure_says_where_it_happened", || {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let out = Command::new(exe)
            .env(CHILD, "1")
            .args(["--test-threads", "1", "--color", "never"])
            .output()
            .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.code() != Some(101) {
            return Err(format!("the harness should fail the case: {out:?}").into());
        }
        let file = dir().join("home_town.hocon");
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let line = text
            .lines()
            .position(|l| l.contains("Manchester"))
            .ok_or("no Manchester in the fixture")?
            + 1;
        let place = format!("{}:{line}:", file.display());
        for wanted in [
            "FAIL [",
            "home_town.hocon [direct] 0 passed, 1 failed (need 1/1)",
            "text: expected to contain \"Manchester\"",
            &format!("at {place}"),
            ", interaction 1, sample 0",
        ] {
            if !stdout.contains(wanted) {
                return Err(format!("`{wanted}` is missing from:\n{stdout}").into());
            }
        }
        Ok(())
    });
    libtest_mimic::run(&Arguments::from_args(), vec![trial]).exit_code()
}
