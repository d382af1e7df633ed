//! The command line, as clap derive types. Names here are a contract other tools rely on:
//! `benchtrail upload|project create|token create|list|revoke` with `--server`/`--token` accepted on every
//! subcommand (or from `BENCHTRAIL_URL`/`BENCHTRAIL_TOKEN`).

use benchtrail_core::access::Scope;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use uuid::Uuid;

/// benchtrail: upload LLM-serving benchmark results from CI and manage projects.
///
/// Exit status: 0 when the request succeeded (for `upload`: the data is stored), 2 on any error;
/// `compare`, `check` and `run` exit 1 for a `fail` verdict, 3 for `incomplete`, and 2 when the
/// verdict is still `pending` (not analyzed) once `--wait` runs out. With JSON
/// output (`upload --json`, `--format json`, `--report-format json`) an error is also printed
/// on stdout as `{"error": {"kind", "message", ...}}`.
#[derive(Debug, Parser)]
#[command(name = "benchtrail", version, about, propagate_version = true)]
pub struct Cli {
    /// Base URL of the benchtrail server, e.g. `https://bench.example.com`.
    #[arg(long, global = true, env = "BENCHTRAIL_URL", value_name = "URL")]
    pub server: Option<String>,
    /// API token: a project upload token for `upload`, the admin token for `project create`
    /// and `token create|list|revoke` (which also read BENCHTRAIL_ADMIN_TOKEN). An environment
    /// variable keeps it out of the process list, which every user of the machine can read.
    #[arg(
        long,
        global = true,
        env = "BENCHTRAIL_TOKEN",
        hide_env_values = true,
        value_name = "T"
    )]
    pub token: Option<String>,
    /// Retries of a request that failed for a reason that may pass (no connection, HTTP 429,
    /// 5xx but 501/505) before giving up with exit status 2: uploads (the same body each time,
    /// so the same run id: never stored twice) and the reads of `check` and `run`; creating
    /// a project or a token is never retried. Waits about 1, 2, 4, 8 s (doubling, with
    /// jitter, at most 40 s), or the server's `Retry-After` on 429/503 (at most 120 s). Each
    /// retry prints one line on stderr. 0: one attempt.
    #[arg(
        long,
        global = true,
        env = "BENCHTRAIL_RETRIES",
        value_name = "N",
        default_value_t = crate::retry::DEFAULT_RETRIES
    )]
    pub retries: u32,
    /// The first wait between retries, in milliseconds (each next one doubles). For tests and
    /// impatient pipelines.
    #[arg(
        long,
        global = true,
        hide = true,
        env = "BENCHTRAIL_RETRY_DELAY_MS",
        value_name = "MS",
        default_value_t = 1000
    )]
    pub retry_delay_ms: u64,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// `upload` has many flags; the enum is built once per process, so its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Upload benchmark result files, folders or standard input (`-`) as one run (or print the
    /// chosen files and the normalized run with --dry-run).
    Upload(UploadArgs),
    /// Manage projects (admin token).
    #[command(subcommand)]
    Project(ProjectCommand),
    /// Manage project API tokens (admin token).
    #[command(subcommand)]
    Token(TokenCommand),
    /// List the result formats `upload` reads, each with a command line that produces it.
    Formats,
    /// Compare two sets of result files on this machine, with no server: the same rules and
    /// report as the server's. Exit status 0 pass or warn, 1 fail, 3 incomplete (a cell of OLD
    /// missing from NEW), 2 error.
    Compare(CompareArgs),
    /// The verdict of a stored run and the findings behind it, waiting (up to --wait seconds)
    /// while it is not analyzed yet or provisional. Exit status 0 pass or warn, 1 fail, 3
    /// incomplete, 2 error or still pending (not analyzed) when --wait runs out.
    Check(CheckArgs),
    /// Run a benchmark command (its output streamed), upload the result files it wrote with
    /// the command line recorded, wait for the analysis and print the report. Exit status 0
    /// pass or warn, 1 fail, 3 incomplete, 2 error, a failed benchmark (nothing uploaded) or a
    /// verdict still pending (not analyzed) when --wait runs out.
    Run(RunArgs),
}

/// `benchtrail upload`.
#[derive(Debug, Clone, Default, Args)]
pub struct UploadArgs {
    /// Project slug.
    #[arg(long, value_name = "P", required_unless_present = "dry_run")]
    pub project: Option<String>,
    /// Commit measured (hex SHA). Default, in CI: GitHub Actions `pull_request.head.sha` of
    /// the event payload on a pull-request event (`$GITHUB_SHA` is then GitHub's merge commit,
    /// not a commit of the PR), else `$GITHUB_SHA`; GitLab
    /// `$CI_MERGE_REQUEST_SOURCE_BRANCH_SHA` (merged-results pipelines), else `$CI_COMMIT_SHA`;
    /// Buildkite `$BUILDKITE_COMMIT` (when a SHA). Else `git rev-parse HEAD` in the current
    /// directory.
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// Parents of the commit, first parent first (full hex SHAs, or abbreviations the checkout
    /// can expand; comma-separated or repeated), instead of the ones git records: a shallow clone (`fetch-depth: 1`) records
    /// none, and history is ordered by ancestry. Default: the parents from git (none for a
    /// --commit that is not in the checkout).
    #[arg(long, value_name = "SHA[,SHA...]", value_delimiter = ',', value_parser = parse_sha)]
    pub parents: Vec<String>,
    /// Commit time (RFC 3339, e.g. `2026-11-02T10:00:00+01:00`; the offset is kept), for a
    /// commit that is not in the local checkout. Default: the committer time from git, with
    /// the committer's offset.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub commit_time: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// First line of the commit message, for a commit that is not in the local checkout.
    /// Default: the subject from git.
    #[arg(long, value_name = "TEXT")]
    pub commit_subject: Option<String>,
    /// Branch. Default, in CI: GitHub Actions `$GITHUB_HEAD_REF`, then `$GITHUB_REF_NAME`
    /// (when `$GITHUB_REF_TYPE` is `branch`); GitLab `$CI_MERGE_REQUEST_SOURCE_BRANCH_NAME`,
    /// then `$CI_COMMIT_BRANCH`; Buildkite `$BUILDKITE_BRANCH`. Else, when neither --commit nor
    /// the CI names the commit, the checked-out git branch (none when detached).
    #[arg(long, value_name = "B")]
    pub branch: Option<String>,
    /// Pull-request (GitLab: merge-request IID) number the run belongs to. Default, in CI: the
    /// GitHub event payload's `pull_request.number` (else `N` of `$GITHUB_REF`
    /// `refs/pull/N/merge`); GitLab `$CI_MERGE_REQUEST_IID`; Buildkite
    /// `$BUILDKITE_PULL_REQUEST`.
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// Merge base of the pull request with its base branch (only with --pr). Default, with the
    /// CI's pull request: GitHub Actions `git merge-base` of the payload's
    /// `pull_request.base.sha` and the head (needs both in the checkout: `fetch-depth: 0`);
    /// GitLab `$CI_MERGE_REQUEST_DIFF_BASE_SHA`; Buildkite `git merge-base` of
    /// `origin/$BUILDKITE_PULL_REQUEST_BASE_BRANCH` and the commit. Else none.
    #[arg(long, value_name = "SHA", requires = "pr")]
    pub merge_base: Option<String>,
    /// `auto` (nvidia-smi and /proc/cpuinfo) or a JSON file holding a `hardware` object.
    /// Fields set by --config win over these.
    #[arg(long, value_name = "auto|FILE")]
    pub hardware: Option<String>,
    /// JSON file holding a configuration (hardware, model, engine, ...) applied to every result.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Workload cell fields for every result, e.g. `scenario=short-chat,prefix_mode=fresh`.
    /// Keys: scenario, prefix_mode, load_level, max_concurrency, request_rate, burstiness,
    /// input_len, output_len, dataset, num_prompts. Fields a file states win. Repeatable.
    #[arg(long, value_name = "KEY=VALUE,...")]
    pub cell: Vec<String>,
    /// Format of every FILE (e.g. `vllm-bench-serve`). Default: detected from the content.
    /// With a FOLDER, only its files readable as this format are uploaded.
    #[arg(long, value_name = "NAME")]
    pub format: Option<String>,
    /// Client-chosen run id: re-sending the same id stores nothing new.
    #[arg(long, value_name = "UUID")]
    pub run_id: Option<Uuid>,
    /// 0-based index among repeated runs of the same commit and configuration.
    #[arg(long, value_name = "N")]
    pub repeat_index: Option<u32>,
    /// How many runs of this commit the job uploads in all (each with its own
    /// --repeat-index), 1–100. Until the last is in, the server's verdict is provisional
    /// (`pending_repeats`, at most `warn`): the first repeat never fails CI on its own. Default:
    /// the project's `detection.repeats`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeats: Option<u32>,
    /// Link to the CI job. Default: GitHub Actions
    /// `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`; GitLab
    /// `$CI_JOB_URL`; Buildkite `$BUILDKITE_BUILD_URL#$BUILDKITE_JOB_ID`. (CI values are read
    /// only when the provider's marker is set: `GITHUB_ACTIONS`, `GITLAB_CI` or `BUILDKITE` =
    /// `true`.)
    #[arg(long, value_name = "URL")]
    pub ci_job_url: Option<String>,
    /// Free run tag. Repeatable.
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Quality (accuracy) results of the measured model and configuration, uploaded with the
    /// run: benchtrail's `{"quality": [{"task": "gsm8k", "metric": "exact_match", "value":
    /// 0.76, "stderr": 0.01, "samples": 1319}]}` or lm-evaluation-harness's results JSON
    /// (`lm_eval --output_path`'s `results_*.json`). A quantization change without them is
    /// warned about on comparison (`quantization_without_quality`).
    #[arg(long, value_name = "FILE")]
    pub quality: Option<std::path::PathBuf>,
    /// Print the files chosen and the normalized run instead of uploading it.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the outcome as one JSON object on stdout; an error too (and still exit 2):
    /// `{"error": {"kind", "message", ...}}`, with the server's `problem` document when it sent
    /// one. Kinds: problem, http, connection, response, usage, input, benchmark, other.
    #[arg(long)]
    pub json: bool,
    /// Name under which `-` (standard input) is stored. Default: `stdin`.
    #[arg(long, value_name = "NAME")]
    pub stdin_name: Option<String>,
    /// Result files (read as text; one named explicitly must be a result), `-` for standard
    /// input, or folders: a folder (e.g. an AIPerf or GenAI-Perf artifact directory) is walked
    /// in sorted order and its files in a known result format are uploaded, named by their
    /// path so per-request files pair with their summary; warm-up phases, inputs.json, logs
    /// and undetected files are skipped and listed on stderr. A folder without a result file
    /// is an error.
    #[arg(value_name = "FILE|FOLDER|-")]
    pub files: Vec<PathBuf>,
}

/// `benchtrail project ...`.
#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// Create a project.
    Create(ProjectCreateArgs),
}

/// `benchtrail project create`.
#[derive(Debug, Clone, Args)]
pub struct ProjectCreateArgs {
    /// URL-safe name: `[a-z0-9][a-z0-9-_]*`.
    pub slug: String,
    /// Display name. Default: the slug.
    #[arg(long)]
    pub name: Option<String>,
    /// Readable only with a token.
    #[arg(long)]
    pub private: bool,
    /// Repository URL, used to link commits.
    #[arg(long, value_name = "URL")]
    pub repository_url: Option<String>,
    /// The branch plots default to.
    #[arg(long, value_name = "B", default_value = "main")]
    pub default_branch: String,
    /// A `--metadata` key that splits series in this project. Repeatable.
    #[arg(long = "key-field", value_name = "K")]
    pub key_fields: Vec<String>,
}

/// `benchtrail token ...`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a project token; prints it alone on the last line of stdout.
    Create(TokenCreateArgs),
    /// List a project's tokens, oldest first: id, scope, prefix, created, expires, last used
    /// and label; never a secret.
    List(TokenListArgs),
    /// Revoke a project token by its id (see `token list`): refused from the next request on.
    Revoke(TokenRevokeArgs),
}

/// `benchtrail token create`.
#[derive(Debug, Clone, Args)]
pub struct TokenCreateArgs {
    /// Project slug.
    #[arg(long)]
    pub project: String,
    /// What the token may do.
    #[arg(long, value_parser = parse_scope, default_value = "upload", value_name = "read|upload|write")]
    pub scope: Scope,
    /// Days until the token stops working, 1 to 3650. Default: never.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub expires_in_days: Option<u32>,
    /// What the token is for, shown by `token list` (at most 100 characters).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
}

/// `benchtrail token list`.
#[derive(Debug, Clone, Args)]
pub struct TokenListArgs {
    /// Project slug.
    #[arg(long)]
    pub project: String,
    /// Print the server's answer, `{"items": [{"id", "scope", "prefix", "label",
    /// "created_at", "expires_at", "last_used_at"}], "next_cursor": null}`, instead of a table
    /// (an error is then JSON on stdout too).
    #[arg(long)]
    pub json: bool,
}

/// `benchtrail token revoke`.
#[derive(Debug, Clone, Args)]
pub struct TokenRevokeArgs {
    /// Project slug.
    #[arg(long)]
    pub project: String,
    /// The token's id, as `token list` shows it.
    #[arg(value_name = "ID")]
    pub id: i64,
}

/// Parses an RFC 3339 time, keeping its UTC offset.
fn parse_time(s: &str) -> Result<chrono::DateTime<chrono::FixedOffset>, String> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map_err(|e| format!("expected an RFC 3339 time such as 2026-11-02T09:00:00Z: {e}"))
}

/// Checks a commit SHA: 7 to 64 hex digits (what the server accepts); lowercase, as git
/// writes it and the server stores commit SHAs.
fn parse_sha(s: &str) -> Result<String, String> {
    if (7..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(format!(
            "`{s}` is not a commit SHA: expected 7 to 64 hex digits (0-9, a-f)"
        ))
    }
}

/// Parses a token scope.
fn parse_scope(s: &str) -> Result<Scope, String> {
    Scope::parse(s).ok_or_else(|| format!("`{s}` is not a scope: use read, upload or write"))
}

/// How `compare` prints its report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Plain text.
    #[default]
    Terminal,
    /// GitHub-flavoured Markdown (a PR comment, a job summary).
    Markdown,
    /// `{"verdict": ..., "analysis": ...}`: the typed model as the server serves it.
    Json,
}

/// `benchtrail compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The baseline: a result file or folder (one commit, its repeat files its runs), or a
    /// folder of folders (a history: one commit per subfolder, oldest first by name).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The candidate: a result file or folder (one commit).
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// A cell field for results whose files do not state it, `KEY=VALUE` (as `upload`).
    #[arg(long, value_name = "KEY=VALUE")]
    pub cell: Vec<String>,
    /// Project settings JSON (`GET /api/v1/projects/{p}/settings`: detection rules, SLO
    /// profiles); default: the server's defaults.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// A `--metadata` key that is part of the series key (as a project's `key_fields`).
    #[arg(long = "key-field", value_name = "KEY")]
    pub key_field: Vec<String>,
    /// Quality (accuracy) results of the baseline, in a format `upload --quality` reads
    /// (benchtrail's `{"quality": [...]}` or lm-evaluation-harness's results JSON).
    #[arg(long, value_name = "FILE")]
    pub base_quality: Option<PathBuf>,
    /// Quality results of the candidate (as `--base-quality`). A quantization change (weights
    /// or KV-cache dtype) whose candidate has no result for every task of the baseline's
    /// (any, when the baseline has none) is warned about, `quantization_without_quality`,
    /// and the verdict is at least `warn`.
    #[arg(long, value_name = "FILE")]
    pub head_quality: Option<PathBuf>,
    /// Report format (`json`: an error is printed as JSON on stdout too, see `upload --json`).
    #[arg(long = "format", value_enum, default_value_t = ReportFormat::Terminal)]
    pub output: ReportFormat,
    /// Exit 0 whatever the verdict (still 2 on errors).
    #[arg(long)]
    pub no_fail: bool,
}

/// `benchtrail check`.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["run", "commit"])))]
pub struct CheckArgs {
    /// The run's id (an upload's `run_id`).
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// A commit (full SHA): the worst verdict over its runs on `--branch`, with that run's
    /// report (needs `--project`).
    #[arg(long, value_name = "SHA", requires = "project")]
    pub commit: Option<String>,
    /// The project of `--commit`.
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// The branch of `--commit` (default: the project's default branch).
    #[arg(long, value_name = "B", requires = "commit")]
    pub branch: Option<String>,
    /// Seconds to wait while the run is not analyzed yet or its verdict is provisional.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub wait: u64,
    /// Report format (`json`: an error is printed as JSON on stdout too, see `upload --json`).
    #[arg(long = "format", value_enum, default_value_t = ReportFormat::Terminal)]
    pub output: ReportFormat,
    /// Exit 0 whatever the verdict (still 2 on errors).
    #[arg(long)]
    pub no_fail: bool,
    /// The pull (merge) request to comment on. Default: the one the run was uploaded with.
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// Where the report is posted besides stdout.
    #[command(flatten)]
    pub comment: CommentArgs,
}

/// Where `run` and `check` post the report besides stdout: the pull request's one sticky
/// comment, and on GitHub Actions the job summary (`$GITHUB_STEP_SUMMARY`, always).
#[derive(Debug, Clone, Default, Args)]
pub struct CommentArgs {
    /// Post the report as a comment on the GitHub pull request and update that same comment
    /// on later runs (found by a hidden marker per project; one section per --suite). Needs
    /// `GITHUB_TOKEN` (with `pull-requests: write`) and `GITHUB_REPOSITORY`; `GITHUB_API_URL`
    /// for GitHub Enterprise. A comment that cannot be written is a warning: the exit status
    /// stays the verdict's.
    #[arg(long)]
    pub github_comment: bool,
    /// The same on the GitLab merge request (notes API). Needs `GITLAB_TOKEN` (api scope),
    /// `CI_PROJECT_ID` and `CI_API_V4_URL` (set by GitLab CI).
    #[arg(long)]
    pub gitlab_comment: bool,
    /// Post a comment even when the verdict passes and none exists yet (by default a passing
    /// run only updates an existing comment, e.g. to "no regressions at <sha>").
    #[arg(long)]
    pub comment_always: bool,
    /// The benchmark suite this report is: its section in the project's comment.
    #[arg(long, value_name = "NAME", default_value = "benchmarks")]
    pub suite: String,
}

/// `benchtrail run [UPLOAD OPTIONS] -- COMMAND...`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The upload's options (`--project`, `--commit`, `--cell`, `--repeats`, ...); result files
    /// given here are uploaded besides those the command wrote.
    #[command(flatten)]
    pub upload: UploadArgs,
    /// A result file or folder the command writes (repeatable), when its flags do not say
    /// (`--result-filename`/`--result-dir`, `--output-file`, `--artifact-dir`,
    /// `--output-path`, `--results-dir` are read from the command line).
    #[arg(long = "result", value_name = "PATH")]
    pub results: Vec<PathBuf>,
    /// Seconds to wait for the analysis (and announced repeats) before reporting.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub wait: u64,
    /// Report format (`json`: an error is printed as JSON on stdout too, see `upload --json`).
    #[arg(long = "report-format", value_enum, default_value_t = ReportFormat::Terminal)]
    pub output: ReportFormat,
    /// Exit 0 whatever the verdict (still 2 on errors and a failed benchmark).
    #[arg(long)]
    pub no_fail: bool,
    /// Where the report is posted besides stdout (the PR comment takes the upload's --pr).
    #[command(flatten)]
    pub comment: CommentArgs,
    /// The benchmark command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
