//! The sections of the configuration file. Defaults come from the contracts; the example
//! file `ops/horst.toml` explains each one.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::Config;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address the HTTP API listens on. Port 0 picks a free port (printed at start).
    pub listen: String,
    /// After SIGTERM, how long in-flight requests may take before they are cut off.
    pub shutdown_grace_seconds: u64,
    /// Reverse proxies whose `X-Forwarded-For` is believed (CIDR blocks or addresses).
    pub trusted_proxies: Vec<String>,
    /// Directory of the browser files (`sdk/`, `bridge/`, `games/`, `node_modules/chess.js`).
    pub web_dir: String,
    /// A connection must deliver a request's head (request line and headers) within this
    /// long of being ready for one (opened, or its previous response sent).
    pub header_read_timeout_seconds: u64,
    /// A kept-alive connection with no request in flight and no byte arriving for this long
    /// is closed (at most `header_read_timeout_seconds`, which also runs between requests).
    pub idle_timeout_seconds: u64,
    /// A request body must arrive within this long of the handler starting to read it, plus
    /// one second per `body_min_bytes_per_second` bytes received.
    pub body_timeout_seconds: u64,
    /// The slowest average rate a request body may arrive at (see `body_timeout_seconds`).
    pub body_min_bytes_per_second: u64,
    /// Open HTTP connections the process accepts at once; more are answered 503 and closed.
    pub max_connections: u64,
    /// Open HTTP connections from one client address (the TCP peer); more are answered 503
    /// and closed. Addresses in `trusted_proxies` are exempt.
    pub max_connections_per_address: u64,
    /// Serve `/metrics` (with `/healthz` and `/readyz`) on this address (IP:PORT) instead of
    /// `listen`, so it need not be public; empty: on `listen`.
    pub metrics_listen: String,
    /// The async runtime's threads in each horst process (`up`, `api`, `worker`): 0 is one
    /// per core (or `TOKIO_WORKER_THREADS` when that is set). 1 saves the hand-offs between
    /// threads (6-19 % of the API's CPU an action, docs/benchmarks.md "Sessions, eleventh
    /// round") but uses one core: right for one process per core behind a load balancer
    /// that keeps a session on one process (docs/scaling.md).
    pub runtime_threads: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: "127.0.0.1:8080".into(),
            shutdown_grace_seconds: 10,
            trusted_proxies: Vec::new(),
            web_dir: "web".into(),
            header_read_timeout_seconds: 30,
            idle_timeout_seconds: 20,
            body_timeout_seconds: 20,
            body_min_bytes_per_second: 500,
            max_connections: 10_000,
            // A house host keeps about three long-polls per table open; 256 leaves room for
            // dozens of tables (or many agents behind one NAT).
            max_connections_per_address: 256,
            metrics_listen: String::new(),
            runtime_threads: 0,
        }
    }
}

#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedisConfig {
    /// Empty: run a private redis-server under `<data_dir>/redis`. Otherwise a redis:// URL.
    pub url: String,
    /// Sentinel addresses (`host:port`); when set, horst finds the primary through them and
    /// follows a failover (instead of `url`).
    pub sentinels: Vec<String>,
    /// The name the sentinels monitor the primary under.
    pub sentinel_master: String,
    /// Redis Cluster: seed node URLs (`redis://host:port`); when set, horst runs on the
    /// cluster (instead of `url` or `sentinels`) and its keys carry hash tags.
    pub cluster: Vec<String>,
    /// The sentinels' password (`requirepass` in sentinel.conf; empty: none).
    pub sentinel_password: String,
    /// The primary's (and replicas') password when found through the sentinels (empty: none).
    pub password: String,
    /// Replicas that must acknowledge a durable write (`WAIT`) before horst answers it.
    pub min_replica_acks: u32,
    /// How long a durable write waits for those acknowledgements, ms.
    pub replica_ack_timeout_ms: u64,
    /// Every key horst writes starts with this prefix.
    pub key_prefix: String,
    /// Start even when the server's `maxmemory-policy` is not `noeviction` (data may be lost).
    pub allow_eviction: bool,
    /// How often a running process re-reads the server's `maxmemory-policy` and AOF setting,
    /// seconds: an evicting server makes `/readyz` 503, AOF switched off is logged.
    pub server_check_seconds: u64,
    /// The redis-server program used for the private server.
    pub server_binary: String,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            url: String::new(),
            sentinels: Vec::new(),
            sentinel_master: "horst".into(),
            cluster: Vec::new(),
            sentinel_password: String::new(),
            password: String::new(),
            min_replica_acks: 0,
            replica_ack_timeout_ms: 1000,
            key_prefix: "horst:".into(),
            allow_eviction: false,
            server_check_seconds: 5,
            server_binary: "redis-server".into(),
        }
    }
}

impl std::fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secret = |s: &str| if s.is_empty() { "" } else { "<redacted>" };
        f.debug_struct("RedisConfig")
            .field("url", &crate::redact_url(&self.url))
            .field("sentinels", &self.sentinels)
            .field("sentinel_master", &self.sentinel_master)
            .field(
                "cluster",
                &self
                    .cluster
                    .iter()
                    .map(|u| crate::redact_url(u))
                    .collect::<Vec<_>>(),
            )
            .field("sentinel_password", &secret(&self.sentinel_password))
            .field("password", &secret(&self.password))
            .field("min_replica_acks", &self.min_replica_acks)
            .field("replica_ack_timeout_ms", &self.replica_ack_timeout_ms)
            .field("key_prefix", &self.key_prefix)
            .field("allow_eviction", &self.allow_eviction)
            .field("server_check_seconds", &self.server_check_seconds)
            .field("server_binary", &self.server_binary)
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// `human` (default) or `json` (one object a line, for production log shippers).
    pub format: LogFormat,
    /// A level or tracing directives; the variables `HORST_LOG`, else `RUST_LOG`, win if set
    /// (read once at start).
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            format: LogFormat::Human,
            level: "info".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerConfig {
    /// Jobs one worker process runs at once (one claim per free slot, no prefetch).
    pub slots: u32,
    /// Threads of the worker's rayon pool; 0 = one per core.
    pub threads: u32,
    /// `horst worker` only: serve /healthz, /readyz and /metrics on this address (IP:PORT);
    /// empty: no HTTP at all. (`horst up` serves them on the API's address.)
    pub metrics_listen: String,
    /// Slots that only run referee work (simulate, submit, recheck), beside `slots`, so a
    /// simulation never waits behind playtests.
    pub referee_slots: u32,
    /// The memory one planner run may use, MiB (the planner stops at it: `memory_limit`).
    pub job_memory_mib: u64,
    /// `horst up` only: its worker child is killed (and started again) when its resident
    /// memory passes this, MiB; 0 = [`WorkerConfig::WORKER_BASE_MIB`] + slots x
    /// `job_memory_mib`, what `ops/systemd` and `ops/k8s` give a worker.
    pub memory_limit_mib: u64,
}

impl WorkerConfig {
    /// A worker's own memory beyond its planner runs, MiB, with headroom: the process (about
    /// 20 MiB idle), its referee slots (one simulation each) and the allocator's slack.
    pub const WORKER_BASE_MIB: u64 = 128;

    /// What one worker process may use, MiB: `memory_limit_mib`, or by default its base plus
    /// `slots` x `job_memory_mib` (the sizing rule of docs/operators.md).
    pub fn process_memory_mib(&self) -> u64 {
        if self.memory_limit_mib > 0 {
            return self.memory_limit_mib;
        }
        Self::WORKER_BASE_MIB + u64::from(self.slots) * self.job_memory_mib
    }
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            slots: 1,
            threads: 0,
            metrics_listen: String::new(),
            referee_slots: 1,
            job_memory_mib: 512,
            memory_limit_mib: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// A blocking call waits at most this long for queueing plus execution.
    pub wait_seconds: u64,
    /// Execution limit (and reservation) of a playtest job.
    pub playtest_seconds: u64,
    /// Execution limit (and reservation) of a simulate or submit job.
    pub simulate_seconds: u64,
    /// A worker's lease on a running job; it heartbeats well within it.
    pub lease_seconds: u64,
    /// Waiting jobs one account may have.
    pub waiting_per_account: u32,
    /// Waiting jobs the whole server may have.
    pub waiting_global: u32,
    /// Of `waiting_global`, the places only referee work (simulate, submit) may take.
    pub referee_places: u32,
    /// Reserved execution seconds per UTC day for the whole server.
    pub daily_seconds: u64,
    /// Percentage of `daily_seconds` that all trust-0 accounts together may use.
    pub trust0_share_percent: u32,
    /// How long finished job records are kept.
    pub job_retention_hours: u64,
    /// How long idempotency records are kept; at most `job_retention_hours` (a key that
    /// outlives its job record would run a retry again).
    pub idempotency_retention_hours: u64,
    /// Bytes of job input (maps and replays kept once, as blobs) the whole server may start
    /// keeping per UTC day; an admission past it is refused (`quota`, scope `global`,
    /// limit `input_bytes`). What is kept at any time is at most 9 days' worth
    /// (docs/scaling.md, "Job inputs").
    pub input_bytes_per_day: u64,
    /// The same per account and UTC day (`quota`, scope `owner`, limit `input_bytes`).
    pub input_bytes_per_account_day: u64,
    /// Write queued job records in the form the previous release reads (every field by
    /// name, where this release packs the fields written once into one), for a rolling
    /// upgrade: set it on the new processes until no worker or API process of the previous
    /// release serves this Redis any more, then turn it off. Every form is read either way.
    pub write_previous_forms: bool,
}

impl QueueConfig {
    /// How long a stopping worker may take to finish its running jobs: the longest job
    /// limit and a margin for recording them, and never less than the 120 s it always had.
    pub fn drain_seconds(&self) -> u64 {
        (self.playtest_seconds.max(self.simulate_seconds) + 60).max(120)
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            wait_seconds: 60,
            playtest_seconds: 20,
            simulate_seconds: 5,
            lease_seconds: 10,
            waiting_per_account: 1,
            waiting_global: 8,
            referee_places: 2,
            daily_seconds: 3600,
            trust0_share_percent: 50,
            job_retention_hours: 24 * 7,
            idempotency_retention_hours: 48,
            input_bytes_per_day: 64 << 20,
            input_bytes_per_account_day: 16 << 20,
            write_previous_forms: false,
        }
    }
}

/// Daily limits of one trust tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierQuota {
    pub submissions: u32,
    pub playtests: u32,
    pub simulations: u32,
    /// Unpromoted revisions held at a time (not a daily count).
    pub labor_candidates: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, from = "QuotaConfigAsWritten")]
pub struct QuotaConfig {
    pub trust0: TierQuota,
    pub trust1: TierQuota,
    pub trust2: TierQuota,
    /// Stored evidence per account, withdrawn revisions included.
    pub storage_per_account_bytes: u64,
    /// Stored evidence for the whole server.
    pub storage_total_bytes: u64,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        let trusted = TierQuota {
            submissions: 5,
            playtests: 20,
            simulations: 200,
            labor_candidates: 10,
        };
        QuotaConfig {
            trust0: TierQuota {
                submissions: 2,
                playtests: 6,
                simulations: 50,
                labor_candidates: 3,
            },
            trust1: trusted.clone(),
            trust2: trusted,
            storage_per_account_bytes: 16 << 20,
            storage_total_bytes: 256 << 20,
        }
    }
}

/// `[quotas]` as an operator writes it: a tier's table may give only the limits it changes
/// (`[quotas.trust0]` with `playtests = 10` alone), the others keep that tier's defaults.
/// Read whole, a partial table was refused for its first missing limit ("missing field
/// `submissions`"), although every other section takes single settings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuotaConfigAsWritten {
    #[serde(default)]
    trust0: TierQuotaAsWritten,
    #[serde(default)]
    trust1: TierQuotaAsWritten,
    #[serde(default)]
    trust2: TierQuotaAsWritten,
    storage_per_account_bytes: Option<u64>,
    storage_total_bytes: Option<u64>,
}

/// One tier's table as written: the limits it gives.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TierQuotaAsWritten {
    submissions: Option<u32>,
    playtests: Option<u32>,
    simulations: Option<u32>,
    labor_candidates: Option<u32>,
}

impl TierQuotaAsWritten {
    fn over(self, tier: TierQuota) -> TierQuota {
        TierQuota {
            submissions: self.submissions.unwrap_or(tier.submissions),
            playtests: self.playtests.unwrap_or(tier.playtests),
            simulations: self.simulations.unwrap_or(tier.simulations),
            labor_candidates: self.labor_candidates.unwrap_or(tier.labor_candidates),
        }
    }
}

impl From<QuotaConfigAsWritten> for QuotaConfig {
    fn from(w: QuotaConfigAsWritten) -> QuotaConfig {
        let d = QuotaConfig::default();
        QuotaConfig {
            trust0: w.trust0.over(d.trust0),
            trust1: w.trust1.over(d.trust1),
            trust2: w.trust2.over(d.trust2),
            storage_per_account_bytes: w
                .storage_per_account_bytes
                .unwrap_or(d.storage_per_account_bytes),
            storage_total_bytes: w.storage_total_bytes.unwrap_or(d.storage_total_bytes),
        }
    }
}

impl QuotaConfig {
    /// The quota of a trust tier (0, 1 or 2).
    pub fn tier(&self, trust: u8) -> &TierQuota {
        match trust {
            0 => &self.trust0,
            1 => &self.trust1,
            _ => &self.trust2,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GatewayMode {
    /// The endpoint answers 404 (the contract's default until the operator enables it).
    #[default]
    Off,
    /// Only the anonymous tools exist.
    ReadOnly,
    On,
}

#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayConfig {
    /// The mode at first start; afterwards `horst admin gateway ...` switches it at run time.
    pub mode: GatewayMode,
    /// Whether `POST /api/agent-keys` creates agent accounts (first start; switchable).
    pub self_service_keys: bool,
    /// Origins allowed to call `/api/mcp` (requests without `Origin` are always fine).
    pub allowed_origins: Vec<String>,
    /// Burst limit per client IP address.
    pub burst_per_ip_per_minute: u32,
    /// Burst limit per account.
    pub burst_per_account_per_minute: u32,
    /// Whether people may create game accounts on `/account` (first start; switchable).
    pub sign_up: bool,
    /// Sign-in and sign-up attempts per client address and minute (every API process together).
    pub sign_in_per_ip_per_minute: u32,
    /// Failed sign-ins of one name from one client before each further one doubles the wait.
    pub sign_in_per_name_per_minute: u32,
    /// Sign-ups per network (IPv4 /24, IPv6 /64) in a rolling 24 hours, besides the
    /// self-service key caps a sign-up also counts against.
    pub sign_up_per_network_per_day: u32,
    /// Sign-ups in total in a rolling 24 hours.
    pub sign_up_per_day: u32,
    /// Right passwords of one account checked in an hour (every page and the RCADIA sign-in
    /// together): each success opens a session or a JWT.
    pub sign_ins_per_account_per_hour: u32,
    /// The operator's bearer token for the REST admin API (`/api/admin/...`); empty switches
    /// that API off (404). Not an agent key: agents' keys never reach it.
    pub admin_token: String,
    /// MCP resources (`gcv://format`, `gcv://palette`, levels, revisions) and the
    /// `design_level` prompt beside the tools; off: `initialize` offers tools only.
    pub mcp_resources: bool,
    /// The MCP App `ui://gcv/player` that `playtest_map`, `simulate_replay` and `get_level`
    /// name in `_meta.ui.resourceUri`; off: no tool names it and it cannot be read.
    pub mcp_apps: bool,
}

/// By hand, so the operator token never reaches a log line or a panic message.
impl std::fmt::Debug for GatewayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayConfig")
            .field("mode", &self.mode)
            .field("self_service_keys", &self.self_service_keys)
            .field("allowed_origins", &self.allowed_origins)
            .field("burst_per_ip_per_minute", &self.burst_per_ip_per_minute)
            .field(
                "burst_per_account_per_minute",
                &self.burst_per_account_per_minute,
            )
            .field("sign_up", &self.sign_up)
            .field("sign_in_per_ip_per_minute", &self.sign_in_per_ip_per_minute)
            .field(
                "sign_in_per_name_per_minute",
                &self.sign_in_per_name_per_minute,
            )
            .field(
                "sign_up_per_network_per_day",
                &self.sign_up_per_network_per_day,
            )
            .field("sign_up_per_day", &self.sign_up_per_day)
            .field(
                "sign_ins_per_account_per_hour",
                &self.sign_ins_per_account_per_hour,
            )
            .field(
                "admin_token",
                &if self.admin_token.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("mcp_resources", &self.mcp_resources)
            .field("mcp_apps", &self.mcp_apps)
            .finish()
    }
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            mode: GatewayMode::Off,
            self_service_keys: true,
            allowed_origins: Vec::new(),
            burst_per_ip_per_minute: 120,
            burst_per_account_per_minute: 60,
            sign_up: false,
            sign_in_per_ip_per_minute: 10,
            sign_in_per_name_per_minute: 5,
            sign_up_per_network_per_day: 3,
            sign_up_per_day: 50,
            sign_ins_per_account_per_hour: 300,
            admin_token: String::new(),
            mcp_resources: true,
            mcp_apps: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionsConfig {
    /// Seconds a host may stay away before its sessions end with `host_disconnected`.
    pub host_gone_seconds: u64,
    /// Seconds after its last poll that a host still counts as alive.
    pub host_alive_seconds: u64,
    /// Seconds a game may stay silent about a delivered action before it is `unconfirmed`.
    pub unconfirmed_seconds: u64,
    /// Seconds rematch seats stay reserved.
    pub reservation_seconds: u64,
    /// Milliseconds a rematch waits after the previous game ended before it may start.
    pub rematch_delay_ms: u64,
    /// Milliseconds an open table with `minPlayers < maxPlayers` waits for more players.
    pub lobby_fill_ms: u64,
    /// The identity whose tables `/available` shows as `host: "house"`: an agent id
    /// (`agt_...`, printed by `horst admin token create`) or a username. Empty: none.
    pub house_identity: String,
    /// The public base URL agents reach this server at (`skillUrl`s are absolute from it),
    /// e.g. `https://api.rcadia.xyz`. Empty: `http://` + the address the API listens on.
    pub public_url: String,
    /// The file holding the key people's JWTs are signed with (made at the first start,
    /// owner-only; API processes on several machines need the same file). Empty:
    /// `<data_dir>/jwt.key`.
    pub jwt_key_file: String,
    /// Hours a finished game's replay is kept.
    pub replay_retention_hours: u64,
    /// Milliseconds the rater waits between reading a game's ratings and writing them; only
    /// crash tests set it (to kill a process in the middle of a rating update).
    pub rating_pause_ms: u64,
    /// Games the house's reference player plays: a new agent that seeks one of them is seated
    /// against it first (its validation game). It plays the game's published legal actions.
    pub reference_games: Vec<String>,
    /// Write sessions in the forms the previous release reads (a base as it is, untagged
    /// events and replay lines with absolute times), for a rolling upgrade: set it on the
    /// new processes until every API process runs this release, then turn it off. Every
    /// form is read either way.
    pub write_previous_forms: bool,
}

impl Default for SessionsConfig {
    fn default() -> Self {
        SessionsConfig {
            host_gone_seconds: 90,
            host_alive_seconds: 20,
            unconfirmed_seconds: 15,
            reservation_seconds: 60,
            rematch_delay_ms: 3000,
            lobby_fill_ms: 10_000,
            house_identity: String::new(),
            public_url: String::new(),
            jwt_key_file: String::new(),
            replay_retention_hours: 24 * 7,
            rating_pause_ms: 0,
            reference_games: vec!["chess".into(), "rps".into()],
            write_previous_forms: false,
        }
    }
}

/// RCADIA as an arena: what horst adds beside the agent protocol (docs/agents-play.md,
/// section 6). Each can be switched off; a switched-off part answers 404 saying so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArenaConfig {
    /// Replays of finished games (`GET /api/v1/agent/sessions/:id/replay`, the watch page's
    /// playback). Off: no replay lines are written.
    pub replays: bool,
    /// Ratings and the leaderboards (`/api/v1/leaderboard...`, `/leaderboard/`). Off: no
    /// rater runs, finished games are not queued for rating, and no validation games.
    pub ratings: bool,
    /// `POST /api/v1/agent/sessions/seek`.
    pub seek: bool,
}

impl Default for ArenaConfig {
    fn default() -> Self {
        ArenaConfig {
            replays: true,
            ratings: true,
            seek: true,
        }
    }
}

/// The house host (`horst house`): RCADIA's own tables, in a headless Chromium.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HouseConfig {
    /// The backend the house hosts on, `http://HOST:PORT`. Empty: this horst's own
    /// `server.listen` (with 0.0.0.0 read as 127.0.0.1).
    pub backend: String,
    /// An agent token with the `host` scope (`horst admin token create --scopes host`).
    pub token: String,
    /// Game ids to keep tables open for (each served at `/games/<id>/`).
    pub games: Vec<String>,
    /// At most this many tables per game.
    pub max_tables: u32,
    /// The Chromium binary (Debian's `chromium` package).
    pub chromium: String,
    /// Extra Chromium arguments, for example `--no-sandbox` where the sandbox cannot run.
    pub chromium_args: Vec<String>,
    /// A query string added to every game page's URL, for example `turnTimeout=10`.
    pub game_query: String,
}

/// By hand, so the house token never reaches a log line.
impl std::fmt::Debug for HouseConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HouseConfig")
            .field("backend", &self.backend)
            .field(
                "token",
                &if self.token.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("games", &self.games)
            .field("max_tables", &self.max_tables)
            .field("chromium", &self.chromium)
            .field("chromium_args", &self.chromium_args)
            .field("game_query", &self.game_query)
            .finish()
    }
}

impl Default for HouseConfig {
    fn default() -> Self {
        HouseConfig {
            backend: String::new(),
            token: String::new(),
            games: vec!["chess".into()],
            max_tables: 2,
            chromium: "chromium".into(),
            chromium_args: Vec::new(),
            game_query: String::new(),
        }
    }
}

impl Config {
    /// Numeric settings and their accepted ranges.
    pub(crate) fn range_checks(&self) -> Vec<(&'static str, Check)> {
        let q = &self.queue;
        vec![
            (
                "server.shutdown_grace_seconds",
                range(self.server.shutdown_grace_seconds, 0, 3600),
            ),
            (
                "server.header_read_timeout_seconds",
                range(self.server.header_read_timeout_seconds, 1, 3600),
            ),
            (
                "server.idle_timeout_seconds",
                Check::Rule(range(
                    self.server.idle_timeout_seconds,
                    1,
                    self.server.header_read_timeout_seconds.max(1),
                )
                .result()
                .map_err(|m| format!("{m} (it cannot exceed server.header_read_timeout_seconds, whose timer also runs between requests)"))),
            ),
            (
                "server.body_timeout_seconds",
                range(self.server.body_timeout_seconds, 1, 3600),
            ),
            (
                "server.body_min_bytes_per_second",
                range(self.server.body_min_bytes_per_second, 1, 1 << 30),
            ),
            (
                "server.max_connections",
                range(self.server.max_connections, 1, 1_000_000),
            ),
            (
                "server.max_connections_per_address",
                range(self.server.max_connections_per_address, 1, 1_000_000),
            ),
            (
                "server.runtime_threads",
                range(self.server.runtime_threads, 0, 1024),
            ),
            ("worker.slots", range(self.worker.slots as u64, 1, 256)),
            (
                "worker.referee_slots",
                range(self.worker.referee_slots as u64, 0, 256),
            ),
            (
                "worker.job_memory_mib",
                range(self.worker.job_memory_mib, 16, 1 << 20),
            ),
            (
                "worker.memory_limit_mib",
                // Below an idle worker's own memory every child would be killed on its first
                // look and started again for ever.
                match self.worker.memory_limit_mib {
                    0 => Check::Rule(Ok(())),
                    v => Check::Rule(range(v, WorkerConfig::WORKER_BASE_MIB, 1 << 30).result().map_err(|e| {
                        format!("{e} (or 0 for the default: {} MiB + slots x worker.job_memory_mib); a worker process alone needs about {} MiB", WorkerConfig::WORKER_BASE_MIB, WorkerConfig::WORKER_BASE_MIB)
                    })),
                },
            ),
            (
                "redis.min_replica_acks",
                range(self.redis.min_replica_acks as u64, 0, 16),
            ),
            (
                "redis.replica_ack_timeout_ms",
                range(self.redis.replica_ack_timeout_ms, 10, 4000),
            ),
            (
                "redis.server_check_seconds",
                range(self.redis.server_check_seconds, 1, 3600),
            ),
            ("worker.threads", range(self.worker.threads as u64, 0, 1024)),
            ("queue.wait_seconds", range(q.wait_seconds, 1, 3600)),
            ("queue.playtest_seconds", range(q.playtest_seconds, 1, 600)),
            ("queue.simulate_seconds", range(q.simulate_seconds, 1, 600)),
            ("queue.lease_seconds", range(q.lease_seconds, 2, 600)),
            (
                "queue.waiting_per_account",
                range(q.waiting_per_account as u64, 1, 1000),
            ),
            (
                "queue.waiting_global",
                range(q.waiting_global as u64, 1, 100_000),
            ),
            (
                "queue.referee_places",
                range(q.referee_places as u64, 0, q.waiting_global as u64),
            ),
            (
                "queue.daily_seconds",
                range(q.daily_seconds, 0, 86_400 * 1000),
            ),
            (
                "queue.trust0_share_percent",
                range(q.trust0_share_percent as u64, 0, 100),
            ),
            (
                "queue.job_retention_hours",
                range(q.job_retention_hours, 1, 24 * 365),
            ),
            (
                "queue.idempotency_retention_hours",
                range(q.idempotency_retention_hours, 1, 24 * 365),
            ),
            (
                "queue.input_bytes_per_day",
                range(q.input_bytes_per_day, 0, 1 << 40),
            ),
            (
                "queue.input_bytes_per_account_day",
                range(q.input_bytes_per_account_day, 0, 1 << 40),
            ),
            (
                "gateway.burst_per_ip_per_minute",
                range(self.gateway.burst_per_ip_per_minute as u64, 1, 1_000_000),
            ),
            (
                "gateway.burst_per_account_per_minute",
                range(
                    self.gateway.burst_per_account_per_minute as u64,
                    1,
                    1_000_000,
                ),
            ),
            (
                "gateway.sign_in_per_ip_per_minute",
                range(self.gateway.sign_in_per_ip_per_minute as u64, 1, 1_000_000),
            ),
            (
                "gateway.sign_in_per_name_per_minute",
                range(
                    self.gateway.sign_in_per_name_per_minute as u64,
                    1,
                    1_000_000,
                ),
            ),
            (
                "gateway.sign_up_per_network_per_day",
                range(
                    self.gateway.sign_up_per_network_per_day as u64,
                    0,
                    1_000_000,
                ),
            ),
            (
                "gateway.sign_up_per_day",
                range(self.gateway.sign_up_per_day as u64, 0, 1_000_000),
            ),
            (
                "gateway.sign_ins_per_account_per_hour",
                range(
                    self.gateway.sign_ins_per_account_per_hour as u64,
                    1,
                    1_000_000,
                ),
            ),
            (
                "sessions.host_gone_seconds",
                range(self.sessions.host_gone_seconds, 1, 86_400),
            ),
            (
                "sessions.host_alive_seconds",
                range(self.sessions.host_alive_seconds, 1, 3600),
            ),
            (
                "sessions.unconfirmed_seconds",
                range(self.sessions.unconfirmed_seconds, 1, 3600),
            ),
            (
                "sessions.reservation_seconds",
                range(self.sessions.reservation_seconds, 1, 3600),
            ),
            (
                "sessions.rematch_delay_ms",
                range(self.sessions.rematch_delay_ms, 0, 600_000),
            ),
            (
                "sessions.lobby_fill_ms",
                range(self.sessions.lobby_fill_ms, 0, 3_600_000),
            ),
            (
                "sessions.replay_retention_hours",
                range(self.sessions.replay_retention_hours, 1, 24 * 366),
            ),
            (
                "sessions.rating_pause_ms",
                range(self.sessions.rating_pause_ms, 0, 600_000),
            ),
            (
                "gateway.admin_token",
                Check::Rule(admin_token(&self.gateway.admin_token)),
            ),
            (
                "sessions.house_identity",
                Check::Rule(house_identity(&self.sessions.house_identity)),
            ),
            (
                "house.max_tables",
                range(self.house.max_tables as u64, 1, 100),
            ),
        ]
    }
}

/// A guessable operator token would open every operator action; short ones are refused.
fn admin_token(token: &str) -> Result<(), String> {
    let n = token.chars().count();
    if n == 0 || n >= 32 && token.chars().all(|c| c.is_ascii_graphic()) {
        Ok(())
    } else {
        Err("the admin token must be empty (REST admin API off) or at least 32 printable ASCII characters without spaces, e.g. from `openssl rand -hex 24`".into())
    }
}

/// The identity is compared as it is with an agent's id (`agt_` and 16 hex digits) or a
/// person's name (2-32 lowercase letters, digits, `_` or `-`): anything else names nobody.
fn house_identity(id: &str) -> Result<(), String> {
    let agent = id.strip_prefix("agt_").is_some_and(|h| {
        h.len() == 16
            && h.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    });
    let person = (2..=32).contains(&id.len())
        && !id.starts_with("agt_")
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if id.is_empty() || agent || person {
        Ok(())
    } else {
        Err(format!("{id:?} names no identity; give an agent id (`agt_` and 16 hex digits, as `horst admin token create` prints it), a person's name (2-32 lowercase letters, digits, '_' or '-'), or leave it empty"))
    }
}

/// One setting's check ([`Config::range_checks`]).
pub(crate) enum Check {
    /// A whole number from `min` to `max`: a type error on the setting names this range
    /// rather than its Rust type's ([`Config::declared_range`]).
    Range { value: u64, min: u64, max: u64 },
    /// Any other rule.
    Rule(Result<(), String>),
}

impl Check {
    pub(crate) fn result(&self) -> Result<(), String> {
        match self {
            Check::Range { value, min, max } if !(min..=max).contains(&value) => {
                Err(format!("{value} is out of range; accepted: {min} to {max}"))
            }
            Check::Range { .. } => Ok(()),
            Check::Rule(r) => r.clone(),
        }
    }
}

fn range(value: u64, min: u64, max: u64) -> Check {
    Check::Range { value, min, max }
}

/// Parses `10.0.0.0/8`, `::1/128` or a bare address.
pub fn parse_cidr(text: &str) -> Result<(IpAddr, u8), String> {
    let (addr, bits) = match text.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let ip: IpAddr = addr.trim().parse().map_err(|_| {
        format!("{text:?} is not an IP address or CIDR block such as \"10.0.0.0/8\"")
    })?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let bits = match bits {
        None => max,
        Some(b) => b
            .trim()
            .parse::<u8>()
            .ok()
            .filter(|b| *b <= max)
            .ok_or_else(|| format!("{text:?}: the prefix length must be 0-{max}"))?,
    };
    Ok((ip, bits))
}
