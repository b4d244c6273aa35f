//! `prill-app`'s integration tests, one binary: settings resolution, the engine
//! through a `Session`, what a run keeps, limits and the judge. The two `cargo test` harness examples
//! (`quickstart.rs`, `harness_failures.rs`) are binaries of their own: each is its
//! own harness.

mod engine;
mod judge;
mod keep;
mod limits;
mod settings;
