//! `prill-history`'s integration tests, one binary: the index, what the runs folder may
//! hold that is not a run, processes that index at once, `compare` and its `--top-up`.

mod compare;
mod concurrent;
mod hostile;
mod index;
mod top_up;
