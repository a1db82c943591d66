//! `horst map ...`: the offline level tools (validate, render, simulate) on local files.
//! Output is readable by default; `--json` prints the same objects the gateway tools return.

use horst_engine::{
    parse_map, parse_replay_json, referee, validate_map_bytes, EngineError, ValidationReport,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Files larger than this are refused before reading them whole (maps are at most 256 KiB,
/// replays at most 1 MiB of compact JSON; pretty-printed replays get some room).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Like `println!`, but a closed pipe (`horst map render x | head`) is not a panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `--threads`: what `worker.threads` takes, 0 (one per core) to 1024. Unbounded, `--threads
/// 100000` started a hundred thousand threads and hung before the search began, and `0`, one
/// per core in the configuration, meant one thread here.
fn threads_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= 1024 => Ok(n),
        _ => Err("threads are a whole number from 1 to 1024, or 0 for one per core".into()),
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum MapCommand {
    /// Check a .map file; exits non-zero when it is invalid.
    Validate {
        file: PathBuf,
        /// Print the `validate_map` JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Draw a window of a .map file as text with a ruler and a legend (clipped to the map,
    /// like the render_map tool).
    Render {
        file: PathBuf,
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        x: i64,
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        y: i64,
        #[arg(long, default_value_t = 120)]
        width: i64,
        #[arg(long, default_value_t = 30)]
        height: i64,
        /// Also write the window as a PNG picture (12 px a tile, a colour per legend symbol).
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        /// Print the `render_map` result object.
        #[arg(long)]
        json: bool,
    },
    /// Referee a replay on a .map file; exits non-zero unless the replay wins.
    Simulate {
        file: PathBuf,
        #[arg(long)]
        replay: PathBuf,
        /// Print the `simulate_replay` result object.
        #[arg(long)]
        json: bool,
    },
    /// Search a winning replay with the planner; exits non-zero unless it finds one. Progress
    /// goes to stderr (every 2 s when it is not a terminal); Ctrl-C stops the search, prints
    /// what it has and exits with 130.
    Solve {
        file: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u32,
        /// Time budget in seconds.
        #[arg(long, default_value_t = 20.0)]
        time_limit: f64,
        /// Worker threads, 1-1024, or 0 for one per core (the default), as
        /// worker.threads.
        #[arg(long, value_parser = threads_arg)]
        threads: Option<usize>,
        /// Print the `playtest_map` result object.
        #[arg(long)]
        json: bool,
    },
}

fn read_limited(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{what} {} is {} bytes, far over the limit; refusing to read it",
            path.display(),
            meta.len()
        ));
    }
    std::fs::read(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))
}

fn print_json(value: &serde_json::Value) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => out!("{s}"),
        Err(e) => eprintln!("error: cannot encode JSON: {e}"),
    }
}

fn print_report(path: &Path, r: &ValidationReport) {
    for (kind, items) in [("error", &r.errors), ("warning", &r.warnings)] {
        for i in items.iter() {
            out!(
                "{}:{}:{}: {kind}[{}]: {}\n    hint: {}",
                path.display(),
                i.line,
                i.column,
                i.code,
                i.message,
                i.hint
            );
        }
    }
    out!(
        "{}: {} ({} errors, {} warnings)",
        path.display(),
        if r.valid { "valid" } else { "INVALID" },
        r.errors.len(),
        r.warnings.len()
    );
}

fn fail(json: bool, err: &EngineError) -> ExitCode {
    if json {
        print_json(&serde_json::json!({
            "ok": false,
            "error": { "code": err.code(), "message": err.message() }
        }));
    } else {
        eprintln!("error ({}): {}", err.code(), err.message());
    }
    ExitCode::from(2)
}

/// An invalid map: every error with its line, column and hint (the first alone left the rest
/// to one fix-and-rerun each), as the `render_map` tool answers: the code stays the engine's
/// (`validation_failed`); `errors` is the validation report's list.
fn fail_map(json: bool, path: &Path, report: &ValidationReport) -> ExitCode {
    let message = format!(
        "the map is invalid: {}; fix every error listed (each with its line, column and a hint, as `horst map validate` lists them)",
        report.summary()
    );
    let code = EngineError::InvalidMap(String::new()).code();
    if json {
        print_json(&serde_json::json!({
            "ok": false,
            "error": {
                "code": code,
                "message": message,
                "errors": report.errors,
            }
        }));
    } else {
        eprintln!("error ({code}): {message}");
        for e in &report.errors {
            eprintln!(
                "{}:{}:{}: error[{}]: {}\n    hint: {}",
                path.display(),
                e.line,
                e.column,
                e.code,
                e.message,
                e.hint
            );
        }
    }
    ExitCode::from(2)
}

/// Reads a map file as text, or explains (as a validation report) why it cannot be one.
fn read_map(file: &Path) -> Result<String, ValidationReport> {
    let bytes = match read_limited(file, "map") {
        Ok(b) => b,
        Err(m) => {
            return Err(ValidationReport {
                valid: false,
                errors: vec![horst_engine::Issue {
                    code: "too_large",
                    line: 1,
                    column: 1,
                    message: m,
                    hint: "maps are at most 256 KiB".into(),
                }],
                warnings: vec![],
            })
        }
    };
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => Err(validate_map_bytes(e.as_bytes())),
    }
}

pub fn run(cmd: MapCommand) -> ExitCode {
    match cmd {
        MapCommand::Solve {
            file,
            seed,
            time_limit,
            threads,
            json,
        } => solve(&file, seed, time_limit, threads, json),
        MapCommand::Validate { file, json } => {
            let report = match std::fs::metadata(&file) {
                Err(e) => {
                    return fail(
                        json,
                        &EngineError::InvalidInput(format!(
                            "cannot read map {}: {e}",
                            file.display()
                        )),
                    )
                }
                Ok(_) => match read_map(&file) {
                    Ok(text) => horst_engine::validate_map(&text),
                    Err(r) => r,
                },
            };
            if json {
                print_json(&serde_json::to_value(&report).unwrap_or_default());
            } else {
                print_report(&file, &report);
            }
            if report.valid {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        MapCommand::Render {
            file,
            x,
            y,
            width,
            height,
            png,
            json,
        } => {
            let text = match read_map(&file) {
                Ok(t) => t,
                Err(r) => return fail_map(json, &file, &r),
            };
            let window = horst_map_image::Window {
                x,
                y,
                width,
                height,
            };
            let view = match horst_map_image::view(&text, window, png.is_some()) {
                Ok(v) => v,
                Err(e @ EngineError::InvalidMap(_)) => {
                    return match parse_map(&text) {
                        Err(report) => fail_map(json, &file, &report),
                        Ok(_) => fail(json, &e),
                    }
                }
                Err(e) => return fail(json, &e),
            };
            let (result, picture) = horst_gateway::render::result_of(view);
            if let (Some(path), Some(bytes)) = (&png, picture) {
                if let Err(e) = std::fs::write(path, bytes) {
                    let m = format!("cannot write {}: {e}", path.display());
                    return fail(json, &EngineError::InvalidInput(m));
                }
            }
            if json {
                print_json(&serde_json::to_value(&result).unwrap_or_default());
            } else {
                use std::io::Write;
                let _ = std::io::stdout().write_all(result.text.as_bytes());
                if let (Some(path), Some(info)) = (&png, &result.image) {
                    out!(
                        "picture: {} ({} x {} px, {} px a tile)",
                        path.display(),
                        info.width,
                        info.height,
                        info.tile_pixels
                    );
                }
            }
            ExitCode::SUCCESS
        }
        MapCommand::Simulate { file, replay, json } => {
            let text = match read_map(&file) {
                Ok(t) => t,
                Err(r) => return fail_map(json, &file, &r),
            };
            let map = match parse_map(&text) {
                Ok(m) => m,
                Err(r) => return fail_map(json, &file, &r),
            };
            let rtext = match read_limited(&replay, "replay").and_then(|b| {
                String::from_utf8(b)
                    .map_err(|_| format!("replay {} is not UTF-8", replay.display()))
            }) {
                Ok(t) => t,
                Err(m) => return fail(json, &EngineError::InvalidInput(m)),
            };
            let rp = match parse_replay_json(&rtext) {
                Ok(r) => r,
                Err(e) => return fail(json, &e),
            };
            let report = referee(&map, &rp);
            let feasibility = report
                .won
                .then(|| horst_feasibility::assess(&map, &rp))
                .flatten();
            if json {
                let assessed = horst_feasibility::Assessed {
                    result: &report,
                    feasibility,
                    warnings: Vec::new(),
                };
                let mut v = serde_json::to_value(&assessed).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.insert(
                        "engineVersion".into(),
                        horst_engine::engine_version().into(),
                    );
                    o.insert("policyVersion".into(), horst_engine::POLICY_VERSION.into());
                }
                print_json(&v);
            } else {
                out!(
                    "outcome: {}\nticks: {} ({:.2} s)\nposition: tile ({}, {}), sub-units ({}, {})\ndeathTick: {}\ndeathCause: {}\nstateHash: {}\nmapHash: {}\nengineVersion: {}",
                    report.outcome,
                    report.ticks,
                    report.ticks as f64 / 60.0,
                    report.position.x,
                    report.position.y,
                    report.position.sub_x,
                    report.position.sub_y,
                    report.death_tick.map(|t| t.to_string()).unwrap_or_else(|| "-".into()),
                    report.death_cause.as_ref().map(|d| d.to_string()).unwrap_or_else(|| "-".into()),
                    report.state_hash,
                    report.map_hash,
                    horst_engine::engine_version()
                );
                print_feasibility(feasibility.as_ref());
            }
            if report.won {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// The feasibility report of a won replay, as lines for people.
fn print_feasibility(f: Option<&horst_feasibility::Feasibility>) {
    let Some(f) = f else { return };
    out!(
        "feasibility: {} (tightest window {} ticks, {} exact inputs of {}, longest wait {} ticks, eggs {}, stomps {}, shots {})\nfeasibility hint: {}",
        f.verdict.as_str(),
        f.tightest.as_ref().map_or(0, |w| w.window),
        f.exact_inputs,
        f.inputs,
        f.longest_wait_ticks,
        f.egg_boosts,
        f.stomps,
        f.shots,
        f.hint
    );
}

/// Set by SIGINT while `horst map solve` runs: the planner's cancel flag.
static SOLVE_INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SOLVE_INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// How often `solve` prints a progress line when stderr is not a terminal.
const SOLVE_PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// `horst map solve`: the planner on a local file. Progress goes to stderr: updated in place on
/// a terminal, otherwise one line every 2 s. Ctrl-C (SIGINT) stops the search; it then prints
/// what it has (best distance, states explored) and exits with 130.
fn solve(file: &Path, seed: u32, time_limit: f64, threads: Option<usize>, json: bool) -> ExitCode {
    use std::io::IsTerminal;
    use std::sync::atomic::Ordering;
    let text = match read_map(file) {
        Ok(t) => t,
        Err(r) => return fail_map(json, file, &r),
    };
    let map = match parse_map(&text) {
        Ok(m) => m,
        Err(r) => return fail_map(json, file, &r),
    };
    if !(time_limit.is_finite() && time_limit > 0.0 && time_limit <= 3600.0) {
        let e = EngineError::InvalidInput("--time-limit must be 0-3600 seconds".into());
        return fail(json, &e);
    }
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        // 0: rayon's own choice, one per core.
        pool = pool.num_threads(n);
    }
    let pool = match pool.build() {
        Ok(p) => p,
        Err(e) => return fail(json, &EngineError::InvalidInput(e.to_string())),
    };
    SOLVE_INTERRUPTED.store(false, Ordering::SeqCst);
    // SAFETY: the handler only stores to an atomic.
    let previous = unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as *const () as libc::sighandler_t,
        )
    };
    let req = horst_planner::PlanRequest {
        map: &map,
        seed,
        time_limit: std::time::Duration::from_secs_f64(time_limit),
        cancel: &SOLVE_INTERRUPTED,
        memory_budget_bytes: Some(horst_planner::DEFAULT_MEMORY_BUDGET),
    };
    let tty = std::io::stderr().is_terminal();
    let report = pool.install(|| {
        // Built here: the callback need not be `Sync`.
        let last_line = std::cell::Cell::new(std::time::Duration::ZERO);
        let show = |p: &horst_planner::Progress| {
            let line = format!(
                "stage {}  states explored {}  best distance to the nest {} tiles  {:.1} s",
                p.stage,
                p.expanded,
                p.best_distance,
                p.elapsed.as_secs_f64()
            );
            if tty {
                eprint!("\r\x1b[K{line}");
            } else if p.elapsed >= last_line.get() + SOLVE_PROGRESS_EVERY {
                last_line.set(p.elapsed);
                eprintln!("{line}");
            }
        };
        horst_planner::plan(&req, Some(&show))
    });
    // SAFETY: puts back the handler that was there before.
    unsafe { libc::signal(libc::SIGINT, previous) };
    if tty {
        eprint!("\r\x1b[K");
    }
    let interrupted = SOLVE_INTERRUPTED.load(Ordering::SeqCst)
        && report.reason() == Some(horst_planner::UnresolvedReason::Cancelled);
    let result = horst_planner::PlaytestResult::new(&map, seed, &report);
    let feasibility = report
        .replay()
        .and_then(|r| horst_feasibility::assess(&map, r));
    if json {
        let assessed = horst_feasibility::Assessed {
            result: &result,
            warnings: horst_feasibility::warnings(feasibility.as_ref()),
            feasibility,
        };
        let mut value = serde_json::to_value(&assessed).unwrap_or_default();
        // Which of the planner's racing searches found the win (not in `playtest_map`).
        if let (Some(by), Some(obj)) = (report.won_by, value.as_object_mut()) {
            obj.insert("wonBy".into(), serde_json::to_value(by).unwrap_or_default());
        }
        print_json(&value);
    } else {
        let reason = match (report.reason(), report.proof) {
            (None, _) => String::new(),
            (Some(r), Some(p)) => format!(" ({}: {})", r.as_str(), p.as_str()),
            (Some(r), None) => format!(" ({})", r.as_str()),
        };
        let distance = match report.best_distance {
            Some(d) => format!("{d} tiles"),
            None if report.proof == Some(horst_planner::Proof::ReplayLimit) => {
                "none (no nest is reachable within the replay limit)".into()
            }
            None => "none (no nest is reachable)".into(),
        };
        out!(
            "outcome: {}{reason}\nticks: {} ({:.2} s)\nstates explored: {} in {:.2} s\nbest distance to the nest: {distance}\nmapHash: {}",
            result.outcome,
            result.ticks,
            result.ticks as f64 / 60.0,
            report.expanded,
            report.elapsed.as_secs_f64(),
            result.map_hash
        );
        if let Some(h) = &result.hint {
            out!("hint: {h}");
        }
        if let Some(by) = report.won_by {
            out!(
                "found by: stage {}, the search of heuristic weight {}",
                by.stage,
                by.weight
            );
        }
        if let Some(r) = &result.replay {
            out!("replay: {}", serde_json::to_string(r).unwrap_or_default());
        }
        print_feasibility(feasibility.as_ref());
    }
    if interrupted {
        eprintln!("interrupted");
        ExitCode::from(130)
    } else if result.won {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
