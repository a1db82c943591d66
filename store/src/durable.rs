//! The connections durable writes run on.
//!
//! `WAIT` blocks the connection it is sent on in Redis until the replicas acknowledge or its
//! timeout passes, and it counts the writes of that connection only. On the process's one
//! shared connection ([`crate::Store::conn`]) every other command of the process (heartbeats,
//! presence, reads, the readiness PING) would queue behind it: with a replica frozen, a
//! `replica_ack_timeout_ms` per durable write in flight. So a durable write and its `WAIT`
//! run together on a connection of their own, from a small pool: created when first needed,
//! dropped when a call on it failed or was cut short, and made again on the new primary
//! after a failover. The pool also caps how many durable writes of a process are in flight.
//!
//! Without durability (`redis.min_replica_acks = 0`) [`crate::Store::durable`] hands out the
//! shared connection and no `WAIT` is sent: nothing changes.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, Pipeline, RedisFuture, Value};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cluster::Conn;
use crate::Shared;

/// Durable writes in flight at once per process, each on its own connection.
pub const DURABLE_CONNS: usize = 4;

pub(crate) struct Pool {
    permits: Arc<Semaphore>,
    idle: std::sync::Mutex<Vec<Idle>>,
}

struct Idle {
    conn: Conn,
    /// The primary's generation it was made for ([`Shared::moved`]).
    generation: u64,
}

impl Pool {
    pub(crate) fn new() -> Pool {
        Pool {
            permits: Arc::new(Semaphore::new(DURABLE_CONNS)),
            idle: std::sync::Mutex::new(Vec::new()),
        }
    }
}

/// A connection for a durable write and its `WAIT` ([`crate::Store::durable`]); back to the
/// pool when dropped, unless a call on it failed or was cut short.
pub struct DurableConn {
    conn: Conn,
    /// None: the shared connection (no durability).
    lease: Option<Lease>,
}

struct Lease {
    shared: Arc<Shared>,
    generation: u64,
    /// A call failed on it, or is in flight (a dropped future): a `WAIT` may still block it
    /// in Redis, so it is not handed out again.
    spoilt: bool,
    _permit: OwnedSemaphorePermit,
}

impl DurableConn {
    pub(crate) fn shared(conn: Conn) -> DurableConn {
        DurableConn { conn, lease: None }
    }

    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.conn, Conn::Cluster(_))
    }

    /// `cmd` to the node `route` names (on a cluster; on one server, to it).
    pub(crate) async fn route_command(
        &mut self,
        cmd: Cmd,
        route: redis::cluster_routing::RoutingInfo,
    ) -> redis::RedisResult<Value> {
        let Conn::Cluster(c) = &mut self.conn else {
            return self.req_packed_command(&cmd).await;
        };
        if let Some(lease) = &mut self.lease {
            lease.spoilt = true;
        }
        let reply = c.route_command(cmd, route).await;
        if let Some(lease) = &mut self.lease {
            lease.spoilt = reply.as_ref().is_err_and(spoils);
        }
        reply
    }

    /// Takes an idle connection to the current primary, or makes one; waits while
    /// [`DURABLE_CONNS`] are taken.
    pub(crate) async fn take(shared: &Arc<Shared>) -> redis::RedisResult<DurableConn> {
        let permit = shared
            .durable
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| {
                redis::RedisError::from((redis::ErrorKind::Client, "the durable pool is closed"))
            })?;
        // The generation before the client: a primary swapped in between is then made for
        // an older generation and dropped when returned, never kept as the newer one.
        let generation = *shared.moved.borrow();
        let reused = {
            let mut idle = shared
                .durable
                .idle
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            idle.retain(|c| c.generation == generation);
            idle.pop()
        };
        let conn = match reused {
            Some(idle) => idle.conn,
            None => connect(shared).await?,
        };
        Ok(DurableConn {
            conn,
            lease: Some(Lease {
                shared: shared.clone(),
                generation,
                spoilt: false,
                _permit: permit,
            }),
        })
    }
}

/// A new connection to the primary as it is now (on a cluster: a cluster connection of its
/// own), patient enough for the longest `WAIT`.
async fn connect(shared: &Shared) -> redis::RedisResult<Conn> {
    let wait = Duration::from_millis(shared.durability.timeout_ms);
    let (client, cluster) = {
        let p = shared.primary.read().unwrap_or_else(|e| e.into_inner());
        (p.client.clone(), p.cluster.clone())
    };
    if let Some(nodes) = cluster {
        let client = crate::primary::cluster_client(&nodes, wait)?;
        return Ok(Conn::Cluster(client.get_async_connection().await?));
    }
    let config = crate::primary::manager_config()
        .set_response_timeout(Some(crate::primary::RESPONSE_TIMEOUT + wait));
    Ok(Conn::One(
        ConnectionManager::new_with_config(client, config).await?,
    ))
}

impl Drop for DurableConn {
    fn drop(&mut self) {
        let Some(lease) = &self.lease else { return };
        if lease.spoilt || *lease.shared.moved.borrow() != lease.generation {
            return;
        }
        let mut idle = lease
            .shared
            .durable
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        idle.push(Idle {
            conn: self.conn.clone(),
            generation: lease.generation,
        });
    }
}

/// Whether an error leaves the connection in doubt (no reply, or one not understood); a
/// server's error reply (a script's, `OOM`, `NOREPLICAS`) does not.
fn spoils(e: &redis::RedisError) -> bool {
    use redis::ErrorKind;
    e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::Io | ErrorKind::Parse | ErrorKind::ClusterConnectionNotFound
        )
}

impl ConnectionLike for DurableConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        let Some(lease) = &mut self.lease else {
            return self.conn.req_packed_command(cmd);
        };
        lease.spoilt = true;
        Box::pin(async move {
            let reply = self.conn.req_packed_command(cmd).await;
            if let Some(lease) = &mut self.lease {
                lease.spoilt = reply.as_ref().is_err_and(spoils);
            }
            reply
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let Some(lease) = &mut self.lease else {
            return self.conn.req_packed_commands(pipeline, offset, count);
        };
        lease.spoilt = true;
        Box::pin(async move {
            let reply = self.conn.req_packed_commands(pipeline, offset, count).await;
            if let Some(lease) = &mut self.lease {
                lease.spoilt = reply.as_ref().is_err_and(spoils);
            }
            reply
        })
    }

    fn get_db(&self) -> i64 {
        self.conn.get_db()
    }
}
