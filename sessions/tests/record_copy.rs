//! What a copy of the record costs: every write applies to a copy (`Session::apply_to`), so
//! the cached record stays as it was until the write is stored. Counted in allocations, on
//! this test binary's own allocator.

use horst_sessions::{Event, GameInfo, HostKind, NewSession, Op, Reply, Session, Timings};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the allocations of the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: passed on as it came.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: passed on as it came.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - before)
}

/// A two-player table in play as the sessions benchmark plays it: turns published, an action
/// pending and delivered to the host, the previous one applied, the liveness and unconfirmed
/// timers armed; the record as the store keeps it (no held events).
fn in_play() -> Session {
    let t0 = 1_791_399_600_000;
    let (mut s, _) = Session::create(
        NewSession {
            session_id: "ses_beef00000001".into(),
            config: json!({
                "minPlayers": 2, "maxPlayers": 2, "turnBased": true, "sdkVersion": "2.0.0",
                "gameType": "bench", "turnTimeout": 0,
            }),
            host_identity: "host_0123456789abcdef".into(),
            host_kind: HostKind::Player,
            game: GameInfo {
                game_id: Some("bench".into()),
                ..GameInfo::default()
            },
            timings: Timings::default(),
        },
        t0,
    )
    .unwrap();
    let mut pids = Vec::new();
    for (k, identity) in ["agent_0123456789a", "agent_0123456789b"]
        .iter()
        .enumerate()
    {
        let joined = s.apply(
            Event::Join {
                player_id: format!("p_0000000{}", k + 1),
                identity: identity.to_string(),
                as_name: Some(format!("Agent {k}")),
            },
            t0 + 1,
        );
        if let Ok(Reply::Joined { player_id, .. }) = joined.map(|o| o.reply) {
            pids.push(player_id);
        }
    }
    let (mut now, mut after) = (t0 + 10, 0);
    let poll = |s: &mut Session, now: u64, after: &mut u64| {
        let out = s.apply(
            Event::HostPoll {
                after: Some(*after),
                wait_ms: 25_000,
            },
            now,
        );
        if let Ok(Reply::Entries { entries, .. }) = out.map(|o| o.reply) {
            *after = entries.last().map_or(*after, |e| e.seq);
        }
    };
    poll(&mut s, now, &mut after);
    for turn in 0..4u64 {
        let on = (turn % 2) as usize;
        now += 100;
        let ops = Op::parse_batch(&json!({ "ops": [
            { "op": "state", "state": { "on": on } },
            { "op": "legal_actions", "playerId": pids[on], "actions": [{ "type": "move" }] },
        ]}))
        .unwrap();
        s.apply(
            Event::PublishOps {
                ops,
                batch_id: Some(format!("b{turn}")),
            },
            now,
        )
        .unwrap();
        now += 500;
        s.apply(
            Event::Action {
                player_id: pids[on].clone(),
                action: json!({ "type": "move", "t": now }),
                turn: Some(s.turn()),
                action_id: format!("a_{turn:016x}"),
                idempotency_key: Some(format!("k{turn}")),
            },
            now,
        )
        .unwrap();
        now += 2;
        poll(&mut s, now, &mut after);
    }
    s.take_held_events();
    s
}

/// A copy shares the record's ids, identities, names and queued actions: it allocates only
/// its own lists (the seats, the on-turn list, the host's queue, the timers' map node). With
/// a `String` each it allocated 38 times.
#[test]
fn a_copy_of_a_record_in_play_allocates_only_its_lists() {
    let s = in_play();
    let p = &s.players()[1];
    assert!(p.pending.is_some() && p.last_action.is_some(), "{p:?}");
    let (copy, n) = allocations(|| s.clone());
    assert_eq!(copy, s);
    assert!(n <= 4, "a copy allocated {n} times");
    // And the copy is the same record, byte for byte, as the store encodes it.
    assert_eq!(
        serde_json::to_string(&copy).unwrap(),
        serde_json::to_string(&s).unwrap()
    );
}
