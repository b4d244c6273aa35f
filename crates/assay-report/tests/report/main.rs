//! The reporters fed hand-built event streams: a unit that passes, one that fails, one
//! that errors and one that was skipped.

mod fanout;
mod fixtures;
mod human;
mod json;
mod junit;
mod markdown;
mod output;
