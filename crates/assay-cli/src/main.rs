//! The `assay` binary; everything lives in the `assay_cli` library.

fn main() -> std::process::ExitCode {
    assay_cli::main().into()
}
