//! Wake-ups through Redis pub/sub, shared by every waiter in a process.
//!
//! One dedicated pub/sub connection per process listens to a few patterns (`done:*`,
//! `queue:new`, session channels); waiters register a [`Subscription`] for one channel and
//! are woken when a message arrives on it. A subscription is a `watch` counter, so a
//! message that arrives between registering and awaiting is not lost: that is what makes
//! "subscribe first, then read the state" race-free.
//!
//! Pub/sub is fire-and-forget: while the connection is down messages are lost. So after
//! every (re)connect *all* waiters are woken to re-read their state, and waiters also
//! re-read on a slow timer of their own. When the store follows a failover to a new primary
//! the listener drops its connection to the old one and subscribes on the new one (with the
//! same wake-up of everybody), so long-polls resubscribe by themselves.
//!
//! A message's payload is kept with the wake-up ([`Subscription::payload`]): a publisher that
//! sends the new state itself (sessions publish their record) spares every waiter in every
//! process a read. The latest message wins; a wake-up after a reconnect carries no payload,
//! which tells waiters to read.
//!
//! An observer ([`Notifier::observe`]) hears every message, waited on or not, and every gap
//! (a lost or new connection, when messages may have been missed): the session layer keeps
//! its cached records current with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::watch;

/// What a waiter sees: a counter that moves on every message, and the latest payload
/// (`None` after a reconnect: messages may have been missed, read the state).
#[derive(Debug, Clone, Default)]
struct Wake {
    count: u64,
    payload: Option<Arc<str>>,
}

type Waiters = Arc<Mutex<HashMap<String, watch::Sender<Wake>>>>;

/// What the listener hears, for an observer ([`Notifier::observe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard<'a> {
    /// A message on `channel` (the full name, prefix included).
    Message { channel: &'a str, payload: &'a [u8] },
    /// The connection was lost, or made again: messages may have been missed since the
    /// last one heard.
    Gap,
}

type Observer = Box<dyn Fn(Heard<'_>) + Send + Sync>;
type Observers = Arc<std::sync::RwLock<Vec<Observer>>>;

/// The process's pub/sub listener. Cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    waiters: Waiters,
    observers: Observers,
    connected: watch::Receiver<bool>,
}

/// A registration for one channel; [`Subscription::changed`] resolves on a message.
pub struct Subscription {
    rx: watch::Receiver<Wake>,
    channel: String,
    waiters: Waiters,
}

impl Subscription {
    /// Resolves when a message arrived since the last call (or since subscribing).
    pub async fn changed(&mut self) {
        if self.rx.changed().await.is_err() {
            // The notifier is gone (shutdown): never resolve; callers time out on their own.
            std::future::pending::<()>().await;
        }
    }

    /// Forgets the messages that arrived so far: [`Subscription::changed`] waits for the next.
    pub fn mark_seen(&mut self) {
        self.rx.mark_unchanged();
    }

    /// The payload of the latest message, if it carried one and no reconnect came after it.
    pub fn payload(&self) -> Option<Arc<str>> {
        self.rx.borrow().payload.clone()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut waiters = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        // Only the sender's own receiver left (ours is being dropped): forget the channel.
        if let Some(tx) = waiters.get(&self.channel) {
            if tx.receiver_count() <= 1 {
                waiters.remove(&self.channel);
            }
        }
    }
}

impl Notifier {
    /// Starts listening to `patterns` (PSUBSCRIBE; a pattern without `*` is just a channel)
    /// until `shutdown` turns true. Returns at once; the connection is made in the background
    /// (a task of its own: [`Notifier::new`] hands the listener to the caller instead).
    pub fn start(
        client: crate::PrimaryClient,
        patterns: Vec<String>,
        shutdown: watch::Receiver<bool>,
    ) -> Notifier {
        let (notifier, listener) = Notifier::new(client, patterns, shutdown);
        tokio::spawn(listener);
        notifier
    }

    /// The notifier and its listener, which the caller runs (horst's `App` in the process's
    /// task tracker, so the shutdown waits for it): it listens to `patterns` until
    /// `shutdown` turns true; nobody is woken before it runs.
    pub fn new(
        client: crate::PrimaryClient,
        patterns: Vec<String>,
        mut shutdown: watch::Receiver<bool>,
    ) -> (
        Notifier,
        impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let waiters: Waiters = Arc::default();
        let observers: Observers = Arc::default();
        let (connected_tx, connected) = watch::channel(false);
        let notifier = Notifier {
            waiters: waiters.clone(),
            observers: observers.clone(),
            connected,
        };
        let listener = async move {
            let mut backoff = Duration::from_millis(100);
            let mut moved = client.moved();
            loop {
                moved.mark_unchanged();
                let primary = client.current();
                tokio::select! {
                    held = listen(&primary, &patterns, &waiters, &observers, &connected_tx) => {
                        // A connection that was subscribed and held a while was a good one:
                        // the next drop (a Redis restart, a killed connection) is a new
                        // trouble, retried as fast as the first. Only a server that keeps
                        // dropping the listener at once is retried ever more slowly.
                        if held.is_some_and(|held| held >= STABLE) {
                            backoff = Duration::from_millis(100);
                        }
                    }
                    _ = moved.changed() => {
                        tracing::info!("pub/sub: the Redis primary moved; subscribing on the new one");
                        backoff = Duration::from_millis(100);
                    }
                    _ = shutdown.wait_for(|s| *s) => return,
                }
                let _ = connected_tx.send(false);
                tell(&observers, Heard::Gap);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shutdown.wait_for(|s| *s) => return,
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        };
        (notifier, listener)
    }

    /// Registers interest in `channel` (a full channel name, prefix included).
    pub fn subscribe(&self, channel: &str) -> Subscription {
        let mut waiters = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        let tx = waiters
            .entry(channel.to_string())
            .or_insert_with(|| watch::channel(Wake::default()).0);
        let mut rx = tx.subscribe();
        rx.mark_unchanged();
        Subscription {
            rx,
            channel: channel.to_string(),
            waiters: self.waiters.clone(),
        }
    }

    /// Calls `observer` with every message the listener hears (on the listener's task, so it
    /// must be quick and must not block) and with every gap. Messages heard before this call
    /// are not replayed.
    pub fn observe(&self, observer: impl Fn(Heard<'_>) + Send + Sync + 'static) {
        self.observers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(Box::new(observer));
    }

    /// Waits until the listener is subscribed (tests and start-up use it).
    pub async fn ready(&self, limit: Duration) -> bool {
        let mut rx = self.connected.clone();
        let ok = tokio::time::timeout(limit, rx.wait_for(|c| *c)).await;
        matches!(ok, Ok(Ok(_)))
    }
}

/// How long a subscribed connection must have lasted for its loss to be retried with the
/// shortest backoff again.
const STABLE: Duration = Duration::from_secs(1);

/// How often the listener asks its connection whether it still answers.
const PING_EVERY: Duration = Duration::from_secs(5);
/// How long an answer may take before the connection counts as dead (a stalled Redis is
/// waited out as long: a reconnect during a stall only costs everyone a re-read).
const PING_LIMIT: Duration = Duration::from_secs(10);

/// Listens on one connection until it is lost; how long it was subscribed (`None`: it never
/// was).
async fn listen(
    client: &redis::Client,
    patterns: &[String],
    waiters: &Waiters,
    observers: &Observers,
    connected: &watch::Sender<bool>,
) -> Option<Duration> {
    // Connecting and subscribing are bounded like the PING: a node that accepts the
    // connection and then never answers (frozen, or the flow black-holed) would otherwise
    // hold the listener, and every wake-up of the process, until it came back.
    let mut pubsub = match tokio::time::timeout(PING_LIMIT, client.get_async_pubsub()).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "pub/sub connection failed; retrying");
            return None;
        }
        Err(_) => {
            tracing::warn!("pub/sub connection: not connected within {PING_LIMIT:?}; retrying");
            return None;
        }
    };
    for p in patterns {
        match tokio::time::timeout(PING_LIMIT, pubsub.psubscribe(p)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(pattern = %p, error = %e, "PSUBSCRIBE failed; retrying");
                return None;
            }
            Err(_) => {
                tracing::warn!(pattern = %p, "PSUBSCRIBE not answered within {PING_LIMIT:?}; retrying");
                return None;
            }
        }
    }
    let subscribed = tokio::time::Instant::now();
    let _ = connected.send(true);
    // Messages published while no connection listened are lost: observers and waiters
    // learn it before the first message of this connection.
    tell(observers, Heard::Gap);
    wake_all(waiters);
    let (mut sink, mut stream) = pubsub.split();
    // A connection whose peer vanished without a reset (a host gone, a NAT or firewall that
    // dropped the idle flow) delivers nothing and reports nothing: without a question now
    // and then, this task would wait for ever and every wake-up of the process be lost.
    let mut beat = tokio::time::interval(PING_EVERY);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beat.tick().await;
    loop {
        let msg = tokio::select! {
            msg = stream.next() => msg,
            _ = beat.tick() => {
                match tokio::time::timeout(PING_LIMIT, sink.ping::<redis::Value>()).await {
                    Ok(Ok(_)) => continue,
                    Ok(Err(e)) => tracing::warn!(error = %e, "pub/sub connection: PING failed; reconnecting"),
                    Err(_) => tracing::warn!(
                        "pub/sub connection: no answer to PING within {PING_LIMIT:?}; reconnecting"
                    ),
                }
                return Some(subscribed.elapsed());
            }
        };
        let Some(msg) = msg else { break };
        let channel = msg.get_channel_name();
        tell(
            observers,
            Heard::Message {
                channel,
                payload: msg.get_payload_bytes(),
            },
        );
        let waiters = waiters.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = waiters.get(channel) {
            // Decoded only for channels someone waits on (most messages have no waiter here).
            let payload: Option<Arc<str>> = msg
                .get_payload::<String>()
                .ok()
                .filter(|p| !p.is_empty())
                .map(Arc::from);
            tx.send_modify(|w| {
                w.count += 1;
                w.payload = payload;
            });
        }
    }
    tracing::warn!("pub/sub connection lost; reconnecting");
    Some(subscribed.elapsed())
}

fn tell(observers: &Observers, heard: Heard<'_>) {
    for observe in observers.read().unwrap_or_else(|e| e.into_inner()).iter() {
        observe(heard);
    }
}

/// After a (re)connect, messages may have been missed: everybody re-reads.
fn wake_all(waiters: &Waiters) {
    let waiters = waiters.lock().unwrap_or_else(|e| e.into_inner());
    for tx in waiters.values() {
        tx.send_modify(|w| {
            w.count += 1;
            w.payload = None;
        });
    }
}
