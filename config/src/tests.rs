use super::*;

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn from_toml(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml(text, Origin::File("horst.toml".into()))
}

#[test]
fn defaults_are_valid() {
    let c = Config::default();
    c.validate(&Origin::Value).unwrap();
    assert!(c.uses_private_redis());
    assert_eq!(c.queue.daily_seconds, 3600);
    assert_eq!(c.quotas.trust0.playtests, 6);
    assert_eq!(c.gateway.mode, GatewayMode::Off);
}

#[test]
fn file_values_are_read() {
    let c = from_toml(
        "data_dir = \"/var/lib/horst\"\n[server]\nlisten = \"0.0.0.0:9000\"\n[log]\nformat = \"json\"\n",
    )
    .unwrap();
    assert_eq!(c.data_dir, PathBuf::from("/var/lib/horst"));
    assert_eq!(c.listen_addr().port(), 9000);
    assert_eq!(c.log.format, LogFormat::Json);
    // Untouched sections keep their defaults.
    assert_eq!(c.worker, WorkerConfig::default());
}

#[test]
fn unknown_variant_names_setting_and_accepted_values() {
    let e = from_toml("[log]\nformat = \"xml\"\n").unwrap_err();
    assert_eq!(e.setting, "log.format");
    assert!(
        e.message.contains("human") && e.message.contains("json"),
        "{e}"
    );
    assert!(e.to_string().contains("horst.toml"), "{e}");
}

#[test]
fn unknown_key_is_refused_with_the_known_ones() {
    let e = from_toml("[server]\nlisen = \"1.2.3.4:1\"\n").unwrap_err();
    assert_eq!(e.setting, "server.lisen");
    assert!(e.message.contains("listen"), "{e}");
}

/// A typo in a key of the file names the key meant first, as a typo in a `HORST_*` variable
/// does: the list of every key of the section left it to be found.
#[test]
fn an_unknown_key_names_the_nearest() {
    let e = from_toml("[redis]\nurll = \"redis://x:1\"\n").unwrap_err();
    assert!(e.message.contains("did you mean `url`?"), "{e}");
    let e = from_toml("[queue]\nwaitseconds = 5\n").unwrap_err();
    assert!(e.message.contains("did you mean `wait_seconds`?"), "{e}");
    let e = from_toml("[sever]\nlisten = \"1.2.3.4:1\"\n").unwrap_err();
    assert!(e.message.contains("did you mean `server`?"), "{e}");
    // Nothing near: the list alone.
    let e = from_toml("[server]\ncolour = 1\n").unwrap_err();
    assert!(!e.message.contains("did you mean"), "{e}");
    assert!(e.message.contains("listen"), "{e}");
}

#[test]
fn wrong_type_is_refused() {
    let e = from_toml("[worker]\nslots = \"many\"\n").unwrap_err();
    assert_eq!(e.setting, "worker.slots");
    // What to write, not the Rust type ("expected u32"), and the setting's own range, not
    // the type's (0 to 4294967295, where 300 then failed again).
    assert!(
        e.message.contains("expected a whole number from 1 to 256"),
        "{e}"
    );
    let e = from_toml("[worker]\nslots = -1\n").unwrap_err();
    assert!(
        e.message.contains("expected a whole number from 1 to 256"),
        "{e}"
    );
    // A setting without a range of its own keeps its type's.
    let e = from_toml("[worker]\nmemory_limit_mib = -1\n").unwrap_err();
    assert!(e.message.contains("0 or more"), "{e}");
    let e = from_toml("[redis]\nallow_eviction = \"yes\"\n").unwrap_err();
    assert!(e.message.contains("expected true or false"), "{e}");
    let e = from_toml("[server]\nlisten = 8080\n").unwrap_err();
    assert!(e.message.contains("expected a string in quotes"), "{e}");
    let e = from_toml("[server]\nmax_connections = 1.5\n").unwrap_err();
    assert!(
        e.message
            .contains("expected a whole number from 1 to 1000000"),
        "{e}"
    );
    let e = from_toml("[quotas]\nstorage_total_bytes = 1.5\n").unwrap_err();
    assert!(
        e.message.contains("expected a whole number, 0 or more"),
        "{e}"
    );
    assert!(!e.message.contains("u64"), "{e}");
}

#[test]
fn semantic_checks_name_the_setting() {
    let c = from_toml("[server]\nlisten = \"localhost\"\n").unwrap();
    let e = c.validate(&Origin::Value).unwrap_err();
    assert_eq!(e.setting, "server.listen");
    assert!(e.message.contains("IP:PORT"), "{e}");

    let c = from_toml("[worker]\nslots = 0\n").unwrap();
    let e = c.validate(&Origin::Value).unwrap_err();
    assert_eq!(e.setting, "worker.slots");
    assert!(e.message.contains("1 to 256"), "{e}");

    // A watchdog limit below what an idle worker needs killed every child at once, for ever.
    let c = from_toml("[worker]\nmemory_limit_mib = 4\n").unwrap();
    let e = c.validate(&Origin::Value).unwrap_err();
    assert_eq!(e.setting, "worker.memory_limit_mib");
    assert!(e.message.contains("128 to"), "{e}");
    for fine in ["0", "128", "4096"] {
        let c = from_toml(&format!("[worker]\nmemory_limit_mib = {fine}\n")).unwrap();
        assert!(c.validate(&Origin::Value).is_ok(), "{fine}");
    }

    let c = from_toml("[redis]\nurl = \"http://x\"\n").unwrap();
    assert_eq!(c.validate(&Origin::Value).unwrap_err().setting, "redis.url");

    let c = from_toml("[log]\nlevel = \"loud\"\n").unwrap();
    assert_eq!(c.validate(&Origin::Value).unwrap_err().setting, "log.level");

    let c = from_toml("[server]\ntrusted_proxies = [\"10.0.0.0/33\"]\n").unwrap();
    assert_eq!(
        c.validate(&Origin::Value).unwrap_err().setting,
        "server.trusted_proxies"
    );
    let c = from_toml("[redis]\nserver_check_seconds = 0\n").unwrap();
    assert_eq!(
        c.validate(&Origin::Value).unwrap_err().setting,
        "redis.server_check_seconds"
    );
    assert_eq!(Config::default().redis.server_check_seconds, 5);
}

#[test]
fn env_overrides_file_and_flags_override_env() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(
        &file,
        "[server]\nlisten = \"127.0.0.1:1000\"\n[worker]\nslots = 2\n",
    )
    .unwrap();
    let e = env(&[
        ("HORST_SERVER_LISTEN", "127.0.0.1:2000"),
        ("HORST_WORKER_THREADS", "3"),
        ("HORST_LOG_FORMAT", "json"),
        ("HORST_REDIS_ALLOW_EVICTION", "true"),
        (
            "HORST_GATEWAY_ALLOWED_ORIGINS",
            "https://a.example, https://b.example",
        ),
        ("PATH", "/bin"),
    ]);
    let c = Config::load(Some(&file), &e, &Flags::default()).unwrap();
    assert_eq!(c.listen_addr().port(), 2000);
    assert_eq!(c.worker.slots, 2);
    assert_eq!(c.worker.threads, 3);
    assert_eq!(c.log.format, LogFormat::Json);
    assert!(c.redis.allow_eviction);
    assert_eq!(c.gateway.allowed_origins.len(), 2);

    let flags = Flags {
        listen: Some("127.0.0.1:3000".into()),
        redis: Some("redis://127.0.0.1:7777".into()),
        data: Some("/tmp/x".into()),
    };
    let c = Config::load(Some(&file), &e, &flags).unwrap();
    assert_eq!(c.listen_addr().port(), 3000);
    assert_eq!(c.redis.url, "redis://127.0.0.1:7777");
    assert!(!c.uses_private_redis());
    assert_eq!(c.data_dir, PathBuf::from("/tmp/x"));
}

#[test]
fn bad_env_value_names_the_variable() {
    let e = Config::default()
        .with_env(&env(&[("HORST_WORKER_SLOTS", "lots")]))
        .unwrap_err();
    assert_eq!(e.setting, "worker.slots");
    assert_eq!(e.origin, Origin::Env("HORST_WORKER_SLOTS".into()));
    assert!(e.message.contains("accepted: 1 to 256"), "{e}");
    // -1 for a u32 fails the type, not the range check: still the setting's own range.
    let e = Config::default()
        .with_env(&env(&[("HORST_WORKER_SLOTS", "-1")]))
        .unwrap_err();
    assert_eq!(e.origin, Origin::Env("HORST_WORKER_SLOTS".into()));
    assert!(e.message.contains("from 1 to 256"), "{e}");

    let e = Config::default()
        .with_env(&env(&[("HORST_LOG_FORMAT", "xml")]))
        .unwrap_err();
    assert_eq!(e.setting, "log.format");
    assert!(e.to_string().contains("HORST_LOG_FORMAT"), "{e}");
    assert!(e.message.contains("human"), "{e}");

    let e = Config::default()
        .with_env(&env(&[("HORST_SERVER_LISTEN", "nowhere")]))
        .unwrap_err();
    assert_eq!(e.setting, "server.listen");
    assert_eq!(e.origin, Origin::Env("HORST_SERVER_LISTEN".into()));
}

#[test]
fn unknown_horst_variable_is_refused() {
    let e = Config::default()
        .with_env(&env(&[("HORST_SERVER_LISTN", "127.0.0.1:1")]))
        .unwrap_err();
    assert!(e.to_string().contains("HORST_SERVER_LISTN"), "{e}");
    assert!(e.message.contains("HORST_SERVER_LISTEN"), "{e}");
    // HORST_LOG and HORST_CONFIG are not settings but are allowed.
    Config::default()
        .with_env(&env(&[("HORST_LOG", "debug"), ("HORST_CONFIG", "x")]))
        .unwrap();
}

#[test]
fn bad_flag_is_refused() {
    let mut c = Config::default();
    let e = c
        .apply_flags(&Flags {
            listen: Some("8080".into()),
            ..Flags::default()
        })
        .unwrap_err();
    assert_eq!(e.origin, Origin::Flag("--listen"));
}

/// `--redis` with a configuration that names sentinels or a cluster is refused, naming the
/// setting: the store preferred them, and `horst admin --redis URL` acted on another Redis.
#[test]
fn a_redis_flag_beside_sentinels_or_a_cluster_is_refused() {
    let flags = Flags {
        redis: Some("redis://127.0.0.1:7000".into()),
        ..Flags::default()
    };
    let mut c = Config::default();
    c.redis.sentinels = vec!["10.0.0.5:26379".into()];
    let e = c.apply_flags(&flags).unwrap_err();
    assert_eq!(
        (e.setting.as_str(), &e.origin),
        ("redis.sentinels", &Origin::Flag("--redis"))
    );
    let mut c = Config::default();
    c.redis.cluster = vec!["redis://10.0.0.5:7000".into()];
    let e = c.apply_flags(&flags).unwrap_err();
    assert_eq!(e.setting, "redis.cluster", "{e}");
    Config::default().apply_flags(&flags).unwrap();
}

#[test]
fn missing_file_is_a_clear_error() {
    let e = Config::load(
        Some(Path::new("/nonexistent/horst.toml")),
        &BTreeMap::new(),
        &Flags::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("cannot read"), "{e}");
}

/// The example in ops/ must parse, equal the defaults where it says so, and mention
/// every setting, so the documentation cannot drift from the code.
#[test]
fn example_file_documents_every_setting() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops/horst.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut parsed = Config::from_toml(&text, Origin::File(path.clone())).unwrap();
    parsed.validate(&Origin::File(path)).unwrap();
    // The one production value in it: web/ installed to a fixed path (ops/README.md), since
    // the default "web" is relative to the working directory of a checkout.
    let web_dir = std::mem::take(&mut parsed.server.web_dir);
    assert!(Path::new(&web_dir).is_absolute(), "{web_dir}");
    let runbook =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops/README.md"))
            .unwrap();
    assert!(
        runbook.contains(&web_dir),
        "ops/README.md installs web/ to {web_dir}"
    );
    parsed.server.web_dir = Config::default().server.web_dir;
    assert_eq!(
        parsed,
        Config::default(),
        "ops/horst.toml must show the defaults"
    );
    let mut leaves = Vec::new();
    collect_leaves(
        &toml::Value::try_from(Config::default()).unwrap(),
        String::new(),
        &mut leaves,
    );
    // Every setting is written out in its own section (not only named in a comment, nor
    // under another section that has a key of the same name): the file is the reference.
    let mut written = Vec::new();
    collect_leaves(&toml::from_str(&text).unwrap(), String::new(), &mut written);
    let written: std::collections::HashSet<String> = written.into_iter().map(|(p, _)| p).collect();
    let unwritten: Vec<&str> = leaves
        .iter()
        .map(|(p, _)| p.as_str())
        .filter(|p| !written.contains(*p))
        .collect();
    assert!(
        unwritten.is_empty(),
        "ops/horst.toml does not set {unwritten:?}"
    );
    for (path, _) in leaves {
        let key = path.rsplit('.').next().unwrap();
        assert!(
            text.contains(&format!("{key} =")),
            "ops/horst.toml does not document {path}"
        );
        assert!(
            text.contains(&env_name(&path)),
            "ops/horst.toml does not name {}",
            env_name(&path)
        );
    }
}

#[test]
fn short_admin_tokens_are_refused() {
    let mut c = Config::default();
    c.gateway.admin_token = "short".into();
    let e = c.validate(&Origin::File("horst.toml".into())).unwrap_err();
    assert!(e.to_string().contains("admin_token"), "{e}");
    c.gateway.admin_token = "with space".repeat(4);
    assert!(c.validate(&Origin::File("horst.toml".into())).is_err());
    c.gateway.admin_token = "a".repeat(32);
    c.validate(&Origin::File("horst.toml".into())).unwrap();
}

/// `sessions.house_identity` is compared with an identity as it is (`agt_` and 16 hex digits,
/// or a person's lowercase name): any other value named nobody, silently, and the house's
/// tables never showed as `house`.
#[test]
fn a_house_identity_that_can_name_nobody_is_refused() {
    let check = |v: &str| {
        let mut c = Config::default();
        c.sessions.house_identity = v.into();
        c.validate(&Origin::File("horst.toml".into()))
    };
    for ok in [
        "",
        "agt_0123456789abcdef",
        "house",
        "the_house-2",
        "agt-0123",
    ] {
        check(ok).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
    }
    for bad in [
        "House",
        "agt_XYZ",
        "agt_0123456789ABCDEF",
        " house",
        "h",
        "agt_0123",
    ] {
        let e = check(bad).expect_err(bad).to_string();
        assert!(
            e.contains("sessions.house_identity") && e.contains("agt_"),
            "{bad:?}: {e}"
        );
    }
}

#[test]
fn the_operator_token_never_shows_in_debug_output() {
    let mut c = Config::default();
    c.gateway.admin_token = "s3cret-operator-token-that-is-long-enough".into();
    let shown = format!("{c:?}");
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}

#[test]
fn local_base_url_turns_wildcards_into_loopback() {
    let with = |listen: &str| {
        let mut c = Config::default();
        c.server.listen = listen.into();
        c.local_base_url()
    };
    assert_eq!(with("0.0.0.0:8080").unwrap(), "http://127.0.0.1:8080");
    assert_eq!(with("[::]:9").unwrap(), "http://[::1]:9");
    assert_eq!(with("127.0.0.1:3000").unwrap(), "http://127.0.0.1:3000");
    assert!(with("127.0.0.1:0").is_err());
}

#[test]
fn sentinel_settings_come_from_the_environment_and_are_checked() {
    let e = env(&[
        ("HORST_REDIS_SENTINELS", "10.0.0.5:26379, 10.0.0.6:26379"),
        ("HORST_REDIS_SENTINEL_PASSWORD", "sentinel-secret"),
        ("HORST_REDIS_PASSWORD", "redis-secret"),
        ("HORST_REDIS_MIN_REPLICA_ACKS", "1"),
    ]);
    let c = Config::load(None, &e, &Flags::default()).unwrap();
    assert_eq!(c.redis.sentinels, ["10.0.0.5:26379", "10.0.0.6:26379"]);
    assert_eq!(c.redis.min_replica_acks, 1);
    assert!(!c.uses_private_redis());
    // Passwords never show, a URL's password neither.
    let mut shown_config = c.clone();
    shown_config.redis.url = "redis://:url-secret@h:1".into();
    let shown = format!("{:?}", shown_config.redis);
    assert!(!shown.contains("secret"), "{shown}");

    let refused = |text: &str| {
        from_toml(text)
            .unwrap()
            .validate(&Origin::Value)
            .unwrap_err()
    };
    let e = refused("[redis]\nurl = \"redis://h:1\"\nsentinels = [\"h:26379\"]\n");
    assert_eq!(e.setting, "redis.sentinels");
    let e = refused("[redis]\nsentinels = [\"h\"]\n");
    assert!(e.message.contains("host:port"), "{e}");
    let e = refused("[redis]\nmin_replica_acks = 99\n");
    assert_eq!(e.setting, "redis.min_replica_acks");
}

#[test]
fn cluster_nodes_come_from_the_environment_and_are_checked() {
    let e = env(&[(
        "HORST_REDIS_CLUSTER",
        "redis://10.0.0.5:7000, redis://:node-secret@10.0.0.6:7000",
    )]);
    let c = Config::load(None, &e, &Flags::default()).unwrap();
    assert_eq!(
        c.redis.cluster,
        [
            "redis://10.0.0.5:7000",
            "redis://:node-secret@10.0.0.6:7000"
        ]
    );
    assert!(!c.uses_private_redis());
    let shown = format!("{:?}", c.redis);
    assert!(!shown.contains("node-secret"), "{shown}");

    let refused = |text: &str| {
        from_toml(text)
            .unwrap()
            .validate(&Origin::Value)
            .unwrap_err()
    };
    let e = refused("[redis]\nurl = \"redis://h:1\"\ncluster = [\"redis://h:7000\"]\n");
    assert_eq!(e.setting, "redis.cluster");
    let e = refused("[redis]\ncluster = [\"h:7000\"]\n");
    assert!(e.message.contains("redis://"), "{e}");
}

#[test]
fn connection_settings_are_checked_and_named() {
    let c = Config::default()
        .with_env(&env(&[
            ("HORST_SERVER_MAX_CONNECTIONS_PER_ADDRESS", "5000"),
            ("HORST_SERVER_METRICS_LISTEN", "127.0.0.1:9100"),
        ]))
        .unwrap();
    assert_eq!(c.server.max_connections_per_address, 5000);
    assert_eq!(c.server.metrics_listen, "127.0.0.1:9100");
    // The idle timeout cannot outlast the head timeout, whose timer also runs between requests.
    let e = Config::default()
        .with_env(&env(&[("HORST_SERVER_IDLE_TIMEOUT_SECONDS", "60")]))
        .unwrap_err();
    assert_eq!(e.setting, "server.idle_timeout_seconds");
    assert!(e.message.contains("header_read_timeout_seconds"), "{e}");
    let e = Config::default()
        .with_env(&env(&[("HORST_SERVER_MAX_CONNECTIONS", "0")]))
        .unwrap_err();
    assert_eq!(e.setting, "server.max_connections");
    let e = Config::default()
        .with_env(&env(&[("HORST_SERVER_METRICS_LISTEN", "9100")]))
        .unwrap_err();
    assert_eq!(e.setting, "server.metrics_listen");
}

/// A list whose items hold commas is written as a TOML list in the environment (split on
/// commas, `--window-size=1280,800` became two wrong arguments); a bad one says how.
#[test]
fn a_list_in_the_environment_may_be_written_as_a_toml_list() {
    let c = Config::default()
        .with_env(&env(&[(
            "HORST_HOUSE_CHROMIUM_ARGS",
            r#"["--window-size=1280,800", "--disable-features=A,B"]"#,
        )]))
        .unwrap();
    assert_eq!(
        c.house.chromium_args,
        ["--window-size=1280,800", "--disable-features=A,B"]
    );
    let e = Config::default()
        .with_env(&env(&[("HORST_HOUSE_CHROMIUM_ARGS", "[1, 2]")]))
        .unwrap_err();
    assert!(e.message.contains("list of strings"), "{e}");
    let e = Config::default()
        .with_env(&env(&[("HORST_HOUSE_CHROMIUM_ARGS", "[\"a\"")]))
        .unwrap_err();
    assert!(e.message.contains("is not a list"), "{e}");
}

/// A variable whose value does not fit its setting is the one named, whatever other
/// variables are set (the error named the first variable in order, here the admin token).
#[test]
fn a_type_error_names_the_variable_that_causes_it() {
    let e = Config::default()
        .with_env(&env(&[
            (
                "HORST_GATEWAY_ADMIN_TOKEN",
                "0123456789abcdef0123456789abcdef",
            ),
            ("HORST_LOG_FORMAT", "xml"),
        ]))
        .unwrap_err();
    assert_eq!(e.setting, "log.format", "{e}");
    assert_eq!(e.origin, Origin::Env("HORST_LOG_FORMAT".into()), "{e}");
}

/// A stopping worker may finish the longest job the limits allow (a 600 s playtest was cut
/// off at a fixed 120 s and reaped, charged).
#[test]
fn a_stopping_worker_may_finish_the_longest_job() {
    let mut c = Config::default();
    assert_eq!(c.queue.drain_seconds(), 120);
    c.queue.playtest_seconds = 600;
    assert_eq!(c.queue.drain_seconds(), 660);
    c.queue.playtest_seconds = 5;
    c.queue.simulate_seconds = 300;
    assert_eq!(c.queue.drain_seconds(), 360);
}

/// A Unix socket's password is in the query (`?pass=`, where the redis client reads it):
/// it is hidden like one before an `@`. It reached the start-up log, `/readyz` and
/// `horst admin status` as written.
#[test]
fn redacted_urls_hide_a_sockets_password_too() {
    assert_eq!(
        crate::redact_url("redis://u:secret@host:6379/0"),
        "redis://u:***@host:6379/0"
    );
    let socket = crate::redact_url("redis+unix:///run/redis/redis.sock?db=2&pass=S3cret");
    assert!(!socket.contains("S3cret"), "{socket}");
    assert_eq!(socket, "redis+unix:///run/redis/redis.sock?db=2&pass=***");
    assert_eq!(
        crate::redact_url("unix:///s.sock?PASSWORD=x"),
        "unix:///s.sock?PASSWORD=***"
    );
    assert_eq!(crate::redact_url("redis://host:6379"), "redis://host:6379");
}

/// Settings that each pass their range but not together, refused at start with the fix.
#[test]
fn settings_that_cannot_work_together_are_refused() {
    // A wait shorter than a job's limit: every such job was refused as unable to finish.
    let c = from_toml("[queue]\nplaytest_seconds = 120\nwait_seconds = 60\n").unwrap();
    let e = c.validate(&Origin::Value).unwrap_err();
    assert_eq!(e.setting, "queue.wait_seconds");
    assert!(e.message.contains("at least 121"), "{e}");
    let c = from_toml("[queue]\nplaytest_seconds = 59\nwait_seconds = 60\n").unwrap();
    assert!(c.validate(&Origin::Value).is_ok());
    // Replica acknowledgements from the private redis-server, which has no replicas.
    let c = from_toml("[redis]\nmin_replica_acks = 1\n").unwrap();
    let e = c.validate(&Origin::Value).unwrap_err();
    assert_eq!(e.setting, "redis.min_replica_acks");
    let c = from_toml("[redis]\nmin_replica_acks = 1\nurl = \"redis://10.0.0.5:6379\"\n").unwrap();
    assert!(c.validate(&Origin::Value).is_ok());
    // The worker's /metrics on an address the API listens on.
    let c = from_toml(
        "[server]\nmetrics_listen = \"127.0.0.1:9100\"\n[worker]\nmetrics_listen = \"127.0.0.1:9100\"\n",
    )
    .unwrap();
    let e = c.validate(&Origin::Value).unwrap_err();
    assert_eq!(e.setting, "worker.metrics_listen");
    let c = from_toml("[worker]\nmetrics_listen = \"127.0.0.1:9101\"\n").unwrap();
    assert!(c.validate(&Origin::Value).is_ok());
}

/// A job record that expires before its idempotency key would let a retry with the key run
/// and be charged again: refused at load, naming the setting to raise.
#[test]
fn job_records_must_outlive_their_idempotency_keys() {
    let e = Config::default()
        .with_env(&env(&[
            ("HORST_QUEUE_JOB_RETENTION_HOURS", "24"),
            ("HORST_QUEUE_IDEMPOTENCY_RETENTION_HOURS", "48"),
        ]))
        .unwrap_err();
    assert_eq!(e.setting, "queue.job_retention_hours");
    assert!(
        e.message
            .contains("Raise queue.job_retention_hours to at least 48"),
        "{e}"
    );
    let c = Config::default()
        .with_env(&env(&[
            ("HORST_QUEUE_JOB_RETENTION_HOURS", "48"),
            ("HORST_QUEUE_IDEMPOTENCY_RETENTION_HOURS", "48"),
        ]))
        .unwrap();
    assert_eq!(c.queue.job_retention_hours, 48);
}

/// An unknown `HORST_*` variable names the one meant when it is a typo away, and lists its
/// section's variables rather than all hundred-odd (the one meant had to be found in that).
#[test]
fn an_unknown_variable_names_the_nearest_and_its_section() {
    let e = Config::default()
        .with_env(&env(&[("HORST_QUEUE_WAITSECONDS", "5")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean HORST_QUEUE_WAIT_SECONDS?"), "{e}");
    assert!(e.contains("HORST_QUEUE_LEASE_SECONDS"), "{e}");
    assert!(
        !e.contains("HORST_WORKER_SLOTS"),
        "the other sections too: {e}"
    );
    let e = Config::default()
        .with_env(&env(&[("HORST_WORKR_SLOTS", "2")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean HORST_WORKER_SLOTS?"), "{e}");
    // Nothing near and no such section: every variable, as before.
    let e = Config::default()
        .with_env(&env(&[("HORST_NOTHING", "1")]))
        .unwrap_err()
        .to_string();
    assert!(!e.contains("did you mean"), "{e}");
    assert!(
        e.contains("HORST_WORKER_SLOTS") && e.contains("HORST_QUEUE_WAIT_SECONDS"),
        "{e}"
    );
}

/// A rule between two settings broken by an override names where each value came from: the
/// setting it fails on, and the variable that made it fail. It named the alphabetically first
/// `HORST_*` variable of the environment, whatever that set (`HORST_DATA_DIR` for a wait
/// made too short by `HORST_QUEUE_PLAYTEST_SECONDS`).
#[test]
fn a_rule_broken_by_an_override_names_the_variable_that_broke_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(&file, "[queue]\nwait_seconds = 30\n").unwrap();
    let e = Config::load(
        Some(&file),
        &env(&[
            ("HORST_DATA_DIR", "/srv/horst"),
            ("HORST_QUEUE_PLAYTEST_SECONDS", "40"),
        ]),
        &Flags::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert_eq!(e.setting, "queue.wait_seconds", "{text}");
    assert!(!text.contains("HORST_DATA_DIR"), "{text}");
    assert!(text.contains("HORST_QUEUE_PLAYTEST_SECONDS"), "{text}");
    // wait_seconds itself came from the file.
    assert_eq!(e.origin, Origin::File(file.clone()), "{text}");

    // A setting left at its default is said to be the default, not the first variable's.
    let e = Config::load(
        None,
        &env(&[
            ("HORST_DATA_DIR", "/srv/horst"),
            ("HORST_QUEUE_PLAYTEST_SECONDS", "90"),
        ]),
        &Flags::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert_eq!(e.setting, "queue.wait_seconds", "{text}");
    assert!(!text.contains("HORST_DATA_DIR"), "{text}");
    assert!(text.contains("HORST_QUEUE_PLAYTEST_SECONDS"), "{text}");
}

/// The flags are checked against the rules between settings too: `--listen` on the worker's
/// metrics address was taken, and the worker could then never bind it (started again for
/// ever), the case the rule was written for.
#[test]
fn a_flag_that_breaks_a_rule_between_settings_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(&file, "[worker]\nmetrics_listen = \"127.0.0.1:9101\"\n").unwrap();
    let flags = Flags {
        listen: Some("127.0.0.1:9101".into()),
        ..Flags::default()
    };
    let e = Config::load(Some(&file), &env(&[]), &flags).unwrap_err();
    let text = e.to_string();
    assert_eq!(e.setting, "worker.metrics_listen", "{text}");
    assert!(text.contains("--listen"), "{text}");
    // Replica acknowledgements with --data and no Redis URL: the private server has none.
    let flags = Flags {
        data: Some("/tmp/x".into()),
        ..Flags::default()
    };
    let c = Config::load(
        None,
        &env(&[
            ("HORST_REDIS_URL", "redis://10.0.0.5:6379"),
            ("HORST_REDIS_MIN_REPLICA_ACKS", "1"),
        ]),
        &flags,
    )
    .unwrap();
    assert_eq!(c.redis.min_replica_acks, 1);
}

/// A file's Redis URL beside sentinels from the environment: the message says the URL is the
/// file's and how the environment clears it, and clearing it works.
#[test]
fn an_override_that_conflicts_with_the_file_says_how_to_clear_the_file_s_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(&file, "[redis]\nurl = \"redis://h:1\"\n").unwrap();
    let e = Config::load(
        Some(&file),
        &env(&[("HORST_REDIS_SENTINELS", "10.0.0.5:26379")]),
        &Flags::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert_eq!(e.setting, "redis.sentinels", "{text}");
    assert!(
        text.contains(&format!("redis.url is in {}", file.display())),
        "{text}"
    );
    assert!(text.contains("HORST_REDIS_URL="), "{text}");
    let c = Config::load(
        Some(&file),
        &env(&[
            ("HORST_REDIS_SENTINELS", "10.0.0.5:26379"),
            ("HORST_REDIS_URL", ""),
        ]),
        &Flags::default(),
    )
    .unwrap();
    assert_eq!(c.redis.sentinels, ["10.0.0.5:26379"]);
    assert!(c.redis.url.is_empty());
}

/// The rules between settings are checked on the configuration in force, not on the file
/// alone: a file that names replica acknowledgements while the environment names the Redis
/// (as containers are given it) was refused as "horst runs its private redis-server".
#[test]
fn a_file_completed_by_the_environment_is_checked_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    std::fs::write(
        &file,
        "[redis]\nmin_replica_acks = 1\n[server]\nheader_read_timeout_seconds = 10\nidle_timeout_seconds = 20\n",
    )
    .unwrap();
    let c = Config::load(
        Some(&file),
        &env(&[
            ("HORST_REDIS_URL", "redis://10.0.0.5:6379"),
            ("HORST_SERVER_HEADER_READ_TIMEOUT_SECONDS", "30"),
        ]),
        &Flags::default(),
    )
    .unwrap();
    assert_eq!(c.redis.min_replica_acks, 1);
    assert_eq!(c.server.idle_timeout_seconds, 20);
    // Without the variables the same file is refused, naming the file.
    let e = Config::load(Some(&file), &env(&[]), &Flags::default()).unwrap_err();
    assert_eq!(e.origin, Origin::File(file.clone()), "{e}");
}

/// A tier's table may give one limit: the others keep that tier's defaults (the table was
/// refused whole before: "missing field `submissions`"), and a misspelt limit is still named.
#[test]
fn a_tier_table_takes_single_limits() {
    let c =
        from_toml("[quotas.trust0]\nplaytests = 10\n\n[quotas.trust2]\nsimulations = 7\n").unwrap();
    let d = QuotaConfig::default();
    assert_eq!(c.quotas.trust0.playtests, 10);
    assert_eq!(c.quotas.trust0.submissions, d.trust0.submissions);
    assert_eq!(c.quotas.trust0.simulations, d.trust0.simulations);
    assert_eq!(c.quotas.trust0.labor_candidates, d.trust0.labor_candidates);
    assert_eq!(c.quotas.trust1, d.trust1);
    assert_eq!(c.quotas.trust2.simulations, 7);
    assert_eq!(c.quotas.trust2.playtests, d.trust2.playtests);
    assert_eq!(c.quotas.storage_total_bytes, d.storage_total_bytes);
    let e = from_toml("[quotas.trust0]\nplaytest = 10\n").unwrap_err();
    assert!(e.message.contains("playtest"), "{e}");
    let e = from_toml("[quotas.trust1]\nplaytests = -1\n").unwrap_err();
    assert!(!e.message.contains("u32"), "{e}");
    // The whole file as ops/horst.toml writes it reads as before.
    let whole = toml::to_string(&Config::default()).unwrap();
    assert_eq!(from_toml(&whole).unwrap().quotas, d);
}
