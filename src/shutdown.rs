//! One process's shutdown: a [`CancellationToken`] every part stops on and a [`TaskTracker`]
//! every task of the process runs in, so "the process has stopped" means "every task has
//! ended", and whatever runs after [`Shutdown::drained`] (stopping the private Redis) runs
//! last by construction, not by a sleep.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Cheap to clone; every clone is the same shutdown.
#[derive(Clone)]
pub struct Shutdown {
    token: CancellationToken,
    tracker: TaskTracker,
    /// The token as a `watch` flag, for the crates whose loops take one.
    flag: watch::Receiver<bool>,
}

impl Shutdown {
    /// A shutdown that starts when [`Shutdown::trigger`] is called.
    pub fn new() -> Shutdown {
        let token = CancellationToken::new();
        let (tx, flag) = watch::channel(false);
        // Untracked on purpose: it ends with the token, and tracking it would make the
        // tracker wait for itself.
        let cancelled = token.clone();
        tokio::spawn(async move {
            cancelled.cancelled().await;
            let _ = tx.send(true);
        });
        Shutdown {
            token,
            tracker: TaskTracker::new(),
            flag,
        }
    }

    /// A shutdown that starts when `signal` turns true (or its sender is dropped): how the
    /// binary's signal handler, the tests and the benchmarks stop an [`App`](crate::App).
    pub fn on(mut signal: watch::Receiver<bool>) -> Shutdown {
        let shutdown = Shutdown::new();
        let token = shutdown.token.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = signal.wait_for(|stop| *stop) => {}
                _ = token.cancelled() => return,
            }
            token.cancel();
        });
        shutdown
    }

    /// Starts the shutdown.
    pub fn trigger(&self) {
        self.token.cancel();
    }

    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// The shutdown as a `watch` flag (true once started), for loops that take one.
    pub fn flag(&self) -> watch::Receiver<bool> {
        self.flag.clone()
    }

    /// Runs `task` in the process's tracker: [`Shutdown::drained`] waits for it.
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(task)
    }

    /// Waits until the shutdown has started and every tracked task has ended, at most
    /// `limit` after the start (a task that does not end is reported, not waited for
    /// forever). Returns how many tasks were still running then.
    pub async fn drained(&self, limit: Duration) -> usize {
        self.token.cancelled().await;
        self.tracker.close();
        if tokio::time::timeout(limit, self.tracker.wait())
            .await
            .is_ok()
        {
            return 0;
        }
        let left = self.tracker.len();
        tracing::warn!(
            tasks = left,
            limit_seconds = limit.as_secs(),
            "tasks still running after the shutdown's limit; stopping without them"
        );
        left
    }
}

impl From<watch::Receiver<bool>> for Shutdown {
    fn from(signal: watch::Receiver<bool>) -> Shutdown {
        Shutdown::on(signal)
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drained_waits_for_every_tracked_task_and_no_longer_than_the_limit() {
        let (tx, rx) = watch::channel(false);
        let shutdown = Shutdown::on(rx);
        let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
        for i in 0..3u64 {
            let token = shutdown.token().clone();
            let done = done_tx.clone();
            shutdown.spawn(async move {
                token.cancelled().await;
                tokio::time::sleep(Duration::from_millis(20 * i)).await;
                let _ = done.send(i);
            });
        }
        let mut flag = shutdown.flag();
        assert!(!*flag.borrow());
        tx.send(true).unwrap();
        assert_eq!(shutdown.drained(Duration::from_secs(30)).await, 0);
        let mut ended = 0;
        while done_rx.try_recv().is_ok() {
            ended += 1;
        }
        assert_eq!(ended, 3, "drained returned before every task ended");
        flag.wait_for(|s| *s).await.unwrap();

        // A task that ignores the shutdown is reported after the limit.
        let stuck = Shutdown::new();
        stuck.spawn(std::future::pending::<()>());
        stuck.trigger();
        assert_eq!(stuck.drained(Duration::from_millis(50)).await, 1);
    }
}
