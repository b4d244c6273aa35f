//! The process exit codes, defined in this one place.

/// What `prill` exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitCode(u8);

impl ExitCode {
    /// Everything went well.
    pub const OK: ExitCode = ExitCode(0);
    /// Some tests failed: an agent answered wrongly.
    pub const FAILURES: ExitCode = ExitCode(1);
    /// Invalid input: a test file with problems, a missing path, or a usage error.
    pub const INVALID: ExitCode = ExitCode(2);
    /// Errors and no failures: an agent could not be reached, timed out or broke the
    /// protocol, or Prill itself could not do its job (e.g. write its output).
    pub const ERROR: ExitCode = ExitCode(3);
    /// The run was cancelled with Ctrl-C; the partial reports were written.
    pub const CANCELLED: ExitCode = ExitCode(130);
    /// Ended by SIGTERM at once: a second stop signal, or one once the run was over
    /// (`signals.rs`).
    pub const TERMINATED: ExitCode = ExitCode(143);

    /// The numeric code.
    pub fn code(self) -> u8 {
        self.0
    }

    /// The code for a clap error: 0 for `--help` and `--version`, [`ExitCode::INVALID`] otherwise.
    pub(crate) fn from_clap(error: &clap::Error) -> ExitCode {
        if error.use_stderr() {
            ExitCode::INVALID
        } else {
            ExitCode::OK
        }
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code.0)
    }
}
