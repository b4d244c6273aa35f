//! The async runtime every command runs on, built in one place.

use std::io;

/// The multi-threaded tokio runtime, with its I/O and time drivers, that runs a
/// session, a server or a one-off request. The error says what could not be started.
pub fn runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot start the async runtime: {e}")))
}
