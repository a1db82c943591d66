//! One router per resource; `crate::router` merges them.

pub mod health;
