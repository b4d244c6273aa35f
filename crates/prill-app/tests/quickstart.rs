//! `cargo test` runs the quickstart's spec files through the harness, one test per case,
//! against the built-in demo agents: exactly how a user wires a folder of agent tests.

fn main() -> std::process::ExitCode {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/quickstart");
    prill_app::harness::main(dir, prill_app::harness::Agents::Demo)
}
