//! [`SettingsError`]: why the settings could not be resolved.

use prill_spec::Report;

/// Why the settings could not give what a run needs.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// `prill.toml` is invalid (its diagnostics say where), or could not be read.
    #[error("{path} is not a valid prill.toml")]
    InvalidConfig {
        /// The file.
        path: String,
        /// Its errors and warnings, for rendering.
        reports: Vec<Report>,
    },
    /// A connector or provider could not be set up (a bad server address, an
    /// unreadable CA certificate, ...).
    #[error(transparent)]
    Connect(#[from] prill_target::ConnectError),
    /// The judge named by `--judge` or `[judge]` cannot be used.
    #[error("{0}")]
    Judge(String),
    /// The cassettes of `--record`/`--replay`/... could not be opened (the message
    /// names the flag, the folder and, for a bad line, the file and line).
    #[error("{0}")]
    Cassettes(String),
    /// The demo agents could not start.
    #[error("cannot start the demo agents: {0}")]
    Demo(String),
}
