//! Seek: a seat at the open table of a game whose seated players are nearest the seeker's
//! rating (`POST /api/v1/agent/sessions/seek`).
//!
//! Fair under load: seekers of one game take turns (a lock in Redis, `seek:<game>`, held
//! while one picks a table and joins it), and a table with someone waiting wins over an
//! empty one, so two agents seeking at once get one table between them, never two
//! half-empty ones. When no table is open the seeker waits (bounded) for the house, which
//! opens one as soon as none is joinable. A new agent in a game with a reference player
//! (`reference.rs`) takes an empty table first, and the reference player joins it: its
//! validation game.

use std::time::Duration;

use horst_sessions::{Event, HostKind, Reply, Session};
use horst_store::script::{Argv, Decl, Script, Writes};

use crate::keys;
use crate::rating::{Rating, START_RATING};
use crate::store::Step;
use crate::{random_u32, Rcadia, RcadiaError};

/// The lock lapses after this if its holder dies.
const LOCK_MS: u64 = 5_000;
/// How often a seeker looks again (for the lock, or for a new table).
const RETRY: Duration = Duration::from_millis(50);

/// `lua/seek_unlock.lua`: KEYS lock; ARGV token; 1 released.
pub(crate) static UNLOCK: Script<i64> = Script::new(Decl {
    file: horst_store::lua!("lua/seek_unlock.lua"),
    keys: 1,
    argv: Argv::Exactly(1),
    writes: Writes::PrimaryOnly,
});

/// An open table as the seeker weighs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub session_id: String,
    pub created_at_ms: u64,
    /// The ratings of the players seated there.
    pub seated: Vec<f64>,
}

/// The table to join (an index into `tables`): one with players waiting before an empty
/// one, then the nearest mean rating, then the oldest.
pub fn choose(tables: &[Candidate], mine: f64) -> Option<usize> {
    let key = |c: &Candidate| {
        let distance = if c.seated.is_empty() {
            f64::INFINITY
        } else {
            (c.seated.iter().sum::<f64>() / c.seated.len() as f64 - mine).abs()
        };
        (c.seated.is_empty(), distance, c.created_at_ms)
    };
    (0..tables.len()).min_by(|&a, &b| {
        let (ka, kb) = (key(&tables[a]), key(&tables[b]));
        ka.0.cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
            .then(tables[a].session_id.cmp(&tables[b].session_id))
    })
}

/// What a seek asks for.
#[derive(Debug, Clone)]
pub struct SeekRequest {
    pub game: String,
    /// Only the house's tables (rated); `false`: any host's.
    pub rated: bool,
    /// The seeker's identity (`agent:agt_...` or `user:NAME`).
    pub identity: String,
    pub as_name: Option<String>,
    /// How long to wait for a table to open.
    pub wait: Duration,
}

/// Why a seek found nothing.
#[derive(Debug)]
pub enum SeekError {
    /// No open table appeared within the wait.
    NoTable,
    Rcadia(RcadiaError),
}

impl From<RcadiaError> for SeekError {
    fn from(e: RcadiaError) -> Self {
        SeekError::Rcadia(e)
    }
}

impl From<redis::RedisError> for SeekError {
    fn from(e: redis::RedisError) -> Self {
        SeekError::Rcadia(e.into())
    }
}

/// The game's seek lock while this request holds it. Released when the pick is done, or,
/// if the request is dropped meanwhile (its client went away), by a task of its own: it
/// held every seeker of the game for the lock's 5 s.
struct HeldLock {
    store: horst_store::Store,
    lock: String,
    token: String,
    held: bool,
}

impl HeldLock {
    async fn release(mut self) {
        let _ = UNLOCK
            .call(&self.store)
            .key(&self.lock)
            .arg(&self.token)
            .run()
            .await;
        self.held = false;
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let (store, lock, token) = (
            self.store.clone(),
            std::mem::take(&mut self.lock),
            std::mem::take(&mut self.token),
        );
        tokio::spawn(async move {
            let _ = UNLOCK.call(&store).key(&lock).arg(&token).run().await;
        });
    }
}

impl Rcadia {
    /// Seats the seeker at the best open table (or the one it already sits at) and returns
    /// that session and the seeker's player id.
    pub async fn seek(&self, req: &SeekRequest) -> Result<(Session, String), SeekError> {
        let store = &self.inner.store;
        let lock = keys::seek_lock(store, &req.game);
        let token = format!("{:08x}{:08x}", random_u32(), random_u32());
        let deadline = tokio::time::Instant::now() + req.wait;
        loop {
            let mut conn = store.conn();
            let got: Option<String> = redis::cmd("SET")
                .arg(&lock)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(LOCK_MS)
                .query_async(&mut conn)
                .await?;
            if got.is_some() {
                let held = HeldLock {
                    store: store.clone(),
                    lock: lock.clone(),
                    token: token.clone(),
                    held: true,
                };
                let r = self.seek_locked(req).await;
                held.release().await;
                match r {
                    Ok(Some(found)) => return Ok(found),
                    Ok(None) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(SeekError::NoTable);
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    /// With the lock held: join the best table, if one is open.
    async fn seek_locked(
        &self,
        req: &SeekRequest,
    ) -> Result<Option<(Session, String)>, RcadiaError> {
        let of_the_game: Vec<Session> = self
            .list_unfinished()
            .await?
            .into_iter()
            .filter(|s| s.matches_game(&req.game))
            .collect();
        // Already seated at one (a retried seek, or a table the agent joined itself, rated
        // or not): that one, never a second seat.
        if let Some(s) = of_the_game
            .iter()
            .find(|s| s.player_by_identity(&req.identity).is_some())
        {
            let pid = s
                .authorize_player(&req.identity)
                .map_err(RcadiaError::from)?
                .to_string();
            return Ok(Some((s.clone(), pid)));
        }
        let joinable: Vec<&Session> = of_the_game
            .iter()
            .filter(|s| !req.rated || s.host().kind == HostKind::House)
            .filter(|s| s.listed_in_available(false))
            .collect();
        if joinable.is_empty() {
            return Ok(None);
        }
        let identities: Vec<String> = std::iter::once(req.identity.clone())
            .chain(
                joinable
                    .iter()
                    .flat_map(|s| s.players().iter().map(|p| p.identity.clone())),
            )
            .collect();
        let ratings = self.ratings_of(&req.game, &identities).await?;
        let rating_of = |identity: &str| ratings.get(identity).copied().unwrap_or(START_RATING);
        let candidates: Vec<Candidate> = joinable
            .iter()
            .map(|s| Candidate {
                session_id: s.session_id().to_string(),
                created_at_ms: s.created_at_ms(),
                seated: s.players().iter().map(|p| rating_of(&p.identity)).collect(),
            })
            .collect();
        let mut order: Vec<usize> = Vec::new();
        let mut rest = candidates.clone();
        let mut idx: Vec<usize> = (0..candidates.len()).collect();
        while let Some(i) = choose(&rest, rating_of(&req.identity)) {
            order.push(idx.remove(i));
            rest.remove(i);
        }
        // A new agent in a game with a reference player: an empty table first, where the
        // reference player joins it (its validation game); a table with someone waiting
        // only when there is none.
        let validating = req.rated && self.needs_validation(&req.game, &req.identity).await?;
        if validating {
            order.sort_by_key(|&i| !candidates[i].seated.is_empty());
        }
        for i in order {
            let id = &candidates[i].session_id;
            let fresh = horst_sessions::format_player_id(random_u32());
            let r = self
                .apply(id, |_| {
                    Ok(Step::main(Event::Join {
                        player_id: fresh.clone(),
                        identity: req.identity.clone(),
                        as_name: req.as_name.clone(),
                    }))
                })
                .await;
            match r {
                Ok(a) => {
                    let pid = match a.outcome.reply {
                        Reply::Joined { player_id, .. } => player_id,
                        _ => a.session.authorize_player(&req.identity)?.to_string(),
                    };
                    if validating
                        && candidates[i].seated.is_empty()
                        && self.seat_reference(id).await?
                    {
                        // The seeker's answer shows the table as it is now: both seated.
                        let s = self.load(id).await?;
                        return Ok(Some((s.into_session(), pid)));
                    }
                    return Ok(Some((a.session.into_session(), pid)));
                }
                // Taken or started since it was listed (a non-seeking joiner): the next one.
                Err(RcadiaError::Protocol(..)) => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// The ratings (in `game`) of the agents among `identities`, by identity.
    async fn ratings_of(
        &self,
        game: &str,
        identities: &[String],
    ) -> Result<std::collections::HashMap<String, f64>, RcadiaError> {
        let agents: Vec<(&str, &str)> = identities
            .iter()
            .filter_map(|i| Some((i.as_str(), i.strip_prefix("agent:")?)))
            .filter(|(_, a)| crate::rating::is_agent_id(a))
            .collect();
        let mut out = std::collections::HashMap::new();
        if agents.is_empty() || !crate::rating::is_game_id(game) {
            return Ok(out);
        }
        let store = &self.inner.store;
        let mut pipe = redis::pipe();
        for (_, a) in &agents {
            pipe.cmd("GET").arg(keys::rating(store, game, a));
        }
        let mut conn = store.conn();
        let got: Vec<Option<String>> = pipe.query_async(&mut conn).await?;
        for ((identity, _), raw) in agents.iter().zip(got) {
            if let Some(r) = raw.and_then(|r| serde_json::from_str::<Rating>(&r).ok()) {
                out.insert(identity.to_string(), r.rating);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(id: &str, at: u64, seated: &[f64]) -> Candidate {
        Candidate {
            session_id: id.into(),
            created_at_ms: at,
            seated: seated.to_vec(),
        }
    }

    /// A seek whose request is dropped while it holds the game's lock (its client went
    /// away) lets the lock go at once: it held every seeker of the game for 5 s.
    #[tokio::test]
    async fn a_dropped_seek_lets_its_lock_go() {
        let redis = horst_testkit::RedisServer::start();
        let store = horst_store::Store::connect(&redis.url(), "seek:")
            .await
            .unwrap();
        let lock = crate::keys::seek_lock(&store, "chess");
        let _: () = redis::cmd("SET")
            .arg(&lock)
            .arg("t1")
            .arg("PX")
            .arg(LOCK_MS)
            .query_async(&mut store.conn())
            .await
            .unwrap();
        drop(HeldLock {
            store: store.clone(),
            lock: lock.clone(),
            token: "t1".into(),
            held: true,
        });
        let mut gone = false;
        for _ in 0..50 {
            let exists: i64 = redis::cmd("EXISTS")
                .arg(&lock)
                .query_async(&mut store.conn())
                .await
                .unwrap();
            if exists == 0 {
                gone = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(gone, "the lock stayed");
    }

    #[test]
    fn someone_waiting_first_then_the_nearest_rating_then_the_oldest() {
        assert_eq!(choose(&[], 1500.0), None);
        let tables = [
            table("empty_old", 1, &[]),
            table("far", 5, &[1900.0]),
            table("near", 6, &[1550.0]),
        ];
        assert_eq!(choose(&tables, 1500.0), Some(2));
        assert_eq!(choose(&tables, 2000.0), Some(1));
        let empties = [table("b", 2, &[]), table("a", 1, &[])];
        assert_eq!(choose(&empties, 1500.0), Some(1), "the oldest empty table");
    }
}
