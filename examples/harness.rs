//! The `cargo test` harness as a program: one test per case of a folder, with libtest's
//! arguments (`--list`, a filter, `--exact`, ...). In a project it is a test target
//! with `harness = false`; see `prill_app::harness`.
//!
//! `cargo run -p prill-examples --example harness -- [LIBTEST ARGS]`

use prill_app::harness::{Agents, Harness};

fn main() -> std::process::ExitCode {
    Harness::new("fixtures/quickstart")
        .agents(Agents::Demo)
        .jobs(8)
        .main()
}
