//! CPU-heavy work of a request (parsing a map of up to 256 KB, drawing a window as a PNG)
//! runs on tokio's blocking threads, so the async runtime's threads keep serving every other
//! request meanwhile. With `server.runtime_threads = 1` the process has one such thread, and
//! a map parsed on it would hold up every long-poll and session request of the process.

use crate::error::ToolError;

/// Runs `work` on a blocking thread and waits for it without holding the runtime's thread.
pub(crate) async fn off_runtime<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ToolError::internal)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// How many times a task that only yields ran while `work` was awaited, on a runtime of
    /// one thread: 0 when `work` ran on that thread from start to end (nothing else could),
    /// more when it waited on a blocking thread. Counts turns, not time.
    pub(crate) fn turns_of_others_during<F, Fut>(work: F) -> u64
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future,
    {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let turns = Arc::new(AtomicU64::new(0));
            let ticker = tokio::spawn({
                let turns = turns.clone();
                async move {
                    loop {
                        turns.fetch_add(1, Ordering::Relaxed);
                        tokio::task::yield_now().await;
                    }
                }
            });
            // The ticker has not run yet: the only thread is here.
            let before = turns.load(Ordering::Relaxed);
            let _ = work().await;
            let during = turns.load(Ordering::Relaxed) - before;
            ticker.abort();
            during
        })
    }

    #[test]
    fn off_runtime_lets_other_tasks_run() {
        let during = turns_of_others_during(|| {
            super::off_runtime(|| std::thread::sleep(std::time::Duration::from_millis(50)))
        });
        assert!(during > 0, "nothing else ran while the work waited");
    }
}
