//! Ratings per game: Glicko-2 (Glickman, "Example of the Glicko-2 system", 2013), pure.
//!
//! Why Glicko-2 and not a Bradley-Terry fit: it updates one game at a time (each finished
//! game is rated once, in one atomic write, with nothing to refit), it carries its own
//! uncertainty (RD: a new agent moves fast and shows as provisional while RD is high), and it
//! is what Lichess rates its bots with, so its numbers read familiar. Each game is its own
//! rating period (as Lichess does), and between games an agent's RD grows by the paper's
//! step 6 once per whole idle rating period of [`PERIOD_MS`] (one day) since its rating last
//! changed, up to [`START_RD`] ([`Rating::at`]): applied before its next game is rated and
//! on every read, so an agent that stopped playing shows its growing uncertainty (and turns
//! provisional again after about 80 idle days from a settled RD of 60).
//!
//! Which games count ([`rated_game`]): tables hosted by the house (a third-party host could
//! fake results) between two different agents, of a game with a plain id; `winner: null` (or
//! none) is a draw; nothing for games the host ended (`host_disconnected`, `host_left`) or
//! that every player forfeited at once (`forfeitedByAll`: both clocks ran out); at
//! most [`PAIR_GAMES_PER_DAY`] games of one pair of agents a day (`leaderboard.rs`).

use horst_sessions::{HostKind, Session};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::replay::Seat;

/// Glicko-2 scale factor (400 / ln 10).
const SCALE: f64 = 173.7178;
/// The system constant: how fast volatility may change (the paper's example uses 0.5).
pub const TAU: f64 = 0.5;
/// Convergence tolerance of the volatility iteration.
const EPSILON: f64 = 0.000_001;
/// A new agent's rating.
pub const START_RATING: f64 = 1500.0;
pub const START_RD: f64 = 350.0;
pub const START_VOLATILITY: f64 = 0.06;
/// Provisional (listed apart from the ranked agents, not ranked) while it has fewer than
/// this many rated games or its RD is above [`PROVISIONAL_RD`].
pub const PROVISIONAL_GAMES: u32 = 5;
pub const PROVISIONAL_RD: f64 = 110.0;
/// Games between the same two agents rated per UTC day (of the game's end); later ones
/// that day are played but not rated, so two agents cannot farm a rating off each other.
pub const PAIR_GAMES_PER_DAY: u32 = 10;
/// The length of an idle rating period: RD grows once per whole day without a rated game.
pub const PERIOD_MS: u64 = 24 * 3600 * 1000;

/// One agent's rating in one game, as stored (JSON in `rating:<game>:<agent>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rating {
    pub rating: f64,
    pub rd: f64,
    pub volatility: f64,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
    /// The latest name the agent played under (untrusted text).
    #[serde(default)]
    pub name: Option<String>,
    /// When it last changed (Unix ms).
    #[serde(default)]
    pub updated_at: u64,
    /// Its validation game: the first game it played against the house's reference player
    /// (`reference.rs`), where the game has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
}

/// An agent's validation game in a game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    pub session_id: String,
    /// 1 won, 0.5 drew, 0 lost against the reference player.
    pub score: f64,
    pub at: u64,
}

impl Default for Rating {
    fn default() -> Self {
        Rating {
            rating: START_RATING,
            rd: START_RD,
            volatility: START_VOLATILITY,
            games: 0,
            wins: 0,
            losses: 0,
            draws: 0,
            name: None,
            updated_at: 0,
            validation: None,
        }
    }
}

impl Rating {
    pub fn provisional(&self) -> bool {
        self.games < PROVISIONAL_GAMES || self.rd > PROVISIONAL_RD
    }

    /// Whole idle rating periods from its last change to `now`.
    pub fn idle_periods(&self, now: u64) -> u64 {
        if self.updated_at == 0 {
            return 0;
        }
        now.saturating_sub(self.updated_at) / PERIOD_MS
    }

    /// This rating as of `now`: Glicko-2's step 6 once per idle period (RD² grows by σ² on
    /// the Glicko-2 scale each period; rating and volatility stay), capped at [`START_RD`].
    pub fn at(&self, now: u64) -> Rating {
        let n = self.idle_periods(now);
        if n == 0 {
            return self.clone();
        }
        let phi = self.rd / SCALE;
        let grown = (phi * phi + n as f64 * self.volatility * self.volatility).sqrt() * SCALE;
        Rating {
            rd: grown.min(START_RD).max(self.rd),
            ..self.clone()
        }
    }

    /// When this rating, not provisional now, turns provisional by idleness alone (its RD
    /// grown past [`PROVISIONAL_RD`] by [`Rating::at`]): the start of that idle period, in
    /// Unix ms. `None` if it never does (no `updated_at`, no volatility, or provisional
    /// already). The leaderboard moves it off the ranked board then (`leaderboard.rs`).
    pub fn provisional_by_idleness_at(&self) -> Option<u64> {
        if self.provisional() || self.updated_at == 0 || self.volatility <= 0.0 {
            return None;
        }
        let (phi, limit, s2) = (
            self.rd / SCALE,
            PROVISIONAL_RD / SCALE,
            self.volatility * self.volatility,
        );
        // The first whole period n with φ² + nσ² past the limit; the float estimate is
        // checked against `at` itself, so both always agree.
        let guess = ((limit * limit - phi * phi) / s2).floor().max(0.0);
        let guess = if guess.is_finite() && guess < 1e12 {
            guess as u64
        } else {
            return None;
        };
        let at = |n: u64| self.updated_at.saturating_add(n.saturating_mul(PERIOD_MS));
        let mut n = guess.saturating_sub(2).max(1);
        while n > 1 && self.at(at(n - 1)).provisional() {
            n -= 1;
        }
        while !self.at(at(n)).provisional() {
            n += 1;
            if n > guess + 8 {
                return None;
            }
        }
        Some(at(n))
    }
}

/// One game's result against one opponent: the opponent's rating and RD, and the score
/// (1 win, 0.5 draw, 0 loss).
#[derive(Debug, Clone, Copy)]
pub struct Game {
    pub opponent_rating: f64,
    pub opponent_rd: f64,
    pub score: f64,
}

/// Glicko-2's step 2 to 8 for one rating period: the new (rating, RD, volatility).
pub fn glicko2(rating: f64, rd: f64, volatility: f64, games: &[Game]) -> (f64, f64, f64) {
    let mu = (rating - START_RATING) / SCALE;
    let phi = rd / SCALE;
    if games.is_empty() {
        // Step 6 only: uncertainty grows.
        let phi_star = (phi * phi + volatility * volatility).sqrt();
        return (rating, phi_star * SCALE, volatility);
    }
    let g = |phi_j: f64| 1.0 / (1.0 + 3.0 * phi_j * phi_j / (std::f64::consts::PI.powi(2))).sqrt();
    let e = |mu_j: f64, phi_j: f64| 1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp());
    let mut v_inv = 0.0;
    let mut delta_sum = 0.0;
    for game in games {
        let mu_j = (game.opponent_rating - START_RATING) / SCALE;
        let phi_j = game.opponent_rd / SCALE;
        let (gj, ej) = (g(phi_j), e(mu_j, phi_j));
        v_inv += gj * gj * ej * (1.0 - ej);
        delta_sum += gj * (game.score - ej);
    }
    let v = 1.0 / v_inv;
    let delta = v * delta_sum;
    // Step 5: the new volatility (Illinois algorithm).
    let a = (volatility * volatility).ln();
    let f = |x: f64| {
        let ex = x.exp();
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex).powi(2))
            - (x - a) / (TAU * TAU)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * TAU) < 0.0 {
            k += 1.0;
        }
        a - k * TAU
    };
    let (mut f_a, mut f_b) = (f(big_a), f(big_b));
    let mut rounds = 0;
    while (big_b - big_a).abs() > EPSILON && rounds < 100 {
        let c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = c;
        f_b = f_c;
        rounds += 1;
    }
    let sigma = (big_a / 2.0).exp();
    // Steps 6 to 8.
    let phi_star = (phi * phi + sigma * sigma).sqrt();
    let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu_new = mu + phi_new * phi_new * delta_sum;
    (mu_new * SCALE + START_RATING, phi_new * SCALE, sigma)
}

/// A finished game that counts, as the rater sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedGame {
    pub game: String,
    /// (agent id, player id, name) of seat 0 and seat 1.
    pub seats: [(String, String, Option<String>); 2],
    /// Seat 0's score: 1, 0.5 or 0.
    pub score: f64,
}

/// Whether a game id may name rating keys and pages: what the house accepts.
pub fn is_game_id(g: &str) -> bool {
    !g.is_empty()
        && g.len() <= 64
        && g.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether an agent id may name rating keys (`agt_` and hex, as tokens mint them).
pub fn is_agent_id(a: &str) -> bool {
    a.len() <= 64
        && a.strip_prefix("agt_")
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The rated game of a finished session's facts, or `None` if it does not count.
pub fn rated_game(
    game_id: Option<&str>,
    host: HostKind,
    end_reason: Option<&str>,
    players: &[Seat],
    result: Option<&Value>,
) -> Option<RatedGame> {
    let game = game_id.filter(|g| is_game_id(g))?;
    // Ended by the host's going, or by the operator (a table ended for abuse, or stuck, is
    // no draw between its players): not a game either player finished.
    if host != HostKind::House
        || matches!(end_reason, Some("host_disconnected" | "host_left"))
        || end_reason == Some(horst_sessions::OPERATOR_END)
    {
        return None;
    }
    let [a, b] = players else { return None };
    let (aa, ab) = (a.agent.as_deref()?, b.agent.as_deref()?);
    if aa == ab || !is_agent_id(aa) || !is_agent_id(ab) {
        return None;
    }
    // Every player forfeited at once (both clocks of a simultaneous turn ran out: the
    // platform's `forfeitedByAll`): neither played the game, so it is no draw between them.
    let forfeited = |p: &Seat| {
        result
            .and_then(|r| r.get("forfeitedByAll"))
            .and_then(Value::as_array)
            .is_some_and(|all| all.iter().any(|f| *f == p.player_id.as_str()))
    };
    if forfeited(a) && forfeited(b) {
        return None;
    }
    let winner = result.and_then(|r| r.get("winner")).unwrap_or(&Value::Null);
    let score = match winner {
        Value::Null => 0.5,
        w if *w == a.player_id.as_str() => 1.0,
        w if *w == b.player_id.as_str() => 0.0,
        // A winner who is not a seat: the game's result makes no sense to rate.
        _ => return None,
    };
    Some(RatedGame {
        game: game.to_string(),
        seats: [
            (aa.to_string(), a.player_id.clone(), a.name.clone()),
            (ab.to_string(), b.player_id.clone(), b.name.clone()),
        ],
        score,
    })
}

/// [`rated_game`] of a session that just finished; a table that never started is no game.
pub fn rates(s: &Session) -> Option<RatedGame> {
    if !s.has_started() {
        return None;
    }
    let seats: Vec<Seat> = s
        .players()
        .iter()
        .map(|p| Seat {
            seat: p.seat,
            player_id: p.player_id.to_string(),
            name: p.as_name.as_deref().map(str::to_string),
            agent: p.identity.strip_prefix("agent:").map(str::to_string),
            left: p.left,
        })
        .collect();
    rated_game(
        s.game().game_id.as_deref(),
        s.host().kind,
        s.end_reason(),
        &seats,
        s.result(),
    )
}

/// Both agents' ratings after `game` (session `session_id`), from their ratings before it,
/// at `now`. A first game against the house's reference player is the other's validation.
pub fn after_game(
    game: &RatedGame,
    session_id: &str,
    before: [&Rating; 2],
    now: u64,
) -> [Rating; 2] {
    let one = |me: &Rating, them: &Rating, score: f64, name: &Option<String>, them_id: &str| {
        let validation = me.validation.clone().or_else(|| {
            (them_id == crate::reference::REFERENCE_AGENT).then(|| Validation {
                session_id: session_id.to_string(),
                score,
                at: now,
            })
        });
        // Both as of now: an idle agent's RD has grown since its last game.
        let (me, them) = (&me.at(now), &them.at(now));
        let (rating, rd, volatility) = glicko2(
            me.rating,
            me.rd,
            me.volatility,
            &[Game {
                opponent_rating: them.rating,
                opponent_rd: them.rd,
                score,
            }],
        );
        Rating {
            rating,
            rd,
            volatility,
            games: me.games + 1,
            wins: me.wins + u32::from(score == 1.0),
            losses: me.losses + u32::from(score == 0.0),
            draws: me.draws + u32::from(score == 0.5),
            name: name.clone().or_else(|| me.name.clone()),
            updated_at: now,
            validation,
        }
    };
    [
        one(
            before[0],
            before[1],
            game.score,
            &game.seats[0].2,
            &game.seats[1].0,
        ),
        one(
            before[1],
            before[0],
            1.0 - game.score,
            &game.seats[1].2,
            &game.seats[0].0,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The paper's worked example: 1500/200/0.06 plays 1400/30 (win), 1550/100 (loss) and
    /// 1700/300 (loss) with tau 0.5, and ends at 1464.06/151.52/0.05999.
    #[test]
    fn glickmans_worked_example() {
        let games = [
            Game {
                opponent_rating: 1400.0,
                opponent_rd: 30.0,
                score: 1.0,
            },
            Game {
                opponent_rating: 1550.0,
                opponent_rd: 100.0,
                score: 0.0,
            },
            Game {
                opponent_rating: 1700.0,
                opponent_rd: 300.0,
                score: 0.0,
            },
        ];
        let (r, rd, sigma) = glicko2(1500.0, 200.0, 0.06, &games);
        assert!((r - 1464.06).abs() < 0.01, "{r}");
        assert!((rd - 151.52).abs() < 0.01, "{rd}");
        assert!((sigma - 0.05999).abs() < 0.00001, "{sigma}");
        // No games: only RD grows.
        let (r, rd, _) = glicko2(1500.0, 200.0, 0.06, &[]);
        assert_eq!(r, 1500.0);
        assert!((rd - 200.271).abs() < 0.001, "{rd}");
    }

    /// The moment an idle agent turns provisional is the first idle period whose grown RD
    /// passes the limit: provisional then, not a millisecond before.
    #[test]
    fn provisional_by_idleness_at_is_the_first_provisional_period() {
        let t0 = 1_791_399_600_000;
        for (rd, volatility) in [(60.0, 0.06), (109.9, 0.06), (45.0, 0.059_99), (80.0, 0.2)] {
            let r = Rating {
                rd,
                volatility,
                games: 40,
                updated_at: t0,
                ..Rating::default()
            };
            let at = r.provisional_by_idleness_at().expect("turns provisional");
            assert!(at > t0 && (at - t0).is_multiple_of(PERIOD_MS), "{rd}: {at}");
            assert!(r.at(at).provisional(), "{rd}");
            assert!(!r.at(at - 1).provisional(), "{rd}");
        }
        let settled = Rating {
            rd: 60.0,
            games: 40,
            updated_at: t0,
            ..Rating::default()
        };
        // About 80 days from RD 60 at σ 0.06 (the module's doc).
        let days = (settled.provisional_by_idleness_at().unwrap() - t0) / PERIOD_MS;
        assert!((75..=85).contains(&days), "{days}");
        let never = Rating {
            updated_at: 0,
            ..settled.clone()
        };
        assert_eq!(never.provisional_by_idleness_at(), None);
        assert_eq!(Rating::default().provisional_by_idleness_at(), None);
    }

    /// Idle time grows RD by step 6 once per whole day (one day = the paper's empty period),
    /// never past the start RD, and the next game is rated from the grown RD.
    #[test]
    fn rd_grows_with_idle_rating_periods() {
        let t0 = 1_791_399_600_000;
        let settled = Rating {
            rd: 60.0,
            games: 40,
            updated_at: t0,
            ..Rating::default()
        };
        assert_eq!(
            settled.at(t0 + PERIOD_MS - 1),
            settled,
            "less than a period"
        );
        let one = settled.at(t0 + PERIOD_MS);
        let (_, step6, _) = glicko2(1500.0, 60.0, START_VOLATILITY, &[]);
        assert!((one.rd - step6).abs() < 1e-9, "{} vs {step6}", one.rd);
        assert_eq!((one.rating, one.games), (settled.rating, 40));
        // Ten days: RD² grew by ten σ² (in Glicko-2 units).
        let ten = settled.at(t0 + 10 * PERIOD_MS + 5).rd / SCALE;
        let want = ((60.0 / SCALE).powi(2) + 10.0 * 0.06f64.powi(2)).sqrt();
        assert!((ten - want).abs() < 1e-9, "{ten} vs {want}");
        assert!(!settled.provisional());
        assert!(
            settled.at(t0 + 100 * PERIOD_MS).provisional(),
            "idle 100 days"
        );
        assert_eq!(settled.at(t0 + 100_000 * PERIOD_MS).rd, START_RD, "capped");
        assert_eq!(settled.at(t0 - PERIOD_MS), settled, "a clock behind");
        assert_eq!(Rating::default().at(t0), Rating::default(), "never rated");
        // A game after 30 idle days moves the rating more than the same game at once.
        let g = RatedGame {
            game: "duel".into(),
            seats: [
                ("agt_a".into(), "p_0".into(), None),
                ("agt_b".into(), "p_1".into(), None),
            ],
            score: 1.0,
        };
        let opp = Rating {
            updated_at: t0,
            ..settled.clone()
        };
        let [now, _] = after_game(&g, "ses_x", [&settled, &opp], t0 + 1);
        let [later, _] = after_game(&g, "ses_x", [&settled, &opp], t0 + 30 * PERIOD_MS);
        assert!(
            later.rating - 1500.0 > now.rating - 1500.0,
            "{later:?} {now:?}"
        );
        assert_eq!(later.updated_at, t0 + 30 * PERIOD_MS);
    }

    fn seat(i: u32, agent: Option<&str>) -> Seat {
        Seat {
            seat: i,
            player_id: format!("p_{i}"),
            name: Some(format!("N{i}")),
            agent: agent.map(str::to_string),
            left: false,
        }
    }

    #[test]
    fn only_house_games_between_two_agents_count() {
        let two = [seat(0, Some("agt_aa")), seat(1, Some("agt_bb"))];
        let won = json!({"winner": "p_1"});
        let g = rated_game(
            Some("chess"),
            HostKind::House,
            Some("game_over"),
            &two,
            Some(&won),
        )
        .unwrap();
        assert_eq!(g.score, 0.0);
        assert_eq!(g.seats[1].0, "agt_bb");
        let draw = json!({"winner": null});
        assert_eq!(
            rated_game(Some("chess"), HostKind::House, None, &two, Some(&draw))
                .unwrap()
                .score,
            0.5
        );
        let no = |game: Option<&str>, host, reason: Option<&str>, seats: &[Seat], r: &Value| {
            rated_game(game, host, reason, seats, Some(r)).is_none()
        };
        assert!(
            no(Some("chess"), HostKind::Agent, None, &two, &won),
            "third-party host"
        );
        assert!(
            no(
                Some("chess"),
                HostKind::House,
                Some(horst_sessions::OPERATOR_END),
                &two,
                &draw
            ),
            "ended by the operator"
        );
        assert!(no(
            Some("chess"),
            HostKind::House,
            Some("host_disconnected"),
            &two,
            &won
        ));
        assert!(no(None, HostKind::House, None, &two, &won), "no game id");
        assert!(
            no(Some("a:b"), HostKind::House, None, &two, &won),
            "odd game id"
        );
        let person = [seat(0, Some("agt_aa")), seat(1, None)];
        assert!(
            no(Some("chess"), HostKind::House, None, &person, &won),
            "a person"
        );
        let same = [seat(0, Some("agt_aa")), seat(1, Some("agt_aa"))];
        assert!(
            no(Some("chess"), HostKind::House, None, &same, &won),
            "against itself"
        );
        let odd = json!({"winner": "p_9"});
        assert!(no(Some("chess"), HostKind::House, None, &two, &odd));
        // Both clocks ran out at once: nobody played it.
        let both = json!({"winner": null, "reason": "timeout", "forfeitedBy": "p_0", "forfeitedByAll": ["p_0", "p_1"]});
        assert!(
            no(Some("rps"), HostKind::House, Some("timeout"), &two, &both),
            "every player forfeited"
        );
        let one = json!({"winner": "p_1", "reason": "timeout", "forfeitedBy": "p_0"});
        assert_eq!(
            rated_game(
                Some("rps"),
                HostKind::House,
                Some("timeout"),
                &two,
                Some(&one)
            )
            .unwrap()
            .score,
            0.0,
            "one forfeit is a loss"
        );
    }

    #[test]
    fn a_win_moves_ratings_apart_and_counts_once_each() {
        let g = RatedGame {
            game: "duel".into(),
            seats: [
                ("agt_a".into(), "p_0".into(), Some("A".into())),
                ("agt_b".into(), "p_1".into(), None),
            ],
            score: 1.0,
        };
        let fresh = Rating::default();
        let [a, b] = after_game(&g, "ses_1", [&fresh, &fresh], 7);
        assert_eq!((&a.validation, &b.validation), (&None, &None));
        assert!(a.rating > 1600.0 && b.rating < 1400.0, "{a:?} {b:?}");
        assert!((a.rating - START_RATING - (START_RATING - b.rating)).abs() < 1e-6);
        assert_eq!((a.games, a.wins, b.losses), (1, 1, 1));
        assert!(a.rd < START_RD && a.provisional());
        assert_eq!(a.name.as_deref(), Some("A"));
        // Against the reference player: the first game is the agent's validation, and a
        // later one does not move it.
        let mut r = g.clone();
        r.seats[1].0 = crate::reference::REFERENCE_AGENT.into();
        r.score = 0.0;
        let [a2, _] = after_game(&r, "ses_2", [&a, &fresh], 8);
        let v = a2.validation.clone().expect("validated");
        assert_eq!((v.session_id.as_str(), v.score, v.at), ("ses_2", 0.0, 8));
        let [a3, _] = after_game(&r, "ses_3", [&a2, &fresh], 9);
        assert_eq!(a3.validation, Some(v));
        let mut veteran = a.clone();
        veteran.games = 40;
        veteran.rd = 60.0;
        assert!(!veteran.provisional());
    }
}
