//! The operator's overview: accounts, today's jobs and seconds, the queue, workers, storage,
//! board reads, page views and unread messages.

use std::collections::BTreeMap;

use serde::Serialize;

use horst_gateway::{board, contact, ToolError};
use horst_store::Store;

impl std::fmt::Display for Overview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

/// The operator's overview (`horst admin overview`, `GET /api/admin/overview`, the `/admin`
/// page's first card).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub accounts: AccountCounts,
    pub board_reads: BoardReads,
    pub jobs_today: JobsToday,
    pub page_views: horst_gateway::page_views::Summary,
    pub queue: QueueDepth,
    pub seconds: horst_queue::SecondsToday,
    pub seconds_charged_today: u64,
    pub seconds_used_today: u64,
    pub storage_used_bytes: u64,
    pub unread_messages: u64,
    pub workers: Workers,
}

/// Accounts by trust tier; blocked accounts counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AccountCounts {
    pub blocked: u64,
    pub trust0: u64,
    pub trust1: u64,
    pub trust2: u64,
}

/// Board thread reads: ever, today (UTC), and when the last was (RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoardReads {
    pub last: Option<String>,
    pub today: u64,
    pub total: u64,
}

/// Today's jobs by kind (see `horst_queue::DayStats`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobsToday {
    pub admitted: BTreeMap<String, u64>,
    pub finished: BTreeMap<String, BTreeMap<String, u64>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueDepth {
    pub oldest_waiting_ms: Option<u64>,
    pub waiting: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Workers {
    pub ids: Vec<String>,
    pub live: usize,
}

/// Accounts by tier (blocked apart), today's jobs and seconds (with the trust-0 share), the
/// queue, live workers, storage, board reads, HTML page views and unread messages.
pub async fn overview(store: &Store, queue: &horst_queue::Queue) -> Result<Overview, ToolError> {
    let pattern = store.key("account:*");
    let keys = store.scan_keys("account:*").await?;
    let mut tiers: BTreeMap<String, u64> = BTreeMap::new();
    let mut blocked = 0u64;
    for k in keys
        .iter()
        .filter(|k| k.matches(':').count() == pattern.matches(':').count())
    {
        let v: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(k)
            .arg(&["trust", "blocked"])
            .query_async(&mut store.conn())
            .await?;
        if v.get(1).cloned().flatten().as_deref() == Some("1") {
            blocked += 1;
        } else {
            let t = v.first().cloned().flatten().unwrap_or_else(|| "0".into());
            *tiers.entry(format!("trust{t}")).or_default() += 1;
        }
    }
    let (total, today, last) = board::read_stats(store).await?;
    let now = store.now_ms().await?;
    let jobs = horst_queue::day_stats(store, now)
        .await
        .map_err(|e| ToolError::internal(e.to_string()))?;
    let internal = |e: horst_queue::QueueError| ToolError::internal(e.to_string());
    let seconds = queue.seconds_today().await.map_err(internal)?;
    let (waiting, oldest_ms) = queue.depth().await.map_err(internal)?;
    let workers = horst_queue::live_workers(store).await?;
    let tier = |t: &str| tiers.get(t).copied().unwrap_or(0);
    Ok(Overview {
        accounts: AccountCounts {
            blocked,
            trust0: tier("trust0"),
            trust1: tier("trust1"),
            trust2: tier("trust2"),
        },
        board_reads: BoardReads { last, today, total },
        jobs_today: JobsToday {
            admitted: jobs.admitted,
            finished: jobs.finished,
        },
        page_views: horst_gateway::page_views::summary(store).await?,
        queue: QueueDepth {
            oldest_waiting_ms: oldest_ms,
            waiting,
        },
        seconds,
        seconds_charged_today: jobs.seconds_charged,
        seconds_used_today: jobs.seconds_used,
        storage_used_bytes: horst_gateway::revisions::storage_total(store).await?,
        unread_messages: contact::unread_count(store).await?,
        workers: Workers {
            live: workers.len(),
            ids: workers,
        },
    })
}
