//! Identity's Lua scripts (`identity/lua/`, each file's header documents its KEYS, ARGV and
//! reply) and their replies as types. Each is built once per process and run by SHA.

use std::sync::LazyLock;

use redis::{FromRedisValue, ParsingError, Script, Value};

macro_rules! script {
    ($name:ident, $file:literal) => {
        pub(crate) static $name: LazyLock<Script> =
            LazyLock::new(|| Script::new(include_str!(concat!("../lua/", $file))));
    };
}

script!(ACCOUNT_CREATE, "account_create.lua");
script!(KEY_CREATE, "key_create.lua");
script!(AGENT_CREATE, "agent_create.lua");

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

    #[test]
    fn every_script_file_documents_its_keys_argv_and_reply() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/lua");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let head = text.split("]]").next().unwrap_or("");
            for section in ["Input:", "Output:"] {
                assert!(head.contains(section), "{path:?} lacks {section}");
            }
            // Every key the body touches comes from KEYS: no key is built from a string.
            let body = text.split_once("]]").map(|(_, b)| b).unwrap_or("");
            for call in body.split("redis.call(").skip(1) {
                let args = call.split(')').next().unwrap_or("");
                let mut args = args.split(',').map(str::trim);
                let command = args.next().unwrap_or("").trim_matches('\'');
                if command == "TIME" {
                    continue;
                }
                let first = args.next().unwrap_or("");
                assert!(
                    first.starts_with("KEYS[") || first == "k",
                    "{path:?}: {command} on {first}, not a KEYS entry"
                );
            }
            n += 1;
        }
        assert_eq!(n, 7);
    }
}
