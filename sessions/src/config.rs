//! The game's `AGENT_CONFIGURE` data and the platform's timings.

use crate::error::{ProtocolCode, ProtocolError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most seats a table may have. The contract sets no limit; this keeps a typo like
/// `maxPlayers: 2000` from creating an unjoinable table.
pub const MAX_SEATS: u32 = 64;
/// The largest session config (`AGENT_CONFIGURE` data), in bytes of JSON.
pub const MAX_CONFIG_BYTES: usize = 16 * 1024;
/// The longest `turnTimeout`, in seconds (365 days). The contract sets no limit, but every
/// snapshot shows `deadline` as an ISO-8601 time: a `turnTimeout` of 1e12 s put it in the
/// year 33715 (`"33715-09-01T..."`), which neither JavaScript's `Date` nor Python's
/// `datetime` reads, so an agent that parses its deadline failed on every snapshot.
pub const MAX_TURN_TIMEOUT_SECONDS: u64 = 365 * 24 * 3600;

/// Every duration of the contract, in milliseconds. Defaults are the contract's numbers;
/// operators and tests shorten them. A session keeps the timings it was created with (and hands
/// them to its rematch), so changing them never re-times a running game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Timings {
    /// The host counts as alive this long after its last poll finished (or `/ops` call).
    pub host_alive_ms: u64,
    /// A host not seen for this long ends its waiting and active sessions.
    pub host_gone_ms: u64,
    /// A delivered action the game says nothing about becomes `unconfirmed` after this.
    pub unconfirmed_ms: u64,
    /// Rematch seats stay reserved this long.
    pub reservation_ms: u64,
    /// A rematch activates no earlier than this after the previous game ended.
    pub rematch_delay_ms: u64,
    /// `turnTimeout` when the game does not set one.
    pub default_turn_timeout_ms: u64,
    /// `maxTurnTimeouts` when the game does not set one.
    pub default_max_turn_timeouts: u32,
    /// Not in the contract: an open table for `minPlayers < maxPlayers` starts once at least
    /// `minPlayers` are seated, everyone is ready and nobody joined for this long (a full table
    /// starts at once).
    pub lobby_fill_ms: u64,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            host_alive_ms: 20_000,
            host_gone_ms: 90_000,
            unconfirmed_ms: 15_000,
            reservation_ms: 60_000,
            rematch_delay_ms: 3_000,
            default_turn_timeout_ms: 300_000,
            default_max_turn_timeouts: 2,
            lobby_fill_ms: 10_000,
        }
    }
}

/// The effective rules of a session, resolved from `AGENT_CONFIGURE` and the timings once, at
/// creation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rules {
    pub min_players: u32,
    pub max_players: u32,
    pub turn_based: bool,
    pub simultaneous: bool,
    /// No `sdkVersion`: a v1 game (section 9).
    pub legacy: bool,
    /// 0 = no clock.
    pub turn_timeout_ms: u64,
    pub max_strikes: u32,
    pub forfeit_on_timeout: bool,
    pub auto_rematch: bool,
}

impl Rules {
    /// Reads `AGENT_CONFIGURE` data. Unknown fields are kept in the echoed config and ignored.
    pub fn from_config(config: &Value, timings: &Timings) -> Result<Rules, ProtocolError> {
        let obj = config.as_object().ok_or_else(|| {
            ProtocolError::bad_request(
                "config must be the AGENT_CONFIGURE data object, e.g. {\"minPlayers\":2,\"maxPlayers\":2,\"turnBased\":true}",
            )
        })?;
        // The config is stored with the session, copied into every rematch and replay and
        // listed whole by the public `/available`: bounded like the states.
        let size = crate::ops::json_size(config);
        if size > MAX_CONFIG_BYTES {
            return Err(ProtocolError::new(
                ProtocolCode::TooLarge,
                format!(
                    "config is {size} bytes of JSON; at most {MAX_CONFIG_BYTES} bytes ({} KiB) are accepted: send the AGENT_CONFIGURE fields, and keep game data in the state",
                    MAX_CONFIG_BYTES / 1024
                ),
            ));
        }
        let uint = |key: &str| -> Result<Option<u64>, ProtocolError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => whole_number(v).map(Some).ok_or_else(|| {
                    ProtocolError::bad_request(format!(
                        "config.{key} must be a non-negative integer, got {v}"
                    ))
                }),
            }
        };
        let flag = |key: &str| -> Result<Option<bool>, ProtocolError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(v) => Err(ProtocolError::bad_request(format!(
                    "config.{key} must be true or false, got {v}"
                ))),
            }
        };
        let min_players = uint("minPlayers")?.unwrap_or(2);
        let max_players = uint("maxPlayers")?.unwrap_or(min_players.max(1));
        // Judged on its own first: over the limit with maxPlayers left out, the error named
        // maxPlayers ("must be between minPlayers (100) and 64, got 100"), a field never sent.
        if min_players < 1 || min_players > u64::from(MAX_SEATS) {
            return Err(ProtocolError::bad_request(format!(
                "config.minPlayers must be between 1 and {MAX_SEATS}, got {min_players}"
            )));
        }
        if max_players < min_players || max_players > u64::from(MAX_SEATS) {
            return Err(ProtocolError::bad_request(format!(
                "config.maxPlayers must be between minPlayers ({min_players}) and {MAX_SEATS}, got {max_players}"
            )));
        }
        let turn_timeout_ms = match obj.get("turnTimeout") {
            None | Some(Value::Null) => timings.default_turn_timeout_ms,
            Some(v) => seconds_to_ms(v)
                .filter(|ms| *ms <= MAX_TURN_TIMEOUT_SECONDS * 1000)
                .ok_or_else(|| {
                    ProtocolError::bad_request(format!(
                        "config.turnTimeout is in seconds and must be a number from 0 (no clock) to {MAX_TURN_TIMEOUT_SECONDS} (365 days), got {v}"
                    ))
                })?,
        };
        let sdk_version = obj.get("sdkVersion").filter(|v| !v.is_null());
        Ok(Rules {
            min_players: min_players as u32,
            max_players: max_players as u32,
            turn_based: flag("turnBased")?.unwrap_or(true),
            simultaneous: flag("simultaneous")?.unwrap_or(false),
            legacy: sdk_version.is_none(),
            turn_timeout_ms,
            // 0 strikes cannot be reached by a strike; read it as "the first timeout is final".
            max_strikes: uint("maxTurnTimeouts")?
                .map(|n| n.clamp(1, u64::from(u32::MAX)) as u32)
                .unwrap_or(timings.default_max_turn_timeouts.max(1)),
            forfeit_on_timeout: flag("forfeitOnTimeout")?.unwrap_or(true),
            auto_rematch: flag("autoRematch")?.unwrap_or(false),
        })
    }

    /// Turn enforcement applies (simultaneous games are turn-based too unless `turnBased` is
    /// explicitly false).
    pub fn enforces_turns(&self) -> bool {
        self.turn_based
    }

    pub fn is_simultaneous(&self) -> bool {
        self.turn_based && self.simultaneous
    }

    /// Turn-based and not simultaneous: exactly one player is on turn (section 4).
    pub fn is_sequential(&self) -> bool {
        self.turn_based && !self.simultaneous
    }

    pub fn has_clock(&self) -> bool {
        self.turn_based && self.turn_timeout_ms > 0
    }
}

/// A JSON number that is a non-negative whole number: `7`, and `7.0` too. A client whose
/// JSON library reads every number as a double (Gson's maps, Lua's tables) writes the `turn`
/// it echoes, or the game's `minPlayers: 2`, as `2.0`; JSON has one number type, so that is
/// the same number, not a malformed one. Fractions, negatives and floats past 2^53 (where a
/// double no longer holds every integer) are none.
pub fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().and_then(whole_f64))
}

/// A double that is a non-negative whole number up to 2^53 (see [`whole_number`]).
pub fn whole_f64(f: f64) -> Option<u64> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= EXACT).then_some(f as u64)
}

fn seconds_to_ms(v: &Value) -> Option<u64> {
    if let Some(s) = v.as_u64() {
        return Some(s.saturating_mul(1000));
    }
    // Fractional seconds are allowed ("turnTimeout": 2.5); this is the only float in the crate
    // and it is converted once, at creation.
    // A positive value under half a millisecond is still a clock: rounded to 0 it meant "no
    // clock" (`turnTimeout: 0.0004` ran the game without one), which only 0 means.
    let f = v.as_f64()?;
    (f.is_finite() && f >= 0.0).then(|| {
        let ms = (f * 1000.0).round() as u64;
        if f > 0.0 {
            ms.max(1)
        } else {
            ms
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_legacy_detection() {
        let t = Timings::default();
        let r = Rules::from_config(&json!({"minPlayers": 2, "maxPlayers": 2}), &t).unwrap();
        assert!(r.legacy && r.turn_based && !r.simultaneous && r.forfeit_on_timeout);
        assert_eq!((r.turn_timeout_ms, r.max_strikes), (300_000, 2));
        let r = Rules::from_config(
            &json!({"minPlayers": 2, "maxPlayers": 4, "sdkVersion": "2.0.0", "turnTimeout": 2.5, "maxTurnTimeouts": 0}),
            &t,
        )
        .unwrap();
        assert!(!r.legacy);
        assert_eq!((r.turn_timeout_ms, r.max_strikes), (2_500, 1));
        let r = Rules::from_config(&json!({"turnTimeout": MAX_TURN_TIMEOUT_SECONDS}), &t).unwrap();
        assert_eq!(r.turn_timeout_ms, 31_536_000_000);
        let r = Rules::from_config(&json!({"turnTimeout": 0}), &t).unwrap();
        assert!(!r.has_clock());
    }

    /// Only 0 means "no clock": a positive `turnTimeout` too small for a whole millisecond
    /// used to round to 0 and run the game without a clock.
    #[test]
    fn a_positive_turn_timeout_is_a_clock_however_small() {
        let t = Timings::default();
        for tiny in [json!(0.0004), json!(1e-9), json!(f64::MIN_POSITIVE)] {
            let r = Rules::from_config(&json!({ "turnTimeout": tiny }), &t).unwrap();
            assert!(r.has_clock(), "{tiny}: {r:?}");
            assert_eq!(r.turn_timeout_ms, 1, "{tiny}");
        }
        for zero in [json!(0), json!(0.0), json!(-0.0)] {
            let r = Rules::from_config(&json!({ "turnTimeout": zero }), &t).unwrap();
            assert!(!r.has_clock(), "{zero}: {r:?}");
        }
        let r = Rules::from_config(&json!({ "turnTimeout": 0.0015 }), &t).unwrap();
        assert_eq!(r.turn_timeout_ms, 2);
    }

    /// A host whose JSON library reads every number as a double sends `2.0`: the same config.
    #[test]
    fn whole_numbers_written_as_floats_are_those_integers() {
        let t = Timings::default();
        let r = Rules::from_config(
            &json!({"minPlayers": 2.0, "maxPlayers": 4.0, "maxTurnTimeouts": 3.0}),
            &t,
        )
        .unwrap();
        assert_eq!((r.min_players, r.max_players, r.max_strikes), (2, 4, 3));
        for bad in [json!(1.5), json!(-2.0), json!(1e300), json!("2")] {
            let e = Rules::from_config(&json!({ "minPlayers": bad }), &t).unwrap_err();
            assert!(e.message.contains("minPlayers"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_config_over_its_limit_is_413() {
        let big = json!({"minPlayers": 2, "junk": "x".repeat(MAX_CONFIG_BYTES)});
        let e = Rules::from_config(&big, &Timings::default()).unwrap_err();
        assert_eq!((e.status(), e.code.as_str()), (413, "too_large"), "{e}");
        assert!(e.message.contains("config is"), "{e}");
    }

    #[test]
    fn bad_configs_say_how_to_fix_them() {
        let t = Timings::default();
        for (bad, needle) in [
            (json!([]), "AGENT_CONFIGURE"),
            (json!({"minPlayers": 3, "maxPlayers": 2}), "maxPlayers"),
            (json!({"minPlayers": 0}), "minPlayers"),
            (
                json!({"minPlayers": 100}),
                "config.minPlayers must be between 1 and 64, got 100",
            ),
            (json!({"turnTimeout": -1}), "turnTimeout"),
            (json!({"turnTimeout": 1e12}), "365 days"),
            (json!({"turnTimeout": 31_536_001}), "365 days"),
            (json!({"turnBased": "yes"}), "turnBased"),
        ] {
            let e = Rules::from_config(&bad, &t).unwrap_err();
            assert_eq!(e.status(), 400);
            assert!(e.message.contains(needle), "{e}");
        }
    }
}
