//! [`Shutdown`]: what tells a run to stop (Ctrl-C, SIGTERM, a batch being stopped), as one
//! future every driver selects on. A driver that sees it records what already finished,
//! leaves what was in flight to run again on resume, and ends `interrupted`.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;

/// Resolves when the run must stop.
pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Resolves on Ctrl-C or SIGTERM (never, where signals cannot be watched). The handlers are
/// installed when this is called, not when the future is first polled, so a signal that comes
/// early still stops the run cleanly instead of killing the process.
pub fn on_signal() -> Shutdown {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        Box::pin(async move {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(term) => {}
                () = wait(int) => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Box::pin(async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// Resolves when `stop` turns true: one run of many (a batch's questions) told to stop with
/// the others.
pub fn on_watch(mut stop: watch::Receiver<bool>) -> Shutdown {
    Box::pin(async move {
        if stop.wait_for(|stopped| *stopped).await.is_err() {
            // The sender is gone without a stop: nothing will ever ask to stop.
            std::future::pending::<()>().await;
        }
    })
}

/// Never resolves: a run nothing can stop but its end.
pub fn never() -> Shutdown {
    Box::pin(std::future::pending())
}
