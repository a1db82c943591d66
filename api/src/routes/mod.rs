//! One router per resource; `crate::router` merges them.

pub mod health;
pub mod rcadia_agent;
pub mod rcadia_auth;
pub mod rcadia_bridge;
pub mod web_files;
