//! The operator's actions: what `horst admin ...`, the REST admin API (`/api/admin/...`) and
//! the `/admin` page all call, so each action is one change plus its audit entry, whichever
//! way it arrives. The records they change belong to their crates (revisions, the board and
//! the switches to `horst-gateway`, people and credentials to `horst-identity`, quotas and
//! jobs to `horst-queue`); this crate decides nothing about them, it acts and audits.
//!
//! Errors are `horst_gateway::ToolError`s: one error type with stable codes (`conflict` is
//! HTTP 409 for the admin API).
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod audit;
pub mod board;
pub mod jobs;
pub mod levels;
pub mod overview;
pub mod people;
pub mod ratings;
pub mod seeds;
pub mod switches;
pub mod tables;

pub use audit::{
    audit, audit_log, audit_page, record_sign_in, sign_ins, Action, AuditEntry, Detail,
    SignInOutcome,
};
pub use board::{hide_post, mark_read, publish_thread, reply, thread_status};
pub use levels::{
    promote, publish_builtin, publish_shipped, quarantine, recheck_and_wait, recheck_limit,
    revisions, rollback, start_recheck, wait_recheck, Promotion, RecheckDone, RevisionFilter,
    RevisionPage, RevisionRow, Rollback, RollbackExpect,
};
pub use overview::{overview, Overview};
pub use people::{
    block_account, create_account, create_admin_token, create_key, create_token, create_user,
    delete_user, retire_admin_token, revoke_key, revoke_token, seed_admin_token, set_blocked,
    set_operator_role, set_token_burst, set_trust, set_user_password, PasswordSet,
};
pub use switches::{
    announce, gateway_mode_name, reload_quotas, set_gateway_mode, set_self_service, set_sign_up,
    show_quotas, switches, ProcessSwitches, QuotasShown, Switches,
};
pub use tables::{end_table, EndedTable};
