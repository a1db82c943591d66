//! horst's integration tests: one test binary (fast to link), one module per area.
//!
//! Every test gets its own real redis-server on a free port (`horst_testkit::RedisServer`)
//! and talks to a real HTTP server on a random port, either in-process (`spawn_app`) or as
//! the `horst` binary (`HorstProcess`) when the process lifecycle itself is under test.

mod harness;

mod a11y;
mod accounts;
mod accounts_e2e;
mod admin_pages;
mod agent_keys;
mod agents_doc;
mod arena;
mod arena_pages;
mod arena_replay;
mod audit_actions;
mod board;
mod board_ops;
mod bridge_e2e;
mod browser;
mod burst;
mod cluster;
mod config_errors;
mod connections;
mod desktop_pages;
mod failover;
mod feasibility;
pub mod game_api;
mod game_e2e;
mod health;
pub mod house_e2e;
mod job_control;
mod jobs;
mod key_prefix;
mod lifecycle;
mod map_cli;
mod mcp_app;
mod mcp_clients;
mod mcp_conformance;
mod mcp_guidance;
mod mcp_loop;
mod mcp_tools;
mod mcp_transport;
mod metrics_table;
mod names;
mod newcomer_docs;
mod ops_manifests;
pub mod phone_pages;
pub mod play_cli;
mod queue_cost;
mod rcadia_audit2;
mod rcadia_auth;
mod rcadia_cache_faults;
mod rcadia_clocks;
mod rcadia_common;
mod rcadia_conformance;
mod rcadia_cost;
mod rcadia_game;
mod rcadia_memory;
mod rcadia_metrics;
mod rcadia_multi;
mod rcadia_pages;
mod rcadia_series;
mod rcadia_skill;
mod rcadia_stall;
mod rcadia_upgrade;
mod redis_full;
mod reliability;
mod security;
mod shutdown;
mod stall;
mod tidy;
mod unity_sdk;
mod up_worker;
pub mod wasm_engine;
mod web_js;
mod worker_process;
