//! The worker process: the part of horst that runs the planner and the referee.
//!
//! A worker announces itself in Redis (`workers:<id>`, refreshed every few seconds with a
//! short expiry), so operators and the API can see which workers are alive; an entry
//! vanishes on its own when its process dies. The job loop (claim one job per free slot,
//! run it on rayon within its time limit, heartbeat the lease, complete it fenced) is built
//! on `horst-queue`.

use std::time::Duration;

use horst_store::Store;
use redis::AsyncCommands;
use tokio::sync::watch;

/// How often a worker refreshes its presence entry, and how long the entry lives.
const PRESENCE_EVERY: Duration = Duration::from_secs(2);
const PRESENCE_TTL_SECONDS: u64 = 10;

/// Who this worker is, as shown to operators.
#[derive(Debug, Clone)]
pub struct WorkerIdentity {
    pub id: String,
    pub slots: u32,
}

impl WorkerIdentity {
    /// `<hostname>-<pid>-<n>`: unique per process, readable in `horst admin status`.
    pub fn new(index: u32, slots: u32) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "host".into());
        WorkerIdentity {
            id: format!("{host}-{}-{index}", std::process::id()),
            slots,
        }
    }
}

/// Runs a worker until `shutdown` turns true.
pub async fn run(store: Store, identity: WorkerIdentity, mut shutdown: watch::Receiver<bool>) {
    tracing::info!(worker = %identity.id, slots = identity.slots, "worker started");
    let key = store.key(&format!("workers:{}", identity.id));
    loop {
        let mut conn = store.conn();
        let announce: redis::RedisResult<()> = conn
            .set_ex(
                &key,
                format!("slots={}", identity.slots),
                PRESENCE_TTL_SECONDS,
            )
            .await;
        if let Err(e) = announce {
            tracing::warn!(worker = %identity.id, error = %e, "cannot announce worker presence");
        }
        tokio::select! {
            _ = tokio::time::sleep(PRESENCE_EVERY) => {}
            _ = shutdown.wait_for(|stop| *stop) => break,
        }
    }
    let mut conn = store.conn();
    let _: redis::RedisResult<()> = conn.del(&key).await;
    tracing::info!(worker = %identity.id, "worker stopped");
}

/// The ids of the workers alive now.
pub async fn live_workers(store: &Store) -> redis::RedisResult<Vec<String>> {
    let mut conn = store.conn();
    let pattern = store.key("workers:*");
    let mut ids: Vec<String> = Vec::new();
    let mut iter: redis::AsyncIter<String> = conn.scan_match(&pattern).await?;
    while let Some(item) = iter.next_item().await {
        let key = item?;
        if let Some(id) = key.strip_prefix(&store.key("workers:")) {
            ids.push(id.to_string());
        }
    }
    ids.sort();
    Ok(ids)
}
