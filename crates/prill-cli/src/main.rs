//! The `prill` binary; everything lives in the `prill_cli` library.
//!
//! The binary allocates with mimalloc: on a 10,000-test run glibc's malloc, free and
//! `malloc_consolidate` took about a third of the CPU (docs/performance.md has the
//! measurements; `--no-default-features` builds with the system's allocator to compare).
//! A library leaves the allocator to the program that embeds it.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    prill_cli::main().into()
}
