//! The Lua scripts of agent accounts and keys (`identity/lua/`, each file's header documents
//! its KEYS, ARGV and reply), declared in the store's script registry, and their replies as
//! types.

use horst_store::lua;
use horst_store::script::{Argv, Decl, Script, Writes};
use redis::{FromRedisValue, ParsingError, Value};

/// `lua/account_create.lua`: an operator-made account survives a failover.
pub(crate) static ACCOUNT_CREATE: Script<AccountCreated> = Script::new(Decl {
    file: lua!("lua/account_create.lua"),
    keys: 1,
    argv: Argv::Exactly(3),
    writes: Writes::Durable,
});

/// `lua/key_create.lua`: a key shown once survives a failover.
pub(crate) static KEY_CREATE: Script<KeyCreated> = Script::new(Decl {
    file: lua!("lua/key_create.lua"),
    keys: 4,
    argv: Argv::Exactly(7),
    writes: Writes::Durable,
});

/// `lua/agent_create.lua`: a self-service account and its key survive a failover.
pub(crate) static AGENT_CREATE: Script<AgentCreated> = Script::new(Decl {
    file: lua!("lua/agent_create.lua"),
    keys: 6,
    argv: Argv::Exactly(10),
    writes: Writes::Durable,
});

pub(crate) fn scripts() -> [&'static dyn horst_store::script::Registered; 3] {
    [&ACCOUNT_CREATE, &KEY_CREATE, &AGENT_CREATE]
}

fn unexpected(script: &str, v: &impl std::fmt::Debug) -> ParsingError {
    ParsingError::from(format!("unexpected reply of {script}: {v:?}"))
}

/// Implements `FromRedisValue` for a reply enum from a conversion of a plain Rust value.
macro_rules! reply {
    ($ty:ty, $raw:ty, $script:literal, |$r:ident| $body:expr) => {
        impl FromRedisValue for $ty {
            fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
                let $r: $raw = redis::from_redis_value(v)?;
                let parsed: Option<$ty> = $body;
                parsed.ok_or_else(|| unexpected($script, &$r))
            }
        }
    };
}

/// `account_create.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccountCreated {
    Created,
    Exists,
}
reply!(AccountCreated, i64, "account_create", |r| match r {
    1 => Some(AccountCreated::Created),
    0 => Some(AccountCreated::Exists),
    _ => None,
});

/// `key_create.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyCreated {
    Created,
    TooManyKeys,
    NoAccount,
    PrefixTaken,
}
reply!(KeyCreated, i64, "key_create", |r| match r {
    1 => Some(KeyCreated::Created),
    0 => Some(KeyCreated::TooManyKeys),
    -1 => Some(KeyCreated::NoAccount),
    -2 => Some(KeyCreated::PrefixTaken),
    _ => None,
});

/// `agent_create.lua`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentCreated {
    Created { now_ms: u64 },
    NetworkCap { wait_ms: u64 },
    TotalCap { wait_ms: u64 },
    Collision,
}
reply!(AgentCreated, (String, i64), "agent_create", |r| {
    let n = r.1.max(0) as u64;
    match r.0.as_str() {
        "ok" => Some(AgentCreated::Created { now_ms: n }),
        "network_cap" => Some(AgentCreated::NetworkCap { wait_ms: n }),
        "daily_cap" => Some(AgentCreated::TotalCap { wait_ms: n }),
        "collision" => Some(AgentCreated::Collision),
        _ => None,
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    /// A client on a cluster sends a script again when its answer did not come (a timeout, a
    /// cut connection), though Redis may have run it: the second run of a creation finds what
    /// the first made and answers as it did, counting nothing twice (it answered a collision
    /// and the caller made a second account and key, or "prefix taken", or the key cap).
    #[tokio::test]
    async fn a_creation_run_twice_makes_one_thing_and_answers_as_the_first() {
        let redis = horst_testkit::RedisServer::start();
        let store = horst_store::Store::connect(&redis.url(), "t:")
            .await
            .unwrap();
        let agent = || async {
            AGENT_CREATE
                .call(&store)
                .key(store.key("agentkeys:net:n"))
                .key(store.key("agentkeys:all"))
                .key(store.key("account:agent-1"))
                .key(store.key("account:agent-1:keys"))
                .key(store.key("key:h1"))
                .key(store.key("keyprefix:p1"))
                .arg(86_400_000u64)
                .arg(1u32)
                .arg(100u32)
                .arg("m1")
                .arg("agent-1")
                .arg("")
                .arg("h1")
                .arg("id1")
                .arg("p1")
                .arg("")
                .run()
                .await
                .unwrap()
        };
        let first = agent().await;
        assert!(matches!(first, AgentCreated::Created { .. }), "{first:?}");
        // The network's cap is 1 and now used: only the own-write check lets it through.
        assert_eq!(agent().await, first);
        let counted: u64 = redis::cmd("ZCARD")
            .arg(store.key("agentkeys:all"))
            .query_async(&mut store.conn())
            .await
            .unwrap();
        assert_eq!(counted, 1);

        let key = |hash: &'static str, prefix: &'static str| {
            let store = &store;
            async move {
                KEY_CREATE
                    .call(store)
                    .key(store.key("account:agent-1"))
                    .key(store.key("account:agent-1:keys"))
                    .key(store.key(&format!("key:{hash}")))
                    .key(store.key(&format!("keyprefix:{prefix}")))
                    .arg(hash)
                    .arg("id2")
                    .arg(prefix)
                    .arg("agent-1")
                    .arg("")
                    .arg(1u64)
                    .arg(2u32)
                    .run()
                    .await
                    .unwrap()
            }
        };
        // The second key fills the cap of 2; sent again, it is the same key, not "at the cap".
        assert_eq!(key("h2", "p2").await, KeyCreated::Created);
        assert_eq!(key("h2", "p2").await, KeyCreated::Created);
        let keys: u64 = redis::cmd("SCARD")
            .arg(store.key("account:agent-1:keys"))
            .query_async(&mut store.conn())
            .await
            .unwrap();
        assert_eq!(keys, 2);
        // Another key is one too many.
        assert_eq!(key("h3", "p3").await, KeyCreated::TooManyKeys);
    }

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn replies_parse_into_their_variants_and_refuse_the_unknown() {
        let v = Value::Array(vec![bulk("network_cap"), Value::Int(1500)]);
        assert_eq!(
            AgentCreated::from_redis_value(v).unwrap(),
            AgentCreated::NetworkCap { wait_ms: 1500 }
        );
        assert!(KeyCreated::from_redis_value(Value::Int(7)).is_err());
        assert_eq!(
            AccountCreated::from_redis_value(Value::Int(0)).unwrap(),
            AccountCreated::Exists
        );
    }
}
