//! Finding the Redis a command uses: the configured URL, or the private server of the data
//! directory (attached to if another horst process runs it, started otherwise).

use std::sync::{Arc, Mutex};

use horst_config::Config;
use horst_redis_process::PrivateRedis;

/// The Redis this process uses, and the private server if there is one.
pub struct RedisHandle {
    pub url: String,
    pub private: Option<Arc<Mutex<PrivateRedis>>>,
}

/// Resolves the Redis to use. Runs on the main thread on purpose: the private server is
/// tied to the thread that starts it (it gets SIGTERM when that thread dies), and the main
/// thread lives exactly as long as horst.
///
/// `announce` prints the one-line notice about the private server (stdout for the
/// long-running commands, stderr for admin commands whose stdout may be JSON).
pub fn resolve(config: &Config, announce: fn(&str)) -> Result<RedisHandle, String> {
    if !config.uses_private_redis() {
        return Ok(RedisHandle {
            url: config.redis.url.clone(),
            private: None,
        });
    }
    let private = PrivateRedis::attach_or_start(&config.data_dir, &config.redis.server_binary)
        .map_err(|e| e.to_string())?;
    if private.is_owner() {
        announce(&format!(
            "horst: private redis-server started (pid {}), data in {}, AOF on",
            private.pid().unwrap_or(0),
            private.dir().display()
        ));
    } else {
        announce(&format!(
            "horst: attached to the private redis-server of {} (another horst process runs it)",
            private.dir().display()
        ));
    }
    Ok(RedisHandle {
        url: private.url(),
        private: Some(Arc::new(Mutex::new(private))),
    })
}

/// The Redis an operator command uses: the configured URL, or the private server of the
/// data directory *if one is running*. Never starts one: an admin command against a new,
/// empty store would answer as if it were the real one.
pub fn resolve_existing(config: &Config) -> Result<RedisHandle, String> {
    if !config.uses_private_redis() {
        return Ok(RedisHandle {
            url: config.redis.url.clone(),
            private: None,
        });
    }
    let data = std::path::absolute(&config.data_dir).unwrap_or(config.data_dir.clone());
    match PrivateRedis::attach(&data) {
        Some(private) => Ok(RedisHandle {
            url: private.url(),
            private: Some(Arc::new(Mutex::new(private))),
        }),
        None => Err(format!(
            "no running horst store found: no private redis-server answers under {}. Fix: run the command with the --data DIR of the running `horst up`/`horst api`, or with its --config or --redis URL (horst admin never starts a store of its own)",
            data.join("redis").display()
        )),
    }
}

/// Stops the private server if this process started it.
pub fn stop_private(handle: &RedisHandle) {
    if let Some(private) = &handle.private {
        let mut private = private.lock().unwrap_or_else(|e| e.into_inner());
        if private.is_owner() {
            tracing::info!("stopping the private redis-server");
            if let Err(e) = private.stop(std::time::Duration::from_secs(10)) {
                tracing::error!(error = %e, "could not stop the private redis-server");
            }
        }
    }
}
