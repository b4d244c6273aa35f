//! The integration tests of the assertion engine, as one test binary.

mod conformance;
mod evaluators;
mod gist;
mod properties;
mod support;
mod table;
mod trajectory_conformance;
