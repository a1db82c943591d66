//! Random event sequences never panic and keep the invariants.
use super::*;
use crate::{Status, TimerKind};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn random_config(r: &mut Rng) -> Value {
    let min = 1 + r.below(3);
    let timeout = [0, 5, 30][r.below(3) as usize];
    let mut c = json!({
        "minPlayers": min,
        "maxPlayers": min + r.below(2),
        "turnBased": !r.chance(20),
        "simultaneous": r.chance(30),
        "turnTimeout": timeout,
        "maxTurnTimeouts": 1 + r.below(3),
        "forfeitOnTimeout": !r.chance(20),
        "autoRematch": r.chance(50),
    });
    if !r.chance(25) {
        c["sdkVersion"] = json!("2.0.0");
    }
    c
}

fn random_event(r: &mut Rng, g: &Game) -> Event {
    let identities = ["ann", "ben", "cat", "dan"];
    let pid = |r: &mut Rng| {
        if g.s.players.is_empty() || r.chance(5) {
            "p_0badc0de".to_string()
        } else {
            g.s.players[r.below(g.s.players.len() as u64) as usize]
                .player_id
                .to_string()
        }
    };
    match r.below(100) {
        0..=9 => Event::Join {
            player_id: format!("p_{:08x}", r.below(1 << 20)),
            identity: identities[r.below(4) as usize].into(),
            as_name: None,
        },
        10..=12 => Event::Leave { player_id: pid(r) },
        13..=17 => Event::PlayerSeen { player_id: pid(r) },
        18..=44 => {
            let n = 1 + r.below(4);
            let ops = (0..n)
                .map(|_| match r.below(10) {
                    0..=1 => Op::State {
                        state: json!({"n": r.below(5)}),
                    },
                    2 => Op::Observation {
                        player_id: pid(r),
                        observation: json!(r.below(5)),
                    },
                    3..=7 => Op::LegalActions {
                        player_id: pid(r),
                        actions: (0..r.below(3))
                            .map(|i| json!({"type": "m", "i": i}))
                            .collect(),
                    },
                    8 => Op::Reject {
                        player_id: pid(r),
                        reason: json!("no"),
                        action_id: r.chance(50).then(|| format!("a_{}", r.below(50))),
                    },
                    _ => {
                        if r.chance(20) {
                            Op::End {
                                result: json!({"winner": null}),
                                reason: r.chance(30).then(|| "host_left".to_string()),
                            }
                        } else {
                            Op::State { state: json!({}) }
                        }
                    }
                })
                .collect();
            Event::PublishOps {
                ops,
                batch_id: None,
            }
        }
        45..=64 => Event::Action {
            player_id: pid(r),
            action: if r.chance(5) {
                json!({"type": "__x"})
            } else {
                json!({"type": "m"})
            },
            turn: r.chance(70).then(|| g.s.turn.saturating_sub(r.below(2))),
            action_id: format!("a_{}", r.below(1_000_000)),
            idempotency_key: None,
        },
        65..=76 => Event::HostPoll {
            after: if r.chance(15) {
                None
            } else {
                Some(g.acked.saturating_sub(r.below(2)))
            },
            wait_ms: if r.chance(50) { 0 } else { 25_000 },
        },
        77..=80 => Event::HostPollDone {
            after: Some(g.acked),
        },
        81..=84 => Event::Rematch,
        85..=94 => {
            let armed: Vec<_> = g.s.timers.values().cloned().collect();
            if armed.is_empty() || r.chance(20) {
                Event::TimerFired {
                    kind: TimerKind::Clock,
                    generation: r.below(100),
                }
            } else {
                let d = &armed[r.below(armed.len() as u64) as usize];
                Event::TimerFired {
                    kind: d.kind.clone(),
                    generation: d.generation,
                }
            }
        }
        95..=97 => Event::Tick,
        // The server was away until now (a stall the I/O layer learnt of).
        _ => Event::Outage {
            from_ms: g.now.saturating_sub(r.below(60_000)),
            to_ms: g.now,
        },
    }
}

fn check_invariants(s: &Session) {
    for (i, p) in s.players.iter().enumerate() {
        assert_eq!(p.seat as usize, i, "players sorted by seat, seats 0..n");
    }
    assert!(s.players.len() <= s.rules.max_players as usize);
    let mut ids: Vec<&str> = s.players.iter().map(|p| p.player_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), s.players.len(), "unique player ids");
    if s.rules.turn_based && !s.rules.simultaneous {
        assert!(s.on_turn.len() <= 1, "one player on turn: {:?}", s.on_turn);
    }
    for d in s.timers.values() {
        assert!(
            d.at_ms > s.now_ms,
            "nothing due is left unprocessed: {d:?} at {}",
            s.now_ms
        );
    }
    if s.deadline_ms().is_some() {
        assert_eq!(s.status, Status::Active);
        assert!(s.host.alive);
    }
    for p in &s.players {
        let snap = wire(&s.snapshot(&p.player_id).unwrap());
        if s.awaiting_first_publish() {
            assert_eq!(
                snap["yourTurn"], false,
                "nobody on turn before the first publish"
            );
            assert_eq!(snap["waitingFor"], "host");
        }
        if s.status == Status::Active && !s.host.alive {
            assert_eq!(snap["waitingFor"], "host", "the host is not responding");
        }
        for e in &s.events_since(0, &p.player_id).events {
            if e["type"] == "action" && e["playerId"] != p.player_id.as_str() {
                assert!(
                    e["reason"].is_null() || e["status"] != "rejected",
                    "another player's rejection reason leaked: {e}"
                );
            }
        }
        if snap["yourTurn"] == false {
            assert_eq!(snap["legalActions"], Value::Null);
        }
        if s.status == Status::Finished {
            assert_eq!(snap["yourTurn"], false);
            assert!(p.pending.is_none(), "nothing stays pending after the end");
        }
        if let Some(pa) = &p.pending {
            assert!(!pa.held || s.rules.is_simultaneous());
        }
    }
    let seqs: Vec<u64> = s.host_queue.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]) && seqs.iter().all(|&q| q < s.next_seq));
}

#[test]
fn random_event_sequences_keep_the_invariants() {
    for seed in 1..=100u64 {
        let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let timings = Timings {
            host_alive_ms: 20_000,
            host_gone_ms: 90_000,
            unconfirmed_ms: 15_000,
            reservation_ms: 60_000,
            rematch_delay_ms: 3_000,
            default_turn_timeout_ms: 10_000,
            default_max_turn_timeouts: 2,
            lobby_fill_ms: 5_000,
        };
        let mut g = Game::with_timings(random_config(&mut r), timings);
        g.heartbeat = false;
        for _ in 0..200 {
            if r.chance(30) {
                g.now += r.below(40_000);
            }
            let e = random_event(&mut r, &g);
            let before = g.s.clone();
            let status_rank = |s: Status| match s {
                Status::Waiting => 0,
                Status::Active => 1,
                Status::Finished => 2,
            };
            match g.s.apply(e.clone(), g.now) {
                Ok(out) => {
                    assert_eq!(out.changed, g.s.version == before.version + 1, "{e:?}");
                    assert!(g.s.version >= before.version);
                    assert_eq!(out.stored, g.s.rev == before.rev + 1, "{e:?}");
                    assert!(!out.changed || out.stored, "a visible change is a write");
                    assert!(g.s.turn >= before.turn);
                    assert!(status_rank(g.s.status) >= status_rank(before.status));
                    if let Reply::Entries { entries, .. } = &out.reply {
                        super::wire::check_entries(entries);
                        if let Some(last) = entries.last() {
                            g.acked = last.seq;
                        }
                    }
                    if out.effects.contains(&Effect::CreateRematch) && r.chance(50) {
                        // Follow the series like the I/O layer would.
                        let id = format!("ses_beef{:08x}", g.s.round + 7);
                        let (next, _) = Session::new_rematch(&g.s, id.clone(), g.now).unwrap();
                        g.s.apply(
                            Event::RematchLinked {
                                next_session_id: id,
                            },
                            g.now,
                        )
                        .unwrap();
                        g.s = next;
                        g.acked = 0;
                    }
                }
                Err(err) => {
                    assert_eq!(
                        g.s, before,
                        "{e:?} failed with {err} but changed the session"
                    );
                    assert!(matches!(err.status(), 400 | 403 | 409 | 500), "{err}");
                }
            }
            check_invariants(&g.s);
            super::wire::check_views(&g.s);
            if r.chance(10) {
                let text = serde_json::to_string(&g.s).unwrap();
                assert_eq!(serde_json::from_str::<Session>(&text).unwrap(), g.s);
            }
        }
    }
}
