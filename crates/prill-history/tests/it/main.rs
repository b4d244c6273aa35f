//! `prill-history`'s integration tests, one binary: the index and `compare`.

mod compare;
mod index;
