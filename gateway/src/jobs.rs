//! The job tools (`playtest_map`, `simulate_replay`, `submit_level`, `get_submission`): input
//! limits first, then the queue.

use serde_json::Value;

use crate::args::Args;
use crate::{Account, Gateway, ToolError};

impl Gateway {
    pub(crate) async fn remaining(&self, _caller: &Account) -> Option<Value> {
        None
    }

    pub(crate) async fn run_job_tool(
        &self,
        name: &str,
        arguments: Option<&Value>,
        _caller: &Account,
    ) -> Result<Value, ToolError> {
        match name {
            "playtest_map" => {
                let a = Args::new(arguments, &["map", "seed", "idempotencyKey"])?;
                a.map()?;
                a.int("seed", 0, u32::MAX as i64)?;
                a.required_id("idempotencyKey")?;
            }
            "simulate_replay" => {
                let a = Args::new(arguments, &["map", "replay", "idempotencyKey"])?;
                a.map()?;
                a.replay()?;
                a.required_id("idempotencyKey")?;
            }
            "submit_level" => {
                let a = Args::new(
                    arguments,
                    &[
                        "name",
                        "parentRevisionId",
                        "map",
                        "replay",
                        "idempotencyKey",
                    ],
                )?;
                a.name("name")?;
                a.id("parentRevisionId")?;
                a.map()?;
                a.replay()?;
                a.required_id("idempotencyKey")?;
            }
            _ => {
                let a = Args::new(arguments, &["jobId"])?;
                a.required_id("jobId")?;
            }
        }
        Err(ToolError::new(
            "engine_unavailable",
            "no evaluator is available yet; nothing is published unchecked",
        ))
    }
}
