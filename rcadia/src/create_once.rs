//! A session create its host may send again (horst's extension to section 3): a create that
//! carries an `idempotencyKey` makes one session for its host, however often it is resent
//! within [`RESERVATION_MS`], so a create whose answer was lost leaves no orphan table.
//!
//! Two steps, each on one key, so it holds on a Redis Cluster too, where the reservation and
//! the session are in different slots (no script joins them):
//! 1. reserve: `create:<host>:<key>` is set (`SET NX`) to a session id drawn in advance and
//!    the body's fingerprint; a repeat reads what the first one set: the same id, or a 409
//!    for another body;
//! 2. create the session under that id unless it exists (the save script's create refuses an
//!    id in use; the loser of two at once answers the winner's session).
//!
//! A crash between the two leaves a reservation without its session; the retry makes it. An
//! id drawn that is another host's session already (ids are random) is never answered.
//! That a missing session is always step 2 left undone, never a game that ended and expired,
//! holds because the reservation lives no longer than a finished session is kept after its
//! end (`FINISHED_RETENTION_MS`), and a session ends after it was made.

use horst_sessions::{Outcome, ProtocolCode, ProtocolError, Session};
use serde_json::Value;

use crate::keys;
use crate::store::FINISHED_RETENTION_MS;
use crate::{Rcadia, RcadiaError};

/// How long a host's `idempotencyKey` names its session.
pub const RESERVATION_MS: u64 = FINISHED_RETENTION_MS;

/// The field of a create's body that carries the key; the fingerprint leaves it out.
const KEY_FIELD: &str = "idempotencyKey";

/// What a reservation holds: the session id and the fingerprint of the body that made it.
struct Reservation {
    session_id: String,
    fingerprint: String,
}

impl Reservation {
    fn encode(&self) -> String {
        format!("{} {}", self.session_id, self.fingerprint)
    }

    fn decode(value: &str) -> Option<Reservation> {
        let (id, fp) = value.split_once(' ')?;
        Some(Reservation {
            session_id: id.to_string(),
            fingerprint: fp.to_string(),
        })
    }
}

/// SHA-256 of the create's body without its key, field by field in the order of their names
/// (a `serde_json` object is sorted), so the same body sent again has the same fingerprint.
fn fingerprint(body: &Value) -> String {
    let mut bytes = Vec::new();
    match body.as_object() {
        Some(fields) => {
            for (name, value) in fields.iter().filter(|(name, _)| *name != KEY_FIELD) {
                // A name and a value as JSON cannot fail to serialize.
                bytes.extend(serde_json::to_vec(&(name, value)).unwrap_or_default());
            }
        }
        None => bytes.extend(serde_json::to_vec(body).unwrap_or_default()),
    }
    horst_store::digest::sha256_hex(bytes)
}

fn reused(key: &str) -> RcadiaError {
    ProtocolError::new(
        ProtocolCode::IdempotencyKeyReused,
        format!(
            "idempotencyKey {key:?} was sent by you with another create (a different config, \
             gameId or gameTitle) within the last {} h; send the same body to get the session \
             that key made, or a new key for a new session",
            RESERVATION_MS / 3_600_000
        ),
    )
    .into()
}

impl Rcadia {
    /// Step 1: the session id `host`'s `key` names, reserved now for `body` (drawn afresh)
    /// or earlier; a 409 `idempotency_key_reused` when it was reserved for another body.
    pub async fn reserve_create(
        &self,
        host: &str,
        key: &str,
        body: &Value,
    ) -> Result<String, RcadiaError> {
        Ok(self.reserve(host, key, body).await?.0)
    }

    /// [`Rcadia::reserve_create`], and whether this call made the reservation.
    async fn reserve(
        &self,
        host: &str,
        key: &str,
        body: &Value,
    ) -> Result<(String, bool), RcadiaError> {
        let store = &self.inner.store;
        let name = keys::create_reservation(store, host, key);
        let fresh = Reservation {
            session_id: self.new_session_id(),
            fingerprint: fingerprint(body),
        };
        let mut conn = store.durable().await?;
        self.inner.metrics.round_trip();
        // The GET reads ours or the first one's: a reservation is never changed, only expires.
        let (made, stored): (Option<String>, Option<String>) = redis::pipe()
            .cmd("SET")
            .arg(&name)
            .arg(fresh.encode())
            .arg("NX")
            .arg("PX")
            .arg(RESERVATION_MS)
            .cmd("GET")
            .arg(&name)
            .query_async(&mut conn)
            .await?;
        store.settle_at(&mut conn, name.as_bytes()).await?;
        let reserved = stored
            .as_deref()
            .and_then(Reservation::decode)
            .ok_or_else(|| {
                RcadiaError::Internal(format!("{name} holds {stored:?}, not '<id> <fingerprint>'"))
            })?;
        if reserved.fingerprint != fresh.fingerprint {
            return Err(reused(key));
        }
        Ok((reserved.session_id, made.is_some()))
    }

    /// A create with `host`'s idempotency `key`: the session the key names, made by `make`
    /// from `body` unless an earlier create with the key made it already.
    pub async fn create_once(
        &self,
        host: &str,
        key: &str,
        body: &Value,
        mut make: impl FnMut(String, u64) -> Result<(Session, Outcome), ProtocolError>,
    ) -> Result<Session, RcadiaError> {
        let (id, reserved_now) = self.reserve(host, key, body).await?;
        // A key reserved earlier may have its session already; one reserved now has none
        // unless the same create, sent again at once, made it (the create below finds it).
        if !reserved_now {
            match self.load(&id).await {
                Ok(made) => return self.hosts_own(made.into_session(), host, key).await,
                Err(RcadiaError::NotFound) => {}
                Err(e) => return Err(e),
            }
        }
        match self.create_as(&id, &mut make).await? {
            Some(s) => Ok(s),
            // Made meanwhile by the same create sent again at once.
            None => {
                let made = self.load(&id).await?.into_session();
                self.hosts_own(made, host, key).await
            }
        }
    }

    /// `made` if `host` hosts it. Else the id drawn for the key was another host's session
    /// already (ids are random; rare): the reservation is dropped, and the create's retry
    /// draws another id.
    async fn hosts_own(
        &self,
        made: Session,
        host: &str,
        key: &str,
    ) -> Result<Session, RcadiaError> {
        if made.authorize_host(host).is_ok() {
            return Ok(made);
        }
        let name = keys::create_reservation(&self.inner.store, host, key);
        let _: () = redis::cmd("DEL")
            .arg(&name)
            .query_async(&mut self.inner.store.conn())
            .await?;
        Err(RcadiaError::Internal(format!(
            "the session id drawn for idempotencyKey {key:?} was taken; send the create again \
             with the same key"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fingerprint_is_the_body_without_its_key() {
        let body = json!({"config": {"a": 1}, "gameId": "chess", "idempotencyKey": "k1"});
        let same = json!({"idempotencyKey": "k2", "gameId": "chess", "config": {"a": 1}});
        assert_eq!(fingerprint(&body), fingerprint(&same));
        let other = json!({"config": {"a": 2}, "gameId": "chess", "idempotencyKey": "k1"});
        assert_ne!(fingerprint(&body), fingerprint(&other));
        // A field moved into another is another body.
        let moved = json!({"config": {"a": 1, "gameId": "chess"}});
        assert_ne!(fingerprint(&body), fingerprint(&moved));
    }

    #[test]
    fn a_reservation_reads_back() {
        let r = Reservation {
            session_id: "ses_x".into(),
            fingerprint: "ab".into(),
        };
        let back = Reservation::decode(&r.encode()).unwrap();
        assert_eq!(
            (back.session_id, back.fingerprint),
            (r.session_id, r.fingerprint)
        );
        assert!(Reservation::decode("nospace").is_none());
    }
}
