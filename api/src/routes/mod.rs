//! One router per resource; `crate::router` merges them.

pub mod account;
pub mod admin;
pub mod admin_jobs;
pub mod admin_page;
pub mod agent_keys;
pub mod arena;
pub mod game;
pub mod guide;
pub mod health;
pub mod mcp;
pub mod public_board;
pub mod rcadia_agent;
pub mod rcadia_auth;
pub mod rcadia_bridge;
pub mod web_files;
