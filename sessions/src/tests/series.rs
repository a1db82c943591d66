//! A whole series end to end, the way the I/O layer, a house host and two agents drive it.
use super::*;
use crate::{should_wake, ArmedTimer, Status};
use std::collections::BTreeMap;

/// Sessions by id plus the I/O layer's chores (rematch creation, leave forwarding).
struct World {
    sessions: BTreeMap<String, Session>,
    now: u64,
    minted: u32,
}

impl World {
    fn apply(&mut self, id: &str, e: Event) -> Result<Outcome, ProtocolError> {
        let s = self.sessions.get_mut(id).unwrap();
        let out = s.apply(e, self.now)?;
        for eff in out.effects.clone() {
            match eff {
                Effect::CreateRematch => {
                    self.minted += 1;
                    let next_id = crate::format_session_id(0xbeef, self.minted);
                    let (next, _) =
                        Session::new_rematch(&self.sessions[id], next_id.clone(), self.now)
                            .unwrap();
                    self.sessions.insert(next_id.clone(), next);
                    self.apply(
                        id,
                        Event::RematchLinked {
                            next_session_id: next_id,
                        },
                    )
                    .unwrap();
                }
                Effect::LeaveSession {
                    session_id,
                    player_id,
                } => {
                    let _ = self.apply(&session_id, Event::OptOut { player_id });
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Fires every timer due by `now` (the delayed set).
    fn fire_timers(&mut self) {
        loop {
            let due: Vec<(String, ArmedTimer)> = self
                .sessions
                .iter()
                .flat_map(|(id, s)| s.timers.values().map(move |d| (id.clone(), d.clone())))
                .filter(|(_, d)| d.at_ms <= self.now)
                .collect();
            if due.is_empty() {
                return;
            }
            for (id, d) in due {
                self.apply(
                    &id,
                    Event::TimerFired {
                        kind: d.kind,
                        generation: d.generation,
                    },
                )
                .unwrap();
            }
        }
    }
}

#[test]
fn three_rounds_of_a_house_series() {
    let (first, _) = Session::create(
        NewSession {
            session_id: "ses_beef00000000".into(),
            config: config(json!({"autoRematch": true})),
            host_identity: "house".into(),
            host_kind: HostKind::House,
            game: GameInfo::default(),
            timings: Timings::default(),
        },
        T0,
    )
    .unwrap();
    let mut w = World {
        sessions: BTreeMap::from([(first.session_id.to_string(), first)]),
        now: T0,
        minted: 0,
    };
    let mut host_sid = "ses_beef00000000".to_string();
    let mut host_after = 0;
    let mut agent_sid = [host_sid.clone(), host_sid.clone()];
    let mut pids = Vec::new();
    for (i, who) in ["fish", "bird"].iter().enumerate() {
        let Reply::Joined {
            player_id, seat, ..
        } = w
            .apply(
                &agent_sid[i],
                Event::Join {
                    player_id: format!("p_0000000{i}"),
                    identity: who.to_string(),
                    as_name: None,
                },
            )
            .unwrap()
            .reply
        else {
            panic!()
        };
        assert_eq!(seat, i as u32);
        pids.push(player_id);
    }
    let mut rounds_seen = Vec::new();
    let mut moves = 0;
    for _step in 0..2_000 {
        w.now += 250;
        w.fire_timers();
        // The host polls, delivers entries to "the game" and answers with ops.
        let Reply::Entries { entries, .. } = w
            .apply(
                &host_sid,
                Event::HostPoll {
                    after: Some(host_after),
                    wait_ms: 0,
                },
            )
            .unwrap()
            .reply
        else {
            panic!()
        };
        let mut ops = Vec::new();
        for e in &entries.iter().map(wire).collect::<Vec<_>>() {
            host_after = e["seq"].as_u64().unwrap();
            if e["event"] == "game_start" {
                rounds_seen.push((e["round"].as_u64().unwrap(), w.now));
                assert_eq!(e["players"], json!(pids), "same ids, same seat order");
                let first = &pids[(e["round"].as_u64().unwrap() as usize + 1) % 2];
                ops.push(json!({"op": "legal_actions", "playerId": first, "actions": [{"type": "move"}]}));
            }
            if e["type"] == "action" {
                moves += 1;
                let mover = e["playerId"].as_str().unwrap();
                if moves % 4 == 0 {
                    ops.push(json!({"op": "end", "result": {"winner": mover}}));
                } else {
                    let other = pids.iter().find(|p| *p != mover).unwrap();
                    ops.push(json!({"op": "legal_actions", "playerId": other, "actions": [{"type": "move"}]}));
                }
            }
        }
        if !ops.is_empty() {
            let ops = Op::parse_batch(&json!({ "ops": ops })).unwrap();
            w.apply(
                &host_sid,
                Event::PublishOps {
                    ops,
                    batch_id: None,
                },
            )
            .unwrap();
        }
        let s = &w.sessions[&host_sid];
        let resp = wire(&s.pending_actions_response(vec![]));
        if resp["status"] == "finished" {
            if let Some(next) = resp["nextSessionId"].as_str() {
                host_sid = next.to_string();
                host_after = 0;
            }
        }
        // The agents' loop.
        for i in 0..2 {
            let sid = agent_sid[i].clone();
            w.apply(
                &sid,
                Event::PlayerSeen {
                    player_id: pids[i].clone(),
                },
            )
            .unwrap();
            let snap = wire(&w.sessions[&sid].snapshot(&pids[i]).unwrap());
            if snap["status"] == "finished" {
                if let Some(next) = snap["nextSessionId"].as_str() {
                    agent_sid[i] = next.to_string();
                }
                continue;
            }
            if snap["yourTurn"] == true {
                let before = w.sessions[&sid].clone();
                w.apply(
                    &sid,
                    Event::Action {
                        player_id: pids[i].clone(),
                        action: json!({"type": "move"}),
                        turn: snap["turn"].as_u64(),
                        action_id: format!("a_{}_{}", i, w.now),
                        idempotency_key: None,
                    },
                )
                .unwrap();
                assert!(!should_wake(&before, &w.sessions[&sid], &pids[i]));
            }
        }
        if moves == 12 {
            break;
        }
    }
    let rounds: Vec<u64> = rounds_seen.iter().map(|r| r.0).collect();
    assert_eq!(rounds, vec![1, 2, 3]);
    let last = w.sessions.values().find(|s| s.round == 3).unwrap();
    assert_eq!(last.status, Status::Finished);
    assert!(last.next_session_id.is_some(), "round 4 is already open");
    assert_eq!(last.series_id, "ses_beef00000000");
    // Every rematch started at least 3 s after the previous game ended.
    for s in w.sessions.values() {
        if let (Some(prev), Some(start)) = (&s.previous_session_id, s.started_at_ms) {
            assert!(start >= w.sessions[prev.as_str()].ended_at_ms.unwrap() + 3_000);
        }
    }
    assert_eq!(moves, 12);
}
