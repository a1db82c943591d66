//! The deployment examples agree with horst: `ops/k8s/horst-worker.yaml` parses, has what
//! Kubernetes and KEDA require of a Deployment and a ScaledObject, sets only settings horst
//! accepts, gives the worker the memory its settings need (as `ops/systemd`'s `MemoryMax=`
//! does), and scales on a metric horst exports. Not a schema check against the Kubernetes
//! and KEDA schemas (none installs from the package registries; docs/operators.md says so).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use std::time::Duration;

use crate::harness::{eventually, spawn_app};

fn ops_file(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ops").join(path))
        .unwrap_or_else(|e| panic!("ops/{path}: {e}"))
}

/// Every document of a YAML stream, as JSON values.
fn documents(yaml: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(yaml)
        .map(|doc| Value::deserialize(doc).expect("valid YAML"))
        .collect()
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} missing or not text in {v}"))
}

/// Kubernetes quantities as MiB ("640Mi", "1Gi", "671088640").
fn mebibytes(q: &str) -> u64 {
    let (n, unit) = q.split_at(q.find(|c: char| !c.is_ascii_digit()).unwrap_or(q.len()));
    let n: u64 = n.parse().unwrap_or_else(|_| panic!("quantity {q}"));
    match unit {
        "Mi" => n,
        "Gi" => n * 1024,
        "" => n / (1024 * 1024),
        other => panic!("unit {other} of {q} not expected here"),
    }
}

#[tokio::test]
async fn the_kubernetes_example_agrees_with_horst() {
    let docs = documents(&ops_file("k8s/horst-worker.yaml"));
    let by_kind: BTreeMap<&str, &Value> = docs.iter().map(|d| (text(d, "/kind"), d)).collect();
    assert_eq!(by_kind.len(), 2, "a Deployment and a ScaledObject");

    let deployment = by_kind["Deployment"];
    assert_eq!(text(deployment, "/apiVersion"), "apps/v1");
    let name = text(deployment, "/metadata/name");
    // The selector must select the pods' own labels, or the API server refuses it.
    let selector = deployment.pointer("/spec/selector/matchLabels").unwrap();
    let labels = deployment
        .pointer("/spec/template/metadata/labels")
        .unwrap();
    for (k, v) in selector.as_object().unwrap() {
        assert_eq!(
            labels.get(k),
            Some(v),
            "selector {k} does not match the pods"
        );
    }
    let containers = deployment
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .unwrap();
    assert_eq!(containers.len(), 1);
    let worker = &containers[0];
    text(worker, "/name");
    text(worker, "/image");
    let args: Vec<&str> = worker["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[0], "worker", "runs `horst worker`");

    // Its settings are horst's own and valid: load them as horst would.
    let mut env = BTreeMap::new();
    for var in worker["env"].as_array().unwrap() {
        let name = text(var, "/name");
        assert!(name.starts_with("HORST_"), "{name}");
        let value = match var.get("value") {
            Some(v) => v.as_str().unwrap().to_string(),
            // A secret's value (the Redis URL): any valid one will do here.
            None if name == "HORST_REDIS_URL" => "redis://redis.example:6379".into(),
            None => panic!("{name} has neither a value nor a known secret"),
        };
        env.insert(name.to_string(), value);
    }
    // An unknown HORST_ variable or a value out of range is refused here, as at start.
    let config = horst_config::Config::load(None, &env, &horst_config::Flags::default())
        .unwrap_or_else(|e| panic!("the example's settings are refused: {e}"));

    // Memory: what the worker's settings need, as the systemd unit gives it.
    let limit = mebibytes(text(worker, "/resources/limits/memory"));
    let request = mebibytes(text(worker, "/resources/requests/memory"));
    let needed = config.worker.process_memory_mib();
    assert_eq!(
        limit, needed,
        "limits.memory is base + slots x job_memory_mib = {needed} MiB"
    );
    assert!(request <= limit);
    let unit = ops_file("systemd/horst-worker@.service");
    let memory_max = unit
        .lines()
        .find_map(|l| l.strip_prefix("MemoryMax="))
        .expect("MemoryMax= in the worker unit");
    let defaults = horst_config::Config::default();
    assert_eq!(
        memory_max.trim_end_matches('M').parse::<u64>().unwrap(),
        defaults.worker.process_memory_mib(),
        "MemoryMax= of the worker unit is base + slots x job_memory_mib of the defaults"
    );

    // A stop gives the worker what it may take: the HTTP grace and the drain, and a margin.
    let stop_takes = config.server.shutdown_grace_seconds + config.queue.drain_seconds();
    let grace_period = deployment
        .pointer("/spec/template/spec/terminationGracePeriodSeconds")
        .and_then(Value::as_u64)
        .expect("terminationGracePeriodSeconds");
    assert!(
        grace_period > stop_takes,
        "terminationGracePeriodSeconds {grace_period} <= grace + drain = {stop_takes}"
    );
    let timeout_stop: u64 = unit
        .lines()
        .find_map(|l| l.strip_prefix("TimeoutStopSec="))
        .and_then(|v| v.parse().ok())
        .expect("TimeoutStopSec= in the worker unit");
    let default_takes = defaults.server.shutdown_grace_seconds + defaults.queue.drain_seconds();
    assert!(
        timeout_stop > default_takes,
        "TimeoutStopSec={timeout_stop} <= grace + drain = {default_takes} of the defaults"
    );

    // Probes and the metrics port are the worker's metrics listener.
    let listen = &config.worker.metrics_listen;
    let port: u64 = listen.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(worker["ports"][0]["containerPort"], port);
    for probe in ["readinessProbe", "livenessProbe"] {
        let path = text(worker, &format!("/{probe}/httpGet/path"));
        assert!(["/readyz", "/healthz"].contains(&path), "{probe}: {path}");
    }

    // KEDA scales this Deployment on a gauge horst exports.
    let scaled = by_kind["ScaledObject"];
    assert!(text(scaled, "/apiVersion").starts_with("keda.sh/"));
    assert_eq!(text(scaled, "/spec/scaleTargetRef/name"), name);
    let min = scaled["spec"]["minReplicaCount"].as_u64().unwrap();
    let max = scaled["spec"]["maxReplicaCount"].as_u64().unwrap();
    assert!(min >= 1 && min <= max);
    let trigger = &scaled["spec"]["triggers"][0];
    assert_eq!(text(trigger, "/type"), "prometheus");
    let query = text(trigger, "/metadata/query");
    let metric = query
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| w.starts_with("horst_"))
        .expect("a horst metric in the query");
    let selector = query
        .split_once('{')
        .map(|(_, rest)| rest.trim_end_matches(')').trim_end_matches('}'))
        .unwrap_or_default();
    let sample = format!("{metric}{{{selector}}}");
    let app = spawn_app().await;
    // The gauges are sampled every few seconds from the start.
    let exported = eventually(Duration::from_secs(30), async || {
        let text = app
            .http
            .get(app.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.contains(&format!("# TYPE {metric} gauge")) && text.contains(&sample)
    })
    .await;
    assert!(exported, "no gauge sample {sample} on /metrics");
}
