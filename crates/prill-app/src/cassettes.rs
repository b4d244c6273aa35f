//! The run's cassettes (`prill run --record DIR`, `--replay DIR`, `--replay-or-record
//! DIR`, `--re-record DIR`, `--replay-latency`; `docs/cassettes.md`): resolved once from
//! the flags and `[cassettes]`, opened before the run starts, and shared by every
//! connection the run makes (agents, providers, the judge).

use std::path::PathBuf;

use prill_connect::cassette::{CassetteOptions, Cassettes, Latency, Mode};
use prill_spec::redact::Redactor;

use crate::error::SettingsError;
use crate::settings::Settings;

/// What the command line asks of cassettes: a mode, its folder, and how replies are
/// paced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CassetteFlags {
    /// `--record`, `--replay`, `--replay-or-record` or `--re-record`.
    pub mode: Mode,
    /// The folder they name (relative to the working directory).
    pub dir: PathBuf,
    /// `--replay-latency` (recorded unless given).
    pub latency: Latency,
}

impl CassetteFlags {
    /// The flag that asked for `mode`, as the user typed it.
    pub fn flag(&self) -> &'static str {
        mode_name(self.mode)
    }
}

/// The flag of `mode`, without its dashes: `record`, `replay`, `replay-or-record`,
/// `re-record` (the report's `settings.cassettes.mode`).
pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Record => "record",
        Mode::Replay => "replay",
        Mode::ReplayOrRecord => "replay-or-record",
        _ => "re-record",
    }
}

impl Settings {
    /// The run's cassettes, opened, when a cassette flag was given: its folder and
    /// mode, `[cassettes] ignore` and `keep`, and `secrets` (every value the run hides:
    /// [`Settings::secrets`] and the plan's `${VAR}` values), never written to a
    /// cassette. An error here (a folder that cannot be read, `--record` into a folder
    /// that already holds cassettes, a line that is not an exchange, `--replay` of a
    /// folder that does not exist, an entry that is not a regular file or files over
    /// `MAX_CASSETTE_BYTES`) means the run must not start.
    pub fn open_cassettes(&self, secrets: &Redactor) -> Result<Option<Cassettes>, SettingsError> {
        let Some(flags) = &self.overrides.cassettes else {
            return Ok(None);
        };
        if flags.mode == Mode::Replay && !flags.dir.is_dir() {
            return Err(SettingsError::Cassettes(format!(
                "--replay {}: there is no such folder; record the cassettes first with --record {}",
                flags.dir.display(),
                flags.dir.display()
            )));
        }
        let table = self.config.as_ref().and_then(|c| c.cassettes.as_ref());
        let options = CassetteOptions {
            latency: flags.latency,
            ignore: table.map(|t| t.ignore.clone()).unwrap_or_default(),
            keep: table.map(|t| t.keep.clone()).unwrap_or_default(),
            secrets: secrets.clone(),
            ..CassetteOptions::new(&flags.dir, flags.mode)
        };
        Cassettes::open(options).map(Some).map_err(|e| {
            SettingsError::Cassettes(format!("--{} {}: {e}", flags.flag(), flags.dir.display()))
        })
    }
}

#[cfg(test)]
mod tests {
    use prill_spec::Env;
    use serde_json::json;

    use super::*;
    use crate::Overrides;

    fn settings(dir: &std::path::Path, flags: Option<CassetteFlags>) -> Settings {
        let config = dir.join("prill.toml");
        std::fs::write(
            &config,
            "[cassettes]\nignore = [\"metadata.session\"]\nkeep = [\"trace_id\"]\n",
        )
        .unwrap();
        let overrides = Overrides {
            cassettes: flags,
            ..Overrides::default()
        };
        Settings::load_from(dir, Some(&config), Env::from_process(), overrides).unwrap()
    }

    fn flags(dir: PathBuf, mode: Mode) -> Option<CassetteFlags> {
        Some(CassetteFlags {
            mode,
            dir,
            latency: Latency::Zero,
        })
    }

    /// `[cassettes]` and the run's secrets reach the cassettes' normalization.
    #[test]
    fn the_table_and_the_secrets_shape_what_is_matched_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tapes = dir.path().join("tapes");
        std::fs::create_dir(&tapes).unwrap();
        let settings = settings(dir.path(), flags(tapes.clone(), Mode::Replay));
        let mut secrets = Redactor::default();
        secrets.secret("${MY_KEY}", "sk-settings-secret-1234");
        let cassettes = settings.open_cassettes(&secrets).unwrap().unwrap();
        assert_eq!(cassettes.mode(), Mode::Replay);
        assert_eq!(cassettes.latency(), Latency::Zero);
        assert_eq!(cassettes.dir(), tapes);
        let request = |session: &str, trace: &str| {
            let body = json!({
                "input": "hi sk-settings-secret-1234",
                "metadata": {"session": session},
                "trace_id": trace,
            });
            cassettes
                .normalizer()
                .request("openai", "POST", "https://h/v1/chat", &body, Some(0))
        };
        // `ignore`: the session does not count; `keep`: the trace id does.
        assert_eq!(request("a", "t1"), request("b", "t1"));
        assert_ne!(request("a", "t1"), request("a", "t2"));
        let kept = serde_json::to_string(&request("a", "t1")).unwrap();
        assert!(!kept.contains("sk-settings-secret-1234"), "{kept}");
    }

    #[test]
    fn no_flag_no_cassettes_and_bad_ones_say_which_flag() {
        let dir = tempfile::tempdir().unwrap();
        let none = settings(dir.path(), None);
        assert!(none.open_cassettes(&Redactor::default()).unwrap().is_none());
        let missing = settings(dir.path(), flags(dir.path().join("nope"), Mode::Replay));
        let e = missing.open_cassettes(&Redactor::default()).unwrap_err();
        assert!(e.to_string().contains("--replay"), "{e}");
        assert!(e.to_string().contains("no such folder"), "{e}");
        let held = dir.path().join("held");
        std::fs::create_dir(&held).unwrap();
        let line = json!({
            "cassette_version": 1,
            "request": {"connector": "openai", "endpoint": "POST /v1/chat", "body": null},
            "response": {"status": 200, "chunks": []}
        });
        std::fs::write(held.join("a.jsonl"), format!("{line}\n")).unwrap();
        let record = settings(dir.path(), flags(held.clone(), Mode::Record));
        let e = record.open_cassettes(&Redactor::default()).unwrap_err();
        assert!(e.to_string().starts_with("--record "), "{e}");
        assert!(e.to_string().contains("--re-record"), "{e}");
        // Replaying a folder of good cassettes opens it.
        let replay = settings(dir.path(), flags(held, Mode::ReplayOrRecord));
        assert!(
            replay
                .open_cassettes(&Redactor::default())
                .unwrap()
                .is_some()
        );
    }
}
