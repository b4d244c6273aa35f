//! `prill-spec`'s integration tests, one binary: every fixture loaded, located,
//! converted and checked against the schemas, the hostile inputs, the ids, the
//! conformance files and the fuzz corpus.

mod conformance;
mod fixtures;
mod for_cases;
mod fuzz_corpus;
mod hostile;
mod ids;
mod locations;
mod roundtrip;
mod substitution_sources;
mod support;
