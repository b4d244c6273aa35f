//! Runnable programs that drive the Assay crates as a library, each a file of this
//! folder, run with `cargo run -p assay-examples --example NAME` from the workspace's
//! root (`tests/examples.rs` runs every one and checks what it prints):
//!
//! | example | what it shows | crates |
//! |---|---|---|
//! | `validate` | validate spec files with `assay-spec` alone, every problem with its position | `assay-spec` |
//! | `junit` | run a folder through the settings layer (`assay.toml`, the environment) against the demo agents and print a JUnit report | `assay-settings`, `assay-report` |
//! | `suite` | `run_test_suite` with a custom test case, two evaluators (one with a threshold, one with metadata), grid search and both concurrency limits | `assay-run`, `assay-check` |
//! | `in_process` | a Rust function as the agent under test, reached over `direct` | `assay-target`, `assay-run` |
//! | `reporter` | a reporter of your own on the engine's event stream | `assay-run`, `assay-report` |
//! | `harness` | the `cargo test` harness: one test per case of a folder | `assay-settings` |
