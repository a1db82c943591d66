//! A TCP proxy in front of a server that the test can cut off: a network partition between
//! the processes that connect through it and the server, while everything else still reaches
//! the server directly.
//!
//! While cut, nothing crosses in either direction and nothing is refused or reset: bytes
//! already sent wait (in the proxy and the kernels' buffers), a new connection is accepted
//! but not carried on to the server. When the cut heals, what waited is delivered, in order,
//! as TCP delivers it once a real partition heals within its retransmission time: a request
//! whose client stopped waiting for the answer still reaches the server and runs.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A proxy to `127.0.0.1:<port>` on a port of its own; it stops when dropped.
pub struct Cut {
    addr: SocketAddr,
    flowing: watch::Sender<bool>,
    accept: tokio::task::JoinHandle<()>,
}

impl Cut {
    /// Starts the proxy (flowing) on the current Tokio runtime.
    pub async fn start(port: u16) -> Cut {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port for the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let (flowing, rx) = watch::channel(true);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let mut rx = rx.clone();
                tokio::spawn(async move {
                    // A connection opened while cut reaches the server only once it heals.
                    if rx.wait_for(|f| *f).await.is_err() {
                        return;
                    }
                    let Ok(server) = TcpStream::connect(("127.0.0.1", port)).await else {
                        return;
                    };
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    tokio::spawn(pump(cr, sw, rx.clone()));
                    tokio::spawn(pump(sr, cw, rx));
                });
            }
        });
        Cut {
            addr,
            flowing,
            accept,
        }
    }

    /// `redis://` URL of the proxy.
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// Cuts every connection through the proxy off from the server (and new ones).
    pub fn cut(&self) {
        self.flowing.send_replace(false);
    }

    /// Heals the cut: what waited is delivered, in order.
    pub fn heal(&self) {
        self.flowing.send_replace(true);
    }
}

impl Drop for Cut {
    fn drop(&mut self) {
        self.accept.abort();
        // The pumps end with their connections (the closed sender ends their waits).
    }
}

/// Copies `from` to `to`, holding each chunk while the proxy is cut.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut flowing: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf).await.unwrap_or(0);
        if flowing.wait_for(|f| *f).await.is_err() {
            return;
        }
        if n == 0 || to.write_all(&buf[..n]).await.is_err() {
            let _ = to.shutdown().await;
            return;
        }
    }
}
