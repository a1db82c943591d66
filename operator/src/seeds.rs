//! What an API process stores in Redis when it starts, and stores again when Redis has lost
//! it.
//!
//! A Redis that comes back empty (restarted without its AOF or data directory, a
//! `FLUSHALL`, a failover to a replica that had not synced) loses what only a start writes:
//! the built-in levels (the game's level list was empty and `get_level` of a shipped level
//! said it does not exist), the configured admin token (the admin API answered 404 "off")
//! and the stored quota settings. Every process kept running and answering, and none of it
//! came back until an API process was restarted (a fault drill found it, docs/reliability.md,
//! "Faults nobody had tried"). So a marker key is written after the start's seeding; every
//! API process looks for it every `redis.server_check_seconds` and seeds again when it is
//! gone. Each step is idempotent (an admin token is stored once by hash, the quotas only
//! when none are stored, a built-in level only when its revision is missing), so several
//! processes may do it at the same time.

use std::time::Duration;

use horst_config::Config;
use horst_store::Store;
use tokio::sync::watch;

/// The marker's key (under the prefix): present while the data set is the one a start
/// seeded.
const MARKER: &str = "seeded";

/// Stores what a starting API process stores: the configured admin token, the quota
/// settings (when none are stored) and the built-in levels. The first error is returned,
/// after every step was tried.
pub async fn seed(store: &Store, config: &Config, who: &str) -> Result<(), String> {
    let mut first = None;
    if let Err(e) = crate::seed_admin_token(store, &config.gateway.admin_token).await {
        first.get_or_insert(format!("cannot store the admin token: {}", e.message));
    }
    let quotas = horst_queue::Quotas::from_config(config);
    if let Err(e) = horst_queue::seed_quotas(store, &quotas, who).await {
        first.get_or_insert(format!("cannot store the quota settings: {e}"));
    }
    if let Err(e) = crate::publish_shipped(store).await {
        first.get_or_insert(format!("cannot publish the built-in levels: {}", e.message));
    }
    first.map_or(Ok(()), Err)
}

/// Writes the marker: what is in Redis now was seeded.
pub async fn mark(store: &Store) -> Result<(), redis::RedisError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    redis::cmd("SET")
        .arg(store.key(MARKER))
        .arg(now)
        .query_async::<()>(&mut store.conn())
        .await
}

/// Looks for the marker every `every` until `shutdown`; when it is gone (and Redis answers),
/// seeds again and writes it. `marked`: whether this start wrote the marker (when its seeding
/// failed, the first look finishes it, and nothing was lost). A Redis that cannot be reached
/// is not an empty one: the look is simply made again next time.
pub async fn watch(
    store: Store,
    config: std::sync::Arc<Config>,
    every: Duration,
    marked: bool,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    // Whether a marker was seen (then its loss is data lost), and whether this loss was said
    // already (a seeding that keeps failing, on a Redis refusing writes, says it once).
    let (mut marked, mut said) = (marked, false);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        let present: Result<bool, _> = redis::cmd("EXISTS")
            .arg(store.key(MARKER))
            .query_async(&mut store.conn())
            .await;
        match present {
            Ok(true) => {
                (marked, said) = (true, false);
                continue;
            }
            Ok(false) => {}
            Err(_) => continue,
        }
        if !said && marked {
            tracing::error!(
                "Redis has lost horst's data (the marker {} is gone: a restart without its AOF, \
                 a FLUSHALL, or a failover to a replica that had not synced); storing the \
                 built-in levels, the configured admin token and the quota settings again. \
                 Accounts, keys, jobs and sessions that were stored are gone: restore Redis \
                 from a backup to get them back",
                store.key(MARKER)
            );
        } else if !said {
            tracing::info!("storing what this process's start could not store yet");
        }
        said = true;
        match seed(&store, &config, "reseed").await {
            Ok(()) => match mark(&store).await {
                Ok(()) => {
                    tracing::info!("stored again what a start stores");
                    (marked, said) = (true, false);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot write the seeding marker; trying again")
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot store again what a start stores; trying again")
            }
        }
    }
}
