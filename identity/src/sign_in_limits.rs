//! Sign-in limits (`/account`, `/admin`, the RCADIA sign-in). Only failures count, in three
//! places (`lua/sign_in_wait.lua` explains them): the name from this client, this client with
//! any name, and the name from any client; the last one never holds for a client the name
//! signed in from before. Past each counter's free failures the wait doubles with every
//! further failure, up to [`MAX_WAIT`].
//!
//! The trade-off, stated plainly: someone who guesses passwords for a name from many
//! addresses (about four times the per-pair free failures, then one every [`MAX_WAIT`]) makes
//! that name wait from every address it never signed in from: a new device, or a carrier's
//! shared address that changed. Addresses the name signed in from in the last
//! [`KNOWN_KEPT`] stay open, so its person is not locked out where they usually sign in.
//! Admin tokens all count under one name, so their checks (the API's `admin_page`) give the
//! name's counter no free failures to run out of ([`Free::name`] `u32::MAX`): only the
//! client's own failures hold it there.
//!
//! A client is its address, an IPv6 client its /64 (one subscriber's prefix).
//!
//! Layout (under the store prefix), all expiring on their own:
//! - `signin:pair:<name hash>|<client>`, `signin:client:<client>`, `signin:name:<name hash>`
//!   hashes `{n, last}`: failures and the newest one's time, kept [`FAILURES_KEPT`] after it
//!   (a failure's name may be a password typed into the name field: never stored as typed)
//! - `signin:known:<name>` set: clients the name signed in from, kept [`KNOWN_KEPT`]

use std::net::IpAddr;
use std::time::Duration;

use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::{lua, Store};

use crate::IdentityError;

/// The longest wait a run of failures can cause.
pub const MAX_WAIT: Duration = Duration::from_secs(15 * 60);
/// Failures are forgotten this long after the newest one.
pub const FAILURES_KEPT: Duration = Duration::from_secs(24 * 3600);
/// A client the name signed in from stays known this long after the newest success.
pub const KNOWN_KEPT: Duration = Duration::from_secs(30 * 24 * 3600);

/// The free failures of each counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Free {
    /// The name from one client (`gateway.sign_in_per_name_per_minute`).
    pub pair: u32,
    /// One client, any name (`gateway.sign_in_per_ip_per_minute`).
    pub client: u32,
    /// The name from clients it never signed in from (four times the pair's).
    pub name: u32,
}

impl Free {
    pub fn from_config(g: &horst_config::GatewayConfig) -> Free {
        Free {
            pair: g.sign_in_per_name_per_minute,
            client: g.sign_in_per_ip_per_minute,
            name: g.sign_in_per_name_per_minute.saturating_mul(4),
        }
    }
}

/// Which counter makes a sign-in wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// This name from this client.
    Pair,
    /// This client, with any name.
    Client,
    /// This name, from clients it never signed in from.
    Name,
}

/// A sign-in that must wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    pub holder: Holder,
    pub wait_ms: u64,
}

impl Wait {
    pub fn retry_after_seconds(&self) -> u64 {
        self.wait_ms.div_ceil(1000).max(1)
    }
}

/// `lua/sign_in_wait.lua`.
static WAIT: Script<(u64, String)> = Script::new(Decl {
    file: lua!("lua/sign_in_wait.lua"),
    keys: 4,
    argv: Argv::Exactly(5),
    writes: Writes::ReadOnly,
});

/// `lua/sign_in_record.lua`.
static RECORD: Script<u64> = Script::new(Decl {
    file: lua!("lua/sign_in_record.lua"),
    keys: 4,
    argv: Argv::Exactly(5),
    writes: Writes::PrimaryOnly,
});

/// The scripts of this module, for the registry's tidy test.
pub(crate) fn scripts() -> [&'static dyn horst_store::script::Registered; 2] {
    [&WAIT, &RECORD]
}

/// The client of an address: the address itself, an IPv6 address's /64.
pub fn client_of(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

/// IPv4-mapped IPv6 addresses count as their IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// A name as the failure counters' keys carry it: a hash (128 bits of its SHA-256), because a
/// typed name is often a password typed into the wrong field.
fn name_hash(name: &str) -> String {
    let mut hex = horst_store::digest::sha256_hex(name);
    hex.truncate(32);
    hex
}

fn keys(store: &Store, name: &str, client: &str) -> [String; 4] {
    let hashed = name_hash(name);
    [
        store.key(&format!("signin:pair:{hashed}|{client}")),
        store.key(&format!("signin:client:{client}")),
        store.key(&format!("signin:name:{hashed}")),
        // Written only at a success, so only under a real name (kept as it was: the clients
        // a name signed in from stay known across this change).
        store.key(&format!("signin:known:{name}")),
    ]
}

/// `Some` if a sign-in for `name` (canonical; `~token` for admin tokens) from `ip` must wait.
pub async fn check(
    store: &Store,
    free: Free,
    name: &str,
    ip: IpAddr,
) -> Result<Option<Wait>, IdentityError> {
    let client = client_of(ip);
    let (wait_ms, which) = WAIT
        .call(store)
        .key(keys(store, name, &client).as_slice())
        .arg(free.pair)
        .arg(free.client)
        .arg(free.name)
        .arg(MAX_WAIT.as_millis() as u64)
        .arg(&client)
        .run()
        .await?;
    let holder = match which.as_str() {
        "pair" => Holder::Pair,
        "client" => Holder::Client,
        "name" => Holder::Name,
        _ => return Ok(None),
    };
    Ok((wait_ms > 0).then_some(Wait { holder, wait_ms }))
}

/// Records a sign-in's outcome: a failure counts, a success forgets this client's failures
/// for the name and remembers the client. Returns the pair's failures now.
pub async fn record(
    store: &Store,
    name: &str,
    ip: IpAddr,
    succeeded: bool,
) -> Result<u64, IdentityError> {
    let attempt = horst_store::random::id_hex::<8>();
    record_attempt(store, name, ip, succeeded, &attempt).await
}

/// [`record`] with the attempt's id given: the script counts one attempt's failure once,
/// however often it runs (a cluster connection resends a request whose reply it did not
/// get, and the first may have run).
pub async fn record_attempt(
    store: &Store,
    name: &str,
    ip: IpAddr,
    succeeded: bool,
    attempt: &str,
) -> Result<u64, IdentityError> {
    let client = client_of(ip);
    Ok(RECORD
        .call(store)
        .key(keys(store, name, &client).as_slice())
        .arg(if succeeded { "ok" } else { "fail" })
        .arg(&client)
        .arg(FAILURES_KEPT.as_millis() as u64)
        .arg(KNOWN_KEPT.as_millis() as u64)
        .arg(attempt)
        .run()
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_addresses_and_ipv6_prefixes() {
        assert_eq!(client_of("192.0.2.7".parse().unwrap()), "192.0.2.7");
        assert_eq!(client_of("::ffff:192.0.2.7".parse().unwrap()), "192.0.2.7");
        assert_eq!(
            client_of("2001:db8:1:2:3::4".parse().unwrap()),
            "2001:db8:1:2::/64"
        );
    }
}
