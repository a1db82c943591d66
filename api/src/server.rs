//! The HTTP server: our own accept loop over hyper's HTTP/1 connections, so that a client
//! cannot hold the process's connections or descriptors (issue 21: slowloris heads, idle
//! floods from one address, bodies that never end).
//!
//! - **Head**: hyper's `header_read_timeout` closes a connection whose request head is not in
//!   within `server.header_read_timeout_seconds` of the connection being ready for one.
//! - **Idle**: a connection with no request in flight and nothing arriving for
//!   `server.idle_timeout_seconds` is closed (a watchdog per connection; see [`Activity`]).
//! - **Unread answers**: a connection whose answer cannot be written (the client stopped
//!   reading: the socket's buffers are full) for `server.idle_timeout_seconds` is closed at
//!   once, without the flush a graceful close waits for; and one the server is closing (idle,
//!   slow body) is closed at once if it has not ended an idle timeout later.
//! - **Body**: a request body must arrive within `body_timeout_seconds` of the handler starting
//!   to read it, plus a second per `body_min_bytes_per_second` bytes ([`DeadlineBody`]);
//!   otherwise the read fails and the connection is closed after the answer.
//! - **Caps**: at most `max_connections` open connections, and `max_connections_per_address`
//!   from one TCP peer (trusted proxies exempt). A connection over a cap is answered 503 with
//!   code `too_many_connections` and closed at once, so it costs the process nothing.
//! - **Accept errors** (out of descriptors) are logged and backed off (5 ms doubling to 1 s)
//!   instead of spinning.
//!
//! What the timers do not cover, on purpose: a handler's own time. A 60 s blocking tool call
//! or a session long-poll has its head read at once and then waits in the handler.
//!
//! Graceful shutdown is what it was with `axum::serve`: stop accepting (the listener is
//! dropped), tell every connection to finish its exchange and close, wait for them.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
// `::ffff:1.2.3.4` counts as `1.2.3.4` for the connection caps, as for the burst limits.
use horst_limits::canonical;
use horst_telemetry::metrics::counter::Counter;
use horst_telemetry::metrics::family::Family;
use horst_telemetry::metrics::gauge::Gauge;
use horst_telemetry::Metrics;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};

use crate::Served;

/// The connection limits and timeouts (`[server]`).
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub body_timeout: Duration,
    pub body_min_bytes_per_second: u64,
    pub max_connections: usize,
    pub max_connections_per_address: usize,
    /// Peers the per-address cap does not apply to (`server.trusted_proxies`).
    pub exempt: Arc<horst_limits::TrustedProxies>,
}

impl ConnectionLimits {
    pub fn from_config(server: &horst_config::ServerConfig) -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(server.header_read_timeout_seconds),
            idle_timeout: Duration::from_secs(server.idle_timeout_seconds),
            body_timeout: Duration::from_secs(server.body_timeout_seconds),
            body_min_bytes_per_second: server.body_min_bytes_per_second.max(1),
            max_connections: server.max_connections as usize,
            max_connections_per_address: server.max_connections_per_address as usize,
            exempt: Arc::new(horst_limits::TrustedProxies::from_config(
                &server.trusted_proxies,
            )),
        }
    }
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits::from_config(&horst_config::ServerConfig::default())
    }
}

type Labels = Vec<(&'static str, &'static str)>;

/// `horst_connections_*` on `/metrics`.
#[derive(Clone)]
pub struct ConnectionMetrics {
    open: Gauge,
    refused: Family<Labels, Counter>,
    closed: Family<Labels, Counter>,
    accept_errors: Counter,
}

impl ConnectionMetrics {
    /// Registers the metrics (once per process: `AppState::new` does it).
    pub fn register(metrics: &Metrics) -> Self {
        let m = ConnectionMetrics {
            open: Gauge::default(),
            refused: Family::default(),
            closed: Family::default(),
            accept_errors: Counter::default(),
        };
        metrics.register(
            "connections_open",
            "HTTP connections open now",
            m.open.clone(),
        );
        metrics.register(
            "connections_refused",
            "HTTP connections answered 503 and closed at once, by the cap they hit (max_connections, max_connections_per_address)",
            m.refused.clone(),
        );
        metrics.register(
            "connections_closed_by_server",
            "HTTP connections the server closed, by reason (header_timeout, idle_timeout, body_timeout, write_timeout)",
            m.closed.clone(),
        );
        metrics.register(
            "accept_errors",
            "Failed accepts (for example out of file descriptors); each is backed off",
            m.accept_errors.clone(),
        );
        // Every reason listed at zero from the start (a family shows only the series it
        // has): the first refusal is then a rise that `increase()` sees.
        for reason in ["max_connections", "max_connections_per_address"] {
            drop(m.refused.get_or_create(&vec![("reason", reason)]));
        }
        for reason in [
            "header_timeout",
            "idle_timeout",
            "body_timeout",
            "write_timeout",
        ] {
            drop(m.closed.get_or_create(&vec![("reason", reason)]));
        }
        m
    }

    fn closed(&self, reason: &'static str) {
        self.closed.get_or_create(&vec![("reason", reason)]).inc();
    }
}

/// Open connections, in total and per client address.
struct Tracker {
    total: AtomicUsize,
    per_address: Mutex<HashMap<IpAddr, usize>>,
}

/// One admitted connection's place in the counts; given back on drop.
struct Slot {
    tracker: Arc<Tracker>,
    ip: IpAddr,
    metrics: ConnectionMetrics,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.tracker.total.fetch_sub(1, Ordering::Relaxed);
        let mut per = self
            .tracker
            .per_address
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(n) = per.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per.remove(&self.ip);
            }
        }
        self.metrics.open.dec();
    }
}

/// Which cap a new connection hits, if any.
fn admit(
    tracker: &Arc<Tracker>,
    limits: &ConnectionLimits,
    metrics: &ConnectionMetrics,
    ip: IpAddr,
) -> Result<Slot, &'static str> {
    if tracker.total.load(Ordering::Relaxed) >= limits.max_connections {
        return Err("max_connections");
    }
    let exempt = limits.exempt.contains(ip);
    // One IPv6 subscriber holds a whole /64 (as the sign-in and burst limits count them).
    let ip = network_of(ip);
    let mut per = tracker
        .per_address
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let n = per.entry(ip).or_insert(0);
    if *n >= limits.max_connections_per_address && !exempt {
        if *n == 0 {
            per.remove(&ip);
        }
        return Err("max_connections_per_address");
    }
    *n += 1;
    drop(per);
    tracker.total.fetch_add(1, Ordering::Relaxed);
    metrics.open.inc();
    Ok(Slot {
        tracker: tracker.clone(),
        ip,
        metrics: metrics.clone(),
    })
}

/// The address a connection counts under: an IPv4 address (an IPv4-mapped IPv6 one as its
/// IPv4), or an IPv6 address's /64.
fn network_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

/// What a refused connection is told before it is closed (built once: under a flood this
/// runs thousands of times a second).
fn refusal(cap: &'static str) -> &'static [u8] {
    static PER_ADDRESS: OnceLock<Vec<u8>> = OnceLock::new();
    static GLOBAL: OnceLock<Vec<u8>> = OnceLock::new();
    let build = |message: &str| {
        let body =
            serde_json::json!({ "error": message, "code": "too_many_connections" }).to_string();
        format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    match cap {
        "max_connections_per_address" => PER_ADDRESS.get_or_init(|| build("too many open connections from your address; close idle connections or reuse one (keep-alive) and try again")),
        _ => GLOBAL.get_or_init(|| build("the server has too many open connections; try again in a few seconds")),
    }
}

/// Milliseconds since the process started serving: a cheap clock for atomics.
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// One connection's activity, for the idle watchdog: requests in flight (until their
/// response body is sent) and when the last byte arrived or the last response ended.
struct Activity {
    in_flight: AtomicUsize,
    last_ms: AtomicU64,
    /// Since when a write has waited for room in the socket, [`NOT_BLOCKED`] while the
    /// last one went through.
    blocked_ms: AtomicU64,
    /// A request body was too slow: close the connection after its answer.
    slow_body: Notify,
}

const NOT_BLOCKED: u64 = u64::MAX;

impl Activity {
    fn new() -> Activity {
        Activity {
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(now_ms()),
            blocked_ms: AtomicU64::new(NOT_BLOCKED),
            slow_body: Notify::new(),
        }
    }

    fn touch(&self) {
        self.last_ms.store(now_ms(), Ordering::Relaxed);
    }

    fn wrote<T>(&self, r: &Poll<T>) {
        match r {
            // The first wait counts: a client that stopped reading never frees room.
            Poll::Pending => {
                let _ = self.blocked_ms.compare_exchange(
                    NOT_BLOCKED,
                    now_ms(),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            Poll::Ready(_) => self.blocked_ms.store(NOT_BLOCKED, Ordering::Relaxed),
        }
    }

    /// How long until a write waiting for room has waited `limit` (`limit` when none waits).
    fn write_left(&self, limit: Duration) -> Duration {
        match self.blocked_ms.load(Ordering::Relaxed) {
            NOT_BLOCKED => limit,
            since => {
                Duration::from_millis((since + limit.as_millis() as u64).saturating_sub(now_ms()))
            }
        }
    }
}

/// The socket, noting when bytes arrive and when a write waits for room.
struct ActivityIo<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S: AsyncRead + Unpin> AsyncRead for ActivityIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ActivityIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.activity.wrote(&r);
        r
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.activity.wrote(&r);
        r
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A request in flight from its head until hyper drops its response body (sent or not).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The response body, carrying its request's [`InFlight`].
struct TrackedBody {
    inner: Body,
    _in_flight: InFlight,
}

impl HttpBody for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that fails once it is later than its deadline.
struct DeadlineBody {
    inner: Incoming,
    base: Duration,
    min_rate: u64,
    started: Option<tokio::time::Instant>,
    received: u64,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    activity: Arc<Activity>,
    metrics: ConnectionMetrics,
}

/// The error a too-slow body reads as (its text reaches the 400's message).
#[derive(Debug)]
struct SlowBody {
    base: Duration,
    min_rate: u64,
}

impl std::fmt::Display for SlowBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body arrived too slowly (it must be in within {} s, plus 1 s per {} bytes); send the whole body at once",
            self.base.as_secs(),
            self.min_rate
        )
    }
}

impl std::error::Error for SlowBody {}

impl DeadlineBody {
    fn deadline(&self, started: tokio::time::Instant) -> tokio::time::Instant {
        let extra_ms = self.received.saturating_mul(1000) / self.min_rate;
        started + self.base + Duration::from_millis(extra_ms)
    }
}

impl HttpBody for DeadlineBody {
    type Data = axum::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let started = *this.started.get_or_insert_with(tokio::time::Instant::now);
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                let deadline = this.deadline(started);
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                if timer.as_mut().poll(cx).is_ready() {
                    // Counted here: hyper may end the connection (body unread) before the
                    // connection's loop sees the notification.
                    this.metrics.closed("body_timeout");
                    this.activity.slow_body.notify_one();
                    return Poll::Ready(Some(Err(Box::new(SlowBody {
                        base: this.base,
                        min_rate: this.min_rate,
                    }))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Serves `router` on `listener` until `shutdown` resolves, then stops accepting and waits
/// for the open connections to finish their exchange. (The grace period is the caller's.)
pub(crate) async fn serve_connections(
    listener: TcpListener,
    router: Served,
    shutdown: impl Future<Output = ()> + Send + 'static,
    limits: ConnectionLimits,
    metrics: ConnectionMetrics,
) {
    let (drain_tx, drain_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = drain_tx.send(true);
    });
    // Every connection task holds a receiver; `closed()` resolves when the last one ended.
    let (done_tx, done_rx) = watch::channel(());
    let tracker = Arc::new(Tracker {
        total: AtomicUsize::new(0),
        per_address: Mutex::new(HashMap::new()),
    });
    let limits = Arc::new(limits);
    let mut backoff = Duration::ZERO;
    let mut errors_since_log = 0u64;
    let mut last_log: Option<Instant> = None;
    let mut stop = drain_rx.clone();
    // The connections' tasks: dropped with this future (the caller's grace period over, it
    // aborts it), they end with it, so no request outlives the server.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(c) => {
                backoff = Duration::ZERO;
                c
            }
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                metrics.accept_errors.inc();
                errors_since_log += 1;
                backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                // At most one line a second, with the count, so a descriptor shortage is
                // seen without flooding the log.
                if last_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                    tracing::error!(error = %e, failed_accepts = errors_since_log, backoff_ms = backoff.as_millis() as u64,
                        "cannot accept connections (out of file descriptors? raise LimitNOFILE or lower server.max_connections)");
                    errors_since_log = 0;
                    last_log = Some(Instant::now());
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stop.wait_for(|s| *s) => break,
                }
                continue;
            }
        };
        let ip = canonical(peer.ip());
        let slot = match admit(&tracker, &limits, &metrics, ip) {
            Ok(slot) => slot,
            Err(cap) => {
                metrics.refused.get_or_create(&vec![("reason", cap)]).inc();
                tracing::debug!(peer = %ip, cap, "connection refused");
                // Best effort and never blocking: the socket buffer takes these few bytes.
                let _ = stream.try_write(refusal(cap));
                drop(stream);
                continue;
            }
        };
        // Finished connections leave the set as new ones come.
        while connections.try_join_next().is_some() {}
        connections.spawn(serve_one(
            stream,
            peer,
            router.clone(),
            limits.clone(),
            metrics.clone(),
            drain_rx.clone(),
            slot,
            done_rx.clone(),
        ));
    }
    drop(listener);
    drop(done_rx);
    done_tx.closed().await;
}

#[allow(clippy::too_many_arguments)]
async fn serve_one(
    stream: TcpStream,
    peer: SocketAddr,
    router: Served,
    limits: Arc<ConnectionLimits>,
    metrics: ConnectionMetrics,
    drain: watch::Receiver<bool>,
    _slot: Slot,
    _done: watch::Receiver<()>,
) {
    let _ = stream.set_nodelay(true);
    serve_io(stream, peer, router, limits, metrics, drain).await;
}

/// One connection over `stream` until it ends or is closed.
async fn serve_io<S>(
    stream: S,
    peer: SocketAddr,
    router: Served,
    limits: Arc<ConnectionLimits>,
    metrics: ConnectionMetrics,
    mut drain: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(ActivityIo {
        inner: stream,
        activity: activity.clone(),
    });
    let service = {
        let activity = activity.clone();
        let limits = limits.clone();
        let metrics = metrics.clone();
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let in_flight = InFlight::start(&activity);
            let mut req = req.map(|inner| {
                Body::new(DeadlineBody {
                    inner,
                    base: limits.body_timeout,
                    min_rate: limits.body_min_bytes_per_second,
                    started: None,
                    received: 0,
                    timer: None,
                    activity: activity.clone(),
                    metrics: metrics.clone(),
                })
            });
            req.extensions_mut().insert(ConnectInfo(peer));
            let router = router.clone();
            async move {
                let response = router.answer(req).await;
                Ok::<_, Infallible>(response.map(|inner| TrackedBody {
                    inner,
                    _in_flight: in_flight,
                }))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let conn = builder.serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let idle = limits.idle_timeout;
    let mut closing = false;
    // A graceful close flushes first, which a client that stopped reading never lets end;
    // so a close of the server's own (idle, slow body) ends an idle timeout later at the
    // latest. (A drain's is the grace period's, which ends every connection.)
    let mut close_by: Option<tokio::time::Instant> = None;
    let close_later = || Some(tokio::time::Instant::now() + idle);
    loop {
        // While a request is in flight (a long-poll) the next look is a whole period away;
        // the request's end counts as activity, so the idle period restarts from there.
        let idle_left = if activity.in_flight.load(Ordering::Relaxed) > 0 {
            idle
        } else {
            let last = activity.last_ms.load(Ordering::Relaxed);
            Duration::from_millis((last + idle.as_millis() as u64).saturating_sub(now_ms()))
        };
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    if e.is_timeout() {
                        metrics.closed("header_timeout");
                    }
                    tracing::trace!(error = %e, "connection ended with an error");
                }
                break;
            }
            _ = drain.wait_for(|s| *s), if !closing => {
                closing = true;
                conn.as_mut().graceful_shutdown();
            }
            _ = activity.slow_body.notified(), if !closing => {
                closing = true;
                close_by = close_later();
                conn.as_mut().graceful_shutdown();
            }
            _ = tokio::time::sleep(idle_left), if !closing => {
                let quiet = now_ms().saturating_sub(activity.last_ms.load(Ordering::Relaxed));
                if activity.in_flight.load(Ordering::Relaxed) == 0 && quiet >= idle.as_millis() as u64 {
                    closing = true;
                    close_by = close_later();
                    metrics.closed("idle_timeout");
                    conn.as_mut().graceful_shutdown();
                }
            }
            // An answer no byte of which could be written for an idle timeout: the client
            // stopped reading. Closed at once (dropping hyper's connection drops the socket),
            // or it would hold its place in the connection caps for good.
            _ = tokio::time::sleep(activity.write_left(idle)) => {
                if activity.write_left(idle).is_zero() {
                    metrics.closed("write_timeout");
                    tracing::debug!(peer = %peer, "closed: the client has not read its answer for the idle timeout");
                    break;
                }
            }
            _ = tokio::time::sleep_until(close_by.unwrap_or_else(tokio::time::Instant::now)), if close_by.is_some() => {
                tracing::debug!(peer = %peer, "closed: a graceful close did not end within the idle timeout");
                break;
            }
        }
    }
}

/// A reset or aborted handshake is the client's business, not an accept failure.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(global: usize, per: usize, exempt: &[&str]) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: global,
            max_connections_per_address: per,
            exempt: Arc::new(horst_limits::TrustedProxies::from_config(
                &exempt.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )),
            ..ConnectionLimits::default()
        }
    }

    /// One IPv6 subscriber holds a /64: its addresses share one count (each counted apart,
    /// a rotating client escaped the cap); an IPv4-mapped address counts as its IPv4 one.
    #[test]
    fn an_ipv6_prefix_shares_one_count() {
        let tracker = Arc::new(Tracker {
            total: AtomicUsize::new(0),
            per_address: Mutex::new(HashMap::new()),
        });
        let m = ConnectionMetrics::register(&Metrics::new());
        let l = limits(100, 2, &[]);
        let _first = admit(&tracker, &l, &m, "2001:db8:1:2::1".parse().unwrap()).unwrap();
        let _second = admit(&tracker, &l, &m, "2001:db8:1:2:ffff::9".parse().unwrap()).unwrap();
        assert_eq!(
            admit(&tracker, &l, &m, "2001:db8:1:2::abcd".parse().unwrap()).err(),
            Some("max_connections_per_address")
        );
        assert!(admit(&tracker, &l, &m, "2001:db8:1:3::1".parse().unwrap()).is_ok());
        let _v4 = admit(&tracker, &l, &m, "192.0.2.7".parse().unwrap()).unwrap();
        let _mapped = admit(&tracker, &l, &m, "::ffff:192.0.2.7".parse().unwrap()).unwrap();
        assert!(admit(&tracker, &l, &m, "192.0.2.7".parse().unwrap()).is_err());
    }

    #[test]
    fn caps_count_per_address_and_in_total_and_give_back_on_drop() {
        let tracker = Arc::new(Tracker {
            total: AtomicUsize::new(0),
            per_address: Mutex::new(HashMap::new()),
        });
        let m = ConnectionMetrics::register(&Metrics::new());
        let l = limits(3, 2, &["10.0.0.0/8"]);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let a1 = admit(&tracker, &l, &m, a).unwrap();
        let _a2 = admit(&tracker, &l, &m, a).unwrap();
        assert_eq!(
            admit(&tracker, &l, &m, a).err(),
            Some("max_connections_per_address")
        );
        let _b1 = admit(&tracker, &l, &m, b).unwrap();
        assert_eq!(admit(&tracker, &l, &m, b).err(), Some("max_connections"));
        drop(a1);
        let _a3 = admit(&tracker, &l, &m, a).unwrap();
        // A trusted proxy is exempt from the per-address cap, not from the global one.
        let l = limits(10, 1, &["10.0.0.0/8"]);
        let _p1 = admit(&tracker, &l, &m, proxy).unwrap();
        let _p2 = admit(&tracker, &l, &m, proxy).unwrap();
        assert_eq!(tracker.total.load(Ordering::Relaxed), 5);
        assert!(!tracker
            .per_address
            .lock()
            .unwrap()
            .contains_key(&"192.0.2.9".parse::<IpAddr>().unwrap()));
    }

    /// A client that asks for an answer larger than the connection's buffers and never reads
    /// it: hyper takes the whole body (the request is no longer in flight), the idle
    /// watchdog's graceful close waits for a flush that never ends. The connection must end
    /// all the same (it held its place in the connection caps until the process stopped).
    #[tokio::test]
    async fn a_client_that_never_reads_its_answer_is_closed() {
        use tokio::io::AsyncWriteExt;
        let router = axum::Router::new().route(
            "/big",
            axum::routing::get(|| async { vec![b'x'; 256 * 1024] }),
        );
        let limits = Arc::new(ConnectionLimits {
            idle_timeout: Duration::from_millis(500),
            ..ConnectionLimits::default()
        });
        let metrics = ConnectionMetrics::register(&Metrics::new());
        let (mut client, server) = tokio::io::duplex(4096);
        let (_drain_tx, drain) = watch::channel(false);
        let peer: SocketAddr = "192.0.2.1:1234".parse().unwrap();
        let served = tokio::spawn(serve_io(
            server,
            peer,
            crate::Served::plain(router),
            limits,
            metrics.clone(),
            drain,
        ));
        client
            .write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        // Generous: a loaded machine's timers fire late; without the close it never ends.
        tokio::time::timeout(Duration::from_secs(30), served)
            .await
            .expect("the connection stayed open while its client read nothing")
            .unwrap();
        drop(client);
    }

    #[test]
    fn the_refusal_is_a_complete_http_answer_with_a_code() {
        let r = String::from_utf8(refusal("max_connections_per_address").to_vec()).unwrap();
        let (head, body) = r.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["code"], "too_many_connections");
    }
}
