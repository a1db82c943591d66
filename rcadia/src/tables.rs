//! How many tables a person opens: the bound of a person's session JWT as a host.
//!
//! The API counts what a person asks for (`POST /sessions`, `/rematch`: their own and their
//! network's bound, `api/src/routes/rcadia_bridge.rs`); this layer counts what opens without
//! a request, an `autoRematch` round, against the same person's bound, so that a person's
//! table that plays itself (the host seated at it, each game ended by an `/ops` `end`) opens
//! no more rounds an hour than the person could open by hand. Agent tokens with the `host`
//! scope are the operator's to bound (`horst admin token limit`): the house opens rounds all
//! day.

use std::time::Duration;

use horst_limits::Limit;

/// Tables a person (a session JWT as the host) opens in any hour: `POST /sessions`,
/// `/rematch` calls and `autoRematch` rounds together. Anyone with an account gets a JWT, and
/// every table is a session record kept a day after it ends (its replay, once played, up to
/// `replay::MAX_BYTES` for `sessions.replay_retention_hours`), listed in `/available` and
/// `/tables/` while it is open; without a bound one JWT opened tables as fast as it could
/// send the requests. A person hosting games in the bridge opens one a game.
pub const PER_PERSON_PER_HOUR: u32 = 60;

/// Tables all people of one network (an IPv4 /24, an IPv6 /64) open in any hour together, by
/// request: three people's worth, as sign-up makes three accounts a network a day (accounts
/// of earlier days would add up without it). An `autoRematch` round has no request, so no
/// network: it counts against its host's own bound only.
pub const PER_NETWORK_PER_HOUR: u32 = 180;

/// The person's bound, counted in Redis for every process under this name.
pub const PERSON: Limit = Limit {
    name: "tables_person",
    max: PER_PERSON_PER_HOUR,
    window: Duration::from_secs(3600),
};

/// The network's bound.
pub const NETWORK: Limit = Limit {
    name: "tables_network",
    max: PER_NETWORK_PER_HOUR,
    window: Duration::from_secs(3600),
};

/// The person a session's host identity is (`user:<name>`), or `None` for an agent token.
pub fn person_of(host_identity: &str) -> Option<&str> {
    host_identity.strip_prefix("user:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_persons_jwt_is_a_person() {
        assert_eq!(person_of("user:olga"), Some("olga"));
        assert_eq!(person_of("agent:agt_1"), None);
        assert_eq!(person_of("olga"), None);
    }
}
