//! Ratings in Redis: the rater every horst process runs, the leaderboard and agent reads,
//! and the operator's reset and exclude. The rules are `rating.rs`'s.
//!
//! Exactly once: the write that finishes a rated game also puts its id in its bucket's
//! `ratings:pending` (`session_save.lua`, atomic with the finish). Any process's rater claims
//! due ids with a lease (`rating_claim.lua`), reads the game's replay and both ratings,
//! computes, and writes everything in one script (`rating_apply.lua`) that first checks the
//! game's marker (`rated:<id>`) and that neither rating moved since it was read; then it
//! takes the id off the pending set. A process killed between the claim and the write leaves
//! the id pending; when the lease runs out another process rates it. Killed after the write,
//! the next claim finds the marker and only takes the id off. Two processes rating the same
//! game: the marker lets one write.

use std::time::Duration;

use horst_store::script::{Argv, Decl, Script, Writes};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::buckets::BucketPlan;
use crate::keys;
use crate::rating::{self, is_agent_id, is_game_id, RatedGame, Rating};
use crate::replay::{self, Line};
use crate::{Rcadia, RcadiaError};

/// How long a claimed game is left to its rater before another process may take it.
const LEASE_MS: u64 = 10_000;
/// Games claimed per look.
const BATCH: usize = 16;
/// Longest sleep of the rater between looks: it looks when a game it knows of is due (the
/// claim returns the earliest one left) and when this process finishes a rated game
/// (`Inner::rate_wake`); this bounds how late a game finished by a process that died before rating
/// it is rated. (It looked every 250 ms, on a cluster 12 claims each time: 48 calls a second
/// per idle process.)
const POLL: Duration = Duration::from_secs(2);
/// Rating changes kept per agent and game (the agent page's history).
pub const HISTORY_KEPT: usize = 100;
/// Thinking times kept per agent and game (the median and p95 beside its name).
pub const THINK_KEPT: usize = 500;
/// How long a game's "rated" marker is kept at least: it must outlive the game's pending
/// entry, which a rater drops once the replay is gone. It is kept as long as the replay
/// (`sessions.replay_retention_hours`), and no longer: one key per rated game adds up, and
/// a session id is only minted again once its replay is gone (`session_save.lua`), when an
/// older game's marker must not stop the new game's rating.
const MARKER_MIN_MS: u64 = 3600 * 1000;

/// `lua/rating_claim.lua`: KEYS pending; ARGV lease, count; the claimed ids and the earliest
/// due time left (ms, as a score).
pub(crate) static CLAIM: Script<(Vec<String>, Option<String>)> = Script::new(Decl {
    file: horst_store::lua!("lua/rating_claim.lua"),
    keys: 1,
    argv: Argv::Exactly(2),
    writes: Writes::PrimaryOnly,
});

/// `lua/rating_apply.lua` (its header documents KEYS, ARGV and the reply).
pub(crate) static APPLY: Script<i64> = Script::new(Decl {
    file: horst_store::lua!("lua/rating_apply.lua"),
    keys: 13,
    argv: Argv::AtLeast(24),
    writes: Writes::Durable,
});

/// `lua/rating_idle.lua` (its header documents KEYS, ARGV and the reply): moves the ranked
/// agents idleness made provisional off the ranked board, before every read.
pub(crate) static IDLE: Script<(i64, i64)> = Script::new(Decl {
    file: horst_store::lua!("lua/rating_idle.lua"),
    keys: 4,
    argv: Argv::Exactly(2),
    // A move lost in a failover is made again by the next read (its index entry is lost
    // with it).
    writes: Writes::PrimaryOnly,
});

/// Agents the idle script moves per call (it is called again while it moves this many).
const IDLE_MOVES: usize = 1000;
/// Ranked agents read per step while indexing a board ranked before the idle index.
const INDEX_BATCH: usize = 500;

/// How long a pair's count of rated games of a day is kept: past the day, and past a game
/// of that day rated late (a rater that was down).
const PAIR_COUNT_MS: u64 = 2 * rating::PERIOD_MS;

/// One rating change, as the agent page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub at: u64,
    pub session_id: String,
    pub opponent: String,
    pub opponent_name: Option<String>,
    /// 1 win, 0.5 draw, 0 loss.
    pub score: f64,
    /// After the game (as before it, when the game was not rated).
    pub rating: f64,
    pub rd: f64,
    /// Why the game was played but not rated: `pair_daily_cap` (the two agents had
    /// [`rating::PAIR_GAMES_PER_DAY`] games rated that UTC day already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrated: Option<String>,
}

/// [`HistoryEntry::unrated`] of a game past its pair's daily cap.
pub const PAIR_DAILY_CAP: &str = "pair_daily_cap";

/// One agent on a leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Standing {
    /// Its place among the ranked agents; `None` for a provisional one (not ranked).
    pub rank: Option<usize>,
    pub agent: String,
    pub name: Option<String>,
    pub rating: f64,
    pub rd: f64,
    pub provisional: bool,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
    /// Median and 95th percentile of its thinking time per move (ms), latest games.
    pub think_median_ms: Option<u64>,
    pub think_p95_ms: Option<u64>,
    /// Its validation game against the house's reference player, once played.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<rating::Validation>,
}

/// `GET /api/v1/leaderboard/<game>`: the ranked agents (not provisional), ranked by
/// rating among themselves, and the provisional ones apart, unranked, by rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Leaderboard {
    pub game: String,
    pub system: String,
    /// Where this page starts in each of the two lists (`?offset=`; 0: the top).
    #[serde(default)]
    pub offset: usize,
    /// The `offset` of the next page, while either list has more; `null` on the last page.
    #[serde(default)]
    pub next_offset: Option<usize>,
    pub standings: Vec<Standing>,
    pub provisional: Vec<Standing>,
}

/// `GET /api/v1/leaderboard/<game>/<agent>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRating {
    pub game: String,
    pub agent: String,
    pub excluded: bool,
    pub standing: Option<Standing>,
    /// Newest first.
    pub history: Vec<HistoryEntry>,
}

/// One agent of a board page: its place in the page, its score as Redis wrote it, its
/// rating and thinking times.
struct BoardEntry {
    place: usize,
    agent: String,
    score: String,
    rating: Rating,
    think: Vec<u64>,
}

/// When a rating turns provisional by idleness, as the apply script takes it ('' = never,
/// or provisional already).
fn idle_at(r: &Rating) -> String {
    r.provisional_by_idleness_at()
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// What a rating key holds, parsed (`None`: nothing or something unreadable).
fn parse_rating(raw: &Option<String>) -> Option<Rating> {
    raw.as_deref().and_then(|r| serde_json::from_str(r).ok())
}

/// A standing as of `now` (its RD grown by the idle rating periods since its last game),
/// `rank` set only if it is not provisional then.
fn standing(rank: usize, agent: &str, r: &Rating, think: &[u64], now: u64) -> Standing {
    let r = &r.at(now);
    let mp = replay::median_p95(think);
    Standing {
        rank: (!r.provisional()).then_some(rank),
        agent: agent.to_string(),
        name: r.name.clone(),
        rating: r.rating,
        rd: r.rd,
        provisional: r.provisional(),
        games: r.games,
        wins: r.wins,
        losses: r.losses,
        draws: r.draws,
        think_median_ms: mp.map(|m| m.0),
        think_p95_ms: mp.map(|m| m.1),
        validation: r.validation.clone(),
    }
}

impl Rcadia {
    /// The rater: runs until `shutdown` turns true. `pause_ms` waits between reading and
    /// writing a game's ratings (`sessions.rating_pause_ms`, 0 but in crash tests).
    ///
    /// A look claims only from the buckets that can have a game due: those whose earliest
    /// game (the claim returns it) is due, and those this process finished a rated game in
    /// (`Inner::rate_wake`); every bucket at least every [`POLL`] (a sweep: games finished by
    /// other processes, or left by one that died). On one server (one bucket) every look is
    /// a sweep.
    pub async fn run_rater(self, mut shutdown: watch::Receiver<bool>, pause_ms: u64) {
        let mut plan = BucketPlan::new(self.inner.store.buckets(), POLL);
        loop {
            plan.take(&self.inner.rate_wake);
            let look = plan.look(self.now_ms().await.ok());
            let sleep = match self.rate_in(&look, pause_ms).await {
                Ok((claimed, nexts)) => {
                    plan.popped(nexts);
                    if claimed >= BATCH {
                        Duration::ZERO
                    } else {
                        let to = self.time_to_rating(plan.next_known()).await;
                        to.min(plan.until_sweep())
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "rater: cannot rate finished games; retrying");
                    plan.failed();
                    Duration::from_millis(500)
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(sleep) => {}
                _ = self.inner.rate_wake.notify.notified() => {}
                _ = shutdown.wait_for(|s| *s) => return,
            }
        }
    }

    /// How long until `next` (the earliest pending game's due time), at most [`POLL`], on
    /// the process's server clock.
    async fn time_to_rating(&self, next: Option<u64>) -> Duration {
        match (next, self.now_ms().await) {
            (Some(next), Ok(now)) => Duration::from_millis(next.saturating_sub(now)).min(POLL),
            _ => POLL,
        }
    }

    /// Rates every due pending game once (of every bucket); returns how many were claimed
    /// (at most a batch from a bucket) and when the earliest game left is due.
    pub async fn rate_due(&self, pause_ms: u64) -> Result<(usize, Option<u64>), RcadiaError> {
        let all: Vec<usize> = (0..self.inner.store.buckets()).collect();
        let (claimed, nexts) = self.rate_in(&all, pause_ms).await?;
        Ok((claimed, nexts.into_iter().filter_map(|(_, n)| n).min()))
    }

    /// Rates every due pending game of `buckets` once; returns the most claimed from one
    /// bucket and, for each bucket, when the earliest game left in it is due.
    async fn rate_in(
        &self,
        buckets: &[usize],
        pause_ms: u64,
    ) -> Result<(usize, Vec<(usize, Option<u64>)>), RcadiaError> {
        let store = &self.inner.store;
        let mut claimed = 0;
        let mut nexts = Vec::with_capacity(buckets.len());
        for &bucket in buckets {
            let (ids, first) = CLAIM
                .call(store)
                .key(keys::ratings_pending_in(store, bucket))
                .arg(LEASE_MS)
                .arg(BATCH)
                .run()
                .await?;
            claimed = claimed.max(ids.len());
            nexts.push((
                bucket,
                first
                    .and_then(|s| s.parse::<f64>().ok())
                    .map(|at| at as u64),
            ));
            for id in &ids {
                // A stopping process leaves the rest of its batch to its lease: each game
                // waited out its own timeout with Redis away, past the stop's grace.
                if *self.inner.shutdown.borrow() {
                    return Ok((claimed, nexts));
                }
                match self.rate_one(id, pause_ms).await {
                    Ok(()) => {}
                    // Redis away: the next game of the batch would wait as long; the lease
                    // gives them all back.
                    Err(RcadiaError::Redis(e)) if horst_store::is_unreachable(&e) => {
                        tracing::warn!(session = %id, error = %e, "rater: Redis unreachable; the batch waits for its lease");
                        return Err(RcadiaError::Redis(e));
                    }
                    Err(e) => {
                        tracing::warn!(session = %id, error = %e, "rater: game not rated yet")
                    }
                }
            }
        }
        Ok((claimed, nexts))
    }

    /// Takes a game off its bucket's pending set (after its ratings were written, or when it
    /// does not count). Idempotent.
    async fn unqueue(&self, id: &str) -> Result<(), RcadiaError> {
        let store = &self.inner.store;
        let mut conn = store.conn();
        let _: () = redis::cmd("ZREM")
            .arg(keys::ratings_pending_of(store, id))
            .arg(id)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// The whole replay of a session as stored (no viewer filtering: see
    /// [`replay::assemble`]).
    pub async fn replay_lines(&self, id: &str) -> Result<Vec<Line>, RcadiaError> {
        let mut conn = self.inner.store.conn();
        let raw: Vec<Vec<u8>> = redis::cmd("LRANGE")
            .arg(keys::replay(&self.inner.store, id))
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        Ok(replay::parse_lines(&raw))
    }

    async fn rate_one(&self, id: &str, pause_ms: u64) -> Result<(), RcadiaError> {
        let store = &self.inner.store;
        let lines = replay::assemble(self.replay_lines(id).await?, None);
        let ended_at = lines.iter().rev().find_map(|l| match l {
            Line::End { at, .. } => Some(*at),
            _ => None,
        });
        let (game, ended_at) = match ended_at {
            Some(at) => (rated_of_replay(&lines), at),
            // No replay (the operator switched replays off, `arena.replays`): the session's
            // record, kept a day after its end, without thinking times.
            None => match self.load(id).await {
                Ok(s) => (rating::rates(&s), s.ended_at_ms().unwrap_or_default()),
                Err(RcadiaError::NotFound | RcadiaError::Gone) => (None, 0),
                Err(e) => return Err(e),
            },
        };
        let Some(game) = game else {
            // Not a rated game after all (or its replay and record are gone): nothing to do.
            return self.unqueue(id).await;
        };
        let think = replay::think_times(&lines);
        // The UTC day of the game's end: its pair's count of rated games that day.
        let day = ended_at / rating::PERIOD_MS;
        let pair = {
            let (a, b) = (&game.seats[0].0, &game.seats[1].0);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            keys::rating_pair(store, &game.game, day, lo, hi)
        };
        for _ in 0..8 {
            let (a, b) = (&game.seats[0].0, &game.seats[1].0);
            let mut conn = store.conn();
            let (ra, rb): (Option<String>, Option<String>) = redis::pipe()
                .cmd("GET")
                .arg(keys::rating(store, &game.game, a))
                .cmd("GET")
                .arg(keys::rating(store, &game.game, b))
                .query_async(&mut conn)
                .await?;
            let now = self.now_ms().await?;
            let before = [
                parse_rating(&ra).unwrap_or_default(),
                parse_rating(&rb).unwrap_or_default(),
            ];
            let after = rating::after_game(&game, id, [&before[0], &before[1]], now);
            if pause_ms > 0 {
                tokio::time::sleep(Duration::from_millis(pause_ms)).await;
            }
            let history = |seat: usize, rated: bool| {
                let r = if rated {
                    after[seat].clone()
                } else {
                    before[seat].at(now)
                };
                HistoryEntry {
                    at: now,
                    session_id: id.to_string(),
                    opponent: game.seats[1 - seat].0.clone(),
                    opponent_name: game.seats[1 - seat].2.clone(),
                    score: if seat == 0 {
                        game.score
                    } else {
                        1.0 - game.score
                    },
                    rating: r.rating,
                    rd: r.rd,
                    unrated: (!rated).then(|| PAIR_DAILY_CAP.to_string()),
                }
            };
            let mut call = APPLY.call(store);
            call.key(keys::rated(store, id))
                .key(keys::rating(store, &game.game, a))
                .key(keys::rating(store, &game.game, b))
                .key(keys::rating_history(store, &game.game, a))
                .key(keys::rating_history(store, &game.game, b))
                .key(keys::rating_think(store, &game.game, a))
                .key(keys::rating_think(store, &game.game, b))
                .key(keys::leaderboard(store, &game.game))
                .key(keys::leaderboard_games(store))
                .key(keys::rating_excluded(store, &game.game))
                .key(&pair)
                .key(keys::leaderboard_provisional(store, &game.game))
                .key(keys::leaderboard_idle(store, &game.game))
                .arg(id)
                .arg(ra.unwrap_or_default())
                .arg(rb.unwrap_or_default())
                .arg(to_json(&after[0])?)
                .arg(to_json(&after[1])?)
                .arg(a)
                .arg(b)
                .arg(after[0].rating)
                .arg(after[1].rating)
                .arg(to_json(&history(0, true))?)
                .arg(to_json(&history(1, true))?)
                .arg(HISTORY_KEPT)
                .arg(THINK_KEPT)
                .arg(self.inner.settings.replay_retention_ms.max(MARKER_MIN_MS))
                .arg(&game.game)
                .arg(rating::PAIR_GAMES_PER_DAY)
                .arg(PAIR_COUNT_MS)
                .arg(to_json(&history(0, false))?)
                .arg(to_json(&history(1, false))?)
                .arg(if after[0].provisional() { "1" } else { "0" })
                .arg(if after[1].provisional() { "1" } else { "0" })
                .arg(idle_at(&after[0]))
                .arg(idle_at(&after[1]));
            for agent in [a, b] {
                let t = think.get(agent).map(Vec::as_slice).unwrap_or_default();
                call.arg(t.len());
                for ms in t {
                    call.arg(*ms);
                }
            }
            match call.run().await? {
                -1 => continue,
                // Written now, or before (a process that died after its write), or not
                // rated (an excluded agent, the pair's daily cap): off the pending set.
                _ => return self.unqueue(id).await,
            }
        }
        Err(RcadiaError::Internal(format!(
            "ratings of {id}: the agents' ratings kept moving; the game stays pending"
        )))
    }

    /// A page of a game's leaderboard: `limit` ranked agents from place `offset + 1`, and
    /// apart from them `limit` provisional ones from the `offset`th on (both by rating).
    ///
    /// Ranked agents that idleness made provisional are moved off the ranked board first
    /// ([`Rcadia::tidy_board`]), so a rank here, and on the agent's own page, is one more than
    /// the agents ranked as of now rated higher; equal ratings share a rank (1, 2, 2, 4).
    /// Pages are stable under equal ratings: the board orders equals by agent id.
    pub async fn leaderboard(
        &self,
        game: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Leaderboard, RcadiaError> {
        let store = &self.inner.store;
        let mut out = Leaderboard {
            game: game.to_string(),
            system: "glicko2".into(),
            offset,
            next_offset: None,
            standings: Vec::new(),
            provisional: Vec::new(),
        };
        if !is_game_id(game) || limit == 0 {
            return Ok(out);
        }
        let ranked_key = keys::leaderboard(store, game);
        let mut attempt = 0;
        let (now, ranked, more) = loop {
            let now = self.now_ms().await?;
            self.tidy_or_warn(game, now).await?;
            let (got, more) = self.board_page(&ranked_key, game, offset, limit).await?;
            // Provisional as of now but still ranked: its index entry was lost (a failover);
            // index it as due and read again, so both views keep agreeing.
            let stale: Vec<&str> = got
                .iter()
                .filter(|e| e.rating.at(now).provisional())
                .map(|e| e.agent.as_str())
                .collect();
            attempt += 1;
            if stale.is_empty() || attempt == 3 {
                break (now, got, more);
            }
            let mut pipe = redis::pipe();
            for agent in stale {
                pipe.cmd("ZADD")
                    .arg(keys::leaderboard_idle(store, game))
                    .arg("NX")
                    .arg(0)
                    .arg(agent)
                    .ignore();
            }
            let written: Result<(), _> = pipe.query_async(&mut store.conn()).await;
            if let Err(e) = written {
                tracing::warn!(game, error = %e, "leaderboard: cannot index idle agents");
                break (now, got, more);
            }
        };
        // The first of the page: one more than the agents rated higher (the score as
        // Redis wrote it); after it, a new rating starts at its place on the board.
        let mut rank = 0;
        let mut prev: Option<&str> = None;
        for e in &ranked {
            rank = match prev {
                Some(p) if p == e.score => rank,
                Some(_) => offset + e.place + 1,
                None => self.higher(&ranked_key, &e.score).await? + 1,
            };
            prev = Some(&e.score);
            out.standings
                .push(standing(rank, &e.agent, &e.rating, &e.think, now));
        }
        let (provisional, more_provisional) = self
            .board_page(
                &keys::leaderboard_provisional(store, game),
                game,
                offset,
                limit,
            )
            .await?;
        for e in provisional {
            let mut s = standing(0, &e.agent, &e.rating, &e.think, now);
            s.rank = None;
            out.provisional.push(s);
        }
        if more || more_provisional {
            out.next_offset = Some(offset + limit);
        }
        Ok(out)
    }

    /// How many agents of the board `key` are rated above `score` (as Redis wrote it).
    async fn higher(&self, key: &str, score: &str) -> Result<usize, RcadiaError> {
        Ok(redis::cmd("ZCOUNT")
            .arg(key)
            .arg(format!("({score}"))
            .arg("+inf")
            .query_async(&mut self.inner.store.conn())
            .await?)
    }

    /// [`Rcadia::tidy_board`], but a Redis that refuses the write (out of memory, read
    /// only) still answers the read, as before the move existed: an idle agent is then
    /// listed as provisional by the board and may still count on agents' own pages.
    async fn tidy_or_warn(&self, game: &str, now: u64) -> Result<(), RcadiaError> {
        match self.tidy_board(game, now).await {
            Err(RcadiaError::Redis(e)) if !horst_store::is_unreachable(&e) => {
                tracing::warn!(game, error = %e, "leaderboard: cannot move idle agents off the ranked board; answering without");
                Ok(())
            }
            other => other,
        }
    }

    /// Moves the ranked agents of `game` that idleness made provisional as of `now` off the
    /// ranked board (`lua/rating_idle.lua`), indexing a board ranked before the index
    /// first ([`Rcadia::index_board`]). Every leaderboard and agent read runs it, so both
    /// count the same ranked agents.
    async fn tidy_board(&self, game: &str, now: u64) -> Result<(), RcadiaError> {
        let store = &self.inner.store;
        let run = || {
            IDLE.call(store)
                .key(keys::leaderboard(store, game))
                .key(keys::leaderboard_provisional(store, game))
                .key(keys::leaderboard_idle(store, game))
                .key(keys::leaderboard_idle_built(store, game))
                .arg(now)
                .arg(IDLE_MOVES)
                .run()
        };
        let (mut moved, built) = run().await?;
        if built == 0 {
            self.index_board(game).await?;
            moved = run().await?.0;
        }
        while moved as usize >= IDLE_MOVES {
            moved = run().await?.0;
        }
        Ok(())
    }

    /// Puts every ranked agent of `game` that is not in the idle index there (boards ranked
    /// before it), then marks the index complete. `NX`: an entry the rater wrote meanwhile
    /// (a newer game) is newer than this one.
    async fn index_board(&self, game: &str) -> Result<(), RcadiaError> {
        let store = &self.inner.store;
        let (ranked, idle) = (
            keys::leaderboard(store, game),
            keys::leaderboard_idle(store, game),
        );
        let mut conn = store.conn();
        let mut cursor: u64 = 0;
        loop {
            let (next, page): (u64, Vec<String>) = redis::cmd("ZSCAN")
                .arg(&ranked)
                .arg(cursor)
                .arg("COUNT")
                .arg(INDEX_BATCH)
                .query_async(&mut conn)
                .await?;
            // ZSCAN answers member, score, member, score...
            let agents: Vec<&String> = page.iter().step_by(2).collect();
            if !agents.is_empty() {
                let mut get = redis::pipe();
                for a in &agents {
                    get.cmd("GET").arg(keys::rating(store, game, a));
                }
                let raw: Vec<Option<String>> = get.query_async(&mut conn).await?;
                let mut add = redis::pipe();
                for (a, r) in agents.iter().zip(&raw) {
                    let Some(r) = parse_rating(r) else { continue };
                    // Provisional already (ranked by a version before the split): due now.
                    let at = if r.provisional() {
                        Some(0)
                    } else {
                        r.provisional_by_idleness_at()
                    };
                    if let Some(at) = at {
                        add.cmd("ZADD")
                            .arg(&idle)
                            .arg("NX")
                            .arg(at)
                            .arg(*a)
                            .ignore();
                    }
                }
                let _: () = add.query_async(&mut conn).await?;
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        let _: () = redis::cmd("SET")
            .arg(keys::leaderboard_idle_built(store, game))
            .arg(1)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    /// `count` agents of the board `key` from place `start` (best first), with their ratings
    /// and thinking times, and whether the board has more after them.
    async fn board_page(
        &self,
        key: &str,
        game: &str,
        start: usize,
        count: usize,
    ) -> Result<(Vec<BoardEntry>, bool), RcadiaError> {
        let store = &self.inner.store;
        let mut conn = store.conn();
        let mut agents: Vec<(String, String)> = redis::cmd("ZREVRANGE")
            .arg(key)
            .arg(start)
            .arg(start + count)
            .arg("WITHSCORES")
            .query_async(&mut conn)
            .await?;
        let more = agents.len() > count;
        agents.truncate(count);
        let mut out = Vec::new();
        if agents.is_empty() {
            return Ok((out, more));
        }
        let mut pipe = redis::pipe();
        for (a, _) in &agents {
            pipe.cmd("GET").arg(keys::rating(store, game, a));
            pipe.cmd("LRANGE")
                .arg(keys::rating_think(store, game, a))
                .arg(0)
                .arg(-1);
        }
        let got: Vec<redis::Value> = pipe.query_async(&mut conn).await?;
        let mut it = got.into_iter();
        for (place, (agent, score)) in agents.into_iter().enumerate() {
            let (Some(r), Some(t)) = (it.next(), it.next()) else {
                break;
            };
            let r: Option<String> = redis::from_redis_value(r).unwrap_or(None);
            let think: Vec<u64> = redis::from_redis_value(t).unwrap_or_default();
            if let Some(rating) = parse_rating(&r) {
                out.push(BoardEntry {
                    place,
                    agent,
                    score,
                    rating,
                    think,
                });
            }
        }
        Ok((out, more))
    }

    /// The games that have a leaderboard.
    pub async fn rated_games(&self) -> Result<Vec<String>, RcadiaError> {
        let store = &self.inner.store;
        let mut conn = store.conn();
        let mut games: Vec<String> = redis::cmd("SMEMBERS")
            .arg(keys::leaderboard_games(store))
            .query_async(&mut conn)
            .await?;
        games.sort();
        Ok(games)
    }

    /// One agent's rating, rank and history in a game.
    pub async fn agent_rating(&self, game: &str, agent: &str) -> Result<AgentRating, RcadiaError> {
        let store = &self.inner.store;
        let mut out = AgentRating {
            game: game.to_string(),
            agent: agent.to_string(),
            excluded: false,
            standing: None,
            history: Vec::new(),
        };
        if !is_game_id(game) || !is_agent_id(agent) {
            return Ok(out);
        }
        // The same ranked agents as the leaderboard's (`tidy_board`), as of the same now.
        let now = self.now_ms().await?;
        self.tidy_or_warn(game, now).await?;
        let mut conn = store.conn();
        let (raw, think, history, score, excluded): (
            Option<String>,
            Vec<u64>,
            Vec<String>,
            Option<String>,
            bool,
        ) = redis::pipe()
            .cmd("GET")
            .arg(keys::rating(store, game, agent))
            .cmd("LRANGE")
            .arg(keys::rating_think(store, game, agent))
            .arg(0)
            .arg(-1)
            .cmd("LRANGE")
            .arg(keys::rating_history(store, game, agent))
            .arg(0)
            .arg(-1)
            .cmd("ZSCORE")
            .arg(keys::leaderboard(store, game))
            .arg(agent)
            .cmd("SISMEMBER")
            .arg(keys::rating_excluded(store, game))
            .arg(agent)
            .query_async(&mut conn)
            .await?;
        out.excluded = excluded;
        // Its place on the ranked board: one more than the agents rated higher (equals
        // share a rank, as on the leaderboard). The score is passed back as Redis wrote it.
        let rank: Option<usize> = match &score {
            Some(score) => Some(self.higher(&keys::leaderboard(store, game), score).await?),
            None => None,
        };
        // Its place on the ranked board (`None` while provisional: `standing`).
        out.standing =
            parse_rating(&raw).map(|r| standing(rank.map_or(0, |n| n + 1), agent, &r, &think, now));
        if let Some(s) = out.standing.as_mut().filter(|_| rank.is_none()) {
            s.rank = None;
        }
        out.history = history
            .iter()
            .filter_map(|h| serde_json::from_str(h).ok())
            .collect();
        Ok(out)
    }

    /// `horst admin rating reset`: the agent starts again in this game (rating, history,
    /// thinking times and exclusion gone). Returns whether it had anything.
    pub async fn reset_rating(&self, game: &str, agent: &str) -> Result<bool, RcadiaError> {
        let store = &self.inner.store;
        let mut conn = store.durable().await?;
        let (deleted,): (u32,) = redis::pipe()
            .atomic()
            .cmd("DEL")
            .arg(keys::rating(store, game, agent))
            .arg(keys::rating_history(store, game, agent))
            .arg(keys::rating_think(store, game, agent))
            .cmd("ZREM")
            .arg(keys::leaderboard(store, game))
            .arg(agent)
            .ignore()
            .cmd("ZREM")
            .arg(keys::leaderboard_provisional(store, game))
            .arg(agent)
            .ignore()
            .cmd("ZREM")
            .arg(keys::leaderboard_idle(store, game))
            .arg(agent)
            .ignore()
            .cmd("SREM")
            .arg(keys::rating_excluded(store, game))
            .arg(agent)
            .ignore()
            .query_async(&mut conn)
            .await?;
        store.settle(&mut conn).await?;
        Ok(deleted > 0)
    }

    /// `horst admin rating exclude`: off the leaderboard, and its games are no longer rated
    /// (for either side) until a reset.
    pub async fn exclude_rating(&self, game: &str, agent: &str) -> Result<(), RcadiaError> {
        let store = &self.inner.store;
        let mut conn = store.durable().await?;
        let _: () = redis::pipe()
            .atomic()
            .cmd("SADD")
            .arg(keys::rating_excluded(store, game))
            .arg(agent)
            .ignore()
            .cmd("ZREM")
            .arg(keys::leaderboard(store, game))
            .arg(agent)
            .ignore()
            .cmd("ZREM")
            .arg(keys::leaderboard_provisional(store, game))
            .arg(agent)
            .ignore()
            .cmd("ZREM")
            .arg(keys::leaderboard_idle(store, game))
            .arg(agent)
            .ignore()
            .query_async(&mut conn)
            .await?;
        store.settle(&mut conn).await?;
        Ok(())
    }
}

/// The rated game a replay describes (its start and end lines), if it counts.
pub fn rated_of_replay(lines: &[Line]) -> Option<RatedGame> {
    let (game_id, host) = lines.iter().find_map(|l| match l {
        Line::Start { game_id, host, .. } => Some((game_id.as_deref(), *host)),
        _ => None,
    })?;
    // A table that never started (no seats line) is no game.
    if !lines.iter().any(|l| matches!(l, Line::Players { .. })) {
        return None;
    }
    lines.iter().rev().find_map(|l| match l {
        Line::End {
            result,
            reason,
            players,
            ..
        } => rating::rated_game(game_id, host, reason.as_deref(), players, result.as_ref()),
        _ => None,
    })
}

/// A value the apply script takes as JSON.
fn to_json<T: Serialize>(v: &T) -> Result<String, RcadiaError> {
    serde_json::to_string(v)
        .map_err(|e| RcadiaError::Internal(format!("rating does not encode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Seat;
    use horst_sessions::HostKind;
    use serde_json::json;

    fn seat(n: u32, agent: &str) -> Seat {
        Seat {
            seat: n,
            player_id: format!("p_{n}"),
            name: None,
            agent: Some(agent.to_string()),
            left: false,
        }
    }

    /// A house table two agents sat at that ended before its game started (an operator
    /// ended it in its lobby, a reserved rematch nobody began) is no rated game; the same
    /// table with its game started is.
    #[test]
    fn a_table_that_never_started_is_not_rated() {
        let seats = vec![seat(0, "agt_aa"), seat(1, "agt_bb")];
        let start = Line::Start {
            at: 0,
            session_id: "ses_1".into(),
            series_id: "ses_1".into(),
            round: 1,
            game_id: Some("chess".into()),
            game_title: None,
            host: HostKind::House,
            config: json!({}),
            previous_session_id: None,
        };
        let end = Line::End {
            at: 9,
            result: Some(json!({"winner": "p_0"})),
            reason: Some("game_over".into()),
            players: seats.clone(),
        };
        assert!(rated_of_replay(&[start.clone(), end.clone()]).is_none());
        let played = Line::Players {
            at: 1,
            players: seats,
        };
        assert!(rated_of_replay(&[start, played, end]).is_some());
    }
}
