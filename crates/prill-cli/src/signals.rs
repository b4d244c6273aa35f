//! Stop signals (Ctrl-C, and SIGTERM on unix), listened for from the moment
//! [`listen`] returns, so that a signal sent right after a "press ctrl-c" line is never
//! lost to the default handler.

use std::future::Future;

/// Starts listening now; the future resolves on the first stop signal.
pub(crate) fn listen() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(interrupt) => {}
                () = wait(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Cancels `token` on the first stop signal, saying so on stderr; abort the returned
/// task once the run is over.
pub(crate) fn cancel_on_ctrl_c(
    token: tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let stop = listen();
    tokio::spawn(async move {
        stop.await;
        crate::output::stderr("\ncancelling: no new cases start; writing the reports\n");
        token.cancel();
    })
}
