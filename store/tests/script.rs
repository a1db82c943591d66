//! The script registry against a real redis-server: counts checked before sending, EVALSHA
//! surviving a flushed script cache, the clock offset reaching scripts and `Store::now_ms`
//! alike, read-only scripts refused a write by Redis, durable ones waiting for replicas.

use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::{is_unreachable, lua, Durability, RedisTarget, Store};
use horst_testkit::RedisServer;

static CLOCK: Script<(u64, u64, String)> = Script::new(Decl {
    file: lua!("tests/lua/clock.lua"),
    keys: 1,
    argv: Argv::Exactly(2),
    writes: Writes::ReadOnly,
});

const SET_DECL: Decl = Decl {
    file: lua!("tests/lua/set.lua"),
    keys: 1,
    argv: Argv::Exactly(1),
    writes: Writes::Durable,
};

static SET: Script<i64> = Script::new(SET_DECL);

static SET_UNWAITED: Script<i64> = Script::new(Decl {
    writes: Writes::PrimaryOnly,
    ..SET_DECL
});

static GET: Script<Option<String>> = Script::new(Decl {
    file: lua!("tests/lua/get.lua"),
    keys: 1,
    argv: Argv::Exactly(0),
    writes: Writes::ReadOnly,
});

/// `set.lua` declared read-only: Redis must refuse its write.
static SET_DECLARED_READ_ONLY: Script<i64> = Script::new(Decl {
    writes: Writes::ReadOnly,
    ..SET_DECL
});

async fn store(redis: &RedisServer) -> Store {
    Store::connect(&redis.url(), "t:").await.expect("connect")
}

/// `clock.lua`: (ARGV count, now_ms, utc_date) as the script sees them.
async fn clock(s: &Store) -> (u64, u64, String) {
    CLOCK
        .call(s)
        .key(s.key("x"))
        .arg("a")
        .arg("b")
        .run()
        .await
        .unwrap()
}

async fn get(store: &Store, name: &str) -> Option<String> {
    redis::cmd("GET")
        .arg(store.key(name))
        .query_async(&mut store.conn())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_wrong_count_is_refused_before_anything_is_sent() {
    let redis = RedisServer::start();
    let s = store(&redis).await;
    let e = SET
        .call(&s)
        .key(s.key("a"))
        .key(s.key("b"))
        .arg("v")
        .run()
        .await
        .unwrap_err();
    assert!(e.to_string().contains("script set"), "{e}");
    assert!(!is_unreachable(&e));
    // One ARGV missing: a shifted argument list must not write anything either.
    assert!(SET.call(&s).key(s.key("a")).run().await.is_err());
    assert_eq!(get(&s, "a").await, None);
    assert_eq!(get(&s, "b").await, None);
    let scripts: Vec<i64> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(SET.sha())
        .query_async(&mut s.conn())
        .await
        .unwrap();
    assert_eq!(scripts, vec![0], "nothing was sent, not even a load");
    assert_eq!(
        SET.call(&s).key(s.key("a")).arg("v").run().await.unwrap(),
        1
    );
    assert_eq!(get(&s, "a").await.as_deref(), Some("v"));
}

#[tokio::test]
async fn a_flushed_script_cache_is_reloaded() {
    let redis = RedisServer::start();
    let s = store(&redis).await;
    SET.call(&s).key(s.key("a")).arg("1").run().await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut s.conn())
        .await
        .unwrap();
    SET.call(&s).key(s.key("a")).arg("2").run().await.unwrap();
    assert_eq!(get(&s, "a").await.as_deref(), Some("2"));
}

#[tokio::test]
async fn scripts_and_now_ms_read_one_clock_with_the_offset() {
    let redis = RedisServer::start();
    let s = store(&redis).await;
    let before = s.now_ms().await.unwrap();
    let (argc, now, _) = clock(&s).await;
    assert_eq!(argc, 2, "the prelude takes the clock offset off ARGV");
    let after = s.now_ms().await.unwrap();
    assert!(before <= now && now <= after, "{before} {now} {after}");

    // A clone shares the offset: one day and a bit forward, across a UTC midnight.
    let day: u64 = 86_400_000;
    let shifted = s.clone();
    shifted.set_clock_offset_ms(day as i64 + 1);
    let (_, later, date) = clock(&s).await;
    assert!(later > now + day, "{now} -> {later}");
    assert_eq!(date, horst_dates::utc_date(later));
    assert!(s.now_ms().await.unwrap() >= later);
    shifted.set_clock_offset_ms(-(day as i64));
    assert!(s.now_ms().await.unwrap() < before);
}

#[tokio::test]
async fn the_prelude_dates_match_the_civil_calendar() {
    let redis = RedisServer::start();
    let s = store(&redis).await;
    let now = s.now_ms().await.unwrap() as i64;
    // Leap days, a century, year ends: the prelude's utc_date against horst-dates'.
    for target in [
        951_782_400_000i64, // 2000-02-29
        1_709_164_800_000,  // 2024-02-29
        1_735_689_599_999,  // 2024-12-31 23:59:59.999
        1_735_689_600_000,  // 2025-01-01
        4_107_542_400_000,  // 2100-03-01
    ] {
        s.set_clock_offset_ms(target - now);
        let (_, at, date) = clock(&s).await;
        assert_eq!(date, horst_dates::utc_date(at), "at {at}");
    }
}

#[tokio::test]
async fn redis_refuses_a_write_in_a_read_only_script() {
    let redis = RedisServer::start();
    let s = store(&redis).await;
    let e = SET_DECLARED_READ_ONLY
        .call(&s)
        .key(s.key("a"))
        .arg("v")
        .run()
        .await
        .unwrap_err();
    assert!(e.to_string().to_lowercase().contains("write"), "{e}");
    assert_eq!(get(&s, "a").await, None);
    SET_UNWAITED
        .call(&s)
        .key(s.key("a"))
        .arg("v")
        .run()
        .await
        .unwrap();
    assert_eq!(
        GET.call(&s).key(s.key("a")).run().await.unwrap().as_deref(),
        Some("v")
    );
}

#[tokio::test]
async fn a_durable_script_waits_for_replicas_and_a_primary_only_one_does_not() {
    let redis = RedisServer::start();
    // One replica required, none there: the durable write reaches the primary but is not
    // acknowledged, so its caller gets an error it answers as "retry later".
    let s = Store::connect_to(
        &RedisTarget::Url(redis.url()),
        "t:",
        Durability {
            min_replica_acks: 1,
            timeout_ms: 50,
        },
    )
    .await
    .unwrap();
    let e = SET
        .call(&s)
        .key(s.key("d"))
        .arg("v")
        .run()
        .await
        .unwrap_err();
    assert!(is_unreachable(&e), "{e}");
    SET_UNWAITED
        .call(&s)
        .key(s.key("p"))
        .arg("v")
        .run()
        .await
        .unwrap();
}
