//! Redis Cluster: hash slots, the slot groups horst's keys are named in, and the connection
//! that is either one server's or a cluster's.
//!
//! On a cluster every script's KEYS (and every transaction's keys) must share a hash slot.
//! horst's keys are named so that they do, with hash tags (`{q}`: the slot is the CRC16 of
//! the text between the first `{` and the `}` after it):
//! - [`Group::Queue`] (`{q}`): the queue's keys: admission and claim check and charge
//!   across all of them in one step;
//! - [`Group::Records`] (`{g}`): accounts, keys, revisions, levels, the board, contact notes,
//!   page views, switches, the audit trail and the identity keys: their scripts join them
//!   (a built-in level's publish writes its owner's account with the revision, a board write
//!   checks the writer's quotas), and they are low-volume;
//! - session buckets ([`BUCKETS`] tags `{s0-..}` .. `{s11-..}`, chosen so their slots spread
//!   evenly over 0..16383): a session's keys, and the open-sessions set and the delayed set
//!   of its bucket, share the bucket's slot; the clock firer and `/available` read every
//!   bucket;
//! - keys that no script joins with another (burst limits) carry no tag and spread over all
//!   slots ([`crate::Store::key_alone`]).
//!
//! On one server (`redis.url` or Sentinel) the names carry no tag and there is one bucket, so
//! the names are the ones horst has always stored: an upgrade moves no data. (Moving a
//! single-server deployment's data to a cluster is a copy with new names, not built here.)

use std::sync::OnceLock;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// How many buckets the sessions' keys spread over on a cluster (one on one server). Twelve
/// divides evenly over 2, 3, 4 and 6 primaries of equal slot ranges.
pub const BUCKETS: usize = 12;

/// The slot groups of horst's keys on a cluster (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Queue,
    Records,
}

impl Group {
    pub fn tag(self) -> &'static str {
        match self {
            Group::Queue => "q",
            Group::Records => "g",
        }
    }
}

/// The hash slot of `key` as Redis Cluster computes it: CRC16 (XMODEM) of the hash tag if
/// the key has a non-empty one, else of the whole key, modulo 16384.
pub fn slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) % 16384
}

fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= (byte as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The hash tag of bucket `b` (without braces): `s<b>-<n>` with the smallest `n` whose slot
/// lies in the bucket's twelfth of the slot range, so the buckets spread evenly over
/// primaries that split the range evenly.
pub fn bucket_tag(b: usize) -> &'static str {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        (0..BUCKETS)
            .map(|b| {
                let (low, high) = (b * 16384 / BUCKETS, (b + 1) * 16384 / BUCKETS);
                (0u32..)
                    .map(|n| format!("s{b}-{n}"))
                    .find(|t| (low..high).contains(&(slot(t.as_bytes()) as usize)))
                    .unwrap_or_else(|| format!("s{b}"))
            })
            .collect()
    });
    &tags[b % BUCKETS]
}

/// The bucket of an id (FNV-1a of its bytes): stable across processes and versions.
pub fn bucket_of(id: &str, buckets: usize) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in id.as_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % buckets.max(1) as u64) as usize
}

/// The store's connection: one server's (reconnecting) or a cluster's (routing each command
/// and script by its keys, following failovers and slot moves). Cheap to clone.
#[derive(Clone)]
pub enum Conn {
    One(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::One(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::One(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::One(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

/// The primaries' addresses (`host`, `port`) from `CLUSTER SLOTS`.
pub(crate) async fn primaries(
    conn: &mut ClusterConnection,
) -> redis::RedisResult<Vec<(String, u16)>> {
    let slots: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query_async(conn).await?;
    let mut out: Vec<(String, u16)> = Vec::new();
    for range in slots {
        let Value::Array(parts) = range else { continue };
        let Some(Value::Array(node)) = parts.get(2) else {
            continue;
        };
        let host: Option<String> = node
            .first()
            .and_then(|v| redis::from_redis_value_ref(v).ok());
        let port: Option<u16> = node
            .get(1)
            .and_then(|v| redis::from_redis_value_ref(v).ok());
        if let (Some(host), Some(port)) = (host, port) {
            if !out.contains(&(host.clone(), port)) {
                out.push((host, port));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_redis_clusters() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"{user1000}.following"), slot(b"{user1000}.followers"));
        assert_eq!(slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_ne!(
            slot(b"foo{}{bar}"),
            slot(b"bar"),
            "an empty tag hashes the whole key"
        );
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(slot(b"horst:{q}job:1"), slot(b"q"));
    }

    #[test]
    fn buckets_spread_evenly_over_the_slots() {
        for b in 0..BUCKETS {
            let s = slot(bucket_tag(b).as_bytes()) as usize;
            assert!(
                s >= b * 16384 / BUCKETS && s < (b + 1) * 16384 / BUCKETS,
                "{b}: {s}"
            );
        }
        let mut counts = [0usize; BUCKETS];
        for i in 0..12_000 {
            counts[bucket_of(&format!("session-{i}"), BUCKETS)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(bucket_of("anything", 1), 0);
    }
}
