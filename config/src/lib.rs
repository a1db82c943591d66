//! horst's configuration.
//!
//! Three layers, later ones win: the TOML file (`--config`), environment variables
//! `HORST_<SECTION>_<KEY>` (for example `HORST_SERVER_LISTEN`, or `HORST_DATA_DIR` for a
//! top-level key), and the few command-line flags (`--listen`, `--redis`, `--data`).
//!
//! The environment layer is derived from the settings themselves: every leaf of the
//! serialized defaults gets a variable, so a setting added to a struct here is overridable
//! without touching a table of names. Invalid configuration is an error that names the
//! setting, where the value came from, and what is accepted; horst refuses to start on it.
//!
//! The example file `ops/horst.toml` documents every setting; a test keeps it in sync.
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod sections;
pub use sections::*;

/// The whole configuration, as the binary hands it to the crates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// The file this configuration was loaded from (not a setting): the REST admin API's
    /// quota reload reads it again.
    #[serde(skip)]
    pub file: Option<PathBuf>,
    /// Where horst keeps local state: the private Redis (`<data_dir>/redis`) among others.
    pub data_dir: PathBuf,
    pub server: ServerConfig,
    pub redis: RedisConfig,
    pub log: LogConfig,
    pub worker: WorkerConfig,
    pub queue: QueueConfig,
    pub quotas: QuotaConfig,
    pub gateway: GatewayConfig,
    pub sessions: SessionsConfig,
    pub arena: ArenaConfig,
    pub house: HouseConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            file: None,
            data_dir: PathBuf::from("data"),
            server: ServerConfig::default(),
            redis: RedisConfig::default(),
            log: LogConfig::default(),
            worker: WorkerConfig::default(),
            queue: QueueConfig::default(),
            quotas: QuotaConfig::default(),
            gateway: GatewayConfig::default(),
            sessions: SessionsConfig::default(),
            arena: ArenaConfig::default(),
            house: HouseConfig::default(),
        }
    }
}

/// Where a bad value came from, so the message can point the operator at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    File(PathBuf),
    Env(String),
    Flag(&'static str),
    Value,
    /// The setting was not set: its default is in force.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p) => write!(f, "in {}", p.display()),
            Origin::Env(name) => write!(f, "from environment variable {name}"),
            Origin::Flag(flag) => write!(f, "from flag {flag}"),
            Origin::Value => write!(f, "in the configuration"),
            Origin::Default => write!(f, "at its default"),
        }
    }
}

/// A configuration error: which setting, where it came from, what is wrong and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration: {}", self.describe())]
pub struct ConfigError {
    /// The dotted setting name, for example `log.format`; `-` when the file itself is unreadable.
    pub setting: String,
    pub origin: Origin,
    pub message: String,
}

impl ConfigError {
    /// `setting (origin): message`, or `origin: message` when no setting is to blame (a file
    /// that cannot be read, a variable that is not UTF-8): it said `- (in FILE)`.
    fn describe(&self) -> String {
        if self.setting == "-" {
            format!("{}: {}", self.origin, self.message)
        } else {
            format!("{} ({}): {}", self.setting, self.origin, self.message)
        }
    }

    fn new(setting: impl Into<String>, origin: Origin, message: impl Into<String>) -> Self {
        ConfigError {
            setting: setting.into(),
            origin,
            message: message.into(),
        }
    }
}

/// Whether the operator asked for JSON logs, read as far as a configuration that does not
/// load can still tell: `HORST_LOG_FORMAT` (`env_format`), else `log.format` in the file if
/// the file is TOML at all. Used to report a configuration error as a JSON log line where
/// the log shipper expects one; anything unreadable means the default (human).
pub fn json_logs_wanted(file: Option<&Path>, env_format: Option<&str>) -> bool {
    if let Some(f) = env_format {
        return f.trim().eq_ignore_ascii_case("json");
    }
    let Some(text) = file.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return false;
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    table
        .get("log")
        .and_then(|l| l.get("format"))
        .and_then(|f| f.as_str())
        .is_some_and(|f| f.trim().eq_ignore_ascii_case("json"))
}

/// Command-line flags that override the file and the environment.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub listen: Option<String>,
    pub redis: Option<String>,
    pub data: Option<PathBuf>,
}

impl Config {
    /// Loads the configuration the way every horst subcommand does.
    ///
    /// `env` is passed in (rather than read here) so tests can give an exact environment.
    pub fn load(
        file: Option<&Path>,
        env: &BTreeMap<String, String>,
        flags: &Flags,
    ) -> Result<Config, ConfigError> {
        let mut sources = Sources::default();
        let mut config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    ConfigError::new(
                        "-",
                        Origin::File(path.to_path_buf()),
                        format!("cannot read the configuration file: {e}; give --config (or HORST_CONFIG) the path of a readable TOML file (ops/horst.toml shows every setting)"),
                    )
                })?;
                let config = Config::from_toml(&text, Origin::File(path.to_path_buf()))?;
                sources.file = Some(path.to_path_buf());
                if let Ok(table) = text.parse::<toml::Table>() {
                    collect_leaves(
                        &toml::Value::Table(table),
                        String::new(),
                        &mut sources.in_file,
                    );
                }
                config
            }
            None => Config::default(),
        };
        // Checked once, as it is in force after the variables and the flags, with where each
        // value came from: a file checked on its own was refused for a rule between settings
        // that the environment completes (`redis.min_replica_acks = 1` in the file, the
        // Redis URL in HORST_REDIS_URL, as containers are given it, was "the private
        // redis-server has no replicas").
        let (merged, from_env) = config.merge_env(env)?;
        config = merged;
        sources.set = from_env;
        config.apply_flags(flags)?;
        for (flag, setting, given) in [
            ("--listen", "server.listen", flags.listen.is_some()),
            ("--redis", "redis.url", flags.redis.is_some()),
            ("--data", "data_dir", flags.data.is_some()),
        ] {
            if given {
                sources.set.retain(|(p, _)| p != setting);
                sources.set.push((setting.to_string(), Origin::Flag(flag)));
            }
        }
        // The rules between settings hold for it whichever layer set each value (a flag was
        // not checked against them at all).
        config.validate_with(&sources)?;
        config.file = file.map(Path::to_path_buf);
        Ok(config)
    }

    /// The process's `HORST_*` environment variables, what [`Config::load`] takes. Other
    /// variables are not read (one that is not UTF-8 made `std::env::vars` panic); a
    /// `HORST_*` one that is not UTF-8 is an error naming it.
    pub fn environment() -> Result<BTreeMap<String, String>, ConfigError> {
        let mut out = BTreeMap::new();
        for (name, value) in std::env::vars_os() {
            let Some(name) = name.to_str().filter(|n| n.starts_with("HORST_")) else {
                continue;
            };
            let value = value.into_string().map_err(|_| {
                ConfigError::new(
                    "-",
                    Origin::Env(name.to_string()),
                    "is not valid UTF-8; set it to UTF-8 text or unset it",
                )
            })?;
            out.insert(name.to_string(), value);
        }
        Ok(out)
    }

    /// Parses a TOML document. Errors name the setting and the line.
    pub fn from_toml(text: &str, origin: Origin) -> Result<Config, ConfigError> {
        toml::from_str::<Config>(text).map_err(|e| {
            let setting = setting_at_span(text, e.span()).unwrap_or_else(|| "-".to_string());
            let line = e
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)))
                .unwrap_or_default();
            let message = format!("{}{line}", type_error(&setting, e.message().trim()));
            ConfigError::new(setting, origin, message)
        })
    }

    /// Applies `HORST_*` environment overrides. Unknown `HORST_*` variables are refused
    /// too, because a typo there would otherwise be silently ignored.
    pub fn with_env(&self, env: &BTreeMap<String, String>) -> Result<Config, ConfigError> {
        let (config, set) = self.merge_env(env)?;
        config.validate_with(&Sources {
            set,
            ..Sources::default()
        })?;
        Ok(config)
    }

    /// The overrides applied, with the settings they set (not yet checked against the rules
    /// between settings).
    fn merge_env(
        &self,
        env: &BTreeMap<String, String>,
    ) -> Result<(Config, Vec<(String, Origin)>), ConfigError> {
        let defaults = toml::Value::try_from(self)
            .map_err(|e| ConfigError::new("-", Origin::Value, format!("cannot serialize: {e}")))?;
        let mut leaves = Vec::new();
        collect_leaves(&defaults, String::new(), &mut leaves);

        let mut merged = defaults.clone();
        let mut from_env: Vec<(String, String)> = Vec::new();
        // Each override with its value, to find the one a type error is about.
        let mut singles: Vec<(String, String, toml::Value)> = Vec::new();
        for (name, raw) in env.iter().filter(|(k, _)| k.starts_with("HORST_")) {
            if EXEMPT_ENV.contains(&name.as_str()) {
                continue;
            }
            let Some((path, current)) = leaves.iter().find(|(p, _)| env_name(p) == *name) else {
                let known: Vec<String> = leaves.iter().map(|(p, _)| env_name(p)).collect();
                return Err(ConfigError::new(
                    "-",
                    Origin::Env(name.clone()),
                    unknown_env_message(name, &known),
                ));
            };
            let value = parse_env_value(raw, current).map_err(|msg| {
                let msg = match Config::declared_range(path) {
                    Some((min, max)) => format!("{msg}; accepted: {min} to {max}"),
                    None => msg,
                };
                ConfigError::new(path.clone(), Origin::Env(name.clone()), msg)
            })?;
            set_leaf(&mut merged, path, value.clone());
            from_env.push((path.clone(), name.clone()));
            singles.push((path.clone(), name.clone(), value));
        }
        let config: Config = merged.try_into().map_err(|e: toml::de::Error| {
            // Point at the variable that fails on its own (each tried alone against the
            // defaults), else at the one whose setting the message names.
            let msg = plain_types(e.message().trim());
            let alone = singles.iter().find_map(|(path, name, value)| {
                let mut single = defaults.clone();
                set_leaf(&mut single, path, value.clone());
                single.try_into::<Config>().err().map(|e| {
                    (
                        path.clone(),
                        Origin::Env(name.clone()),
                        type_error(path, e.message().trim()),
                    )
                })
            });
            if let Some((setting, origin, msg)) = alone {
                return ConfigError::new(setting, origin, msg);
            }
            let (setting, origin) = from_env
                .iter()
                .find(|(path, _)| msg.contains(path.rsplit('.').next().unwrap_or(path)))
                .map(|(p, n)| (p.clone(), Origin::Env(n.clone())))
                .or_else(|| {
                    from_env
                        .first()
                        .map(|(p, n)| (p.clone(), Origin::Env(n.clone())))
                })
                .unwrap_or(("-".to_string(), Origin::Value));
            ConfigError::new(setting, origin, msg)
        })?;
        let set = from_env
            .into_iter()
            .map(|(path, name)| (path, Origin::Env(name)))
            .collect();
        Ok((config, set))
    }

    /// Applies the command-line flags (the last layer).
    pub fn apply_flags(&mut self, flags: &Flags) -> Result<(), ConfigError> {
        if let Some(listen) = &flags.listen {
            self.server.listen = listen.clone();
            parse_listen(listen)
                .map_err(|m| ConfigError::new("server.listen", Origin::Flag("--listen"), m))?;
        }
        if let Some(url) = &flags.redis {
            self.redis.url = url.clone();
            check_redis_url(url)
                .map_err(|m| ConfigError::new("redis.url", Origin::Flag("--redis"), m))?;
            // One Redis, the sentinels or the cluster: the store would prefer the other two
            // over the URL and act on a Redis the operator did not name.
            for (setting, set) in [
                ("redis.sentinels", !self.redis.sentinels.is_empty()),
                ("redis.cluster", !self.redis.cluster.is_empty()),
            ] {
                if set {
                    return Err(ConfigError::new(
                        setting,
                        Origin::Flag("--redis"),
                        format!("--redis names one Redis, but the configuration sets {setting}; leave out --redis, or use a configuration without {setting}"),
                    ));
                }
            }
        }
        if let Some(data) = &flags.data {
            self.data_dir = data.clone();
            if data.as_os_str().is_empty() {
                return Err(ConfigError::new(
                    "data_dir",
                    Origin::Flag("--data"),
                    "must not be empty; give a directory such as ./data",
                ));
            }
        }
        Ok(())
    }

    /// Semantic checks that serde's types cannot express.
    pub fn validate(&self, origin: &Origin) -> Result<(), ConfigError> {
        self.validate_with(&Sources {
            all: Some(origin.clone()),
            ..Sources::default()
        })
    }

    fn validate_with(&self, sources: &Sources) -> Result<(), ConfigError> {
        let fail = |setting: &str, msg: String| {
            Err(ConfigError::new(
                setting,
                sources.origin_of(setting),
                sources.note(setting, msg),
            ))
        };
        if self.data_dir.as_os_str().is_empty() {
            return fail(
                "data_dir",
                "must not be empty; give a directory such as \"data\"".into(),
            );
        }
        if let Err(m) = parse_listen(&self.server.listen) {
            return fail("server.listen", m);
        }
        if !self.server.metrics_listen.is_empty() {
            if let Err(m) = parse_listen(&self.server.metrics_listen) {
                return fail("server.metrics_listen", m);
            }
        }
        if !self.worker.metrics_listen.is_empty() {
            if let Err(m) = parse_listen(&self.worker.metrics_listen) {
                return fail("worker.metrics_listen", m);
            }
        }
        if let Err(m) = check_redis_url(&self.redis.url) {
            return fail("redis.url", m);
        }
        if !self.redis.sentinels.is_empty() && !self.redis.url.is_empty() {
            return fail(
                "redis.sentinels",
                "is set together with redis.url; set one: the sentinels (horst finds the primary through them) or the URL of one Redis (an empty variable clears a file's value: HORST_REDIS_URL=)".into(),
            );
        }
        for (i, addr) in self.redis.sentinels.iter().enumerate() {
            let ok = addr.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
            });
            if !ok {
                return fail(
                    "redis.sentinels",
                    format!(
                        "entry {i} ({addr:?}) is not host:port, for example \"10.0.0.5:26379\""
                    ),
                );
            }
        }
        if !self.redis.cluster.is_empty()
            && (!self.redis.url.is_empty() || !self.redis.sentinels.is_empty())
        {
            return fail(
                "redis.cluster",
                "is set together with redis.url or redis.sentinels; set one: the cluster's seed nodes, the sentinels, or the URL of one Redis (an empty variable clears a file's value: HORST_REDIS_URL=, HORST_REDIS_SENTINELS=)".into(),
            );
        }
        for (i, url) in self.redis.cluster.iter().enumerate() {
            if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
                return fail(
                    "redis.cluster",
                    format!(
                        "entry {i} ({}) is not a redis:// or rediss:// URL of a cluster node, for example \"redis://10.0.0.5:7000\"",
                        crate::redact_url(url)
                    ),
                );
            }
        }
        if !self.redis.sentinels.is_empty() && self.redis.sentinel_master.is_empty() {
            return fail(
                "redis.sentinel_master",
                "is empty; name the master as the sentinels monitor it (`sentinel monitor NAME ...`)".into(),
            );
        }
        for (setting, check) in self.range_checks() {
            if let Err(m) = check.result() {
                return fail(setting, m);
            }
        }
        // Admission refuses a job that cannot finish within the caller's wait (its limit and
        // a second of slack), even with the queue empty: a wait shorter than a job's limit
        // refused every such job, with a retry that could never succeed.
        let q = &self.queue;
        let longest = q.playtest_seconds.max(q.simulate_seconds);
        if q.wait_seconds < longest + 1 {
            return fail(
                "queue.wait_seconds",
                format!(
                    "{} s is shorter than the longest job limit ({longest} s, queue.playtest_seconds or queue.simulate_seconds) plus 1 s: every such job would be refused as unable to finish in time. Raise queue.wait_seconds to at least {}, or lower the limit",
                    q.wait_seconds,
                    longest + 1
                ),
            );
        }
        // Admission takes a key whose job record expired as new (admit.lua): a key remembered
        // longer than its job would run and charge a retry a second time.
        if q.job_retention_hours < q.idempotency_retention_hours {
            return fail(
                "queue.job_retention_hours",
                format!(
                    "{} h is shorter than queue.idempotency_retention_hours ({} h): a retry with an idempotencyKey still remembered after its job record expired would run and be charged again. Raise queue.job_retention_hours to at least {}, or lower queue.idempotency_retention_hours",
                    q.job_retention_hours,
                    q.idempotency_retention_hours,
                    q.idempotency_retention_hours
                ),
            );
        }
        if self.redis.min_replica_acks > 0 && self.uses_private_redis() {
            return fail(
                "redis.min_replica_acks",
                format!(
                    "is {} but horst runs its private redis-server, which has no replicas: every durable write would wait for acknowledgements that never come. Set it to 0, or give redis.url / redis.sentinels of a Redis with replicas",
                    self.redis.min_replica_acks
                ),
            );
        }
        // The worker's own /metrics cannot share an address the API listens on (a fixed
        // port): the worker could not bind it and was started again for ever.
        if let Ok(worker) = parse_listen(&self.worker.metrics_listen) {
            let taken = [&self.server.listen, &self.server.metrics_listen];
            if worker.port() != 0
                && taken
                    .iter()
                    .filter_map(|a| parse_listen(a).ok())
                    .any(|a| a == worker)
            {
                return fail(
                    "worker.metrics_listen",
                    format!(
                        "{worker} is also server.listen or server.metrics_listen; give the worker's /metrics an address of its own (or leave it empty: horst up shows the worker's job metrics on its own /metrics)"
                    ),
                );
            }
        }
        if self.redis.key_prefix.is_empty()
            || !self
                .redis
                .key_prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b":_-.".contains(&b))
        {
            return fail(
                "redis.key_prefix",
                format!(
                    "{:?} is not accepted; use 1-64 ASCII letters, digits, ':', '_', '-' or '.', for example \"horst:\"",
                    self.redis.key_prefix
                ),
            );
        }
        if self.redis.key_prefix.len() > 64 {
            return fail("redis.key_prefix", "is longer than 64 bytes".into());
        }
        if let Err(m) = check_log_level(&self.log.level) {
            return fail("log.level", m);
        }
        for (i, cidr) in self.server.trusted_proxies.iter().enumerate() {
            if let Err(m) = sections::parse_cidr(cidr) {
                return fail("server.trusted_proxies", format!("entry {i}: {m}"));
            }
        }
        let public = &self.sessions.public_url;
        let scheme_ok = public.starts_with("http://") || public.starts_with("https://");
        if !public.is_empty()
            && (!scheme_ok
                || public
                    .chars()
                    .any(|c| c.is_whitespace() || c == '?' || c == '#'))
        {
            return fail(
                "sessions.public_url",
                format!("{public:?} is not a base URL; write scheme://host[:port][/path], e.g. \"https://api.rcadia.xyz\", or leave it empty"),
            );
        }
        // The reference player sits only at the house's tables: a game it cannot meet there
        // (a misspelling) silently left every new agent of that game without its validation
        // game.
        for game in &self.sessions.reference_games {
            let known = SHIPPED_GAMES
                .iter()
                .copied()
                .chain(self.house.games.iter().map(String::as_str));
            if !known.clone().any(|g| g == game) {
                let mut names: Vec<&str> = known.collect();
                names.sort_unstable();
                names.dedup();
                return fail(
                    "sessions.reference_games",
                    format!(
                        "{game:?} is not a known game; known games: {} (the games horst ships under web/games/, and house.games). Fix the spelling, drop it, or add your own house game to house.games too",
                        names.join(", ")
                    ),
                );
            }
        }
        for origin in &self.gateway.allowed_origins {
            if !(origin.starts_with("http://") || origin.starts_with("https://"))
                || origin.ends_with('/')
            {
                return fail(
                    "gateway.allowed_origins",
                    format!("{origin:?} is not an origin; write scheme://host[:port] without a path, e.g. \"https://example.org\""),
                );
            }
        }
        Ok(())
    }

    /// The listen address, already validated.
    pub fn listen_addr(&self) -> SocketAddr {
        parse_listen(&self.server.listen)
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 8080)))
    }

    /// The base URL a client on this machine reaches the listen address at (the default
    /// backend of `horst play` and `horst house`): an unspecified address (`0.0.0.0`, `::`)
    /// listens everywhere but is nothing to connect to, so it becomes loopback. Port 0 is
    /// refused: the port is only known once the server is bound.
    pub fn local_base_url(&self) -> Result<String, String> {
        let mut addr = self.listen_addr();
        if addr.port() == 0 {
            return Err("the configured listen address has port 0 (a free port)".into());
        }
        if addr.ip().is_unspecified() {
            addr.set_ip(if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        Ok(format!("http://{addr}"))
    }

    /// The JWT signing key's file: `sessions.jwt_key_file`, else `<data_dir>/jwt.key`.
    pub fn jwt_key_file(&self) -> PathBuf {
        match self.sessions.jwt_key_file.as_str() {
            "" => self.data_dir.join("jwt.key"),
            f => PathBuf::from(f),
        }
    }

    /// True when horst must run (or attach to) its private Redis under `data_dir`.
    pub fn uses_private_redis(&self) -> bool {
        self.redis.url.is_empty()
            && self.redis.sentinels.is_empty()
            && self.redis.cluster.is_empty()
    }
}

/// Where each setting's value came from, for the messages of [`Config::validate_with`]: a
/// rule between two settings (a wait shorter than a job's limit) is often broken by an
/// override of the other one, and the message must point at that override.
#[derive(Debug, Default)]
struct Sources {
    /// Every setting's origin (a configuration checked as one piece).
    all: Option<Origin>,
    /// The file, and the settings it writes (dotted names).
    file: Option<PathBuf>,
    in_file: Vec<(String, toml::Value)>,
    /// The settings an environment variable or a flag set, later ones winning.
    set: Vec<(String, Origin)>,
}

impl Sources {
    /// Where `setting`'s value came from: its variable or flag, the file that writes it, else
    /// its default.
    fn origin_of(&self, setting: &str) -> Origin {
        if let Some(all) = &self.all {
            return all.clone();
        }
        if let Some((_, origin)) = self.set.iter().rev().find(|(p, _)| p == setting) {
            return origin.clone();
        }
        match &self.file {
            Some(file) if self.in_file.iter().any(|(p, _)| p == setting) => {
                Origin::File(file.clone())
            }
            _ => Origin::Default,
        }
    }

    /// `message`, with where the other settings it names were set when that is not where
    /// `setting`'s value came from: the override (or the file's value) that broke the rule.
    fn note(&self, setting: &str, message: String) -> String {
        if self.all.is_some() {
            return message;
        }
        let own = self.origin_of(setting);
        let mut named: Vec<String> = Vec::new();
        let paths = self
            .set
            .iter()
            .map(|(p, _)| p)
            .chain(self.in_file.iter().map(|(p, _)| p));
        for path in paths {
            if path == setting
                || !names_setting(&message, path)
                || named.iter().any(|n| n.starts_with(&format!("{path} ")))
            {
                continue;
            }
            let origin = self.origin_of(path);
            if origin != own {
                named.push(format!("{path} is {origin}"));
            }
        }
        if named.is_empty() {
            message
        } else {
            format!("{message} ({})", named.join("; "))
        }
    }
}

/// Whether `message` names setting `path` (as a whole dotted name: `queue.wait_seconds` is
/// not named by `queue.wait_seconds_x`).
fn names_setting(message: &str, path: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    message.match_indices(path).any(|(at, _)| {
        let before = message[..at].chars().next_back();
        let after = message[at + path.len()..].chars().next();
        before.is_none_or(|c| !is_name(c))
            && after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
    })
}

/// The games horst ships a page for (`web/games/<id>/`), which the house can host: with
/// `house.games`, what `sessions.reference_games` may name.
pub const SHIPPED_GAMES: &[&str] = &["chess", "rps"];

/// Variables that configure horst's environment rather than a setting (`HORST_OPERATOR`
/// names the operator in the audit trail of `horst admin ...`; `HORST_AGENT_TOKEN` is the
/// token of `horst play`; `HORST_PROCESS_TAG` is what `horst up` tells its worker child to
/// put in its workers' ids).
const EXEMPT_ENV: &[&str] = &[
    "HORST_CONFIG",
    "HORST_LOG",
    "HORST_OPERATOR",
    "HORST_AGENT_TOKEN",
    "HORST_PROCESS_TAG",
];

/// What an unknown `HORST_*` variable is told: the nearest known name when one is close (a
/// typo: a letter or an underscore off), and the variables of its section when the section
/// exists. Before, every one of the hundred-odd variables was listed, and the one meant was
/// left to be found in it.
fn unknown_env_message(name: &str, known: &[String]) -> String {
    let squash = |s: &str| s.replace('_', "");
    let nearest = known
        .iter()
        .map(|k| (edit_distance(&squash(name), &squash(k)), k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= 2)
        .map(|(_, k)| k);
    // HORST_QUEUE_WAITSECONDS: its section's variables (HORST_QUEUE_...).
    let section: Vec<&String> = name
        .strip_prefix("HORST_")
        .and_then(|rest| rest.split_once('_'))
        .map(|(section, _)| format!("HORST_{section}_"))
        .map(|prefix| known.iter().filter(|k| k.starts_with(&prefix)).collect())
        .unwrap_or_default();
    let mut msg = String::from("unknown setting");
    if let Some(k) = nearest {
        msg.push_str(&format!("; did you mean {k}?"));
    }
    if section.is_empty() {
        let all: Vec<&str> = known.iter().map(String::as_str).collect();
        msg.push_str(&format!("; the HORST_ variables are: {}", all.join(", ")));
    } else {
        let names: Vec<&str> = section.iter().map(|s| s.as_str()).collect();
        msg.push_str(&format!(
            "; the variables of its section are: {} (ops/horst.toml lists every setting)",
            names.join(", ")
        ));
    }
    msg
}

/// The key a typo meant in serde's "unknown field `urll`, expected one of `url`, ..." (a
/// letter or an underscore off), as [`unknown_env_message`] finds a variable's.
fn nearest_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    let (unknown, rest) = rest.split_once('`')?;
    let squash = |s: &str| s.replace('_', "");
    rest.split('`')
        .skip(1)
        .step_by(2)
        .map(|k| (edit_distance(&squash(unknown), &squash(k)), k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= 2)
        .map(|(_, k)| k)
}

/// Levenshtein distance of two short ASCII names.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// `server.listen` -> `HORST_SERVER_LISTEN`; `data_dir` -> `HORST_DATA_DIR`.
pub fn env_name(path: &str) -> String {
    format!("HORST_{}", path.replace('.', "_").to_ascii_uppercase())
}

fn collect_leaves(value: &toml::Value, prefix: String, out: &mut Vec<(String, toml::Value)>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                collect_leaves(v, path, out);
            }
        }
        leaf => out.push((prefix, leaf.clone())),
    }
}

fn set_leaf(root: &mut toml::Value, path: &str, value: toml::Value) {
    let mut node = root;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let toml::Value::Table(table) = node else {
            return;
        };
        if i + 1 == parts.len() {
            table.insert((*part).to_string(), value);
            return;
        }
        node = table
            .entry((*part).to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()));
    }
}

/// Reads an environment value as the type the setting has.
fn parse_env_value(raw: &str, like: &toml::Value) -> Result<toml::Value, String> {
    match like {
        toml::Value::String(_) => Ok(toml::Value::String(raw.to_string())),
        toml::Value::Integer(_) => raw
            .trim()
            .parse::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| format!("{raw:?} is not a whole number")),
        toml::Value::Float(_) => raw
            .trim()
            .parse::<f64>()
            .map(toml::Value::Float)
            .map_err(|_| format!("{raw:?} is not a number")),
        toml::Value::Boolean(_) => match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(toml::Value::Boolean(true)),
            "false" | "0" | "no" | "off" => Ok(toml::Value::Boolean(false)),
            _ => Err(format!("{raw:?} is not a boolean; use true or false")),
        },
        // A list as TOML (or JSON) when an item holds a comma itself:
        // HORST_HOUSE_CHROMIUM_ARGS='["--window-size=1280,800"]'.
        toml::Value::Array(_) if raw.trim_start().starts_with('[') => {
            let doc: toml::Table =
                format!("v = {}", raw.trim())
                    .parse()
                    .map_err(|e: toml::de::Error| {
                        format!(
                        "{raw:?} is not a list; write [\"a\", \"b\"] (or a,b without brackets): {}",
                        e.message().trim()
                    )
                    })?;
            match doc.get("v") {
                Some(toml::Value::Array(items)) if items.iter().all(toml::Value::is_str) => {
                    Ok(toml::Value::Array(items.clone()))
                }
                _ => Err(format!(
                    "{raw:?} is not a list of strings; write [\"a\", \"b\"]"
                )),
            }
        }
        // Otherwise comma-separated: HORST_GATEWAY_ALLOWED_ORIGINS=https://a,https://b
        toml::Value::Array(_) => Ok(toml::Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| toml::Value::String(s.to_string()))
                .collect(),
        )),
        _ => Err("this setting cannot be set from the environment".to_string()),
    }
}

fn parse_listen(listen: &str) -> Result<SocketAddr, String> {
    listen.parse::<SocketAddr>().map_err(|_| {
        format!("{listen:?} is not an address; write IP:PORT, for example \"127.0.0.1:8080\" or \"0.0.0.0:8080\" (port 0 picks a free port)")
    })
}

/// `redis://user:secret@host:6379/0` -> `redis://user:***@host:6379/0`, and a socket URL's
/// `?pass=secret` (where the redis client takes a Unix socket's password from) ->
/// `?pass=***`. Secrets never reach logs, `/readyz` or `horst admin status`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let mut out = match rest.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{host}")
        }
        None => format!("{scheme}://{rest}"),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _))
                    if k.eq_ignore_ascii_case("pass") || k.eq_ignore_ascii_case("password") =>
                {
                    format!("{k}=***")
                }
                _ => pair.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

fn check_redis_url(url: &str) -> Result<(), String> {
    if url.is_empty()
        || url.starts_with("redis://")
        || url.starts_with("rediss://")
        || url.starts_with("redis+unix://")
        || url.starts_with("unix://")
    {
        Ok(())
    } else {
        Err("must be empty (horst then runs a private redis-server under data_dir) or a URL starting with redis://, rediss://, redis+unix:// or unix://".to_string())
    }
}

fn check_log_level(level: &str) -> Result<(), String> {
    // Either a bare level or tracing's directive syntax (target=level,...).
    let ok = !level.is_empty()
        && level.split(',').all(|directive| {
            let lvl = directive.rsplit('=').next().unwrap_or("");
            matches!(
                lvl.trim().to_ascii_lowercase().as_str(),
                "trace" | "debug" | "info" | "warn" | "error" | "off"
            )
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{level:?} is not accepted; use trace, debug, info, warn, error or off, or directives such as \"info,horst_api=debug\""
        ))
    }
}

fn line_of(text: &str, byte: usize) -> usize {
    text.get(..byte.min(text.len()))
        .map(|s| s.matches('\n').count() + 1)
        .unwrap_or(1)
}

/// Best effort: which dotted key a TOML error's span points into (its line's key and the
/// nearest `[section]` header above it).
fn setting_at_span(text: &str, span: Option<std::ops::Range<usize>>) -> Option<String> {
    let span = span?;
    let line_no = line_of(text, span.start);
    let lines: Vec<&str> = text.lines().collect();
    let line = lines.get(line_no.checked_sub(1)?)?.trim();
    let section = lines[..line_no - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    if line.starts_with('[') {
        return Some(
            line.trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_string(),
        );
    }
    let key = line.split('=').next()?.trim();
    if key.is_empty() {
        return section;
    }
    Some(match section {
        Some(s) => format!("{s}.{key}"),
        None => key.to_string(),
    })
}

#[cfg(test)]
mod tests;

impl Config {
    /// The whole numbers `setting` accepts, if it has a range of its own (`worker.slots`: 1
    /// to 256). A range that depends on another setting is given for that one's default.
    pub fn declared_range(setting: &str) -> Option<(u64, u64)> {
        Config::default()
            .range_checks()
            .into_iter()
            .find(|(s, _)| *s == setting)
            .and_then(|(_, check)| match check {
                Check::Range { min, max, .. } => Some((min, max)),
                Check::Rule(_) => None,
            })
    }
}

/// A type error on `setting` in words an operator can act on ([`plain_types`]), with the
/// setting's own range where it has one: `-1` for `worker.slots` was told "expected a whole
/// number from 0 to 4294967295" (its Rust type's), and 300 then failed again, on 1 to 256.
fn type_error(setting: &str, message: &str) -> String {
    let mut out = plain_types(message);
    if let Some(meant) = nearest_field(message) {
        out.push_str(&format!("; did you mean `{meant}`?"));
    }
    if let Some((min, max)) = Config::declared_range(setting) {
        const TYPE_RANGES: [&str; 4] = [
            "a whole number from 0 to 255",
            "a whole number from 0 to 65535",
            "a whole number from 0 to 4294967295",
            "a whole number, 0 or more",
        ];
        for words in TYPE_RANGES {
            if let Some(at) = out.find(words) {
                out.replace_range(
                    at..at + words.len(),
                    &format!("a whole number from {min} to {max}"),
                );
                break;
            }
        }
    }
    out
}

/// A type error's Rust type names in words an operator can act on: "expected u16" said
/// nothing about what to write.
fn plain_types(message: &str) -> String {
    const WORDS: [(&str, &str); 12] = [
        ("u8", "a whole number from 0 to 255"),
        ("u16", "a whole number from 0 to 65535"),
        ("u32", "a whole number from 0 to 4294967295"),
        ("u64", "a whole number, 0 or more"),
        ("usize", "a whole number, 0 or more"),
        ("i8", "a whole number"),
        ("i16", "a whole number"),
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("f32", "a number, e.g. 1.5"),
        ("f64", "a number, e.g. 1.5"),
        ("a boolean", "true or false (no quotes)"),
    ];
    let mut out = message.to_string();
    for (rust, words) in WORDS {
        let needle = format!("expected {rust}");
        if let Some(at) = out.find(&needle) {
            let end = at + needle.len();
            let whole_word = out[end..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if whole_word {
                out.replace_range(at..end, &format!("expected {words}"));
            }
        }
    }
    if out.contains("expected a string") && !out.contains("expected a string in quotes") {
        out = out.replacen(
            "expected a string",
            "expected a string in quotes (\"...\")",
            1,
        );
    }
    out
}
