//! The notifier's listener against a connection that goes silent: its peer stops answering
//! without a reset (a host gone, a NAT or firewall that dropped the flow). A proxy between
//! horst and a real redis-server stops forwarding on the connections it holds, keeping them
//! open; new connections pass.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horst_store::{Heard, Notifier, Store, Subscription};
use horst_testkit::RedisServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Forwards to `127.0.0.1:<to>`; [`Blackhole::silence`] makes every connection open now
/// swallow what it reads from then on, in both directions, and never close.
struct Blackhole {
    port: u16,
    silenced: Arc<AtomicU64>,
    /// How many of the next connections are taken and never answered (nor forwarded).
    swallowed: Arc<AtomicUsize>,
}

impl Blackhole {
    async fn start(to: u16) -> Blackhole {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let silenced = Arc::new(AtomicU64::new(0));
        let generation = silenced.clone();
        let swallowed = Arc::new(AtomicUsize::new(0));
        let to_swallow = swallowed.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let swallow = to_swallow
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                if swallow {
                    tokio::spawn(async move {
                        let _held = client;
                        std::future::pending::<()>().await
                    });
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", to)).await else {
                    continue;
                };
                let born = generation.load(Ordering::SeqCst);
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(pipe(cr, sw, generation.clone(), born));
                tokio::spawn(pipe(sr, cw, generation.clone(), born));
            }
        });
        Blackhole {
            port,
            silenced,
            swallowed,
        }
    }

    fn silence(&self) {
        self.silenced.fetch_add(1, Ordering::SeqCst);
    }

    /// The next `n` connections are accepted and never answered.
    fn swallow_next(&self, n: usize) {
        self.swallowed.store(n, Ordering::SeqCst);
    }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    generation: Arc<AtomicU64>,
    born: u64,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => {
                // A silenced connection never tells its other end it closed either.
                if generation.load(Ordering::SeqCst) != born {
                    std::future::pending::<()>().await;
                }
                return;
            }
            Ok(n) => n,
        };
        if generation.load(Ordering::SeqCst) != born {
            continue;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// A notifier listening through `proxy`, subscribed, and the count of gaps it has heard
/// (with the sender that stops it: keep it).
async fn listening_through(proxy: &Blackhole) -> (Notifier, Arc<AtomicUsize>, watch::Sender<bool>) {
    let store = Store::connect(&format!("redis://127.0.0.1:{}", proxy.port), "t:")
        .await
        .unwrap();
    let (stop_tx, stop) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), vec!["t:*".into()], stop);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    let gaps = Arc::new(AtomicUsize::new(0));
    let seen = gaps.clone();
    notifier.observe(move |h| {
        if matches!(h, Heard::Gap) {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    (notifier, gaps, stop_tx)
}

/// Waits (up to a minute) until the listener has noticed its connection went silent.
async fn noticed_a_gap(gaps: &AtomicUsize) {
    let started = std::time::Instant::now();
    while gaps.load(Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the listener never noticed its connection went silent"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The listener asks its connection now and then and, with no answer, connects again (a
/// gap: everyone re-reads) and hears the messages published after. It used to wait on the
/// silent connection for ever, every wake-up of the process lost.
#[tokio::test]
async fn a_listener_whose_connection_goes_silent_connects_again() {
    let redis = RedisServer::start();
    let proxy = Blackhole::start(redis.port()).await;
    let (notifier, gaps, _stop_tx) = listening_through(&proxy).await;
    let mut direct = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    proxy.silence();
    let mut woken = notifier.subscribe("t:ch");
    // Asked every 5 s, given 10 s to answer: connected again within about 15 s.
    noticed_a_gap(&gaps).await;
    assert!(notifier.ready(Duration::from_secs(30)).await);
    // The gap woke every waiter; what is published now is heard on the new connection.
    woken.changed().await;
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let _: i64 = redis::cmd("PUBLISH")
                .arg("t:ch")
                .arg("hello")
                .query_async(&mut direct)
                .await
                .unwrap();
            if tokio::time::timeout(Duration::from_millis(500), woken.changed())
                .await
                .is_ok()
            {
                return;
            }
        }
    })
    .await;
    assert!(heard.is_ok(), "nothing heard after connecting again");
}

/// A listener that connects again to a peer that takes the connection and never answers
/// (a frozen node, a black-holed flow) gives up on it and connects once more. Connecting
/// and subscribing had no limit: the listener waited on such a connection for ever.
#[tokio::test]
async fn a_listener_whose_new_connection_never_answers_tries_again() {
    let redis = RedisServer::start();
    let proxy = Blackhole::start(redis.port()).await;
    let (notifier, gaps, _stop_tx) = listening_through(&proxy).await;
    // The connection goes silent, and the next one is taken and never answered.
    proxy.swallow_next(1);
    proxy.silence();
    noticed_a_gap(&gaps).await;
    // Noticed (PING unanswered); the swallowed connection is given up on within its limit,
    // and a third one subscribes.
    assert!(
        notifier.ready(Duration::from_secs(60)).await,
        "the listener is still waiting on the connection that never answers"
    );
    assert_eq!(
        proxy.swallowed.load(Ordering::SeqCst),
        0,
        "never tried the swallowing peer"
    );
}

/// What `observe` heard, in order: a message's channel and payload, or `None` for a gap.
type Log = Arc<std::sync::Mutex<Vec<Option<(String, Vec<u8>)>>>>;

fn log_of(notifier: &Notifier) -> Log {
    let log: Log = Arc::default();
    let to = log.clone();
    notifier.observe(move |h| {
        let entry = match h {
            Heard::Message { channel, payload } => Some((channel.to_string(), payload.to_vec())),
            Heard::Gap => None,
        };
        to.lock().unwrap().push(entry);
    });
    log
}

/// A notifier on `store` listening to `patterns`, its log and a waiter on `channel`, both
/// registered before the listener runs; back once the first connection's gap is logged (and
/// the waiter woken by it), the log then emptied.
async fn listening(
    store: &Store,
    patterns: &[&str],
    channel: &str,
) -> (Notifier, Log, Subscription, watch::Sender<bool>) {
    let (stop_tx, stop) = watch::channel(false);
    let (notifier, listener) = Notifier::new(
        store.client().clone(),
        patterns.iter().map(|p| p.to_string()).collect(),
        stop,
    );
    let log = log_of(&notifier);
    let mut waiter = notifier.subscribe(channel);
    tokio::spawn(listener);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    logged(&log, 1).await;
    assert_eq!(
        log.lock().unwrap().drain(..).collect::<Vec<_>>(),
        vec![None]
    );
    waiter.changed().await;
    assert_eq!(waiter.payload(), None);
    (notifier, log, waiter, stop_tx)
}

/// Waits (up to a minute) until `waiter` is woken with `payload` (a wake-up with none, of a
/// reconnect, may come first).
async fn woken_with(waiter: &mut Subscription, payload: &str) {
    let woken = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            waiter.changed().await;
            if waiter.payload().as_deref() == Some(payload) {
                return;
            }
        }
    })
    .await;
    assert!(woken.is_ok(), "never woken with {payload:?}");
}

/// Waits (up to a minute) until `log` holds `n` entries or more.
async fn logged(log: &Log, n: usize) {
    let started = std::time::Instant::now();
    while log.lock().unwrap().len() < n {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "heard {} of {n}",
            log.lock().unwrap().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn publish(conn: &mut redis::aio::MultiplexedConnection, channel: &str, payload: &[u8]) {
    let _: i64 = redis::cmd("PUBLISH")
        .arg(channel)
        .arg(payload)
        .query_async(conn)
        .await
        .unwrap();
}

/// The listener's connection of its own (`src/resp.rs` reads it) against a real
/// redis-server on a unix socket, logged in as an ACL user: a burst of messages of every
/// size (binary, empty, one of 3 MB read in many pieces) on a pattern and on an exact
/// channel is heard whole and in order, nothing of a channel it did not subscribe to; a
/// waiter gets a UTF-8 payload and none for bytes that are not; a restart of the server is a
/// gap, wakes the waiter without a payload, and the listener subscribes again by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_a_unix_socket_as_a_user_hears_every_message_and_a_restart() {
    let mut redis = RedisServer::start_with(|o| {
        o.listen = horst_testkit::Listen::Unix(o.dir.join("r.sock"));
        o.appendonly = false;
        // A user directive has several words: a configuration file (an `extra` value is
        // one quoted word).
        let conf = o.dir.join("users.conf");
        std::fs::write(&conf, "user listener on >pw%1 ~* &* +@all\n").unwrap();
        o.config_file = Some(conf);
    });
    let url = format!("{}?user=listener&pass=pw%251", redis.url());
    let store = Store::connect(&url, "t:").await.unwrap();
    let (notifier, log, mut waiter, _stop) = listening(&store, &["t:*", "exact"], "t:wait").await;
    let mut direct = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();

    let mut sent = Vec::new();
    for i in 0..400usize {
        let channel = if i % 50 == 7 {
            "exact".to_string()
        } else {
            format!("t:c{}", i % 9)
        };
        let payload: Vec<u8> = (0..(i * 37) % 5000).map(|j| (i + j * 7) as u8).collect();
        sent.push((channel, payload));
    }
    sent.push(("t:huge".into(), vec![b'\r'; 3 * 1024 * 1024]));
    sent.push(("t:empty".into(), Vec::new()));
    let mut burst = redis::pipe();
    for (i, (channel, payload)) in sent.iter().enumerate() {
        burst.cmd("PUBLISH").arg(channel).arg(payload).ignore();
        if i == 200 {
            burst
                .cmd("PUBLISH")
                .arg("elsewhere")
                .arg("not heard")
                .ignore();
        }
    }
    let () = burst.query_async(&mut direct).await.unwrap();
    logged(&log, sent.len()).await;
    let heard: Vec<_> = log.lock().unwrap().drain(..).collect();
    assert_eq!(heard.len(), sent.len());
    for (i, (h, s)) in heard.iter().zip(&sent).enumerate() {
        assert_eq!(h.as_ref(), Some(s), "message {i}");
    }

    publish(&mut direct, "t:wait", "ünïcode".as_bytes()).await;
    woken_with(&mut waiter, "ünïcode").await;
    publish(&mut direct, "t:wait", b"\xff\xfe").await;
    waiter.changed().await;
    assert_eq!(
        waiter.payload(),
        None,
        "bytes that are not UTF-8 reach no waiter"
    );
    logged(&log, 2).await;
    log.lock().unwrap().clear();

    tokio::task::block_in_place(|| redis.restart());
    // Closed under it: a gap; subscribed again: a gap and every waiter woken, no payload.
    logged(&log, 2).await;
    assert!(notifier.ready(Duration::from_secs(30)).await);
    waiter.changed().await;
    assert_eq!(waiter.payload(), None);
    assert!(log.lock().unwrap().iter().all(Option::is_none));
    log.lock().unwrap().clear();
    let mut direct = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    // Subscribed again on the restarted server (a message before the listener's new
    // subscription would be lost, as pub/sub loses it: publish until heard).
    let again = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            publish(&mut direct, "t:wait", b"again").await;
            if tokio::time::timeout(Duration::from_millis(500), waiter.changed())
                .await
                .is_ok()
            {
                return waiter.payload();
            }
        }
    })
    .await;
    assert_eq!(again.unwrap().as_deref(), Some("again"));
    assert!(log
        .lock()
        .unwrap()
        .iter()
        .any(|h| h == &Some(("t:wait".into(), b"again".to_vec()))));
}

/// Over TCP with the default user's password (set while the server runs): the listener logs
/// in, hears, and after its connection is killed (`CLIENT KILL TYPE pubsub`) logs in and
/// subscribes again by itself, waking its waiter without a payload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_with_a_password_over_tcp_logs_in_again_after_its_connection_is_killed() {
    let redis = RedisServer::start();
    let mut admin = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("sé cret")
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = format!("redis://:s%C3%A9%20cret@127.0.0.1:{}", redis.port());
    let store = Store::connect(&url, "t:").await.unwrap();
    let (notifier, log, mut waiter, _stop) = listening(&store, &["t:*"], "t:w").await;
    let mut direct = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    publish(&mut direct, "t:w", b"one").await;
    woken_with(&mut waiter, "one").await;
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut direct)
        .await
        .unwrap();
    assert_eq!(killed, 1);
    waiter.changed().await;
    assert_eq!(waiter.payload(), None);
    assert!(notifier.ready(Duration::from_secs(10)).await);
    publish(&mut direct, "t:w", b"two").await;
    woken_with(&mut waiter, "two").await;
    // The message, the connection's loss, the new one's gap (and one more for each try
    // that failed, were there any), the next message.
    let heard = log.lock().unwrap().clone();
    let (first, rest) = heard.split_first().unwrap();
    let (last, between) = rest.split_last().unwrap();
    assert_eq!(first, &Some(("t:w".into(), b"one".to_vec())));
    assert_eq!(last, &Some(("t:w".into(), b"two".to_vec())));
    assert!(
        between.len() >= 2 && between.iter().all(Option::is_none),
        "{heard:?}"
    );
}
