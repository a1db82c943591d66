//! Seek: a seat at the open table of a game whose seated players are nearest the seeker's
//! rating (`POST /api/v1/agent/sessions/seek`).
//!
//! Fair under load: one seeker of a game picks at a time (a lock in Redis, `seek:<game>`,
//! held while it picks a table and joins it, and kept while a long pick goes on), and a
//! table with someone waiting wins over an empty one, so two agents seeking at once get one
//! table between them, never two half-empty ones. The others wait for the lock (a pick
//! takes milliseconds); nobody is promised a place in line. When no table is open the
//! seeker waits (bounded) for the house, which opens one as soon as none is joinable,
//! looking again after 50 ms, then less and less often (at most every second). A game with
//! no table at all, which the house does not host (`house.games`), is refused at once: a
//! seek of a made-up game costs one look. Each identity has one open seek at a time
//! (`seek:who:<identity>`); a second one is refused while the first waits. A new agent in a
//! game with a reference player (`reference.rs`) takes an empty table first, and the
//! reference player joins it: its validation game.

use std::time::Duration;

use horst_sessions::{Event, HostKind, Reply, Session};
use horst_store::script::{Argv, Decl, Script, Writes};
use tokio::time::Instant;

use crate::keys;
use crate::rating::{Rating, START_RATING};
use crate::store::Step;
use crate::{random_u32, Rcadia, RcadiaError};

/// The lock lapses after this if its holder dies (a holder that picks longer renews it).
const LOCK_MS: u64 = 5_000;
/// The first pause before a seeker looks again for a new table; each look doubles it, up to
/// [`MAX_PAUSE`]. (It looked every 50 ms for the whole wait: 500 scans of every open table
/// for one seek of 25 s.)
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_secs(1);
/// How often a seeker tries a lock another seeker holds (a pick takes milliseconds).
const LOCK_RETRY: Duration = Duration::from_millis(25);

/// `lua/seek_unlock.lua`: KEYS lock; ARGV token; 1 released.
pub(crate) static UNLOCK: Script<i64> = Script::new(Decl {
    file: horst_store::lua!("lua/seek_unlock.lua"),
    keys: 1,
    argv: Argv::Exactly(1),
    writes: Writes::PrimaryOnly,
});

/// `lua/seek_extend.lua`: KEYS lock; ARGV token, expiry ms; 1 still held.
pub(crate) static EXTEND: Script<i64> = Script::new(Decl {
    file: horst_store::lua!("lua/seek_extend.lua"),
    keys: 1,
    argv: Argv::Exactly(2),
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
    /// No table of the game exists (at the house, for a rated seek) and the house does not
    /// host it (`house.games`): nothing to wait for.
    UnknownGame,
    /// Another seek of the same identity is still open.
    Busy,
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

/// A seek lock while this request holds it (the game's, or the seeker's own). Released when
/// the work is done, or, if the request is dropped meanwhile (its client went away), by a
/// task of its own: a game's lock held every seeker of the game for the lock's 5 s.
struct HeldLock {
    store: horst_store::Store,
    lock: String,
    token: String,
    held: bool,
    /// When it was taken or last renewed.
    since: Instant,
}

impl HeldLock {
    /// Takes `lock` for `ms` if nobody holds it.
    async fn take(
        store: &horst_store::Store,
        lock: &str,
        token: &str,
        ms: u64,
    ) -> Result<Option<HeldLock>, redis::RedisError> {
        let mut conn = store.conn();
        let got: Option<String> = redis::cmd("SET")
            .arg(lock)
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(ms)
            .query_async(&mut conn)
            .await?;
        Ok(got.map(|_| HeldLock {
            store: store.clone(),
            lock: lock.to_string(),
            token: token.to_string(),
            held: true,
            since: Instant::now(),
        }))
    }

    /// Whether it is still held: past half its time it is renewed for another [`LOCK_MS`]
    /// (a pick that took longer let it lapse, and another seeker picked at the same time).
    async fn keep(&mut self) -> Result<bool, RcadiaError> {
        if self.since.elapsed() < Duration::from_millis(LOCK_MS / 2) {
            return Ok(true);
        }
        let still = EXTEND
            .call(&self.store)
            .key(&self.lock)
            .arg(&self.token)
            .arg(LOCK_MS)
            .run()
            .await?
            == 1;
        self.since = Instant::now();
        self.held = still;
        Ok(still)
    }

    async fn release(mut self) {
        if self.held {
            let _ = UNLOCK
                .call(&self.store)
                .key(&self.lock)
                .arg(&self.token)
                .run()
                .await;
        }
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
        crate::reference::check_name(&req.identity, req.as_name.as_deref())
            .map_err(RcadiaError::from)?;
        let store = &self.inner.store;
        let token = format!("{:08x}{:08x}", random_u32(), random_u32());
        // One open seek per identity, held as long as this one can last (its wait, the
        // game's lock lapsing once, a pick), or until it answers.
        let longest = req.wait.as_millis() as u64 + 3 * LOCK_MS;
        let Some(mine) =
            HeldLock::take(store, &keys::seeker(store, &req.identity), &token, longest).await?
        else {
            return Err(SeekError::Busy);
        };
        let r = self.seek_held(req, &token).await;
        mine.release().await;
        r
    }

    async fn seek_held(
        &self,
        req: &SeekRequest,
        token: &str,
    ) -> Result<(Session, String), SeekError> {
        let store = &self.inner.store;
        let lock = keys::seek_lock(store, &req.game);
        let started = Instant::now();
        let deadline = started + req.wait;
        // Another seeker's lock is free again (or lapsed) within its time: a seeker waits
        // that long for it at least, so even `wait: 0` looks once.
        let lock_deadline = started + Duration::from_millis(LOCK_MS);
        let mut looked = false;
        let mut pause = FIRST_PAUSE;
        loop {
            if let Some(mut held) = HeldLock::take(store, &lock, token, LOCK_MS).await? {
                let r = self.seek_locked(req, &mut held).await;
                held.release().await;
                match r? {
                    Some(found) => return Ok(found),
                    None => looked = true,
                }
                let now = Instant::now();
                if now >= deadline || self.nap(pause.min(deadline - now)).await {
                    return Err(SeekError::NoTable);
                }
                pause = (pause * 2).min(MAX_PAUSE);
                continue;
            }
            let now = Instant::now();
            if now >= deadline && (looked || now >= lock_deadline) {
                return Err(SeekError::NoTable);
            }
            if self.nap(LOCK_RETRY).await {
                return Err(SeekError::NoTable);
            }
        }
    }

    /// Sleeps `d`; `true` (at once) when the process starts to stop: a waiting seek is then
    /// answered `no_table` rather than cut off by the shutdown's grace.
    async fn nap(&self, d: Duration) -> bool {
        let mut stop = self.inner.shutdown.clone();
        if *stop.borrow() {
            return true;
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => false,
            _ = stop.wait_for(|s| *s) => true,
        }
    }

    /// With the lock held: join the best table, if one is open.
    async fn seek_locked(
        &self,
        req: &SeekRequest,
        held: &mut HeldLock,
    ) -> Result<Option<(Session, String)>, SeekError> {
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
        // Nothing to wait for: no table of the game (at the house, for a rated seek), and
        // the house does not open any.
        let hosted = |s: &&Session| !req.rated || s.host().kind == HostKind::House;
        if !of_the_game.iter().any(|s| hosted(&s)) && !self.house_hosts(&req.game) {
            return Err(SeekError::UnknownGame);
        }
        let joinable: Vec<&Session> = of_the_game
            .iter()
            .filter(|s| !req.rated || s.host().kind == HostKind::House)
            // Open tables, and reserved rematches with a seat a player gave up (the reference
            // player leaves every series after its validation game): a join takes that seat,
            // and the seekers waited out the reservation while an agent sat there alone.
            .filter(|s| s.is_joinable())
            .collect();
        if joinable.is_empty() {
            return Ok(None);
        }
        let identities: Vec<String> = std::iter::once(req.identity.clone())
            .chain(
                joinable
                    .iter()
                    .flat_map(|s| s.players().iter().map(|p| p.identity.to_string())),
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
            // A long pick keeps its lock; one that lost it stops (another seeker picks now).
            if !held.keep().await? {
                return Ok(None);
            }
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
                        _ => a
                            .session
                            .authorize_player(&req.identity)
                            .map_err(RcadiaError::from)?
                            .to_string(),
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
                Err(e) => return Err(e.into()),
            }
        }
        Ok(None)
    }

    /// Whether the house keeps tables of `game` open (`house.games`).
    fn house_hosts(&self, game: &str) -> bool {
        self.inner
            .settings
            .house_games
            .iter()
            .any(|g| g.eq_ignore_ascii_case(game))
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
            since: Instant::now(),
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

    /// The session layer of one process on `redis` (the house hosts chess only).
    async fn layer(
        redis: &horst_testkit::RedisServer,
    ) -> (Rcadia, tokio::sync::watch::Sender<bool>) {
        let store = horst_store::Store::connect(&redis.url(), "seek:")
            .await
            .unwrap();
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let notifier = horst_store::Notifier::start(
            store.client().clone(),
            Rcadia::channels(&store),
            stop_rx.clone(),
        );
        let mut config = horst_config::Config::default();
        config.house.games = vec!["chess".into()];
        config.sessions.reference_games = Vec::new();
        let rcadia = Rcadia::new(
            store,
            notifier,
            crate::RcadiaSettings::from_config(&config),
            stop_rx,
        )
        .await
        .unwrap();
        (rcadia, stop)
    }

    /// An open two-seat house table of `game`: its id.
    async fn house_table(r: &Rcadia, game: &str) -> String {
        let s = r
            .create(|id, now| {
                Session::create(
                    horst_sessions::NewSession {
                        session_id: id,
                        config: serde_json::json!({"minPlayers": 2, "maxPlayers": 2,
                            "turnBased": true, "sdkVersion": "2.0.0"}),
                        host_identity: "agent:agt_house".into(),
                        host_kind: HostKind::House,
                        game: horst_sessions::GameInfo {
                            game_id: Some(game.into()),
                            ..Default::default()
                        },
                        timings: Default::default(),
                    },
                    now,
                )
            })
            .await
            .unwrap();
        s.session_id().to_string()
    }

    fn request(game: &str, agent: &str, wait: Duration) -> SeekRequest {
        SeekRequest {
            game: game.into(),
            rated: true,
            identity: format!("agent:{agent}"),
            as_name: None,
            wait,
        }
    }

    /// A seek of a game nobody hosts (no table of it, not a house game) is refused at once
    /// after one look at the open tables. It looked again every 50 ms for its whole wait:
    /// 500 scans of every open table for one request of 25 s.
    #[tokio::test]
    async fn a_seek_of_a_game_nobody_hosts_is_refused_after_one_look() {
        let redis = horst_testkit::RedisServer::start();
        let (r, _stop) = layer(&redis).await;
        house_table(&r, "chess").await;
        let before = r.metrics().round_trips();
        let started = std::time::Instant::now();
        let got = r
            .seek(&request("nosuch", "agt_a1", Duration::from_secs(3)))
            .await;
        assert!(matches!(got, Err(SeekError::UnknownGame)), "{got:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "it waited");
        let trips = r.metrics().round_trips() - before;
        assert!(trips <= 3, "{trips} round trips for a game nobody hosts");
        // A game with a table (here not a house game) or a house game is sought as before.
        let other = house_table(&r, "rps").await;
        let got = r
            .seek(&request("rps", "agt_a3", Duration::ZERO))
            .await
            .unwrap();
        assert_eq!(got.0.session_id(), other, "the open rps table");
    }

    /// A seek of a house game that waits for a table looks again less and less often.
    #[tokio::test]
    async fn a_waiting_seek_backs_off() {
        let redis = horst_testkit::RedisServer::start();
        let (r, _stop) = layer(&redis).await;
        let before = r.metrics().round_trips();
        let got = r
            .seek(&request("chess", "agt_a1", Duration::from_secs(3)))
            .await;
        assert!(matches!(got, Err(SeekError::NoTable)), "{got:?}");
        let looks = r.metrics().round_trips() - before;
        // 0, 50, 150, 350, 750 ms, 1.55 s, 2.55 s, 3 s: eight looks, not sixty.
        assert!(looks <= 12, "{looks} looks in 3 s");
    }

    /// A waiting seek is answered as soon as the process starts to stop; it waited out its
    /// `wait` (up to 25 s), past the shutdown's grace, and was cut off unanswered.
    #[tokio::test]
    async fn a_waiting_seek_is_answered_when_the_process_stops() {
        let redis = horst_testkit::RedisServer::start();
        let (r, stop) = layer(&redis).await;
        let seek = tokio::spawn({
            let r = r.clone();
            async move {
                r.seek(&request("chess", "agt_c1", Duration::from_secs(25)))
                    .await
            }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asked = Instant::now();
        stop.send(true).unwrap();
        let got = tokio::time::timeout(Duration::from_secs(10), seek)
            .await
            .expect("the seek waited on after the stop")
            .unwrap();
        assert!(matches!(got, Err(SeekError::NoTable)), "{got:?}");
        assert!(asked.elapsed() < Duration::from_secs(10));
    }

    /// With `wait: 0` a seeker whose game's lock another seeker holds waits for it and looks
    /// once: it answered `no_table` at once, with a table open.
    #[tokio::test]
    async fn a_seek_with_no_wait_looks_once_even_when_another_seeker_picks() {
        let redis = horst_testkit::RedisServer::start();
        let (r, _stop) = layer(&redis).await;
        let id = house_table(&r, "chess").await;
        let store = r.store().clone();
        let lock = crate::keys::seek_lock(&store, "chess");
        let _: () = redis::cmd("SET")
            .arg(&lock)
            .arg("another")
            .arg("PX")
            .arg(400)
            .query_async(&mut store.conn())
            .await
            .unwrap();
        let got = r
            .seek(&request("chess", "agt_b1", Duration::ZERO))
            .await
            .unwrap();
        assert_eq!(got.0.session_id(), id);
    }

    /// One open seek per identity: a second seek of the same agent while the first waits is
    /// refused; another agent's is not, and once the first answered the agent seeks again.
    #[tokio::test]
    async fn one_open_seek_per_identity() {
        let redis = horst_testkit::RedisServer::start();
        let (r, _stop) = layer(&redis).await;
        let first = tokio::spawn({
            let r = r.clone();
            async move {
                r.seek(&request("chess", "agt_c1", Duration::from_millis(1_500)))
                    .await
            }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let again = r.seek(&request("chess", "agt_c1", Duration::ZERO)).await;
        assert!(matches!(again, Err(SeekError::Busy)), "{again:?}");
        let id = house_table(&r, "chess").await;
        let other = r
            .seek(&request("chess", "agt_c2", Duration::ZERO))
            .await
            .unwrap();
        assert_eq!(other.0.session_id(), id);
        let first = first.await.unwrap().unwrap();
        assert_eq!(first.0.session_id(), id, "both at the one table");
        let later = r
            .seek(&request("chess", "agt_c1", Duration::ZERO))
            .await
            .unwrap();
        assert_eq!(later.0.session_id(), id, "seated there already");
    }

    /// A pick that takes longer than the lock's time keeps the lock (it lapsed, and another
    /// seeker picked at the same time).
    #[tokio::test]
    async fn a_long_pick_keeps_its_lock() {
        let redis = horst_testkit::RedisServer::start();
        let store = horst_store::Store::connect(&redis.url(), "seek:")
            .await
            .unwrap();
        let lock = crate::keys::seek_lock(&store, "chess");
        let mut held = HeldLock::take(&store, &lock, "t1", 300)
            .await
            .unwrap()
            .unwrap();
        held.since = Instant::now() - Duration::from_millis(LOCK_MS);
        assert!(held.keep().await.unwrap());
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            HeldLock::take(&store, &lock, "t2", 300)
                .await
                .unwrap()
                .is_none(),
            "the lock lapsed while its holder picked"
        );
        held.release().await;
        assert!(HeldLock::take(&store, &lock, "t2", 300)
            .await
            .unwrap()
            .is_some());
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
