//! `prill-app`'s integration tests, one binary: settings resolution, the engine
//! through a `Session`, what a run keeps, limits, the judge and `--top-up`. The two `cargo test` harness examples
//! (`quickstart.rs`, `harness_failures.rs`) are binaries of their own: each is its
//! own harness.

mod engine;
mod judge;
mod keep;
mod limits;
mod settings;
mod top_up;
