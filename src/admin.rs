//! `horst admin ...`: operator actions. They reach the same store as the running horst (its
//! private Redis under --data, or --redis).

use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use horst_config::{Config, GatewayMode};

use horst::App;
use horst_operator as operator;

use crate::redis_setup;

/// `eprintln!` for the operator's commands (below): their notes on stderr ("N in all", "check passed")
/// often share the pipe (`2>&1 | head -1`), and a reader that closed it ends them quietly.
/// `eprintln!` panicked there (exit 101, `horst admin level recheck ... 2>&1 | head -1`)
/// after the command had done its work, or before it said why it could not.
macro_rules! note {
    ($($arg:tt)*) => {
        print_note(&format!($($arg)*))
    };
}

fn print_note(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `println!` for the operator's commands, whose output is piped (`| head`, `| jq`): a reader
/// that closed the pipe early ends the output quietly. `println!` panicked there ("failed
/// printing to stdout: Broken pipe", with a backtrace, exit 101) after the command had done
/// its work. Any other error writing stdout is said on stderr.
macro_rules! out {
    ($($arg:tt)*) => {
        print_out(&format!($($arg)*))
    };
}

fn print_out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            note!("horst: cannot write the output: {e}");
        }
    }
}

/// Who the audit trail names for a CLI action: `HORST_OPERATOR`, else the login name.
fn who() -> String {
    std::env::var("HORST_OPERATOR")
        .or_else(|_| std::env::var("USER"))
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "operator".into())
}

/// Names and ids on the command line are checked before anything is looked up, as the REST
/// admin API checks its paths (`api/src/routes/admin.rs`): a name no record can have
/// (`anna:keys`) would otherwise name another record's key and end in an internal error.
fn account_arg(s: &str) -> Result<String, String> {
    if horst_identity::accounts::valid_account_name(s) {
        return Ok(s.to_owned());
    }
    Err("no account can have this name: names are 2-32 lowercase letters, digits, _ or -; `horst admin account list` lists them".into())
}

/// A level's name (as [`account_arg`]).
fn level_arg(s: &str) -> Result<String, String> {
    if horst_gateway::args::valid_name(s) {
        return Ok(s.to_owned());
    }
    Err("no level can have this name: names are letters, digits and -; `horst admin level list` lists them".into())
}

/// An id: a revision, job, thread, post, message, key prefix, agent or admin token (as
/// [`account_arg`]).
fn id_arg(s: &str) -> Result<String, String> {
    if horst_gateway::args::valid_id(s) {
        return Ok(s.to_owned());
    }
    Err("nothing has this id: ids are 1-64 ASCII letters, digits, dots, underscores or hyphens; the `list` subcommands print them".into())
}

/// A listing's page size, `--limit`: 1 to `MAX`, the most the REST admin API's twin of the
/// listing takes. Out of range it is refused with the range: 0 printed an empty page whose
/// "next page: --offset 0" (or `nextOffset` 0) never moved on, and no listing said so.
fn page_size<const MAX: usize>(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "the page size is a whole number from 1 to {MAX}; page on with --offset (each page names the next)"
        )),
    }
}

/// A gateway failure as `code: message` for the terminal.
struct Failure(horst_gateway::ToolError);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

fn lines(values: &[serde_json::Value]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn level(app: &App, cmd: LevelCommand) -> ExitCode {
    let store = app.store();
    report(
        match cmd {
            LevelCommand::Recheck { revision, no_wait } => {
                return recheck(app, &revision, no_wait).await
            }
            LevelCommand::List {
                name,
                state,
                offset,
                limit,
            } => operator::revisions(
                store,
                &operator::RevisionFilter { name, state },
                offset,
                limit,
            )
            .await
            .and_then(|v| {
                serde_json::to_string_pretty(&v).map_err(horst_gateway::ToolError::internal)
            }),
            LevelCommand::Checks { revision } => horst_gateway::checks::checks(store, &revision)
                .await
                .and_then(|v| {
                    serde_json::to_string_pretty(&v).map_err(horst_gateway::ToolError::internal)
                }),
            LevelCommand::Promote { revision, expect } => {
                let expect = (expect != "none").then_some(expect.as_str());
                operator::promote(store, &who(), &revision, expect)
                    .await
                    .map(|v| format!("promoted: {v}"))
            }
            LevelCommand::Rollback { level, expect, to } => {
                let expect = operator::RollbackExpect { from: expect, to };
                operator::rollback(store, &who(), &level, &expect)
                    .await
                    .map(|v| format!("rolled back: {v}"))
            }
            LevelCommand::Quarantine { revision } => operator::quarantine(store, &who(), &revision)
                .await
                .map(|_| format!("revision {revision} quarantined")),
        }
        .map_err(Failure),
    )
}

async fn job(app: &App, cmd: JobCommand) -> ExitCode {
    use horst_operator::jobs as job_control;
    let (store, queue) = (app.store(), app.queue());
    report(
        match cmd {
            JobCommand::List {
                state,
                kind,
                account,
                offset,
                limit,
                json,
            } => {
                let filter = job_control::JobFilter {
                    state,
                    kind,
                    account,
                };
                match job_control::list_jobs(queue, &filter, offset, limit).await {
                    Ok(page) => queue.now_ms().await.map_err(Into::into).map(|now| {
                        if let Some(next) = page.next_offset {
                            note!("horst: more jobs; next page: --offset {next}");
                        }
                        if json {
                            json_lines(&page.items)
                        } else {
                            if page.items.is_empty() {
                                note!("horst: no jobs match");
                            }
                            crate::job_text::table(&page.items, now)
                        }
                    }),
                    Err(e) => Err(e),
                }
            }
            JobCommand::Show { id, json } => match job_control::show_job(queue, &id).await {
                Ok(row) if json => serde_json::to_string_pretty(&row)
                    .map_err(horst_gateway::ToolError::internal),
                Ok(row) => queue
                    .now_ms()
                    .await
                    .map_err(Into::into)
                    .map(|now| crate::job_text::show(&row, now)),
                Err(e) => Err(e),
            },
            JobCommand::Cancel {
                account: Some(account),
                reason,
                ..
            } => job_control::cancel_account_jobs(store, queue, &who(), &account, &reason)
                .await
                .map(|ids| {
                    note!(
                        "horst: {} job(s) of {} cancelled (queued ones dropped uncharged, running ones stopped and charged); their callers are told",
                        ids.len(),
                        account.trim()
                    );
                    ids.join("\n")
                }),
            JobCommand::Cancel { id, reason, .. } => {
                let id = id.unwrap_or_default();
                job_control::cancel_job(store, queue, &who(), &id, &reason)
                    .await
                    .map(|outcome| match outcome {
                        horst_queue::CancelOutcome::Dropped => format!("job {id} cancelled: it had not started; dropped, nothing charged; its caller is told"),
                        horst_queue::CancelOutcome::Stopped => format!("job {id} cancelled: it was running; its worker stops it within 100 ms; it stays charged; its caller is told"),
                        other => format!("job {id}: {other:?}"),
                    })
            }
        }
        .map_err(Failure),
    )
}

/// `horst admin queue`: the lanes, the running jobs, the live workers' slots and today's
/// figures.
async fn queue_view(app: &App) -> Result<String, horst_gateway::ToolError> {
    let view = horst_operator::jobs::queue_view(app.queue()).await?;
    serde_json::to_string_pretty(&view).map_err(horst_gateway::ToolError::internal)
}

/// How often `level recheck` says the state of the job it waits for.
const RECHECK_PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Queues a recheck and (unless `no_wait`) waits for its job (`horst_operator::wait_recheck`,
/// the same wait as the REST API's), printing the recorded check on stdout. A failing check
/// exits 1.
async fn recheck(app: &App, revision: &str, no_wait: bool) -> ExitCode {
    let (store, config, queue) = (app.store(), app.config(), app.queue());
    let job = match operator::start_recheck(store, queue, &who(), revision).await {
        Ok(j) => j,
        Err(e) => return report::<Failure>(Err(Failure(e))),
    };
    note!(
        "horst: recheck of {revision} queued as job {job} (engine {})",
        horst_engine::engine_version()
    );
    if no_wait {
        out!(
            "{}",
            serde_json::json!({ "revisionId": revision, "jobId": job, "state": "queued" })
        );
        note!("horst: the check is recorded when the job finishes; see `horst admin level checks {revision}`");
        return ExitCode::SUCCESS;
    }
    let started = std::time::Instant::now();
    let limit = operator::recheck_limit(config);
    let wait = operator::wait_recheck(store, queue, revision, &job, limit);
    tokio::pin!(wait);
    // The wait may last the whole limit (75 s by default) when no worker takes the job: every
    // few seconds the job's state is said, so a silent terminal does not read as a hang.
    let mut every = tokio::time::interval_at(
        tokio::time::Instant::now() + RECHECK_PROGRESS_EVERY,
        RECHECK_PROGRESS_EVERY,
    );
    let done = loop {
        tokio::select! {
            done = &mut wait => break done,
            _ = every.tick() => {
                if let Ok(Some(r)) = queue.get(&job).await {
                    note!(
                        "horst:   still {} after {} s (at most {} s)",
                        r.state.as_str(),
                        started.elapsed().as_secs(),
                        limit.as_secs()
                    );
                }
            }
        }
    };
    let done = match done {
        Ok(d) => d,
        Err(e) => return report::<Failure>(Err(Failure(e))),
    };
    note!(
        "horst:   {} after {:.1} s",
        done.state,
        started.elapsed().as_secs_f64()
    );
    if !done.finished() {
        note!(
            "horst: job {job} is still {} after {} s; is a worker running (horst admin status)? The check is recorded when it finishes: horst admin level checks {revision}",
            done.state,
            limit.as_secs()
        );
        return ExitCode::from(1);
    }
    match done.check {
        Some(c) => {
            out!("{c}");
            if c["passed"] == true {
                note!(
                    "horst: check passed on engine {}",
                    c["engineVersion"].as_str().unwrap_or("?")
                );
                ExitCode::SUCCESS
            } else {
                note!(
                    "horst: check_failed: the replay does not win on the current engine (outcome {}); the revision cannot be promoted",
                    c["outcome"].as_str().unwrap_or("unknown")
                );
                ExitCode::from(1)
            }
        }
        None => {
            // A job that failed without starting timed out in the queue: nobody took it.
            let unstarted = done.failure.is_some()
                && matches!(queue.get(&job).await, Ok(Some(r)) if r.started_at_ms.is_none());
            let why = done
                .failure
                .map(|f| format!("{}: {}", f.code, f.message))
                .unwrap_or_else(|| done.state.to_string());
            let hint = if unstarted {
                "; is a worker running with a free slot (horst admin status, horst admin queue)?"
            } else {
                ""
            };
            note!(
                "horst: the recheck gave no verdict ({why}); nothing was recorded{hint}; try again"
            );
            ExitCode::from(1)
        }
    }
}

async fn quotas(store: &horst_store::Store, config: &Config, cmd: QuotasCommand) -> ExitCode {
    // `config` was loaded just now from the file and the environment: that is the reload.
    let values = horst_queue::Quotas::from_config(config);
    let result = match cmd {
        QuotasCommand::Reload => {
            let Some(file) = &config.file else {
                note!("horst: quotas reload needs the configuration file to reload from; run it with --config FILE (or HORST_CONFIG); the quotas in force are unchanged");
                return ExitCode::from(1);
            };
            let r = operator::reload_quotas(store, &who(), &values).await;
            if r.is_ok() {
                note!(
                    "horst: quotas reloaded from {}; every API process applies them within a second",
                    file.display()
                );
            }
            r
        }
        QuotasCommand::Show => operator::show_quotas(store, Some(&values)).await,
    };
    report(
        result
            .and_then(|v| {
                serde_json::to_string_pretty(&v).map_err(horst_gateway::ToolError::internal)
            })
            .map_err(Failure),
    )
}

async fn board(store: &horst_store::Store, cmd: BoardCommand) -> ExitCode {
    report(
        match cmd {
            BoardCommand::Hide { post } => operator::hide_post(store, &who(), &post, true)
                .await
                .map(|_| format!("post {post} hidden")),
            BoardCommand::Unhide { post } => operator::hide_post(store, &who(), &post, false)
                .await
                .map(|_| format!("post {post} visible again")),
            BoardCommand::Status { thread, status } => {
                operator::thread_status(store, &who(), &thread, &status)
                    .await
                    .map(|_| format!("thread {thread}: {status}"))
            }
            BoardCommand::Publish { thread } => {
                operator::publish_thread(store, &who(), &thread, true)
                    .await
                    .map(|_| format!("thread {thread} published (GET /api/board/published)"))
            }
            BoardCommand::Unpublish { thread } => {
                operator::publish_thread(store, &who(), &thread, false)
                    .await
                    .map(|_| format!("thread {thread} no longer published"))
            }
            BoardCommand::Reply { thread, body } => operator::reply(store, &who(), &thread, &body)
                .await
                .map(|v| format!("replied: {v}")),
            BoardCommand::List { limit, offset } => {
                horst_gateway::board::operator_threads(store, offset, limit)
                    .await
                    .map(|v| lines(&v))
            }
            BoardCommand::Show { thread } => horst_gateway::board::operator_thread(store, &thread)
                .await
                .map(|v| v.to_string()),
        }
        .map_err(Failure),
    )
}

async fn messages(store: &horst_store::Store, cmd: MessagesCommand) -> ExitCode {
    report(
        match cmd {
            MessagesCommand::List { all, limit, offset } => {
                horst_gateway::contact::list_messages(store, !all, offset, limit)
                    .await
                    .map(|v| lines(&v))
            }
            MessagesCommand::Read { id } => operator::mark_read(store, &who(), &id)
                .await
                .map(|_| format!("message {id} read")),
        }
        .map_err(Failure),
    )
}

#[derive(Subcommand, Debug)]
pub enum AdminCommand {
    /// Show the Redis in use (version, eviction policy, AOF) and the live workers.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Switch the agent gateway (POST /api/mcp) for every API process: on, off (404) or
    /// read-only (only the anonymous tools).
    Gateway {
        /// on, off or read-only.
        #[arg(value_enum)]
        mode: GatewaySwitch,
    },
    /// Switch self-service agent keys (POST /api/agent-keys) on or off.
    SelfService {
        /// on or off.
        #[arg(value_enum)]
        state: OnOff,
    },
    /// Open or close sign-up on /account (closed: the operator creates accounts with
    /// `user create`).
    SignUp {
        /// open or closed.
        #[arg(value_enum)]
        state: OpenClosed,
    },
    /// Show the run-time switches (gateway, self-service, sign-up) as JSON: what every
    /// running API process uses (`processes`), and which they disagree on (`mixed`).
    Switches,
    /// The sign-in trail (password and admin-token checks on /account, /admin and the
    /// RCADIA sign-in, with the client's address), newest first, as JSON lines.
    SignIns {
        /// Page size, 1-10000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<10000>)]
        limit: usize,
        /// Where the page starts (0 first).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Only the sign-ins of this name (or admin token id), any case.
        #[arg(long)]
        name: Option<String>,
        /// Only what did not let someone in (failures, blocked accounts).
        #[arg(long)]
        failed: bool,
    },
    /// Accounts of the agent gateway.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Agent keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Labor revisions: promote, roll back, quarantine, re-check.
    #[command(subcommand)]
    Level(LevelCommand),
    /// Board moderation: hide posts, set a thread's status, reply as the operator, publish.
    #[command(subcommand)]
    Board(BoardCommand),
    /// Messages agents sent with contact_admin.
    #[command(subcommand)]
    Messages(MessagesCommand),
    /// Quota settings: reload them from the configuration without a restart, or show them.
    #[command(subcommand)]
    Quotas(QuotasCommand),
    /// The admin page's overview as JSON: accounts by tier, board reads, unread messages,
    /// page views, today's jobs and seconds, the queue, live workers and storage used.
    Overview,
    /// The audit trail of operator actions (who, what, when), newest first, as JSON lines.
    Audit {
        /// Page size, 1-10000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<10000>)]
        limit: usize,
        /// Where the page starts: 0, or what the last page printed (next page on stderr).
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Agent tokens for the RCADIA agent protocol.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Evaluation jobs: list them (by state, kind, account), show one, cancel one.
    #[command(subcommand)]
    Job(JobCommand),
    /// The queue at a glance as JSON: each lane's waiting jobs and oldest wait, the running
    /// jobs, today's jobs by kind and outcome, and the seconds used.
    Queue,
    /// People who sign in with a password: on /account (game accounts with agent keys),
    /// /admin (with the operator role) and POST /api/v1/auth/session (RCADIA).
    #[command(subcommand)]
    User(UserCommand),
    /// Admin tokens (REST admin API, /admin sign-in), with rotation: create the successor,
    /// move clients to it, retire the old one.
    #[command(subcommand)]
    AdminToken(AdminTokenCommand),
    /// RCADIA ratings per game: reset an agent (tests, a fresh start) or exclude it
    /// (cheaters); both audited.
    #[command(subcommand)]
    Rating(RatingCommand),
}

#[derive(Subcommand, Debug)]
pub enum RatingCommand {
    /// The agent starts again in this game: rating, history and exclusion gone.
    Reset {
        /// The agent id (agt_...), as the leaderboard lists it.
        #[arg(value_parser = id_arg)]
        agent: String,
        /// The game's id, as the leaderboard names it (chess, ...).
        #[arg(long)]
        game: String,
    },
    /// Takes the agent off the game's leaderboard; its games there are no longer rated
    /// (until a reset).
    Exclude {
        /// The agent id (agt_...), as the leaderboard lists it.
        #[arg(value_parser = id_arg)]
        agent: String,
        /// The game's id, as the leaderboard names it (chess, ...).
        #[arg(long)]
        game: String,
    },
}

async fn rating(app: &App, cmd: RatingCommand) -> ExitCode {
    let rcadia = app.rcadia();
    report(match cmd {
        RatingCommand::Reset { agent, game } => {
            operator::ratings::reset_rating(rcadia, &who(), &game, &agent)
                .await
                .map(|had| {
                    if had {
                        format!("{agent} starts again in {game} (rating, history and exclusion reset)")
                    } else {
                        format!("{agent} had no rating in {game}; nothing to reset (audited all the same)")
                    }
                })
                .map_err(Failure)
        }
        RatingCommand::Exclude { agent, game } => {
            operator::ratings::exclude_rating(rcadia, &who(), &game, &agent)
                .await
                .map(|_| format!("{agent} is off the {game} leaderboard; its games there are no longer rated (undo: horst admin rating reset {agent} --game {game})"))
                .map_err(Failure)
        }
    })
}

#[derive(Subcommand, Debug)]
pub enum JobCommand {
    /// Jobs as a table, newest first (times in UTC, waits and run times in words): with
    /// --account that account's recent jobs; without it, with --state failed or cancelled
    /// those of every account (newest end first), else the ones waiting and running now.
    List {
        /// queued, running, succeeded, failed or cancelled.
        #[arg(long)]
        state: Option<String>,
        /// playtest, simulate, submit or recheck.
        #[arg(long)]
        kind: Option<String>,
        /// Only this account's recent jobs (its name; an agent's is its handle, agent-0123abcd).
        #[arg(long, value_parser = account_arg)]
        account: Option<String>,
        /// Where the page starts: 0, or what the last page printed ("next page: --offset N"
        /// on stderr).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Page size, 1-500.
        #[arg(long, default_value_t = 50, value_parser = page_size::<500>)]
        limit: usize,
        /// Print JSON lines instead (as GET /api/admin/jobs answers: times in Unix ms).
        #[arg(long)]
        json: bool,
    },
    /// One job with its timeline (admitted, started, ended in UTC, with their age; worker;
    /// wait and run time) and progress.
    Show {
        /// The job's id (job_...), as the logs, the job list and the agent's answer name it.
        #[arg(value_parser = id_arg)]
        id: String,
        /// Print JSON instead (as the REST admin API answers: times in Unix ms).
        #[arg(long)]
        json: bool,
    },
    /// Cancel a queued job (dropped, nothing charged) or a running one (stopped within
    /// 100 ms, stays charged). Its caller is told at once, with the reason. Audited.
    /// With --account instead of an id: every job of that account waiting or running now.
    #[command(group(clap::ArgGroup::new("which").required(true).args(["id", "account"])))]
    Cancel {
        /// The job's id (job_...), as `job list` shows it.
        #[arg(value_parser = id_arg)]
        id: Option<String>,
        /// Every job of this account waiting or running now (each audited as job_cancel, the
        /// whole as job_cancel_account).
        #[arg(long)]
        account: Option<String>,
        /// Why; the job's caller reads it.
        #[arg(long)]
        reason: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum AdminTokenCommand {
    /// Create an admin token; it is printed once, on its own line. The others stay active.
    Create {
        /// A note to tell the token apart (shown in `admin-token list`).
        #[arg(long)]
        label: Option<String>,
    },
    /// List admin tokens (ids, labels, who made them, active or retired) as JSON lines.
    List,
    /// Retire the admin token with this id: refused from now on, its /admin sessions end.
    /// The last active one cannot be retired.
    Retire {
        /// The token's id, as `admin-token list` shows it.
        #[arg(value_parser = id_arg)]
        id: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create a new agent identity and print its token once, on its own line.
    Create {
        /// Comma-separated scopes: play (join and play sessions), host (run sessions).
        #[arg(long, value_delimiter = ',', default_value = "play")]
        scopes: Vec<String>,
        /// The agent's name (its default asName when it joins).
        #[arg(long)]
        name: Option<String>,
        /// Mark this identity as the house (needs --scopes host): the tables it hosts show
        /// `host: "house"` in /available. The token for `horst house`.
        #[arg(long)]
        house: bool,
    },
    /// List agent tokens (agent id, name, scopes, created; never the token), newest first,
    /// as JSON lines.
    List {
        /// Where the page starts (0 first).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Page size, 1-1000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<1000>)]
        limit: usize,
    },
    /// Set a burst limit on the token of AGENT (`agt_...`): at most N requests a minute on the
    /// RCADIA routes, across every API process (none by default). `--none` removes it.
    Limit {
        /// The agent id (agt_...) of the token.
        #[arg(value_parser = id_arg)]
        agent: String,
        /// Requests per minute (1 or more).
        #[arg(long, conflicts_with = "none", required_unless_present = "none")]
        per_minute: Option<u32>,
        /// Remove the limit.
        #[arg(long)]
        none: bool,
    },
    /// Revoke the token of AGENT (`agt_...`): every API process refuses it within a second.
    Revoke {
        /// The agent id (agt_...) of the token.
        #[arg(value_parser = id_arg)]
        agent: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a person's account with a password (or give an account made with
    /// `account create` one). On a terminal the password is prompted for twice without
    /// echo; when stdin is not a terminal (a pipe or a file) its first line is the password.
    Create {
        /// The name to sign in with: 2-32 lowercase letters, digits, _ or -.
        username: String,
        /// Read the password from the first line of stdin even on a terminal (scripts that
        /// predate the pipe detection; a pipe is read without it).
        #[arg(long)]
        password_stdin: bool,
        /// Trust tier of a new account: 0 (new), 1 or 2.
        #[arg(long, default_value_t = 0)]
        trust: u8,
    },
    /// Set a new password (read like `create`); every session and JWT of the person ends.
    /// Agent keys stay unless --revoke-keys (the answer counts them).
    Passwd {
        /// The person's name.
        #[arg(value_parser = account_arg)]
        username: String,
        /// Read the password from the first line of stdin even on a terminal.
        #[arg(long)]
        password_stdin: bool,
        /// Revoke every agent key of the person too (after a takeover: the keys are what
        /// the taker may still hold).
        #[arg(long)]
        revoke_keys: bool,
    },
    /// Delete a person's sign-in: password and operator role go, sessions and JWTs end,
    /// agent keys are revoked. The name stays taken (revisions and posts keep their author).
    Delete {
        /// The person's name.
        #[arg(value_parser = account_arg)]
        username: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum LevelCommand {
    /// Promote exactly REVISION (its newest check on the current engine must have passed;
    /// see `level recheck`).
    /// --expect names the revision you believe is promoted now (`none` for no promoted
    /// revision); a stale expectation is refused (conflict).
    Promote {
        /// The revision to promote (rev-...).
        #[arg(value_parser = id_arg)]
        revision: String,
        /// The revision promoted now, as you saw it (`none` if the level has none): a stale one is refused.
        #[arg(long, value_parser = id_arg)]
        expect: String,
    },
    /// Restore the previously promoted revision of LEVEL (a quarantined or withdrawn one is
    /// passed over). --expect and --to name the revision promoted now and the one that
    /// comes back; one that does not match is refused (conflict).
    Rollback {
        /// The level's name.
        #[arg(value_parser = level_arg)]
        level: String,
        /// The revision promoted now, as you saw it: a stale one is refused.
        #[arg(long, value_parser = id_arg)]
        expect: Option<String>,
        /// The revision you expect to come back: another one is refused.
        #[arg(long, value_parser = id_arg)]
        to: Option<String>,
    },
    /// Hide REVISION everywhere (its evidence stays).
    Quarantine {
        /// The revision to hide (rev-...).
        #[arg(value_parser = id_arg)]
        revision: String,
    },
    /// Re-simulate REVISION's stored winning replay on a worker with the current engine and
    /// record the check (older checks are kept). Waits for the job and prints the check.
    Recheck {
        /// The revision to check again (rev-...).
        #[arg(value_parser = id_arg)]
        revision: String,
        /// Only queue the job; the check is recorded when it finishes (`level checks`).
        #[arg(long)]
        no_wait: bool,
    },
    /// Every check of REVISION (the submission's and each recheck), oldest first, as JSON.
    Checks {
        /// The revision (rev-...).
        #[arg(value_parser = id_arg)]
        revision: String,
    },
    /// Every revision (any state), newest first, with its level's promoted revision and its
    /// newest check on the current engine, as JSON.
    List {
        /// Only this level.
        #[arg(long, value_parser = level_arg)]
        name: Option<String>,
        /// Only this state: labor, promoted, retired, withdrawn or quarantined.
        #[arg(long)]
        state: Option<String>,
        /// Where the page starts (0 first).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Page size, 1-1000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<1000>)]
        limit: usize,
    },
}

#[derive(Subcommand, Debug)]
pub enum QuotasCommand {
    /// Store the quota settings of the configuration file (and HORST_* overrides) as read
    /// now; every API process applies them within a second.
    Reload,
    /// Show the quota settings in force, as JSON.
    Show,
}

#[derive(Subcommand, Debug)]
pub enum BoardCommand {
    /// Hide a post from agents (hiding a thread's first post hides the thread).
    Hide {
        /// The post's id.
        #[arg(value_parser = id_arg)]
        post: String,
    },
    /// Show a hidden post again.
    Unhide {
        /// The post's id.
        #[arg(value_parser = id_arg)]
        post: String,
    },
    /// Set a thread's status: open, planned, done or declined.
    Status {
        /// The thread's id.
        #[arg(value_parser = id_arg)]
        thread: String,
        /// open, planned, done or declined.
        status: String,
    },
    /// Reply on a thread as the operator.
    Reply {
        /// The thread's id.
        #[arg(value_parser = id_arg)]
        thread: String,
        /// The reply's text (quote it).
        body: String,
    },
    /// Publish a thread on the public board (GET /api/board/published, no key needed).
    Publish {
        /// The thread's id.
        #[arg(value_parser = id_arg)]
        thread: String,
    },
    /// Take a thread off the public board.
    Unpublish {
        /// The thread's id.
        #[arg(value_parser = id_arg)]
        thread: String,
    },
    /// List threads (withdrawn ones too), newest activity first, as JSON lines.
    List {
        /// Page size, 1-10000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<10000>)]
        limit: usize,
        /// Threads to skip first (the next page starts at offset + limit).
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Show a thread with every post, hidden and withdrawn ones included, as JSON.
    Show {
        /// The thread's id.
        #[arg(value_parser = id_arg)]
        thread: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum MessagesCommand {
    /// List messages, newest first, as JSON lines (unread only unless --all).
    List {
        /// Read messages too, not only unread ones.
        #[arg(long)]
        all: bool,
        /// Page size, 1-10000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<10000>)]
        limit: usize,
        /// Messages to skip first (the next page starts at offset + limit).
        #[arg(long, default_value_t = 0)]
        offset: usize,
    },
    /// Mark a message read (it then no longer counts against its sender's unread cap).
    Read {
        /// The message's id.
        #[arg(value_parser = id_arg)]
        id: String,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GatewaySwitch {
    On,
    Off,
    // Also `read_only`, as `gateway.mode` and the REST switch spell it (a plain comment: a
    // doc comment here would turn the command's help into clap's long form).
    #[value(alias = "read_only")]
    ReadOnly,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OpenClosed {
    Open,
    Closed,
}

#[derive(Subcommand, Debug)]
pub enum AccountCommand {
    /// Create an account (2-32 lowercase letters, digits, _ or -).
    Create {
        /// The account's name: 2-32 lowercase letters, digits, _ or -.
        name: String,
        /// Trust tier: 0 (new), 1 or 2.
        #[arg(long, default_value_t = 0)]
        trust: u8,
    },
    /// Set an account's trust tier (0, 1 or 2).
    Trust {
        /// The account's name.
        #[arg(value_parser = account_arg)]
        name: String,
        /// The new tier: 0 (new), 1 or 2.
        trust: u8,
    },
    /// Block an account: every request with its keys is refused (403).
    Block {
        /// The account's name.
        #[arg(value_parser = account_arg)]
        name: String,
    },
    /// Lift a block.
    Unblock {
        /// The account's name.
        #[arg(value_parser = account_arg)]
        name: String,
    },
    /// Give a person the operator role (they may open /admin) or take it.
    Operator {
        /// The person's account name.
        #[arg(value_parser = account_arg)]
        name: String,
        /// on (give the role) or off (take it).
        #[arg(value_enum)]
        state: OnOff,
    },
    /// List accounts by name, as JSON lines, with the total on stderr.
    List {
        /// Only names (or display names) containing this.
        #[arg(long)]
        q: Option<String>,
        /// Only agent or human accounts.
        #[arg(long)]
        kind: Option<String>,
        /// Only this trust tier: 0, 1 or 2.
        #[arg(long)]
        trust: Option<u8>,
        /// Only blocked (true) or unblocked (false) accounts.
        #[arg(long)]
        blocked: Option<bool>,
        /// Only operators (true) or not (false).
        #[arg(long)]
        operator: Option<bool>,
        /// Where the page starts (0 first).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Page size, 1-1000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<1000>)]
        limit: usize,
    },
}

#[derive(Subcommand, Debug)]
pub enum KeyCommand {
    /// Create a key for ACCOUNT; the key is printed once, on its own line.
    Create {
        /// The account the key acts as.
        #[arg(value_parser = account_arg)]
        account: String,
        /// A note to tell the key apart (shown in `key list`).
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke the key with this prefix (`gcv_` and 8 characters, as listed at creation).
    Revoke {
        /// The key's prefix: gcv_ and 8 characters, as `key list` shows it.
        #[arg(value_parser = id_arg)]
        prefix: String,
    },
    /// List keys (prefix, label, created, last used; never the key), newest first, as JSON
    /// lines, with the total on stderr.
    List {
        /// Only this account's keys.
        #[arg(long, value_parser = account_arg)]
        account: Option<String>,
        /// Include revoked keys.
        #[arg(long)]
        revoked: bool,
        /// Where the page starts (0 first).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Page size, 1-1000.
        #[arg(long, default_value_t = 50, value_parser = page_size::<1000>)]
        limit: usize,
    },
}

pub fn run(config: Config, cmd: AdminCommand) -> ExitCode {
    let redis = match redis_setup::resolve_existing(&config) {
        Ok(r) => r,
        Err(e) => {
            note!("horst: {e}");
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            note!("horst: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = runtime.block_on(async {
        // Background work (the notifier) stops when this sender drops at the end.
        let (_stop, stop_rx) = tokio::sync::watch::channel(false);
        let app = match App::build_for(
            std::sync::Arc::new(config),
            &redis.url,
            stop_rx,
            horst::Roles::OPERATOR,
        )
        .await
        {
            Ok(app) => app,
            Err(e) => {
                note!("horst: {e}");
                return ExitCode::from(1);
            }
        };
        let (store, config) = (app.store().clone(), app.config().clone());
        match cmd {
            AdminCommand::Status { json } => status(&store, json).await,
            AdminCommand::Gateway { mode } => {
                let mode = match mode {
                    GatewaySwitch::On => GatewayMode::On,
                    GatewaySwitch::Off => GatewayMode::Off,
                    GatewaySwitch::ReadOnly => GatewayMode::ReadOnly,
                };
                report(
                    operator::set_gateway_mode(&store, &who(), mode)
                        .await
                        .map(|_| format!("gateway: {}", operator::gateway_mode_name(mode)))
                        .map_err(Failure),
                )
            }
            AdminCommand::SelfService { state } => {
                let on = matches!(state, OnOff::On);
                report(
                    operator::set_self_service(&store, &who(), on)
                        .await
                        .map(|_| format!("self-service keys: {}", if on { "on" } else { "off" }))
                        .map_err(Failure),
                )
            }
            AdminCommand::SignUp { state } => {
                let open = matches!(state, OpenClosed::Open);
                report(
                    operator::set_sign_up(&store, &who(), open)
                        .await
                        .map(|_| format!("sign-up: {}", if open { "open" } else { "closed" }))
                        .map_err(Failure),
                )
            }
            AdminCommand::Switches => report(
                operator::switches(&store, &config)
                    .await
                    .and_then(|s| {
                        if !s.mixed.is_empty() {
                            note!(
                                "horst: the running API processes differ in {} (nothing stored, and their configurations differ); set it to settle it for all",
                                s.mixed.join(", ")
                            );
                        }
                        serde_json::to_string(&s).map_err(horst_gateway::ToolError::internal)
                    })
                    .map_err(Failure),
            ),
            AdminCommand::SignIns {
                limit,
                offset,
                name,
                failed,
            } => {
                // With a filter, the whole kept trail is read and the page taken after it.
                let filtered = name.is_some() || failed;
                let read = if filtered {
                    operator::sign_ins(&store, 0, usize::MAX).await
                } else {
                    operator::sign_ins(&store, offset, limit).await
                };
                report(
                    read.map(|entries| {
                        let shown: Vec<_> = entries
                            .into_iter()
                            .filter(|e| {
                                name.as_deref()
                                    .is_none_or(|n| e.target.eq_ignore_ascii_case(n))
                            })
                            .filter(|e| {
                                !failed || e.action != operator::SignInOutcome::Ok.as_str()
                            })
                            .skip(if filtered { offset } else { 0 })
                            .take(limit)
                            .collect();
                        json_lines(&shown)
                    })
                    .map_err(Failure),
                )
            }
            AdminCommand::Account(cmd) => account(&app, cmd).await,
            AdminCommand::Level(cmd) => level(&app, cmd).await,
            AdminCommand::Quotas(cmd) => quotas(&store, &config, cmd).await,
            AdminCommand::Board(cmd) => board(&store, cmd).await,
            AdminCommand::Messages(cmd) => messages(&store, cmd).await,
            AdminCommand::Overview => report(
                operator::overview(&store, app.queue())
                    .await
                    .map(|v| v.to_string())
                    .map_err(Failure),
            ),
            AdminCommand::Audit { limit, offset } => report(
                operator::audit_page(&store, offset, limit, None)
                    .await
                    .map(|p| {
                        // What can be listed: the trail keeps the newest AUDIT_KEEP.
                        let kept = p.total.min(operator::audit::AUDIT_KEEP as u64);
                        let next = offset.saturating_add(p.items.len());
                        page(horst_identity::accounts::Page {
                            next_offset: (!p.items.is_empty() && (next as u64) < kept)
                                .then_some(next),
                            total: kept as usize,
                            items: p.items,
                        })
                    })
                    .map_err(Failure),
            ),
            AdminCommand::Key(cmd) => key(&store, cmd).await,
            AdminCommand::Token(cmd) => token(&app, cmd).await,
            AdminCommand::Job(cmd) => job(&app, cmd).await,
            AdminCommand::Queue => report(queue_view(&app).await.map_err(Failure)),
            AdminCommand::User(cmd) => user(&app, cmd).await,
            AdminCommand::AdminToken(cmd) => admin_token(&store, cmd).await,
            AdminCommand::Rating(cmd) => rating(&app, cmd).await,
        }
    });
    redis_setup::stop_private(&redis);
    code
}

async fn status(store: &horst_store::Store, json: bool) -> ExitCode {
    let facts = match store.server_facts().await {
        Ok(f) => f,
        Err(e) => {
            note!("horst: {e}");
            return ExitCode::from(1);
        }
    };
    // An error is said, never shown as "0 live" (in an incident that reads as "all dead").
    let workers = match horst_worker::live_workers(store).await {
        Ok(w) => w,
        Err(e) => {
            note!("horst: cannot read the live workers: {e}; try again");
            return ExitCode::from(1);
        }
    };
    // While Redis refuses writes (a full disk, `maxmemory`) this command is what an operator
    // runs first: it said nothing of it (and, before, could not start at all).
    let refused = match store.write_refusal().await {
        Ok(r) => r,
        Err(e) => {
            note!("horst: cannot tell whether Redis takes writes: {e}");
            None
        }
    };
    if json {
        let value = serde_json::json!({
            "redis": {
                "target": store.target(),
                "version": facts.version,
                "maxmemoryPolicy": facts.maxmemory_policy,
                "appendonly": facts.appendonly,
                "writesRefused": refused,
            },
            "workers": workers,
        });
        out!("{value}");
    } else {
        out!("redis:    {} (version {})", store.target(), facts.version);
        out!(
            "          maxmemory-policy {}, AOF {}",
            facts.maxmemory_policy.as_deref().unwrap_or("unknown"),
            match facts.appendonly {
                Some(true) => "on",
                Some(false) => "OFF",
                None => "unknown",
            }
        );
        // Said here, where the operator looks at the store, and in the serving processes'
        // logs; not by every other admin command.
        match facts.appendonly {
            Some(false) => out!("          AOF OFF: a crash of Redis loses the recent jobs, revisions and sessions; set `appendonly yes` (ops/redis.conf)"),
            None => out!("          AOF unknown: CONFIG GET refused (a managed Redis); make sure it persists (AOF or the provider's equivalent)"),
            Some(true) => {}
        }
        match facts.maxmemory_policy.as_deref() {
            Some("noeviction") => {}
            Some(p) => out!("          maxmemory-policy {p}: Redis may evict horst's keys; set `maxmemory-policy noeviction`"),
            None => {}
        }
        if let Some(reason) = &refused {
            out!("          WRITES REFUSED: {reason}; admissions, sign-ins and session moves fail (503) until Redis takes writes again: free disk space where Redis writes its AOF and snapshots (MISCONF), or memory (OOM: raise maxmemory)");
        }
        out!("workers:  {} live", workers.len());
        for w in workers {
            out!("          {w}");
        }
    }
    ExitCode::SUCCESS
}

fn report<E: std::fmt::Display>(result: Result<String, E>) -> ExitCode {
    match result {
        Ok(line) => {
            // An empty listing is no line at all, not one empty line.
            if !line.is_empty() {
                out!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            note!("horst: {e}");
            ExitCode::from(1)
        }
    }
}

/// JSON lines of serializable values (listings).
fn json_lines<T: serde::Serialize>(values: &[T]) -> String {
    values
        .iter()
        .filter_map(|v| serde_json::to_string(v).ok())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A page of a listing: its items as JSON lines on stdout, the total and the next offset on
/// stderr (so a pipe gets only the items).
fn page<T: serde::Serialize>(p: horst_identity::accounts::Page<T>) -> String {
    match p.next_offset {
        Some(next) => note!("horst: {} in all; next page: --offset {next}", p.total),
        None => note!("horst: {} in all", p.total),
    }
    json_lines(&p.items)
}

async fn account(app: &App, cmd: AccountCommand) -> ExitCode {
    let (store, auth) = (app.store(), app.auth());
    report(
        match cmd {
            AccountCommand::Create { name, trust } => {
                operator::create_account(store, &who(), &name, trust)
                    .await
                    .map(|_| format!("account {name} created (trust {trust})"))
            }
            AccountCommand::Trust { name, trust } => {
                operator::set_trust(store, &who(), &name, trust)
                    .await
                    .map(|_| format!("account {name}: trust {trust}"))
            }
            AccountCommand::Block { name } => {
                operator::block_account(store, auth, app.queue(), &who(), &name)
                    .await
                    .map(|ids| match ids.len() {
                        0 => format!("account {name} blocked; its sessions ended; it had no jobs waiting or running"),
                        n => format!("account {name} blocked; its sessions ended; its {n} job(s) waiting or running cancelled: {}", ids.join(" ")),
                    })
            }
            AccountCommand::Unblock { name } => {
                operator::set_blocked(store, auth, &who(), &name, false)
                    .await
                    .map(|_| format!("account {name} unblocked"))
            }
            AccountCommand::Operator { name, state } => {
                let on = matches!(state, OnOff::On);
                operator::set_operator_role(store, &who(), &name, on)
                    .await
                    .map(|_| format!("account {name}: operator {}", if on { "on" } else { "off" }))
            }
            AccountCommand::List {
                q,
                kind,
                trust,
                blocked,
                operator,
                offset,
                limit,
            } => {
                let filter = horst_identity::accounts::AccountFilter {
                    q,
                    kind,
                    trust,
                    blocked,
                    operator,
                };
                horst_identity::accounts::list_accounts(store, &filter, offset, limit)
                    .await
                    .map(page)
                    .map_err(horst_gateway::ToolError::from)
            }
        }
        .map_err(Failure),
    )
}

async fn key(store: &horst_store::Store, cmd: KeyCommand) -> ExitCode {
    match cmd {
        KeyCommand::Create { account, label } => {
            match operator::create_key(store, &who(), &account, label.as_deref()).await {
                Ok(created) => {
                    note!(
                        "key {} for {account} (shown once; stored only as a hash):",
                        created.prefix
                    );
                    out!("{}", created.key);
                    ExitCode::SUCCESS
                }
                Err(e) => report::<Failure>(Err(Failure(e))),
            }
        }
        KeyCommand::Revoke { prefix } => report(
            operator::revoke_key(store, &who(), &prefix)
                .await
                .map(|account| format!("key {prefix} of {account} revoked"))
                .map_err(Failure),
        ),
        KeyCommand::List {
            account,
            revoked,
            offset,
            limit,
        } => report(
            horst_identity::accounts::list_keys(store, account.as_deref(), revoked, offset, limit)
                .await
                .map(page)
                .map_err(|e| Failure(e.into())),
        ),
    }
}

async fn token(app: &App, cmd: TokenCommand) -> ExitCode {
    let (store, auth) = (app.store(), app.auth());
    match cmd {
        TokenCommand::Create {
            scopes,
            name,
            house,
        } => {
            match operator::create_token(store, auth, &who(), &scopes, name.as_deref(), house).await
            {
                Ok((token, agent)) => {
                    note!(
                        "horst: created {} {agent} with scopes {}; the token below is shown only once",
                        if house { "the house identity" } else { "agent" },
                        scopes.join(",")
                    );
                    out!("{token}");
                    ExitCode::SUCCESS
                }
                Err(e) => report::<Failure>(Err(Failure(e))),
            }
        }
        TokenCommand::List { offset, limit } => report(
            auth.list_tokens()
                .await
                .map(|all| {
                    let total = all.len();
                    let items: Vec<_> = all.into_iter().skip(offset).take(limit).collect();
                    let next = offset.saturating_add(limit);
                    if next < total {
                        note!("horst: {total} in all; next page: --offset {next}");
                    } else {
                        note!("horst: {total} in all");
                    }
                    json_lines(&items)
                })
                .map_err(|e| e.to_string()),
        ),
        TokenCommand::Limit {
            agent,
            per_minute,
            none: _,
        } => report(
            operator::set_token_burst(store, auth, &who(), &agent, per_minute)
                .await
                .map(|_| match per_minute {
                    Some(n) => format!(
                        "token of {agent} limited to {n} requests a minute on the RCADIA routes; every API process applies it within {} s",
                        horst_identity::auth::EPOCH_CHECK.as_secs()
                    ),
                    None => format!("token of {agent} has no burst limit any more"),
                })
                .map_err(Failure),
        ),
        TokenCommand::Revoke { agent } => report(
            operator::revoke_token(store, auth, &who(), &agent)
                .await
                .map(|_| {
                    format!(
                        "token of {agent} revoked; every API process refuses it within {} s",
                        horst_identity::auth::EPOCH_CHECK.as_secs()
                    )
                })
                .map_err(Failure),
        ),
    }
}

async fn user(app: &App, cmd: UserCommand) -> ExitCode {
    let (store, auth) = (app.store(), app.auth());
    let result = match cmd {
        UserCommand::Create {
            username,
            password_stdin,
            trust,
        } => match read_password(&username, password_stdin) {
            Ok(password) => operator::create_user(store, auth, &who(), &username, &password, trust)
                .await
                .map(|_| format!("created user {username}")),
            Err(e) => return report::<String>(Err(e)),
        },
        UserCommand::Passwd {
            username,
            password_stdin,
            revoke_keys,
        } => match read_password(&username, password_stdin) {
            Ok(password) => {
                operator::set_user_password(store, auth, &who(), &username, &password, revoke_keys)
                    .await
                    .map(|set| {
                        let mut line = format!("new password for {username}; their sessions ended");
                        if revoke_keys {
                            line += &format!("; {} agent key(s) revoked", set.keys_revoked.len());
                        } else if set.keys_remaining > 0 {
                            line += &format!(
                                "; {} agent key(s) still work (revoke them with --revoke-keys)",
                                set.keys_remaining
                            );
                        }
                        line
                    })
            }
            Err(e) => return report::<String>(Err(e)),
        },
        UserCommand::Delete { username } => operator::delete_user(store, auth, &who(), &username)
            .await
            .map(|d| {
                format!(
                    "user {username} deleted; sessions ended; {} agent key(s) revoked",
                    d.keys_revoked.len()
                )
            }),
    };
    // The confirmation goes to stderr (stdout stays empty, as before).
    match result {
        Ok(line) => {
            note!("horst: {line}");
            ExitCode::SUCCESS
        }
        Err(e) => report::<Failure>(Err(Failure(e))),
    }
}

async fn admin_token(store: &horst_store::Store, cmd: AdminTokenCommand) -> ExitCode {
    match cmd {
        AdminTokenCommand::Create { label } => {
            match operator::create_admin_token(store, &who(), label.as_deref()).await {
                Ok((token, info)) => {
                    note!(
                        "horst: admin token {} created (shown once; stored only as a hash); the others stay active until retired:",
                        info.id
                    );
                    out!("{token}");
                    ExitCode::SUCCESS
                }
                Err(e) => report::<Failure>(Err(Failure(e))),
            }
        }
        AdminTokenCommand::List => report(
            horst_identity::admin_tokens::list(store)
                .await
                .map(|l| json_lines(&l))
                .map_err(|e| Failure(e.into())),
        ),
        AdminTokenCommand::Retire { id } => report(
            operator::retire_admin_token(store, &who(), &id)
                .await
                .map(|_| format!("admin token {id} retired; its /admin sessions ended"))
                .map_err(Failure),
        ),
    }
}

/// The new user's password: from a terminal, prompted twice with echo off; otherwise (a
/// pipe, a file, or `--password-stdin`) the first line of stdin, so scripts need no flag.
fn read_password(username: &str, from_stdin: bool) -> Result<String, String> {
    use std::io::BufRead;
    // SAFETY: isatty only inspects the descriptor.
    let terminal = !from_stdin && unsafe { libc::isatty(libc::STDIN_FILENO) } == 1;
    let read_line = || -> Result<String, String> {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read the password: {e}"))?;
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    };
    if !terminal {
        return read_line();
    }
    let first = {
        let _quiet = EchoOff::on_stdin()?;
        eprint!("password for {username}: ");
        read_line()?
    };
    let again = {
        let _quiet = EchoOff::on_stdin()?;
        eprint!("again: ");
        read_line()?
    };
    if first != again {
        return Err("the two passwords differ; run the command again".into());
    }
    Ok(first)
}

/// Turns the terminal's echo off on stdin until dropped (keeping the newline echo, so the
/// cursor moves on after Enter), and restores the previous settings even on an error path.
struct EchoOff {
    saved: libc::termios,
}

impl EchoOff {
    fn on_stdin() -> Result<EchoOff, String> {
        // SAFETY: a zeroed termios is a valid out-parameter; tcgetattr fills it.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut t) } != 0 {
            return Err(format!(
                "cannot read the terminal settings: {}; pipe the password in instead: printf '%s\\n' \"$PASSWORD\" | horst admin user create NAME",
                std::io::Error::last_os_error()
            ));
        }
        let saved = t;
        t.c_lflag &= !libc::ECHO;
        t.c_lflag |= libc::ECHONL;
        // Ctrl-C at the prompt ends the process without running Drop: a handler puts the
        // settings back first (the terminal was left without echo, needing `stty sane`).
        // SAFETY: written before the handler is installed, read only by it.
        unsafe {
            SAVED_TERMIOS = saved;
            libc::signal(
                libc::SIGINT,
                restore_terminal_then_die as *const () as libc::sighandler_t,
            );
        }
        // SAFETY: t is a termios read from this descriptor with only flags changed.
        if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSAFLUSH, &t) } != 0 {
            // SAFETY: the default action again.
            unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
            return Err(format!(
                "cannot turn the terminal echo off: {}; pipe the password in instead",
                std::io::Error::last_os_error()
            ));
        }
        Ok(EchoOff { saved })
    }
}

/// The settings `EchoOff` changed, for its SIGINT handler.
static mut SAVED_TERMIOS: libc::termios = unsafe { std::mem::zeroed() };

/// SIGINT while the echo is off: the settings back, then the default action (the process
/// ends as Ctrl-C asks). Only async-signal-safe calls.
extern "C" fn restore_terminal_then_die(_: libc::c_int) {
    // SAFETY: tcsetattr, signal and raise are async-signal-safe; SAVED_TERMIOS was written
    // before this handler was installed.
    unsafe {
        libc::tcsetattr(
            libc::STDIN_FILENO,
            libc::TCSAFLUSH,
            std::ptr::addr_of!(SAVED_TERMIOS),
        );
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::raise(libc::SIGINT);
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        // SAFETY: restores the settings read in on_stdin, and SIGINT's default action.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSAFLUSH, &self.saved);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
    }
}
