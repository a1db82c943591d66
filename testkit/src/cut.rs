//! A TCP proxy in front of a server that the test can cut off: a network partition between
//! the processes that connect through it and the server, while everything else still reaches
//! the server directly. It can also make the link slow (every chunk held a while each way)
//! or hold only the server's replies (a one-way partition: requests arrive and run, their
//! answers wait).
//!
//! While cut, nothing crosses in either direction and nothing is refused or reset: bytes
//! already sent wait (in the proxy and the kernels' buffers), a new connection is accepted
//! but not carried on to the server. When the cut heals, what waited is delivered, in order,
//! as TCP delivers it once a real partition heals within its retransmission time: a request
//! whose client stopped waiting for the answer still reaches the server and runs.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// A proxy to `127.0.0.1:<port>` on a port of its own; it stops when dropped.
pub struct Cut {
    addr: SocketAddr,
    /// Whether bytes cross towards the server, and towards the clients.
    to_server: watch::Sender<bool>,
    to_client: watch::Sender<bool>,
    /// How long each chunk is held before it is passed on, each way (ms).
    delay_ms: Arc<AtomicU64>,
    accept: tokio::task::JoinHandle<()>,
}

impl Cut {
    /// Starts the proxy (flowing, no delay) on the current Tokio runtime.
    pub async fn start(port: u16) -> Cut {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port for the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let (to_server, up) = watch::channel(true);
        let (to_client, down) = watch::channel(true);
        let delay_ms = Arc::new(AtomicU64::new(0));
        let delay = delay_ms.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (mut up, down, delay) = (up.clone(), down.clone(), delay.clone());
                tokio::spawn(async move {
                    // A connection opened while cut reaches the server only once it heals.
                    if up.wait_for(|f| *f).await.is_err() {
                        return;
                    }
                    let Ok(server) = TcpStream::connect(("127.0.0.1", port)).await else {
                        return;
                    };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    link(cr, sw, up, delay.clone());
                    link(sr, cw, down, delay);
                });
            }
        });
        Cut {
            addr,
            to_server,
            to_client,
            delay_ms,
            accept,
        }
    }

    /// `redis://` URL of the proxy.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Cuts every connection through the proxy off from the server (and new ones).
    pub fn cut(&self) {
        self.to_server.send_replace(false);
        self.to_client.send_replace(false);
    }

    /// Holds the server's replies only: requests still reach the server and run, their
    /// answers (and pub/sub messages) wait until [`Cut::heal`].
    pub fn hold_replies(&self) {
        self.to_client.send_replace(false);
    }

    /// Heals the cut: what waited is delivered, in order.
    pub fn heal(&self) {
        self.to_server.send_replace(true);
        self.to_client.send_replace(true);
    }

    /// Holds every chunk `delay` before passing it on, each way (a round trip costs twice
    /// that), from now on; what is in the proxy keeps the delay it was read with.
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ms
            .store(delay.as_millis() as u64, Ordering::Relaxed);
    }
}

impl Drop for Cut {
    fn drop(&mut self) {
        self.accept.abort();
        // The links end with their connections (the closed senders end their waits).
    }
}

/// Carries `from` to `to`: a reader that stamps each chunk with when it may go on, and a
/// writer that passes it on then (and while the direction flows), so a delay is latency,
/// not a cap on throughput.
fn link(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut flowing: watch::Receiver<bool>,
    delay_ms: Arc<AtomicU64>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf).await.unwrap_or(0);
            let due = Instant::now() + Duration::from_millis(delay_ms.load(Ordering::Relaxed));
            // An empty chunk is the end of the stream, passed on in its turn.
            if tx.send((due, buf[..n].to_vec())).is_err() || n == 0 {
                return;
            }
        }
    });
    tokio::spawn(async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if flowing.wait_for(|f| *f).await.is_err() {
                return;
            }
            if chunk.is_empty() || to.write_all(&chunk).await.is_err() {
                let _ = to.shutdown().await;
                return;
            }
        }
        let _ = to.shutdown().await;
    });
}
