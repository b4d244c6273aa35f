//! The process exit codes, defined in this one place.

/// What `assay` exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitCode(u8);

impl ExitCode {
    /// Everything went well.
    pub const OK: ExitCode = ExitCode(0);
    /// Some tests failed (reserved for `assay run`).
    pub const FAILURES: ExitCode = ExitCode(1);
    /// Invalid input: a test file with problems, a missing path, or a usage error.
    pub const INVALID: ExitCode = ExitCode(2);
    /// Assay itself could not do its job, e.g. it could not write its output.
    pub const ERROR: ExitCode = ExitCode(3);

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
