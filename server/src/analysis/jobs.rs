//! Durable analysis: every acknowledged upload is analyzed, whatever fails meanwhile.
//!
//! Storing a run enqueues its commit's job in the same transaction
//! ([`crate::storage::Store::insert_run_leased`]); the job leaves the database only once the
//! commit's analysis is stored. Two paths take jobs:
//! * **Inline**: the upload that enqueued a job analyzes it before answering, so CI reads the
//!   verdict in the receipt, when it got the job's lease and one of the [`Analyzer`]'s inline
//!   permits at once. Otherwise (the job is being analyzed elsewhere, or `inline` analyses
//!   are already running: backpressure under many uploaders) it answers at once with the
//!   verdict `pending` and leaves the job to the workers.
//! * **Workers** (`workers` tasks per server, started by [`Analyzer::start`]): claim due jobs
//!   through the database with a lease ([`crate::storage::Store::claim_due_job`]), renewed
//!   while they work, so several servers on one database share the queue and a job of a
//!   crashed server is taken up once its lease runs out. A failed attempt (database down,
//!   disk full) is retried with exponential back-off up to [`AnalyzerOptions::max_backoff`].
//!
//! Recomputations of a whole project (exclusions, pins, settings, a schema upgrade) are jobs
//! too ([`Analyzer::recompute_after`]), enqueued before the change they follow is written: if
//! the server dies after the change, the job is there; if the change fails, it is withdrawn.
//! The PR comments of an analyzed commit are a job enqueued in the transaction that finishes
//! the commit's analysis job ([`JobTarget::Comments`]; a project's are claimed one at a time,
//! see [`Store::claim_due_job`]). A recomputation of the whole project ends the same way with
//! a refresh of the project's PR comments ([`JobTarget::Refresh`]: the newest run of each PR
//! posted again if its report changed), and a triage enqueues one
//! ([`Analyzer::refresh_after`]): a verdict that changes without an upload reaches the PR too.
//! The change-point scan of the default branch is a job too ([`JobTarget::Scan`],
//! `super::scan`), asked for by every analysis of a default-branch commit and claimed after
//! every other due job.
//!
//! Every attempt logs `job started` and, once its work is stored, `job finished`, with the
//! job's id and generation: the trail of which server did what (one line each per attempt).
//!
//! While the queue is full ([`Analyzer::is_full`]: [`AnalyzerOptions::max_backlog`] of work at
//! the rate this server finishes jobs, at least [`AnalyzerOptions::max_queued`] jobs), new
//! uploads are refused (503 with `Retry-After`, `crate::api`): the server takes uploads at the
//! rate it analyzes them.

use super::{analyze_upload, recompute_project, Scope};
use crate::app::AppState;
use crate::storage::{
    ClaimedJob, JobTarget, JobTicket, NewRun, Project, QueueCounts, StorageError, Store,
};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify, Semaphore};

/// How the analysis queue is worked.
#[derive(Debug, Clone)]
pub struct AnalyzerOptions {
    /// How long a claimed job is held without a renewal: a crashed worker's job is retried
    /// this long after its last renewal. Renewed every third of it.
    pub lease: Duration,
    /// Background workers per server.
    pub workers: usize,
    /// Uploads analyzed inline at once; more are answered `pending` and left to the workers
    /// (0: every upload is).
    pub inline: usize,
    /// How often an idle worker looks for due jobs (it is also woken when a job is left to
    /// it by this server).
    pub poll: Duration,
    /// Longest wait between attempts of a failing job (the back-off doubles from 1 s).
    pub max_backoff: Duration,
    /// Jobs queued before new uploads are refused with 503 and `Retry-After` (backpressure: an
    /// acknowledged upload is analyzed soon, rather than hours later) while this server's
    /// drain rate is not known, and the least bound when it is ([`Analyzer::is_full`]).
    pub max_queued: i64,
    /// Longest wait the queue may hold at the rate this server finishes jobs: with that rate
    /// known, the queue holds `rate × max_backlog` jobs when that is more than
    /// [`AnalyzerOptions::max_queued`]. Zero: the count alone bounds it.
    pub max_backlog: Duration,
    /// Longest time a new upload that finds the queue full waits for room before it is
    /// refused ([`Analyzer::wait_for_room`]): `Retry-After` is whole seconds, so a refusal costs
    /// its client at least 1 s, mostly more than the queue takes to have room again.
    pub admission_wait: Duration,
}

impl Default for AnalyzerOptions {
    fn default() -> Self {
        AnalyzerOptions {
            lease: Duration::from_secs(30),
            workers: 2,
            inline: 4,
            poll: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            max_queued: 64,
            max_backlog: Duration::from_secs(5),
            admission_wait: Duration::from_secs(2),
        }
    }
}

/// The analysis queue of one server: its inline permits and its workers.
#[derive(Clone)]
pub struct Analyzer {
    options: AnalyzerOptions,
    inline: Arc<Semaphore>,
    wake: Arc<Notify>,
    /// `true` once stopped (a watch, so a worker between two waits cannot miss it).
    stop: Arc<watch::Sender<bool>>,
    /// The address the last upload reached this server at, for the links of PR comments that
    /// a worker posts (the server's `--public-url` wins when set).
    last_base_url: Arc<Mutex<Option<String>>>,
    /// When this server's last [`FINISHES_KEPT`] jobs finished: the rate the queue drains at
    /// ([`drain_rate`]), for the queue's bound and the `Retry-After` of an upload refused
    /// while it is full.
    finished: Arc<Mutex<std::collections::VecDeque<std::time::Instant>>>,
    /// Signalled whenever one of this server's jobs has left the queue (the upload waiting
    /// for room longest looks again; with none waiting, the next one to wait looks at once).
    room: Arc<Notify>,
}

/// Job finishes [`Analyzer`] remembers to estimate the queue's drain rate: more than
/// [`RATE_WINDOW`] holds at the fastest rate measured (about 200 jobs/s, small projects).
const FINISHES_KEPT: usize = 4096;

/// The recent past whose job finishes give the drain rate ([`drain_rate`]): long enough to
/// span many jobs, short enough that a rate from before an idle spell is forgotten.
const RATE_WINDOW: Duration = Duration::from_secs(10);

/// Finishes within [`RATE_WINDOW`] before the drain rate may raise the queue's bound above
/// [`AnalyzerOptions::max_queued`]: two finishes a moment apart say little of the rate.
const FINISHES_FOR_BOUND: usize = 8;

/// The `Retry-After` (seconds) of a refused upload while no drain rate is known yet.
pub const RETRY_AFTER_UNKNOWN_RATE_SECS: u64 = 10;

/// The longest `Retry-After` (seconds) of a refused upload.
const RETRY_AFTER_MAX_SECS: u64 = 60;

/// How often an upload waiting for room in the queue reads it again
/// ([`Analyzer::wait_for_room`]).
const ROOM_POLL: Duration = Duration::from_millis(200);

impl Analyzer {
    /// A queue worked as `options` say (nothing runs before [`Analyzer::start`]).
    pub fn new(options: AnalyzerOptions) -> Analyzer {
        Analyzer {
            inline: Arc::new(Semaphore::new(options.inline)),
            options,
            wake: Arc::new(Notify::new()),
            stop: Arc::new(watch::channel(false).0),
            last_base_url: Arc::new(Mutex::new(None)),
            finished: Arc::new(Mutex::new(std::collections::VecDeque::with_capacity(
                FINISHES_KEPT,
            ))),
            room: Arc::new(Notify::new()),
        }
    }

    /// How long a lease lasts, as the store takes it.
    pub fn lease(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.options.lease).unwrap_or_default()
    }

    /// Whether `queued` jobs fill the queue: new uploads wait (503) until the workers catch up.
    /// The bound is [`queue_bound`] of this server's drain rate: a count of jobs is no
    /// promise of a wait (64 jobs were 7 s of analyses on an 1,800-commit history and 0.4 s
    /// on the peer's 100 commits, where the count held 8 clients to the analyses' pace
    /// while every verdict was ready within a second anyway: BENCHMARKS.md "Session 39").
    pub fn is_full(&self, queued: i64) -> bool {
        queued >= self.bound()
    }

    /// The number of queued jobs that fills the queue now ([`queue_bound`]).
    fn bound(&self) -> i64 {
        let rate = self.drain_rate(FINISHES_FOR_BOUND);
        queue_bound(self.options.max_queued, self.options.max_backlog, rate)
    }

    /// This server's drain rate ([`drain_rate`]) with at least `least` recent finishes.
    fn drain_rate(&self, least: usize) -> Option<f64> {
        let finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        drain_rate(&finished, std::time::Instant::now(), least)
    }

    /// The `Retry-After` (whole seconds) of an upload refused while `queued` jobs fill the
    /// queue: how long this server takes to finish the jobs over the bound, at the rate its
    /// jobs finished in the last [`RATE_WINDOW`]; 1 … 60 s, and
    /// [`RETRY_AFTER_UNKNOWN_RATE_SECS`] before two jobs have finished in it. A fixed 10 s
    /// left 8 clients idle long after the queue had room again (`cargo bench --bench
    /// peer_ingest`, BENCHMARKS.md, "Ingest side by side with the peer"). Other servers on
    /// the same database drain it too: the estimate errs long.
    pub fn retry_after_secs(&self, queued: i64) -> u64 {
        let over = (queued - self.bound() + 1).max(1) as f64;
        match self.drain_rate(2) {
            Some(per_second) => ((over / per_second).ceil() as u64).clamp(1, RETRY_AFTER_MAX_SECS),
            None => RETRY_AFTER_UNKNOWN_RATE_SECS,
        }
    }

    /// The queue ([`QueueCounts`]) once it has room, or once [`AnalyzerOptions::admission_wait`]
    /// has passed (then it may still be full: [`Analyzer::is_full`] tells). A new upload waits
    /// here instead of being refused at once: 8 clients uploading as fast as they could were
    /// refused 8–14 times per 300 uploads, each refusal a whole second (`Retry-After`'s unit)
    /// of the client's time, where waiting for room took none of them the 2 s (BENCHMARKS.md,
    /// "Ingest side by side with the peer", session 29). It does not wait when the queue
    /// is so far over that this server's drain rate ([`Analyzer::retry_after_secs`]) says the
    /// wait would not be enough. Woken by this server's finished jobs; the queue is read again
    /// at least every [`ROOM_POLL`], for jobs other servers on the same database finish.
    ///
    /// # Errors
    /// The store failed reading the queue.
    pub async fn wait_for_room(&self, store: &Store) -> Result<QueueCounts, StorageError> {
        let deadline = tokio::time::Instant::now() + self.options.admission_wait;
        loop {
            // Registered before the count is read: a job finishing in between still wakes us
            // (`enable` puts it in line for `notify_one` before it is polled).
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            let counts = store.queue_counts().await?;
            let queued = counts.jobs;
            let now = tokio::time::Instant::now();
            if !self.is_full(queued) || now >= deadline || self.drains_later_than_wait(queued) {
                return Ok(counts);
            }
            let _ = tokio::time::timeout((deadline - now).min(ROOM_POLL), room).await;
        }
    }

    /// Whether this server's recent drain rate says the jobs over the bound take longer than
    /// [`AnalyzerOptions::admission_wait`] (unknown before two jobs finished: then no).
    fn drains_later_than_wait(&self, queued: i64) -> bool {
        let secs = self.retry_after_secs(queued);
        let known = self.drain_rate(2).is_some();
        known && Duration::from_secs(secs) > self.options.admission_wait.max(Duration::from_secs(1))
    }

    /// Notes that a job finished now (for [`Analyzer::retry_after_secs`]).
    fn note_finished(&self) {
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        if finished.len() == FINISHES_KEPT {
            finished.pop_front();
        }
        finished.push_back(std::time::Instant::now());
    }

    /// Starts the workers on `state` (they stop at [`Analyzer::stop`] or when the store is
    /// closed).
    pub fn start(&self, state: &AppState) {
        for n in 0..self.options.workers {
            let state = state.clone();
            tokio::spawn(async move {
                worker(state, n).await;
            });
        }
    }

    /// Stops the workers. A job in progress is abandoned; its lease runs out and it is
    /// analyzed again (by this server's next start or another server).
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Remembers `base` as the address uploads reach this server at.
    pub fn note_base_url(&self, base: &str) {
        *self.last_base_url.lock().unwrap_or_else(|e| e.into_inner()) = Some(base.to_string());
    }

    /// Analyzes the commit of the uploaded `run` inline when `ticket` holds the job's lease,
    /// an inline permit is free and no other upload's analysis was queued or running when
    /// this one arrived (`others_queued` false); else leaves it to the workers. `true` when the
    /// analysis was stored; `false` when it is pending (left to the workers, or it failed and
    /// will be retried). `comments`: the project posts PR comments and the upload names a pull
    /// request, so the analysis is followed by a [`JobTarget::Comments`] job (and an upload
    /// out of order by the [`JobTarget::Reanalysis`] of each commit whose history it changed,
    /// which refresh the PR comments after them). The inline analysis covers the
    /// configurations of `run` ([`Scope::Run`]) when no other analysis of the commit was
    /// pending, else the whole commit.
    ///
    /// Why a busy server queues: uploads arriving together (CI jobs of one commit, a backfill)
    /// each analyzed inline meant as many analyses at once as permits, on as many cores as
    /// there are, and one analysis per repeat of a commit; queued, the repeats of one commit
    /// that arrive while its job waits share one analysis, and the workers run as many as
    /// they are. 8 clients uploading the peer's data set: 2,200–3,000 values stored per
    /// second with every upload inline, 4,000–5,000 with the busy ones queued, every verdict
    /// stored 0.6–0.7 s after the last upload either way (BENCHMARKS.md, "Ingest side by side
    /// with the peer", session 31). An upload to an idle server still has its verdict in its
    /// receipt. Without workers (`--analysis-workers 0`) every upload that can is analyzed
    /// inline, or nothing would analyze it.
    pub async fn after_upload(
        &self,
        store: &Store,
        project: &Project,
        run: &NewRun,
        ticket: JobTicket,
        comments: bool,
        others_queued: bool,
    ) -> bool {
        let (branch, commit_sha) = (run.branch.as_str(), run.commit_sha.as_str());
        if !ticket.leased {
            self.wake.notify_one();
            return false;
        }
        let permit = if others_queued && self.options.workers > 0 {
            None
        } else {
            self.inline.clone().try_acquire_owned().ok()
        };
        let Some(_permit) = permit else {
            if let Err(e) = store.release_job(ticket.id).await {
                tracing::warn!(job = ticket.id, error = %e, "releasing an analysis job failed");
            }
            self.wake.notify_one();
            return false;
        };
        started(ticket.id, ticket.generation, 1, "commit", "inline");
        // A job row this upload created (generation 1) means no other analysis of the commit
        // was pending: every other configuration's stored analysis is current, and only the
        // uploaded run's configurations need analyzing. Otherwise the whole commit.
        let scope = if ticket.generation == 1 {
            Scope::Run(run.id)
        } else {
            Scope::Commit
        };
        let analysis = async {
            let again = analyze_upload(store, project, branch, commit_sha, &scope).await?;
            let comments = comments.then(|| comments_of(branch, commit_sha));
            Ok(then_after_upload(comments, again))
        };
        let outcome = with_lease(store, ticket.id, self.options.lease, analysis).await;
        self.settle(
            store,
            (project.id, ticket.id, ticket.generation, 1),
            outcome,
        )
        .await
    }

    /// Makes `change` (an exclusion, a pin, new settings: anything that changes every
    /// commit's analysis) and then recomputes every commit of `project` before returning, as
    /// a durable job: the job is enqueued *before* the change is written, so a server that
    /// dies after writing it still leaves the job behind; a change that fails withdraws it.
    /// The recomputation runs inline when this call holds the job's lease, else a worker
    /// runs it; if it fails, the workers retry it and the change stands (`Ok`).
    ///
    /// # Errors
    /// The change's error, or a storage error enqueueing the job (then nothing is changed).
    pub async fn recompute_after<T, E: From<StorageError>>(
        &self,
        store: &Store,
        project: &Project,
        change: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let ticket = store
            .enqueue_job(project.id, &JobTarget::Project, Some(self.lease()))
            .await?;
        let changed = match change.await {
            Ok(changed) => changed,
            Err(e) => {
                // Withdrawn if this call created the job and nobody asked since (generation 1
                // is the row's first); a recomputation queued before it stays, released.
                let withdrawn = if ticket.generation == 1 {
                    store
                        .finish_job(ticket.id, ticket.generation)
                        .await
                        .map(drop)
                } else {
                    store.release_job(ticket.id).await
                };
                if let Err(e) = withdrawn {
                    tracing::warn!(job = ticket.id, error = %e, "withdrawing a recomputation failed; it runs anyway");
                }
                return Err(e);
            }
        };
        if ticket.leased {
            started(ticket.id, ticket.generation, 1, "project", "inline");
            let work = recompute_then_refresh(store, project);
            let outcome = with_lease(store, ticket.id, self.options.lease, work).await;
            self.settle(
                store,
                (project.id, ticket.id, ticket.generation, 1),
                outcome,
            )
            .await;
        } else {
            self.wake.notify_one();
        }
        Ok(changed)
    }

    /// Makes `change` (one that may change runs' verdicts without changing any analysis: an
    /// alert's triage) and then has `project`'s PR comments refreshed ([`JobTarget::Refresh`])
    /// when its settings hold `pr_comments`, as a durable job: enqueued before the change with
    /// its lease, so no worker refreshes from the state before the change, and released after
    /// it; a server that dies in between leaves the job to run once the lease runs out. A
    /// change that fails leaves the refresh to run anyway: it finds no report changed and
    /// sends nothing.
    ///
    /// # Errors
    /// The change's error, or a storage error reading the settings or enqueueing the job (then
    /// nothing is changed).
    pub async fn refresh_after<T, E: From<StorageError>>(
        &self,
        store: &Store,
        project: &Project,
        change: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        if !posts_comments(store, project).await? {
            return change.await;
        }
        let ticket = store
            .enqueue_job(project.id, &JobTarget::Refresh, Some(self.lease()))
            .await?;
        let changed = change.await;
        // Only our own lease is given back: another worker's (at an older generation) is
        // what keeps the project's posters one at a time, and it leaves the job queued.
        if ticket.leased {
            if let Err(e) = store.release_job(ticket.id).await {
                tracing::warn!(job = ticket.id, error = %e, "releasing a PR comments refresh failed; it runs when its lease runs out");
            }
        }
        self.wake.notify_one();
        changed
    }

    /// Records how an attempt at job `(project id, job id, generation, attempts)` ended:
    /// finished (with the jobs its work returned enqueued in the same transaction), or
    /// released for a retry after the back-off of its `attempts`th attempt. `true` when the
    /// work was done.
    async fn settle(
        &self,
        store: &Store,
        (project_id, id, generation, attempts): (i64, i64, i64, i64),
        outcome: Result<Vec<JobTarget>, StorageError>,
    ) -> bool {
        self.settle_again_at(store, (project_id, id, generation, attempts), outcome, None)
            .await
    }

    /// [`Analyzer::settle`], where a job asked for again while it ran is due at `again_at`.
    async fn settle_again_at(
        &self,
        store: &Store,
        (project_id, id, generation, attempts): (i64, i64, i64, i64),
        outcome: Result<Vec<JobTarget>, StorageError>,
        again_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> bool {
        match outcome {
            Ok(then) => {
                self.note_finished();
                let then = (!then.is_empty()).then_some((project_id, then.as_slice()));
                match store
                    .finish_job_again_at(id, generation, then, again_at)
                    .await
                {
                    Ok(true) => {
                        tracing::info!(job = id, generation, again = false, "job finished");
                        // One place in the queue freed: one waiting upload looks again (all of
                        // them re-read the queue on every finish, 545 reads per 300 uploads
                        // under 8 clients; the others still look every `ROOM_POLL`).
                        self.room.notify_one();
                        if then.is_some() {
                            self.wake.notify_one();
                        }
                    }
                    // Asked for again while it ran: due again, a worker takes it.
                    Ok(false) => {
                        tracing::info!(job = id, generation, again = true, "job finished");
                        self.wake.notify_one();
                    }
                    Err(e) => {
                        tracing::warn!(job = id, error = %e, "finishing a job failed; it runs again when its lease runs out");
                    }
                }
                true
            }
            Err(e) => {
                let wait = backoff(attempts, self.options.max_backoff);
                tracing::warn!(job = id, generation, attempts, retry_in_s = wait.as_secs_f64(), error = %e, "job failed; retried");
                let retry_at =
                    chrono::Utc::now() + chrono::Duration::from_std(wait).unwrap_or_default();
                if let Err(e) = store.fail_job(id, &e.to_string(), retry_at).await {
                    tracing::warn!(job = id, error = %e, "recording a failed job failed; it is retried when its lease runs out");
                }
                false
            }
        }
    }
}

/// Jobs per second over the finishes (oldest first) within [`RATE_WINDOW`] before `now`: the
/// finishes after the window's first one, over the time since it (so a server that stopped
/// finishing jobs a while ago has a rate that falls). `None` with fewer than `least` finishes
/// in the window (`least` ≥ 2).
fn drain_rate(
    finished: &std::collections::VecDeque<std::time::Instant>,
    now: std::time::Instant,
    least: usize,
) -> Option<f64> {
    let recent = finished
        .iter()
        .rev()
        .take_while(|at| now.saturating_duration_since(**at) <= RATE_WINDOW);
    let (count, first) = recent.fold((0usize, None), |(n, _), at| (n + 1, Some(*at)));
    let span = now.saturating_duration_since(first?).as_secs_f64();
    (count >= least.max(2) && span > 0.0).then(|| (count - 1) as f64 / span)
}

/// The number of queued jobs that fills the queue: `max_queued`, or the jobs this server
/// finishes in `max_backlog` at `rate` (jobs per second) when that is more.
fn queue_bound(max_queued: i64, max_backlog: Duration, rate: Option<f64>) -> i64 {
    let by_time = rate.map_or(0.0, |r| r * max_backlog.as_secs_f64());
    max_queued.max(by_time.min(i64::MAX as f64) as i64)
}

/// The PR comments job of a commit.
fn comments_of(branch: &str, commit_sha: &str) -> JobTarget {
    JobTarget::Comments {
        branch: branch.to_string(),
        commit_sha: commit_sha.to_string(),
    }
}

/// Whether `project`'s settings hold `pr_comments` (the server posts its PR comments).
async fn posts_comments(store: &Store, project: &Project) -> Result<bool, StorageError> {
    Ok(store
        .settings(project)
        .await?
        .settings
        .pr_comments
        .is_some())
}

/// The refresh of `project`'s PR comments ([`JobTarget::Refresh`]), when it posts them.
async fn refresh_of(store: &Store, project: &Project) -> Result<Option<JobTarget>, StorageError> {
    Ok(posts_comments(store, project)
        .await?
        .then_some(JobTarget::Refresh))
}

/// The jobs to follow an upload's analysis: its commit's PR comments (`comments`), and the
/// re-analyses of the commits whose history it changed (`again`; each refreshes the PR
/// comments after it).
fn then_after_upload(comments: Option<JobTarget>, again: Vec<JobTarget>) -> Vec<JobTarget> {
    comments.into_iter().chain(again).collect()
}

/// Recomputes every commit of `project` ([`recompute_project`]); the refresh of its PR
/// comments follows it ([`refresh_of`]), as the recomputation may have changed their reports.
async fn recompute_then_refresh(
    store: &Store,
    project: &Project,
) -> Result<Vec<JobTarget>, StorageError> {
    recompute_project(store, project).await?;
    Ok(refresh_of(store, project).await?.into_iter().collect())
}

/// Logs the start of an attempt at job `id` (see the module documentation).
fn started(id: i64, generation: i64, attempt: i64, kind: &str, by: &str) {
    tracing::info!(job = id, generation, attempt, kind, by, "job started");
}

/// The wait before the next attempt after `attempts` failed ones: 1 s, 2 s, 4 s, … up to `max`.
fn backoff(attempts: i64, max: Duration) -> Duration {
    let exp = attempts.clamp(1, 16) as u32 - 1;
    Duration::from_secs(1u64 << exp).min(max)
}

/// Runs `work` while renewing job `id`'s lease every third of `lease`.
async fn with_lease<T>(
    store: &Store,
    id: i64,
    lease: Duration,
    work: impl Future<Output = Result<T, StorageError>>,
) -> Result<T, StorageError> {
    let renew_every = lease / 3;
    let chrono_lease = chrono::Duration::from_std(lease).unwrap_or_default();
    tokio::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return done,
            () = tokio::time::sleep(renew_every) => {
                if let Err(e) = store.renew_job_lease(id, chrono_lease).await {
                    tracing::warn!(job = id, error = %e, "renewing an analysis lease failed");
                }
            }
        }
    }
}

/// One worker: claims due jobs and analyzes them until stopped.
async fn worker(state: AppState, n: usize) {
    let analyzer = state.analyzer.clone();
    let store = state.store.clone();
    let lease = analyzer.lease();
    let mut stopped = analyzer.stop.subscribe();
    let mut failures = 0;
    loop {
        if store.is_closed() || *stopped.borrow() {
            return;
        }
        let claimed = tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            c = store.claim_due_job(lease) => c,
        };
        let idle = match claimed {
            Ok(Some(job)) => {
                failures = 0;
                tokio::select! {
                    _ = stopped.wait_for(|s| *s) => return,
                    () = run(&state, job) => {}
                }
                continue;
            }
            Ok(None) => analyzer.options.poll,
            Err(e) => {
                // The store is down: look again after a back-off, without a log line per poll.
                failures += 1;
                if failures == 1 {
                    tracing::warn!(worker = n, error = %e, "analysis worker cannot read its queue");
                }
                backoff(failures, analyzer.options.max_backoff)
            }
        };
        tokio::select! {
            _ = stopped.wait_for(|s| *s) => return,
            () = analyzer.wake.notified() => {}
            () = tokio::time::sleep(idle) => {}
        }
    }
}

/// Does one claimed job and settles it.
async fn run(state: &AppState, job: ClaimedJob) {
    let store = &state.store;
    let analyzer = &state.analyzer;
    let key = (job.project_id, job.id, job.generation, job.attempts);
    let project = match store.project_by_id(job.project_id).await {
        Ok(Some(p)) => p,
        Ok(None) => {
            // The project is gone: nothing to do.
            let _ = store.finish_job(job.id, job.generation).await;
            return;
        }
        Err(e) => {
            analyzer.settle(store, key, Err(e)).await;
            return;
        }
    };
    tracing::info!(job = job.id, project = %project.slug, target = ?job.target, "job claimed");
    started(
        job.id,
        job.generation,
        job.attempts,
        job.target.kind(),
        "worker",
    );
    let lease = analyzer.options.lease;
    let nothing_after = |()| Vec::new();
    let outcome = match &job.target {
        JobTarget::Commit { branch, commit_sha } => {
            let work = async {
                let again =
                    analyze_upload(store, &project, branch, commit_sha, &Scope::Commit).await?;
                // The settings as they are now: comments turned on meanwhile are posted.
                let comments = posts_comments(store, &project)
                    .await?
                    .then(|| comments_of(branch, commit_sha));
                Ok(then_after_upload(comments, again))
            };
            with_lease(store, job.id, lease, work).await
        }
        JobTarget::Reanalysis { branch, commit_sha } => {
            let work = async {
                super::analyze_commit(store, &project, branch, commit_sha, &Scope::Commit).await?;
                // Its runs' reports may have changed: their PR comments follow.
                Ok(refresh_of(store, &project).await?.into_iter().collect())
            };
            with_lease(store, job.id, lease, work).await
        }
        JobTarget::Project => {
            let work = recompute_then_refresh(store, &project);
            with_lease(store, job.id, lease, work).await
        }
        JobTarget::Comments { branch, commit_sha } => {
            let work = post_pr_comments(state, &project, branch, commit_sha);
            with_lease(store, job.id, lease, work)
                .await
                .map(nothing_after)
        }
        JobTarget::Refresh => {
            let work = crate::bot::refresh(state, &project, base_url(state));
            with_lease(store, job.id, lease, work)
                .await
                .map(nothing_after)
        }
        JobTarget::Scan { branch } => {
            let began = std::time::Instant::now();
            let work = super::scan::scan_branch(store, &project, branch);
            let outcome = with_lease(store, job.id, lease, work)
                .await
                .map(nothing_after);
            let again_at = chrono::Utc::now() + super::scan::spacing(began.elapsed());
            analyzer
                .settle_again_at(store, key, outcome, Some(again_at))
                .await;
            return;
        }
    };
    analyzer.settle(store, key, outcome).await;
}

/// The address PR comments link to: the server's `--public-url`, else the address the last
/// upload reached this server at.
fn base_url(state: &AppState) -> String {
    state
        .public_url
        .as_deref()
        .map(str::to_string)
        .or_else(|| {
            state
                .analyzer
                .last_base_url
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        })
        .unwrap_or_else(|| "http://localhost".to_string())
}

/// Posts the PR comment of every run of a commit that names a pull request (each report at
/// most once: [`crate::bot::post`]).
async fn post_pr_comments(
    state: &AppState,
    project: &Project,
    branch: &str,
    commit_sha: &str,
) -> Result<(), StorageError> {
    let base = base_url(state);
    for id in state
        .store
        .commit_runs(project.id, branch, commit_sha)
        .await?
    {
        crate::bot::post(state, project, id, &base).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_one_second_up_to_the_maximum() {
        let max = Duration::from_secs(30);
        let waits: Vec<u64> = (0..8).map(|a| backoff(a, max).as_secs()).collect();
        assert_eq!(waits, [1, 1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn retry_after_is_the_time_to_drain_the_jobs_over_the_bound_at_the_recent_rate() {
        let analyzer = Analyzer::new(AnalyzerOptions {
            max_queued: 64,
            ..Default::default()
        });
        assert_eq!(analyzer.retry_after_secs(64), RETRY_AFTER_UNKNOWN_RATE_SECS);
        // 11 finishes 100 ms apart up to now: 10 jobs per second.
        let t0 = std::time::Instant::now() - Duration::from_secs(1);
        for k in 0..11 {
            analyzer
                .finished
                .lock()
                .unwrap()
                .push_back(t0 + Duration::from_millis(100 * k));
        }
        // 1 job over the bound: 0.1 s, at least 1 s; 25 over: 2.5 s → 3 s; far over: 60 s.
        assert_eq!(analyzer.retry_after_secs(64), 1);
        assert_eq!(analyzer.retry_after_secs(88), 3);
        assert_eq!(analyzer.retry_after_secs(10_000), 60);
        // Only the last FINISHES_KEPT are kept.
        for _ in 0..FINISHES_KEPT {
            analyzer.note_finished();
        }
        assert_eq!(analyzer.finished.lock().unwrap().len(), FINISHES_KEPT);
    }

    #[test]
    fn the_drain_rate_counts_the_finishes_of_the_last_ten_seconds_up_to_now() {
        let now = std::time::Instant::now() + Duration::from_secs(60);
        let at = |secs_ago: f64| now - Duration::from_secs_f64(secs_ago);
        // 9 finishes 100 ms apart, the last now; one before the window is left out.
        let mut finished: std::collections::VecDeque<_> = [30.0].into_iter().map(at).collect();
        finished.extend((0..9).rev().map(|k| at(0.1 * k as f64)));
        let rate = drain_rate(&finished, now, 8).unwrap();
        assert!((rate - 10.0).abs() < 1e-9, "{rate}");
        assert_eq!(drain_rate(&finished, now, 10), None);
        // The same finishes seen 4.2 s later: 8 jobs in 5 s.
        let later = now + Duration::from_secs_f64(4.2);
        let rate = drain_rate(&finished, later, 8).unwrap();
        assert!((rate - 1.6).abs() < 1e-9, "{rate}");
        // Out of the window altogether: no rate.
        assert_eq!(
            drain_rate(&finished, now + Duration::from_secs(11), 2),
            None
        );
        assert_eq!(drain_rate(&Default::default(), now, 2), None);
    }

    #[test]
    fn the_queue_holds_max_backlog_of_jobs_at_the_drain_rate_and_at_least_max_queued() {
        let backlog = Duration::from_secs(5);
        assert_eq!(queue_bound(64, backlog, None), 64);
        // 8 commits a second (an 1,800-commit history): 40 jobs are 5 s; the count holds.
        assert_eq!(queue_bound(64, backlog, Some(8.0)), 64);
        // 150 a second (the peer's 100 commits): 750 jobs are 5 s.
        assert_eq!(queue_bound(64, backlog, Some(150.0)), 750);
        assert_eq!(queue_bound(64, Duration::ZERO, Some(150.0)), 64);
    }
}
