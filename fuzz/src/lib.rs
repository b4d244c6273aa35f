//! The entry points of Prill's fuzz targets: what each target does with one input.
//!
//! The targets in `fuzz_targets/` hand AFL's inputs to these functions; the
//! project's own tests replay the corpus in `corpus/` through the same functions
//! (`crates/prill-spec/tests/it/fuzz_corpus.rs` and
//! `crates/prill-connect/tests/connect/fuzz_corpus.rs` include these files by path), so
//! that `cargo test` runs the same code on every input the fuzzers keep. How to run
//! them and what they found: `docs/reliability.md`.

pub mod connect;
pub mod spec;
