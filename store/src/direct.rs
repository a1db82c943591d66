//! Commands written and read on the caller's task: no driver task in between.
//!
//! redis-rs's multiplexed connection hands every command to a driver task over a channel and
//! the reply back over another: two task hops a command, each a wake-up of a task (and, on a
//! runtime of several threads, often of another thread). Here a command takes an idle socket
//! of a small pool (or opens one), writes, reads its replies and puts the socket back, all in
//! the caller's future. A caller whose future is dropped mid-command drops the socket with it
//! (its reply would be read by the next user otherwise); an I/O or protocol error drops it
//! too. Transactions (MULTI/EXEC pipelines) and anything else this does not speak go to the
//! multiplexed connection as before.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::BytesMut;
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, ConnectionAddr, Pipeline, RedisFuture, RedisResult, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::codec::Decoder;

/// Idle sockets kept for reuse; more in flight at once are opened and closed after use.
const MAX_IDLE: usize = 64;

/// The pool of one primary's sockets, with the multiplexed connection for what it does not
/// carry. Cheap to clone.
#[derive(Clone)]
pub struct DirectConn {
    pool: Arc<Pool>,
    shared: ConnectionManager,
}

struct Pool {
    host: String,
    port: u16,
    username: Option<String>,
    password: Option<String>,
    db: i64,
    timeout: Duration,
    idle: Mutex<Vec<Socket>>,
}

struct Socket {
    stream: TcpStream,
    buf: BytesMut,
    codec: redis::ValueCodec,
}

impl DirectConn {
    /// For a plain TCP server (no TLS, no Unix socket): `None` otherwise.
    pub(crate) fn new(
        client: &redis::Client,
        shared: ConnectionManager,
        timeout: Duration,
    ) -> Option<DirectConn> {
        let info = client.get_connection_info();
        let ConnectionAddr::Tcp(host, port) = info.addr() else {
            return None;
        };
        let settings = info.redis_settings();
        if settings.protocol() != redis::ProtocolVersion::RESP2 {
            return None;
        }
        Some(DirectConn {
            pool: Arc::new(Pool {
                host: host.clone(),
                port: *port,
                username: settings.username().map(str::to_string),
                password: settings.password().map(str::to_string),
                db: settings.db(),
                timeout,
                idle: Mutex::new(Vec::new()),
            }),
            shared,
        })
    }

    async fn round_trip(&self, packed: &[u8], skip: usize, keep: usize) -> RedisResult<Vec<Value>> {
        let socket = self
            .pool
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut socket = match socket {
            Some(s) => s,
            None => self.pool.connect().await?,
        };
        let replies = match tokio::time::timeout(
            self.pool.timeout,
            socket.exchange(packed, skip, keep),
        )
        .await
        {
            Ok(Ok(replies)) => replies,
            Ok(Err(e)) => {
                // The server went away or restarted: the idle sockets are as dead as this one
                // (each would fail one command), so they go too.
                self.pool
                    .idle
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clear();
                return Err(e);
            }
            Err(_) => {
                return Err(redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "Redis did not answer in time",
                )))
            }
        };
        let mut idle = self.pool.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(socket);
        }
        Ok(replies)
    }
}

impl Pool {
    async fn connect(&self) -> RedisResult<Socket> {
        let stream = tokio::time::timeout(
            Duration::from_secs(3),
            TcpStream::connect((self.host.as_str(), self.port)),
        )
        .await
        .map_err(|_| {
            redis::RedisError::from((redis::ErrorKind::Io, "connecting to Redis timed out"))
        })??;
        stream.set_nodelay(true)?;
        let mut socket = Socket {
            stream,
            buf: BytesMut::with_capacity(16 * 1024),
            codec: redis::ValueCodec::default(),
        };
        let mut hello = Pipeline::new();
        if let Some(password) = &self.password {
            let auth = hello.cmd("AUTH");
            if let Some(user) = &self.username {
                auth.arg(user);
            }
            auth.arg(password);
        }
        if self.db != 0 {
            hello.cmd("SELECT").arg(self.db);
        }
        let n = hello.len();
        if n > 0 {
            let replies = tokio::time::timeout(
                self.timeout,
                socket.exchange(&hello.get_packed_pipeline(), 0, n),
            )
            .await
            .map_err(|_| {
                redis::RedisError::from((
                    redis::ErrorKind::Io,
                    "Redis did not answer AUTH/SELECT in time",
                ))
            })??;
            for reply in replies {
                reply.extract_error()?;
            }
        }
        Ok(socket)
    }
}

impl Socket {
    /// Writes `packed`, reads `skip + keep` replies, answers the last `keep`.
    async fn exchange(
        &mut self,
        packed: &[u8],
        skip: usize,
        keep: usize,
    ) -> RedisResult<Vec<Value>> {
        self.stream.write_all(packed).await?;
        let mut out = Vec::with_capacity(keep);
        let mut seen = 0;
        while seen < skip + keep {
            match self.codec.decode(&mut self.buf)? {
                Some(value) => {
                    if seen >= skip {
                        out.push(value);
                    }
                    seen += 1;
                }
                None => {
                    if self.stream.read_buf(&mut self.buf).await? == 0 {
                        return Err(redis::RedisError::from((
                            redis::ErrorKind::Io,
                            "Redis closed the connection",
                        )));
                    }
                }
            }
        }
        Ok(out)
    }
}

impl ConnectionLike for DirectConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        if cmd.is_no_response() {
            return self.shared.req_packed_command(cmd);
        }
        Box::pin(async move {
            let packed = cmd.get_packed_command();
            let mut replies = self.round_trip(&packed, 0, 1).await?;
            Ok(replies.pop().unwrap_or(Value::Nil))
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        if pipeline.is_transaction() {
            return self.shared.req_packed_commands(pipeline, offset, count);
        }
        Box::pin(async move {
            let packed = pipeline.get_packed_pipeline();
            self.round_trip(&packed, offset, count).await
        })
    }

    fn get_db(&self) -> i64 {
        self.pool.db
    }
}
