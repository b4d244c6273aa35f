//! Runnable programs that drive the Prill crates as a library, each a file of this
//! folder, run with `cargo run -p prill-examples --example NAME` from the workspace's
//! root (`tests/examples.rs` runs every one and checks what it prints):
//!
//! | example | what it shows | crates |
//! |---|---|---|
//! | `validate` | validate spec files with `prill-spec` alone, every problem with its position | `prill-spec` |
//! | `junit` | run a folder through the settings layer (`prill.toml`, the environment) against the demo agents and print a JUnit report | `prill-app`, `prill-report` |
//! | `suite` | `run_test_suite` with a custom test case, two evaluators (one with a threshold, one with metadata), grid search and both concurrency limits | `prill-run`, `prill-check` |
//! | `in_process` | a Rust function as the agent under test, reached over `direct` | `prill-target`, `prill-run` |
//! | `reporter` | a reporter of your own on the engine's event stream | `prill-run`, `prill-report` |
//! | `harness` | the `cargo test` harness: one test per case of a folder | `prill-app` |
