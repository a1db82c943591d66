//! The notifier's listener against a connection that goes silent: its peer stops answering
//! without a reset (a host gone, a NAT or firewall that dropped the flow). A proxy between
//! horst and a real redis-server stops forwarding on the connections it holds, keeping them
//! open; new connections pass.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horst_store::{Heard, Notifier, Store};
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
