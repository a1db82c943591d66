//! The job tools (`playtest_map`, `simulate_replay`, `submit_level`, `get_submission`).
//!
//! Order: input limits first (nothing else happens on bad input), then for a submission the
//! cheap store checks (name, parent, Labor cap, storage), then admission (idempotency, caps,
//! quotas, reservation: one atomic step in the queue), then a race-free wait with a drop
//! guard, so a client that goes away while its job is queued leaves nothing charged.
//!
//! Submissions: the worker only referees. This handler, still connected, stores the
//! revision when the result says `won` and records the publication on the job
//! (`Queue::publish`, the field's one writer). If the client leaves first, nothing is
//! published and the job records why (design reading: "a submit whose client left
//! publishes nothing and records why"). A crash between storing the revision and recording
//! it is answered by the retry: storing is once per job (`revision_store.lua` answers the
//! revision stored before), so the retry stores or finds it and records it.

use std::time::Duration;

use horst_queue::{
    Admission, FailureCode, JobInput, JobKind, JobRecord, JobSpec, JobState, Publication,
    QueueError, QuotaScope, RefereeResult,
};
use serde_json::{json, Value};

use crate::args::{Id, PlaytestArgs, SimulateArgs, SubmitArgs};
use crate::revisions::{self, NewRevision};
use crate::{Account, ErrorCode, Gateway, ToolError};

impl From<QueueError> for ToolError {
    fn from(e: QueueError) -> Self {
        match e {
            QueueError::Busy {
                retry_after_seconds,
                waiting_job_id,
                message,
            } => {
                let e = ToolError::new(ErrorCode::Busy, message)
                    .with("retryAfterSeconds", retry_after_seconds);
                match waiting_job_id {
                    Some(id) => e.with("jobId", id),
                    None => e,
                }
            }
            QueueError::Quota {
                scope,
                retry_after_seconds,
                message,
            } => {
                // The contract's scopes are `owner`, `global` and `global_new`; the daily
                // bytes of kept input are the account's and the server's own limits, said
                // apart in `limit` (as the storage budget is).
                let (scope, limit) = match scope {
                    QuotaScope::Owner => ("owner", None),
                    QuotaScope::Global => ("global", None),
                    QuotaScope::GlobalNew => ("global_new", None),
                    QuotaScope::InputBytes => ("owner", Some("input_bytes")),
                    QuotaScope::GlobalInputBytes => ("global", Some("input_bytes")),
                };
                let e = ToolError::new(ErrorCode::Quota, message)
                    .with("scope", scope)
                    .with("retryAfterSeconds", retry_after_seconds);
                match limit {
                    Some(l) => e.with("limit", l),
                    None => e,
                }
            }
            QueueError::Conflict { message } => ToolError::new(ErrorCode::Conflict, message),
            QueueError::Store(detail) => ToolError::internal(format!("queue: {detail}")),
            QueueError::Unavailable(detail) => ToolError::unavailable(format!("queue: {detail}")),
            // Was `internal_error` ("unexpected failure") without the job's id: the caller
            // could not tell a lost store from a bug, nor that a call again is what to do.
            QueueError::Gone { job_id } => {
                tracing::warn!(job = %job_id, "the record of a job a caller waits for is gone (Redis lost its data)");
                ToolError::new(
                    ErrorCode::Cancelled,
                    format!(
                        "the record of job {job_id} is gone: the job store lost its data (Redis was restarted without it); the job will not finish and nothing of it is kept; call again (the same idempotencyKey starts afresh)"
                    ),
                )
                .with("jobId", job_id)
            }
        }
    }
}

/// Records on a submission job whose client left, once the job has finished, that nothing
/// was published.
struct LeftGuard {
    queue: Option<horst_queue::Queue>,
    job_id: String,
    wait: Duration,
}

impl LeftGuard {
    fn disarm(mut self) {
        self.queue = None;
    }
}

impl Drop for LeftGuard {
    fn drop(&mut self) {
        let Some(queue) = self.queue.take() else {
            return;
        };
        let id = std::mem::take(&mut self.job_id);
        let wait = self.wait;
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                if let Ok(rec) = queue.wait(&id, wait).await {
                    if rec.state == JobState::Succeeded {
                        let unpublished = Publication::Unpublished {
                            reason: "the client disconnected before the check finished; nothing was published".into(),
                        };
                        if let Err(e) = queue.publish(&id, &unpublished).await {
                            tracing::warn!(job = %id, error = %e, "cannot record that nothing was published");
                        }
                    }
                }
            });
        }
    }
}

fn failure_error(rec: &JobRecord) -> ToolError {
    let Some(f) = &rec.failure else {
        return ToolError::new(
            ErrorCode::Cancelled,
            format!("job {} ended without a result", rec.id),
        )
        .with("jobId", rec.id.clone());
    };
    let mut e = ToolError::new(ErrorCode::from(f.code), f.message.clone());
    if let Value::Object(details) = &f.details {
        for (k, v) in details {
            e.details.insert(k.clone(), v.clone());
        }
    }
    e.with("jobId", rec.id.clone())
}

impl Gateway {
    pub(crate) async fn remaining(&self, caller: &Account) -> Option<Value> {
        match self.queue.remaining(&caller.name, caller.trust).await {
            Ok(r) => serde_json::to_value(r).ok(),
            Err(e) => {
                tracing::warn!(error = %e, "remaining quota unavailable");
                None
            }
        }
    }

    fn wait_limit(&self) -> Duration {
        Duration::from_secs(self.config.queue.wait_seconds)
    }

    pub(crate) async fn playtest(
        &self,
        a: &PlaytestArgs,
        caller: &Account,
    ) -> Result<Value, ToolError> {
        check_map(a.map.as_str()).await?;
        let seed = a.seed.map_or(1, |s| s.0);
        let input = JobInput::playtest(a.map.as_str(), seed);
        self.run_job(
            JobKind::Playtest,
            input,
            a.idempotency_key.as_str(),
            caller,
            None,
        )
        .await
    }

    pub(crate) async fn simulate(
        &self,
        a: &SimulateArgs,
        caller: &Account,
    ) -> Result<Value, ToolError> {
        check_map(a.map.as_str()).await?;
        let input = JobInput::simulate(a.map.as_str(), a.replay.0.clone());
        self.run_job(
            JobKind::Simulate,
            input,
            a.idempotency_key.as_str(),
            caller,
            None,
        )
        .await
    }

    pub(crate) async fn submit(
        &self,
        a: &SubmitArgs,
        caller: &Account,
    ) -> Result<Value, ToolError> {
        let (level, map, replay) = (a.name.as_str(), a.map.as_str(), &a.replay.0);
        check_map(map).await?;
        let parent = a.parent_revision_id.as_ref().map(Id::as_str);
        let idem = a.idempotency_key.as_str();
        let input = JobInput::submit(map, replay.clone(), level, parent.map(str::to_string));
        let submit = Submission {
            name: level,
            parent,
        };
        // A retry of a recorded submission is answered from its job, unchecked (its own
        // revision may be what fills the Labor cap now). Anything else is checked before
        // admission: a key whose job was dropped since (or is gone) is admitted as new.
        let spec = JobSpec {
            kind: JobKind::Submit,
            account: caller.name.clone(),
            trust: caller.trust,
            idempotency_key: idem.to_string(),
            input: input.clone(),
        };
        if let Some(rec) = self.queue.replay_of(&spec).await? {
            return self.finish(&rec, &input, caller, Some(&submit), true).await;
        }
        check_replay_can_win(replay)?;
        revisions::preflight(
            &self.store,
            &caller.name,
            level,
            parent,
            revisions::preflight_bytes(map, replay),
            self.budgets(caller.trust).await?,
        )
        .await?;
        self.run_job(JobKind::Submit, input, idem, caller, Some(submit))
            .await
    }

    async fn run_job(
        &self,
        kind: JobKind,
        input: JobInput,
        idem: &str,
        caller: &Account,
        submit: Option<Submission<'_>>,
    ) -> Result<Value, ToolError> {
        let admission = self
            .queue
            .admit_for_caller(JobSpec {
                kind,
                account: caller.name.clone(),
                trust: caller.trust,
                idempotency_key: idem.to_string(),
                input: input.clone(),
            })
            .await?;
        let (record, replayed) = match admission {
            Admission::Replayed(rec) => (rec, true),
            Admission::New(rec) => {
                let guard = self.queue.cancel_guard(&rec.id);
                let left = submit.as_ref().map(|_| LeftGuard {
                    queue: Some(self.queue.clone()),
                    job_id: rec.id.clone(),
                    wait: self.wait_limit() + Duration::from_secs(60),
                });
                let mut waited = self.wait_or_stop(&rec.id, kind, true).await;
                if matches!(waited, Waited::Stopping) && submit.is_some() {
                    // A submission's revision is stored by this call once the check has
                    // won, so it is not left to run without it: dropped while queued, else
                    // waited for (the referee's limit is within the shutdown grace).
                    guard.disarm();
                    if self.drop_for_shutdown(&rec.id).await {
                        return Err(ToolError::new(
                            ErrorCode::Cancelled,
                            "the server is shutting down; the submission was dropped before its check started and nothing was charged; call again (the same idempotencyKey starts afresh)",
                        )
                        .with("jobId", rec.id.clone()));
                    }
                    waited = self.wait_or_stop(&rec.id, kind, false).await;
                } else {
                    guard.disarm();
                }
                // The wait is over, and with it what the guard is for (a client that left
                // before the check finished): from here the caller is answered, either with
                // the outcome or `pending`, which promises that a retry with the same key
                // reads the job and stores a won submission. Left armed, the guard recorded
                // "nothing was published" on a job answered `pending` (Redis away during the
                // wait), and the retry was refused.
                if let Some(l) = left {
                    l.disarm();
                }
                let done = match waited {
                    Waited::Done(done) => *done,
                    Waited::Stopping => {
                        // The caller is answered now; the job no longer depends on this
                        // process, so it runs and a retry with the same key reads it.
                        let id = rec.id.clone();
                        let detached =
                            tokio::time::timeout(SHUTDOWN_STEP, self.queue.detach(&id)).await;
                        if !matches!(detached, Ok(Ok(_))) {
                            tracing::warn!(job = %id, "could not detach the job at shutdown");
                        }
                        tracing::info!(job = %id, "shutting down; the waiting caller is answered pending");
                        let now = tokio::time::timeout(SHUTDOWN_STEP, self.queue.get(&id)).await;
                        return match now {
                            Ok(Ok(Some(current))) => {
                                self.finish(&current, &input, caller, submit.as_ref(), false)
                                    .await
                            }
                            _ => Ok(pending_without_store(&rec)),
                        };
                    }
                    Waited::Unreachable(detail) => {
                        // The job may still finish; a retry with the same key reads it.
                        tracing::warn!(job = %rec.id, detail = %detail, "the store is unreachable while a caller waits; answered pending");
                        return Ok(pending_without_store(&rec));
                    }
                    Waited::Failed(e) => return Err(e.into()),
                    Waited::NoEvaluator => {
                        tracing::warn!(job = %rec.id, "no live worker runs this kind of job; the queued job was dropped and its caller answered engine_unavailable");
                        return Err(ToolError::new(
                            ErrorCode::EngineUnavailable,
                            "no worker is running to evaluate this job (the server's evaluators are stopped or starting); it was dropped before it started and nothing was charged; call again in a while (the same idempotencyKey starts afresh)",
                        )
                        .with("retryAfterSeconds", NO_WORKER_RETRY_SECONDS)
                        .with("jobId", rec.id.clone()));
                    }
                };
                return self
                    .finish(&done, &input, caller, submit.as_ref(), false)
                    .await;
            }
        };
        self.finish(&record, &input, caller, submit.as_ref(), replayed)
            .await
    }

    /// Waits for job `id` within the wait limit; with `watch_stop`, gives up when the
    /// process starts to shut down. Bounded even when Redis hangs: the queue's wait ends by
    /// its limit, and each of its Redis calls by the store's response timeout.
    async fn wait_or_stop(&self, id: &str, kind: JobKind, watch_stop: bool) -> Waited {
        let limit = self.wait_limit();
        // Every NO_WORKER_GRACE while the job waits: with no live worker to run it at two
        // looks in a row, drop it if it is still queued (one that a worker claimed meanwhile
        // is kept).
        let unserved = async {
            let mut missed = 0;
            loop {
                tokio::time::sleep(NO_WORKER_GRACE).await;
                // Two looks in a row: after a stall of Redis longer than a worker's
                // announcement lives, a live worker announces again within seconds.
                match self.queue.serves(kind).await {
                    Ok(false) => missed += 1,
                    _ => missed = 0,
                }
                if missed >= 2
                    && matches!(
                        self.queue
                            .cancel_queued(
                                id,
                                JobState::Cancelled,
                                FailureCode::Cancelled,
                                "no worker was running to evaluate the job; it was dropped before it started and nothing was charged; call again later (the same idempotencyKey starts afresh)",
                            )
                            .await,
                        Ok(true)
                    )
                {
                    return;
                }
            }
        };
        let wait = tokio::time::timeout(limit + WAIT_SLACK, self.queue.wait(id, limit));
        let mut stopping = self.stopping.clone().filter(|_| watch_stop);
        let stop = async {
            let stopped = match &mut stopping {
                Some(rx) => rx.wait_for(|s| *s).await.is_ok(),
                None => false,
            };
            // Without a shutdown signal (or with its sender gone) this never ends.
            if !stopped {
                std::future::pending::<()>().await
            }
        };
        tokio::select! {
            // A job dropped for want of a worker ends its wait too (cancelled): the drop is
            // what the caller is told.
            biased;
            () = unserved => Waited::NoEvaluator,
            waited = wait => match waited {
                Ok(Ok(rec)) => Waited::Done(Box::new(rec)),
                Ok(Err(QueueError::Unavailable(detail))) => Waited::Unreachable(detail),
                Ok(Err(e)) => Waited::Failed(e),
                Err(_) => Waited::Unreachable(format!("the wait for job {id} outlasted its limit")),
            },
            _ = stop => Waited::Stopping,
        }
    }

    /// Drops a still-queued job because this process is stopping; `true` if it was dropped.
    async fn drop_for_shutdown(&self, id: &str) -> bool {
        let dropped = self.queue.cancel_queued(
            id,
            JobState::Cancelled,
            FailureCode::Cancelled,
            "the server shut down before the job started; it was dropped and nothing was charged; call again",
        );
        matches!(
            tokio::time::timeout(SHUTDOWN_STEP, dropped).await,
            Ok(Ok(true))
        )
    }

    /// The tool result of a job record (fresh or replayed). A replayed call's failure says
    /// `replayed: true` too: the client learns it was neither charged nor run again.
    async fn finish(
        &self,
        rec: &JobRecord,
        input: &JobInput,
        caller: &Account,
        submit: Option<&Submission<'_>>,
        replayed: bool,
    ) -> Result<Value, ToolError> {
        match self.answer(rec, input, caller, submit, replayed).await {
            Err(e) if replayed => Err(e.with("replayed", true)),
            answered => answered,
        }
    }

    async fn answer(
        &self,
        rec: &JobRecord,
        input: &JobInput,
        caller: &Account,
        submit: Option<&Submission<'_>>,
        replayed: bool,
    ) -> Result<Value, ToolError> {
        let remaining = self.remaining(caller).await;
        match rec.state {
            JobState::Queued | JobState::Running => {
                return Ok(pending_answer(rec, replayed, remaining.as_ref()))
            }
            JobState::Failed | JobState::Cancelled => return Err(failure_error(rec)),
            JobState::Succeeded => {}
        }
        let Some(result) = &rec.result else {
            return Err(ToolError::internal(format!(
                "job {} succeeded without a readable result",
                rec.id
            )));
        };
        let Some(submit) = submit else {
            // playtest / simulate: the result as the worker recorded it.
            let Value::Object(mut out) = result.to_value() else {
                return Err(ToolError::internal(format!(
                    "job {} has a result that is not an object",
                    rec.id
                )));
            };
            out.insert("jobId".into(), json!(rec.id));
            if replayed {
                out.insert("replayed".into(), json!(true));
            }
            if let Some(r) = remaining {
                out.insert("remaining".into(), r);
            }
            return Ok(Value::Object(out));
        };
        let Some(report) = result.referee() else {
            return Err(ToolError::internal(format!(
                "submission job {} holds a planner's result",
                rec.id
            )));
        };
        if !report.won {
            let e = ToolError::new(
                ErrorCode::ValidationFailed,
                not_won_message(report.outcome.as_str()),
            )
            .with("jobId", rec.id.clone())
            .with("outcome", report.outcome.as_str())
            .with("ticks", report.ticks)
            .with("deathTick", json!(report.death_tick))
            .with("deathCause", json!(report.death_cause))
            .with("position", report.position.clone())
            .with("dead", report.dead);
            return Err(e);
        }
        // What the first call (or an earlier retry) did with the won check; without a
        // record, this call stores it: once per job, so a retry after a crash between
        // storing and recording finds the revision stored first.
        let publication = match &rec.publication {
            Some(p) => p.clone(),
            None => {
                self.store_submission(rec, report, input, caller, submit)
                    .await?
            }
        };
        let revision_id = match publication {
            Publication::Stored { revision_id } => revision_id,
            Publication::Unpublished { reason } => {
                return Err(ToolError::new(
                    ErrorCode::Cancelled,
                    format!("{reason}; submit again with a fresh idempotencyKey"),
                )
                .with("jobId", rec.id.clone()))
            }
            Publication::Refused {
                code,
                message,
                details,
            } => {
                // Only the codes storing a revision can fail with are repeated.
                let code = match ErrorCode::from_stored(&code) {
                    c @ (ErrorCode::Quota
                    | ErrorCode::Forbidden
                    | ErrorCode::ValidationFailed
                    | ErrorCode::Conflict) => c,
                    _ => ErrorCode::InternalError,
                };
                // The refusal as it was first answered: a quota's scope and retry time too.
                let mut e = ToolError::new(code, message);
                e.details = details;
                return Err(e.with("jobId", rec.id.clone()));
            }
        };
        let mut v = json!({
            "jobId": rec.id,
            "revisionId": revision_id,
            "name": submit.name,
            "mapHash": report.map_hash,
            "state": "labor",
            "seed": input.replay.as_ref().and_then(|r| r.get("seed")),
            "ticks": report.ticks,
            "engineVersion": report.engine_version,
            "policyVersion": report.policy_version,
            "acceptance": report,
        });
        if let Ok(Some(state)) = revisions::revision_state(&self.store, &revision_id).await {
            v["state"] = json!(state);
        }
        if replayed {
            v["replayed"] = json!(true);
        }
        if let Some(r) = remaining {
            v["remaining"] = r;
        }
        Ok(v)
    }

    /// Stores a won submission's revision (once per job) and records the publication; the
    /// publication that stands is returned (a refusal is recorded too, so a retry repeats it).
    async fn store_submission(
        &self,
        rec: &JobRecord,
        report: &RefereeResult,
        input: &JobInput,
        caller: &Account,
        submit: &Submission<'_>,
    ) -> Result<Publication, ToolError> {
        let null = Value::Null;
        let replay = input.replay.as_ref().unwrap_or(&null);
        let acceptance = serde_json::to_value(report).map_err(ToolError::internal)?;
        let title = crate::public_levels::title_off_runtime(&input.map).await?;
        // The contract's `forbidden` for a revoked key or a blocked account: one revoked (or
        // blocked) while the check ran publishes nothing. Refused like a foreign name, so a
        // retry with the same idempotencyKey repeats the refusal.
        let gone = horst_identity::accounts::still_allowed(&self.store, caller)
            .await
            .map_err(ToolError::from)?;
        let stored = match gone {
            Some(why) => Err(ToolError::new(
                ErrorCode::Forbidden,
                format!("{why} while the submission was checked, so nothing was published; the check stays charged (started work is). Submit again with an active key and a fresh idempotencyKey"),
            )),
            None => revisions::store_revision(
            &self.store,
            &NewRevision {
                owner: &caller.name,
                name: submit.name,
                parent: submit.parent,
                map: &input.map,
                title: &title,
                replay,
                seed: replay["seed"].as_u64().unwrap_or(0) as u32,
                ticks: u64::from(report.ticks),
                map_hash: &report.map_hash,
                engine_version: &report.engine_version,
                policy_version: &report.policy_version,
                acceptance: &acceptance,
                job_id: &rec.id,
                job_retention_seconds: self.config.queue.job_retention_hours * 3600,
            },
            self.budgets(caller.trust).await?,
        )
        .await,
        };
        let publication = match &stored {
            Ok((revision_id, _)) => Publication::Stored {
                revision_id: revision_id.clone(),
            },
            // The store could not be reached, or failed otherwise (a busy script, say): not a
            // verdict on the submission, so nothing is recorded and a retry with the same key
            // stores it (the job is charged once; the revision is stored once, `revjob`).
            Err(e)
                if matches!(
                    e.code,
                    ErrorCode::EngineUnavailable | ErrorCode::InternalError
                ) =>
            {
                return Err(e.clone().with("jobId", rec.id.clone()))
            }
            Err(e) => Publication::Refused {
                code: e.code.as_str().to_string(),
                message: e.message.clone(),
                details: e.details.clone(),
            },
        };
        if crate::faults::stops_after_revision_store(&caller.name) {
            return Err(ToolError::internal(
                "fault injected: stopped between storing the revision and recording it",
            ));
        }
        let standing = self.queue.publish(&rec.id, &publication).await?;
        match (stored, standing) {
            (_, Some(p)) => Ok(p),
            (Err(e), None) => Err(e.with("jobId", rec.id.clone())),
            (Ok(_), None) => Err(ToolError::internal(format!(
                "job {} is no longer a succeeded job; its publication was not recorded",
                rec.id
            ))),
        }
    }

    pub(crate) async fn get_submission(
        &self,
        id: &str,
        caller: &Account,
    ) -> Result<Value, ToolError> {
        // One answer for a job that never was, another account's and one whose record expired
        // (a poll a week later): the caller learns nothing of other accounts, and is told that
        // records do not live for ever and where its revisions stay listed.
        let retention = self.config.queue.job_retention_hours;
        let mine = || {
            ToolError::not_found(format!(
                "no job {id} of yours: no job of your account has this id, or its record expired (job records are kept {retention} h after they end); my_submissions lists your revisions"
            ))
        };
        let mut rec = self
            .queue
            .get(id)
            .await?
            .filter(|r| r.account == caller.name)
            .ok_or_else(mine)?;
        // A won submission whose call was answered `pending` (Redis away during its wait) is
        // stored by this read, as a retry with its key would store it: the contract sends a
        // caller told `pending` here. Once per job, whoever comes first.
        if let (JobKind::Submit, JobState::Succeeded, None) =
            (rec.kind, rec.state, &rec.publication)
        {
            if let (Some(name), Some(parent)) =
                (rec.input.name.clone(), rec.input.parent_revision_id.clone())
            {
                if let Some(input) = self.queue.input_of(id).await? {
                    let submit = Submission {
                        name: &name,
                        parent: parent.as_deref(),
                    };
                    // A refusal is recorded on the job and shown below.
                    if let Err(e) = self.finish(&rec, &input, caller, Some(&submit), true).await {
                        if matches!(
                            e.code,
                            ErrorCode::EngineUnavailable | ErrorCode::InternalError
                        ) {
                            return Err(e);
                        }
                    }
                    rec = self
                        .queue
                        .get(id)
                        .await?
                        .filter(|r| r.account == caller.name)
                        .ok_or_else(mine)?;
                }
            }
        }
        let revision_id = match &rec.publication {
            Some(Publication::Stored { revision_id }) => Some(revision_id.clone()),
            _ => None,
        };
        let revision_state = match &revision_id {
            Some(r) => revisions::revision_state(&self.store, r).await?,
            None => None,
        };
        let mut v = json!({
            "jobId": rec.id,
            "kind": rec.kind.as_str(),
            "state": rec.state.as_str(),
            "result": rec.result,
            "failure": rec.failure,
            "revisionId": revision_id,
            "revisionState": revision_state,
            "createdAt": crate::rfc3339(rec.created_at_ms),
        });
        // What became of a won submission, when it stored no revision.
        match &rec.publication {
            Some(Publication::Refused { code, message, .. }) => {
                v["publication"] = json!({"state": "refused", "code": code, "message": message});
            }
            Some(Publication::Unpublished { reason }) => {
                v["publication"] = json!({"state": "unpublished", "message": reason});
            }
            Some(Publication::Stored { .. }) => {}
            // A submission whose replay does not win is a succeeded job (the referee ran)
            // that stored nothing: without this, `state: succeeded` read as an accepted
            // submission to a caller who polls after `pending`, with nothing saying why
            // `revisionId` stays null. The call itself answered `validation_failed`.
            None => {
                let lost = rec
                    .result
                    .as_ref()
                    .and_then(|r| r.referee())
                    .filter(|r| !r.won);
                if let (JobKind::Submit, JobState::Succeeded, Some(report)) =
                    (rec.kind, rec.state, lost)
                {
                    v["publication"] = json!({
                        "state": "refused",
                        "code": ErrorCode::ValidationFailed.as_str(),
                        "message": not_won_message(report.outcome.as_str()),
                    });
                }
            }
        }
        // A running playtest's latest progress (its worker writes it every 2 s).
        if let (JobState::Running, Some(p)) = (rec.state, &rec.progress) {
            v["progress"] = serde_json::to_value(p).unwrap_or(Value::Null);
        }
        self.add_remaining(&mut v, caller).await;
        Ok(v)
    }
}

/// Why a submission whose replay does not win stored nothing (the call's failure and
/// `get_submission`'s `publication` say the same).
fn not_won_message(outcome: &str) -> String {
    format!(
        "the replay does not win on this map (outcome {outcome}); nothing was stored; check it with simulate_replay"
    )
}

/// How a blocking call's wait ended.
enum Waited {
    Done(Box<JobRecord>),
    /// No live worker could run it, and it was dropped while still queued (nothing charged):
    /// `engine_unavailable` (the contract's "no evaluator available").
    NoEvaluator,
    /// The process is shutting down: answer `pending` now.
    Stopping,
    /// Redis cannot be reached (or the wait outlasted its bound): answer `pending`.
    Unreachable(String),
    Failed(QueueError),
}

/// How often a queued job looks for a live worker; with none at two looks in a row it is
/// dropped as having none. A worker that is starting or being restarted (`horst up`'s child
/// comes back within a second) is waited for; one that is not there at all is answered in
/// about 8 s, not at the end of the whole wait limit with `timeout`.
const NO_WORKER_GRACE: Duration = Duration::from_secs(4);
/// When a caller told there is no worker may try again.
const NO_WORKER_RETRY_SECONDS: u64 = 30;

/// Beyond the wait limit, what a wait may take for its last Redis calls (the store's
/// response timeout is 5 s) before the caller is answered `pending` anyway.
const WAIT_SLACK: Duration = Duration::from_secs(12);
/// How long one Redis step of the shutdown answer may take (the grace period is 10 s).
const SHUTDOWN_STEP: Duration = Duration::from_secs(2);

/// Maps are checked before anything else happens: an invalid map is `validation_failed`
/// with the validator's errors (those of `validate_map`), before any quota, queue or
/// storage work, so it costs nothing. Parsed on a blocking thread (a map is up to 256 KB).
async fn check_map(map: &str) -> Result<(), ToolError> {
    let map = map.to_string();
    let parsed = crate::blocking::off_runtime(move || horst_engine::parse_map(&map).map(drop));
    match parsed.await? {
        Ok(()) => Ok(()),
        Err(report) => Err(ToolError::invalid_map(
            "the map is invalid, so nothing was queued or charged; fix the errors (validate_map shows each with its line, column and a hint)",
            &report,
        )),
    }
}

/// A replay without actions runs no tick, so it cannot win on any map: a submission of one
/// is refused as the referee would refuse it (`validation_failed`, with its `outcome` and
/// `ticks`), but before anything is queued or charged, as an invalid map is.
fn check_replay_can_win(replay: &Value) -> Result<(), ToolError> {
    let empty = replay
        .get("actions")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty);
    if !empty {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::ValidationFailed,
        "the replay has no actions, so it runs no tick and cannot win; nothing was queued or charged; submit a winning replay (simulate_replay checks one)",
    )
    .with("outcome", "unresolved")
    .with("ticks", 0)
    .with("dead", false))
}

/// A `pending` answer built without the store (it cannot be reached, or the process is
/// stopping): the caller reads the job later with the same idempotencyKey.
/// A blocking call's answer while its job has not finished: the job goes on, and
/// get_submission (or the same call with the same idempotencyKey) reads it later.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PendingAnswer<'a> {
    job_id: &'a str,
    pending: bool,
    state: &'a str,
    replayed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    remaining: Option<&'a Value>,
}

fn pending_answer(rec: &JobRecord, replayed: bool, remaining: Option<&Value>) -> Value {
    serde_json::to_value(PendingAnswer {
        job_id: &rec.id,
        pending: true,
        state: rec.state.as_str(),
        replayed,
        remaining,
    })
    .unwrap_or(Value::Null)
}

/// [`pending_answer`] when the store cannot be read for `remaining`.
fn pending_without_store(rec: &JobRecord) -> Value {
    pending_answer(rec, false, None)
}

/// The name and parent of a submission, for storing its revision.
pub(crate) struct Submission<'a> {
    name: &'a str,
    parent: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map check before a playtest, a simulation or a submission parses the map whole
    /// (up to 256 KB); it runs off the runtime's thread, and still refuses an invalid map.
    #[test]
    fn the_map_check_does_not_hold_the_runtime_thread() {
        let map = horst_levels::BUILTIN.last().unwrap().map;
        let during = crate::blocking::tests::turns_of_others_during(|| async {
            check_map(map).await.unwrap();
        });
        assert!(during > 0, "no other task ran while the map was checked");
        let during = crate::blocking::tests::turns_of_others_during(|| async {
            let e = check_map("not a map").await.unwrap_err();
            assert_eq!(e.code, ErrorCode::ValidationFailed);
        });
        assert!(during > 0);
    }

    /// A quota refusal names one of the contract's three scopes; the input caps are said
    /// apart in `limit`.
    #[test]
    fn quota_scopes_are_the_contracts() {
        let refusal = |scope| {
            ToolError::from(QueueError::Quota {
                scope,
                retry_after_seconds: 7,
                message: "m".into(),
            })
        };
        for (scope, named, limit) in [
            (QuotaScope::Owner, "owner", None),
            (QuotaScope::Global, "global", None),
            (QuotaScope::GlobalNew, "global_new", None),
            (QuotaScope::InputBytes, "owner", Some("input_bytes")),
            (QuotaScope::GlobalInputBytes, "global", Some("input_bytes")),
        ] {
            let e = refusal(scope);
            assert_eq!(e.code, ErrorCode::Quota);
            assert_eq!(e.details["scope"], named, "{scope:?}");
            assert_eq!(e.details["retryAfterSeconds"], 7);
            assert_eq!(e.details.get("limit").and_then(Value::as_str), limit);
        }
    }
}
