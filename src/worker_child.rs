//! `horst up`'s worker as a child process (`horst worker`), supervised by the API process.
//!
//! A planner run that outgrows its memory must take down only itself: in one process an OOM
//! kill ended the API with it. So `horst up` starts the worker as a child, which the
//! kernel's OOM killer prefers (`oom_score_adj`), and which this supervisor also kills itself
//! when its resident memory passes `worker.memory_limit_mib` (a watchdog, like systemd's
//! `MemoryMax=` for `ops/systemd`, for a machine without cgroups). Whatever ends the child
//! unexpectedly, it is started again after a short pause; its job is reaped `cancelled` by
//! the housekeeping (never re-run), and the API keeps answering all along.
//!
//! The child's counters and histograms (its job metrics, lease expiries, session clocks and
//! writes: [`FORWARDED`]) are scraped from its loopback `/metrics` every 2 s and added to the
//! API's own on its `/metrics`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use horst_telemetry::Metrics;
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};
use tokio::sync::watch;

use crate::terminal::{relay, relay_err, say};

/// The child's score for the kernel's OOM killer (-1000..1000): it goes before the API and
/// the private Redis.
const OOM_SCORE_ADJ: &[u8] = b"500\0";
/// How often the watchdog reads the child's resident memory.
const WATCH_EVERY: Duration = Duration::from_millis(250);
/// How often the child's job metrics are scraped.
const SCRAPE_EVERY: Duration = Duration::from_secs(2);
/// Restart pauses: the first, the longest, and how long a child must live to reset them.
const FIRST_PAUSE: Duration = Duration::from_millis(500);
const LONGEST_PAUSE: Duration = Duration::from_secs(30);
const STABLE_AFTER: Duration = Duration::from_secs(60);
/// The child's counters and histograms, added to the API's own on its `/metrics`: the job
/// families only a worker observes, and those both processes count into (each reaps expired
/// leases and fires session clocks, so a session can end in either). Gauges are left out:
/// the queue's are read from Redis by both, the others are the process's own.
const FORWARDED: [&str; 14] = [
    "horst_job_wait_seconds",
    "horst_job_duration_seconds",
    "horst_job_lease_expiries",
    "horst_job_playtests_unresolved",
    "horst_sessions_created",
    "horst_sessions_finished",
    "horst_session_action_outcomes",
    "horst_session_clock_firings",
    "horst_session_clock_lateness_seconds",
    "horst_session_cas_conflicts",
    "horst_session_cas_gave_up",
    "horst_session_redis_round_trips",
    "horst_session_fresh_reads",
    "horst_session_whole_reads",
];

/// How to start the child: the same binary, configuration, data directory and Redis.
pub struct WorkerChild {
    pub exe: PathBuf,
    pub config_file: Option<PathBuf>,
    pub data_dir: PathBuf,
    /// The Redis the parent resolved (its private server's socket, or the configured URL);
    /// passed in the environment, never on the command line (`ps` shows that to everyone).
    pub redis_url: String,
    /// The child's own `worker.metrics_listen`, if the operator set one.
    pub metrics_listen: String,
    /// Resident memory above which the child is killed, MiB.
    pub memory_limit_mib: u64,
    /// How long a stopping child may take to finish its running jobs before it is killed
    /// (`queue.drain_seconds`: the longest job limit and a margin).
    pub drain_limit: Duration,
}

impl WorkerChild {
    /// The command of one start, whose workers' ids carry `tag`.
    fn command(&self, tag: &str) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.arg("worker");
        // Its ids are `<host>-<pid>-<tag>-<n>`: up ends exactly this child's jobs when it dies
        // (another process may have the same hostname and pid).
        cmd.env(horst_worker::PROCESS_TAG_ENV, tag);
        if let Some(file) = &self.config_file {
            cmd.arg("--config").arg(file);
        }
        cmd.arg("--data").arg(&self.data_dir);
        if !self.redis_url.is_empty() {
            cmd.env("HORST_REDIS_URL", &self.redis_url);
        }
        if self.metrics_listen.is_empty() {
            cmd.env("HORST_WORKER_METRICS_LISTEN", "127.0.0.1:0");
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            // Relayed marked as the child's (`relay_stderr`): inherited, its log lines
            // were up's to look at, and an operator took a worker's error for up's own.
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // A group of its own: a terminal's Ctrl-C (or hang-up) goes to the whole
            // foreground group, and reaching the child as well as `up` made `up`'s SIGTERM
            // its second signal, which stops a worker at once and loses its running jobs.
            // `up` alone tells it to stop, and a kill -9 of `up` still ends it (below; and
            // the child stops by itself once up is gone, `serve::stop_when_up_is_gone`).
            .process_group(0);
        let up = std::process::id() as libc::pid_t;
        // SAFETY: prctl, getppid, open, write and close are async-signal-safe, and nothing
        // else runs between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // A kill -9 of `horst up` ends its worker too (as it ends its private Redis).
                // The child also stops by itself once up is no longer its parent
                // (`serve::stop_when_up_is_gone`): this signal is tied to up's forking thread.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Up died between the fork and the prctl: the signal will never come.
                if libc::getppid() != up {
                    return Err(std::io::Error::other("horst up is gone"));
                }
                // Best effort: without /proc the watchdog still bounds the child.
                let fd = libc::open(c"/proc/self/oom_score_adj".as_ptr(), libc::O_WRONLY);
                if fd >= 0 {
                    libc::write(fd, OOM_SCORE_ADJ.as_ptr().cast(), OOM_SCORE_ADJ.len() - 1);
                    libc::close(fd);
                }
                Ok(())
            });
        }
        cmd
    }
}

/// Runs the worker child until `shutdown`, starting it again whenever it ends otherwise;
/// at shutdown it gets SIGTERM and finishes its running jobs first.
pub async fn supervise(
    child: WorkerChild,
    queue: horst_queue::Queue,
    metrics: Metrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let restarts = restarts_metric(&metrics);
    let mut pause = FIRST_PAUSE;
    let mut generation: u64 = 0;
    loop {
        if *shutdown.borrow() {
            return;
        }
        generation += 1;
        let started = tokio::time::Instant::now();
        let tag = horst_worker::new_process_tag();
        let mut process = match child.command(&tag).spawn() {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, exe = %child.exe.display(), "cannot start the worker process; trying again");
                if pause_or_stop(&mut shutdown, &mut pause).await {
                    return;
                }
                continue;
            }
        };
        let pid = process.id().unwrap_or(0);
        say(&format!("horst: worker process started (pid {pid})"));
        tracing::info!(
            pid,
            generation,
            memory_limit_mib = child.memory_limit_mib,
            "worker process started"
        );
        let (metrics_url_tx, metrics_url) = watch::channel(None::<String>);
        if let Some(out) = process.stdout.take() {
            tokio::spawn(relay_stdout(out, metrics_url_tx));
        }
        if let Some(err) = process.stderr.take() {
            tokio::spawn(relay_stderr(err));
        }
        let scrape = tokio::spawn(scrape_metrics(metrics_url, metrics.clone()));
        let ended = run_one(&mut process, pid, &child, &mut shutdown).await;
        scrape.abort();
        // Its counts stay in up's sums; the next child's are added on top.
        metrics.retire_forwarded();
        let death = match ended {
            Ended::Stopped => return,
            Ended::Exited(status) => {
                restarts.get_or_create(&cause("exited")).inc();
                tracing::error!(pid, %status, "the worker process ended; starting it again");
                Death::Exited(status)
            }
            Ended::OverMemory(rss_mib) => {
                restarts.get_or_create(&cause("memory_limit")).inc();
                tracing::error!(pid, rss_mib, limit_mib = child.memory_limit_mib, "the worker process used more memory than worker.memory_limit_mib and was killed; starting it again");
                Death::OverMemory {
                    rss_mib,
                    limit_mib: child.memory_limit_mib,
                }
            }
        };
        // Its running jobs end now, with the cause, not a lease later as "its lease expired".
        // Said after the look, so the operator reads what was lost: the death's line said
        // "its running job ends `cancelled`" even when it ran none (a worker stopped by a
        // SIGTERM from outside up finishes its jobs first, and exits 0).
        if pid != 0 {
            match fail_jobs_of(&queue, pid, &tag, &death).await {
                Some(0) => tracing::warn!(pid, "the dead worker process was running no job: nothing was lost"),
                Some(n) => tracing::warn!(pid, jobs = n, "the dead worker process's running jobs ended `cancelled` (not re-run, charged)"),
                None => {}
            }
        }
        if started.elapsed() >= STABLE_AFTER {
            pause = FIRST_PAUSE;
        }
        if pause_or_stop(&mut shutdown, &mut pause).await {
            return;
        }
    }
}

type CauseLabels = Vec<(&'static str, String)>;

fn cause(c: &str) -> CauseLabels {
    vec![("cause", c.to_string())]
}

/// `horst_worker_process_restarts_total{cause}`: the worker child ended unexpectedly
/// (`exited`: it crashed, or the kernel's OOM killer took it) or was killed over
/// `worker.memory_limit_mib` (`memory_limit`), and was started again. Only the supervisor
/// sees these (the child's own counters die with it), and a restart is otherwise only a log
/// line. Both causes listed at zero from the start, so the first is a rise `increase()` sees.
fn restarts_metric(
    metrics: &Metrics,
) -> horst_telemetry::metrics::family::Family<CauseLabels, horst_telemetry::metrics::counter::Counter>
{
    let restarts = horst_telemetry::metrics::family::Family::<
        CauseLabels,
        horst_telemetry::metrics::counter::Counter,
    >::default();
    metrics.register(
        "worker_process_restarts",
        "Times `horst up`'s worker process ended unexpectedly and was started again, by cause (exited; memory_limit: killed over worker.memory_limit_mib)",
        restarts.clone(),
    );
    for c in ["exited", "memory_limit"] {
        drop(restarts.get_or_create(&cause(c)));
    }
    restarts
}

/// How a worker process ended, for its running jobs' callers.
enum Death {
    Exited(std::process::ExitStatus),
    OverMemory { rss_mib: u64, limit_mib: u64 },
}

/// Ends the running jobs of the dead worker process `pid` (started with `tag`), each `failed` (code `cancelled`)
/// with what happened to it; answers how many it ended (`None`: some could not be ended now,
/// the reaper ends them a lease later). Over the memory limit, only the job that grew the process is
/// told its level needs less: every job of the process was told so, and a simulation or a
/// small playtest that shared a process with a huge search was sent to simplify a level that
/// was never the cause.
async fn fail_jobs_of(
    queue: &horst_queue::Queue,
    pid: u32,
    tag: &str,
    death: &Death,
) -> Option<usize> {
    let prefix = horst_worker::process_id_prefix(pid, tag);
    // Its idle slots first, so no admission hands them a job from now on (one handed before
    // is among the running jobs read next, and goes back to its lane).
    if let Err(e) = queue.retire_idle_of(&prefix).await {
        tracing::warn!(pid, error = %e, "cannot take the dead worker process's idle slots off; admissions may hand them jobs, which go back to their lanes a lease later");
    }
    let jobs = match queue.running_of(&prefix).await {
        Ok(jobs) => jobs,
        // The reaper ends them a lease later.
        Err(e) => {
            tracing::warn!(pid, error = %e, "cannot end the dead worker process's jobs now; they are reaped when their leases expire");
            return None;
        }
    };
    let (mut ended, mut unclear) = (0, false);
    for job in &jobs {
        let cause = cause_for(job, &jobs, death);
        let failure = horst_queue::Failure::new(
            horst_queue::FailureCode::Cancelled,
            format!("{cause}; the job was not re-run and stays charged; call again with a new idempotencyKey"),
        );
        match queue.fail_running(&job.id, &failure).await {
            Ok(horst_queue::Abandoned::Failed) => {
                ended += 1;
                tracing::warn!(job = %job.id, pid, "the dead worker process's job failed (cancelled), not re-run")
            }
            Ok(horst_queue::Abandoned::PutBack) => {
                tracing::warn!(job = %job.id, pid, "a job handed to an idle slot of the dead worker process, which never took it up, waits again at its lane's front, uncharged")
            }
            Ok(horst_queue::Abandoned::NotRunning) => {}
            Err(e) => {
                unclear = true;
                tracing::warn!(job = %job.id, pid, error = %e, "cannot end the dead worker process's job now; it is reaped when its lease expires")
            }
        }
    }
    (!unclear).then_some(ended)
}

/// What the caller of `job`, one of the dead process's running `jobs`, is told.
fn cause_for(
    job: &horst_queue::JobRecord,
    jobs: &[horst_queue::JobRecord],
    death: &Death,
) -> String {
    let (rss_mib, limit_mib) = match death {
        Death::Exited(status) => {
            return format!(
                "the worker process running this job ended ({status}) before the job finished"
            )
        }
        Death::OverMemory { rss_mib, limit_mib } => (rss_mib, limit_mib),
    };
    let over = format!(
        "more memory than the server allows ({rss_mib} MiB, over worker.memory_limit_mib {limit_mib} MiB)"
    );
    match grew_the_process(job, jobs) {
        Some(true) => format!(
            "the worker process running this job used {over} and was stopped; a smaller or simpler level (fewer crumbling ledges, enemies and platforms) needs less"
        ),
        Some(false) => format!(
            "another job in the same worker process used {over}, and the process was stopped with this job in it; this job's input was not the cause"
        ),
        None => format!(
            "the worker process running this job and {} other job(s) used {over} and was stopped; which of their searches grew it is not known: if this level is large, a smaller or simpler one (fewer crumbling ledges, enemies and platforms) needs less",
            jobs.len() - 1
        ),
    }
}

/// Whether `job` is what grew its worker process past its memory limit: a playtest's search
/// is what grows (a referee run holds one simulation), the one with the largest memory in its
/// last progress report (every 1.5 s). `None` when that cannot be told: several playtests,
/// one of which has not reported yet. A playtest handed to a slot that had not taken it up
/// ran nothing: it neither grew the process nor leaves the question open.
fn grew_the_process(job: &horst_queue::JobRecord, jobs: &[horst_queue::JobRecord]) -> Option<bool> {
    use horst_queue::JobKind;
    if job.kind != JobKind::Playtest || job.handed {
        return Some(false);
    }
    let playtests: Vec<_> = jobs
        .iter()
        .filter(|j| j.kind == JobKind::Playtest && !j.handed)
        .collect();
    if playtests.len() == 1 {
        return Some(true);
    }
    let peak = |j: &horst_queue::JobRecord| j.progress.as_ref().and_then(|p| p.peak_memory_mib);
    // One that has not reported yet (its first 1.5 s) may have grown past the others.
    let peaks: Option<Vec<u64>> = playtests.iter().map(|j| peak(j)).collect();
    let largest = peaks?.into_iter().max()?;
    Some(peak(job) == Some(largest))
}

enum Ended {
    /// Shutdown: the child was told to stop and has.
    Stopped,
    Exited(std::process::ExitStatus),
    OverMemory(u64),
}

enum Event {
    Exited(std::io::Result<std::process::ExitStatus>),
    Watch,
    Stop,
}

async fn run_one(
    process: &mut Child,
    pid: u32,
    child: &WorkerChild,
    shutdown: &mut watch::Receiver<bool>,
) -> Ended {
    let mut watch = tokio::time::interval(WATCH_EVERY);
    loop {
        // No await inside the branches: the shutdown's borrow must not live across one.
        let event = tokio::select! {
            status = process.wait() => Event::Exited(status),
            _ = watch.tick() => Event::Watch,
            _ = shutdown.wait_for(|s| *s) => Event::Stop,
        };
        match event {
            Event::Stop => {
                stop(process, pid, child.drain_limit).await;
                return Ended::Stopped;
            }
            Event::Exited(Ok(status)) => return Ended::Exited(status),
            Event::Exited(Err(e)) => {
                tracing::error!(pid, error = %e, "cannot wait for the worker process");
                let _ = process.start_kill();
                return match process.wait().await {
                    Ok(s) => Ended::Exited(s),
                    Err(_) => Ended::Stopped,
                };
            }
            Event::Watch => {
                if let Some(rss) = resident_mib(pid) {
                    if rss > child.memory_limit_mib {
                        let _ = process.start_kill();
                        let _ = process.wait().await;
                        return Ended::OverMemory(rss);
                    }
                }
            }
        }
    }
}

/// SIGTERM, then the child's own drain (its jobs finish), SIGKILL after the drain limit.
async fn stop(process: &mut Child, pid: u32, drain_limit: Duration) {
    if pid != 0 {
        // SAFETY: kill only sends a signal to our own child, which has not been reaped.
        unsafe {
            libc::kill(pid as i32, libc::SIGTERM);
        }
    }
    match tokio::time::timeout(drain_limit, process.wait()).await {
        Ok(_) => tracing::info!(pid, "worker process stopped"),
        Err(_) => {
            tracing::warn!(pid, "the worker process did not stop in time; killing it");
            let _ = process.start_kill();
            let _ = process.wait().await;
        }
    }
}

/// Waits `pause` (doubled for the next time, up to the longest); true if the shutdown came.
async fn pause_or_stop(shutdown: &mut watch::Receiver<bool>, pause: &mut Duration) -> bool {
    let wait = *pause;
    *pause = (*pause * 2).min(LONGEST_PAUSE);
    tokio::select! {
        _ = tokio::time::sleep(wait) => false,
        _ = shutdown.wait_for(|s| *s) => true,
    }
}

/// The child's resident memory, MiB (`/proc/<pid>/statm`: pages).
fn resident_mib(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let page = u64::try_from(page).unwrap_or(4096);
    Some(pages * page / (1024 * 1024))
}

/// Passes the child's stdout on as this process's (each line marked `worker:`), and picks
/// out the address its `/metrics` listens on.
async fn relay_stdout(
    out: tokio::process::ChildStdout,
    metrics_url: watch::Sender<Option<String>>,
) {
    let mut lines = tokio::io::BufReader::new(out).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        // The plain line, or the message of a JSON one (`log.format = "json"`).
        let text = relay(&line);
        let said = text.strip_prefix("horst: ").unwrap_or(&text);
        if let Some(url) = said.strip_prefix("metrics on ") {
            let _ = metrics_url.send(Some(url.trim().to_string()));
        }
    }
}

/// Passes the child's stderr on as this process's, each line marked as the child's
/// (`terminal::relay_err`). Read as bytes: a line that is not UTF-8 must not end the relay
/// (the child would then block on a full pipe).
async fn relay_stderr(err: tokio::process::ChildStderr) {
    let mut reader = tokio::io::BufReader::new(err);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                relay_err(text.trim_end_matches(['\n', '\r']));
            }
        }
    }
}

/// Every 2 s, the child's [`FORWARDED`] families added onto this process's `/metrics`.
async fn scrape_metrics(mut url: watch::Receiver<Option<String>>, metrics: Metrics) {
    let Ok(Some(url)) = url.wait_for(Option::is_some).await.map(|u| u.clone()) else {
        return;
    };
    let http = match reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "cannot scrape the worker's metrics");
            return;
        }
    };
    loop {
        match http.get(&url).send().await {
            Ok(r) => match r.text().await {
                Ok(text) => {
                    let ours: String = horst_telemetry::families(&text)
                        .into_iter()
                        .filter(|(name, _)| FORWARDED.contains(&name.as_str()))
                        .map(|(_, block)| block)
                        .collect();
                    metrics.set_forwarded(ours);
                }
                Err(e) => tracing::debug!(error = %e, "cannot read the worker's metrics"),
            },
            Err(e) => tracing::debug!(error = %e, "cannot scrape the worker's metrics"),
        }
        tokio::time::sleep(SCRAPE_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::grew_the_process;
    use horst_queue::{JobInput, JobKind, JobProgress, JobRecord, JobState};

    fn running(id: &str, kind: JobKind, peak_mib: Option<u64>, handed: bool) -> JobRecord {
        JobRecord {
            id: id.into(),
            kind,
            account: "a".into(),
            trust: 1,
            state: JobState::Running,
            idempotency_key: id.into(),
            input: JobInput::default(),
            created_at_ms: 1_000,
            started_at_ms: Some(1_000),
            finished_at_ms: None,
            result: None,
            failure: None,
            publication: None,
            reserved_seconds: 20,
            charged_seconds: 20,
            worker: Some("w-1-t-0/0".into()),
            request_id: None,
            progress: peak_mib.map(|peak| JobProgress {
                elapsed_seconds: 3.0,
                states_explored: 1_000,
                best_distance: None,
                stage: 0,
                peak_memory_mib: Some(peak),
            }),
            handed,
        }
    }

    /// A playtest an admission handed to a slot of the dead process that had not taken it up
    /// ran no search: the one search that ran grew the process. Before, the handed one (no
    /// progress report yet) made it "not known" for both.
    #[test]
    fn a_handed_playtest_never_taken_up_did_not_grow_the_process() {
        let search = running("job_search", JobKind::Playtest, Some(900), false);
        let handed = running("job_handed", JobKind::Playtest, None, true);
        let jobs = [search.clone(), handed.clone()];
        assert_eq!(grew_the_process(&search, &jobs), Some(true));
        assert_eq!(grew_the_process(&handed, &jobs), Some(false));
        // Two searches that ran, one not yet reported: not known, as before.
        let fresh = running("job_fresh", JobKind::Playtest, None, false);
        assert_eq!(grew_the_process(&search, &[search.clone(), fresh]), None);
        // A simulation never grew it.
        let sim = running("job_sim", JobKind::Simulate, None, false);
        assert_eq!(grew_the_process(&sim, &[search, sim.clone()]), Some(false));
    }
}
