//! `benchtrail-server`: starts the benchtrail web service.
//!
//! `benchtrail-server [--bind ADDR] [--database-url URL]` (env `BENCHTRAIL_BIND`,
//! `DATABASE_URL`). The default database is a SQLite file under `./benchtrail-data/`, so a new
//! user needs nothing installed. Logs go to stderr (`RUST_LOG` filters them).
//!
//! The admin token comes from the environment (`BENCHTRAIL_ADMIN_TOKEN`) or a file
//! (`--admin-token-file`), never from the command line, which every user of the machine can
//! read (`ps`); without either, one is generated on the first start and printed once.

use benchtrail_server::analysis::jobs::{Analyzer, AnalyzerOptions};
use benchtrail_server::app::AppState;
use benchtrail_server::auth::throttle::{
    AuthThrottle, ThrottleLimits, DEFAULT_FAILURES_PER_MINUTE,
};
use benchtrail_server::auth::{hash_token, new_token};
use benchtrail_server::pages::session::SessionSettings;
use benchtrail_server::storage::Store;
use clap::Parser;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable holding the admin token.
const ADMIN_TOKEN_ENV: &str = "BENCHTRAIL_ADMIN_TOKEN";

/// The default database: a SQLite file relative to the working directory.
const DEFAULT_DATABASE_URL: &str = "sqlite://benchtrail-data/benchtrail.db?mode=rwc";

/// benchtrail: history of LLM-inference serving benchmarks, and the regressions in it.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "BENCHTRAIL_BIND", default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// Database URL: `sqlite://PATH?mode=rwc` or `postgres://USER@HOST:PORT/DB`.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, hide_env_values = true)]
    database_url: String,
    /// A file whose first line is the admin token (creates projects and tokens), e.g. a
    /// container secret. Or set the environment variable BENCHTRAIL_ADMIN_TOKEN. At least 32
    /// characters (`openssl rand -hex 32`). When neither is given, one is generated on the
    /// first start, printed once, and only its hash is kept.
    #[arg(long, env = "BENCHTRAIL_ADMIN_TOKEN_FILE", value_name = "PATH")]
    admin_token_file: Option<PathBuf>,
    /// No longer accepted (the process list shows it to every user): refused with a message.
    #[arg(long = "admin-token", hide = true, num_args = 0..=1, allow_hyphen_values = true)]
    removed_admin_token: Option<Option<String>>,
    /// Failed authentications (an unknown, expired or revoked token) allowed per client
    /// address per minute, and at once; beyond them the address's requests with a token get
    /// 429 until it refills. 0 turns this off (behind a reverse proxy, where every client has
    /// the proxy's address, throttle there instead).
    #[arg(long, env = "BENCHTRAIL_AUTH_FAILURES_PER_MINUTE", value_name = "N", default_value_t = DEFAULT_FAILURES_PER_MINUTE)]
    auth_failures_per_minute: u32,
    /// The address users reach this server at, e.g. `https://bench.example.com`: absolute
    /// links in reports and PR comments. Default: each request's `Host` header.
    #[arg(long, env = "BENCHTRAIL_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
    /// Whether browser session cookies get `Secure` (sent over HTTPS only): `true` or
    /// `false`. Default: `true` when --public-url starts with `https://`. The server speaks
    /// plain HTTP and trusts no proxy header, so behind a TLS proxy say so here.
    #[arg(long, env = "BENCHTRAIL_SECURE_COOKIES", value_name = "BOOL")]
    secure_cookies: Option<bool>,
    /// Hours a browser session (`/sign-in`) lasts, unless its token expires sooner.
    #[arg(long, env = "BENCHTRAIL_SESSION_HOURS", value_name = "HOURS", default_value_t = 12,
          value_parser = clap::value_parser!(i64).range(1..=24 * 366))]
    session_hours: i64,
    /// Generate a new admin token (replacing the stored one), print it, and go on serving.
    #[arg(long)]
    reset_admin_token: bool,
    /// Write an online backup of the SQLite database to this new file and exit (the server
    /// that uses the database may keep running). Postgres: use `pg_dump -Fc`.
    #[arg(long, value_name = "PATH")]
    backup_to: Option<std::path::PathBuf>,
    /// Background analysis workers (they take analyses the uploads left queued, and retry
    /// failed ones).
    #[arg(
        long,
        env = "BENCHTRAIL_ANALYSIS_WORKERS",
        default_value_t = 2,
        value_name = "N"
    )]
    analysis_workers: usize,
    /// Uploads analyzed before their answer at once; beyond, an upload answers at once with
    /// the verdict `pending` and a worker analyzes it.
    #[arg(
        long,
        env = "BENCHTRAIL_INLINE_ANALYSES",
        default_value_t = 4,
        value_name = "N"
    )]
    inline_analyses: usize,
    /// Seconds an analysis job stays claimed without a renewal: after a crash, how long until
    /// another worker (or this server, restarted) takes it up.
    #[arg(long, env = "BENCHTRAIL_ANALYSIS_LEASE_SECS", default_value_t = 30, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(3..))]
    analysis_lease_secs: u64,
    /// Analyses queued before new uploads are answered 503 with `Retry-After` (their clients
    /// retry): backpressure, so an acknowledged upload is analyzed soon. The bound while the
    /// server's drain rate is unknown, and the least bound once it is (see
    /// `--max-analysis-backlog`).
    #[arg(long, env = "BENCHTRAIL_MAX_QUEUED_ANALYSES", default_value_t = 64, value_name = "N",
          value_parser = clap::value_parser!(i64).range(1..))]
    max_queued_analyses: i64,
    /// Longest wait the analysis queue may hold: while this server finishes analyses at a known
    /// rate (its last 10 s), the queue takes that many seconds of them before new uploads are
    /// answered 503, when that is more than `--max-queued-analyses`. A number of seconds, or
    /// with a unit: `500ms`, `5s`; `0`: the count alone bounds the queue.
    #[arg(long, env = "BENCHTRAIL_MAX_ANALYSIS_BACKLOG", value_name = "DURATION",
          default_value = "5s", value_parser = parse_backlog)]
    max_analysis_backlog: std::time::Duration,
    /// Longest time a new upload that finds the analysis queue full waits for room before it
    /// is answered 503 (it does not wait when the queue is further over than that drains).
    /// A number of seconds, or with a unit: `500ms`, `2s`; `0` refuses at once.
    #[arg(long, env = "BENCHTRAIL_ADMISSION_WAIT", value_name = "DURATION", default_value = "2s",
          value_parser = parse_wait)]
    admission_wait: std::time::Duration,
    /// Timeouts and the connection limit.
    #[command(flatten)]
    serve: benchtrail_server::serve::ServeArgs,
}

/// `--admission-wait`: a duration as `--header-timeout` takes it
/// ([`benchtrail_server::serve::parse_duration`]), or zero (`0`, `0s`, `0ms`): no wait.
fn parse_wait(text: &str) -> Result<std::time::Duration, String> {
    parse_duration_or_zero(text, "no wait")
}

/// `--max-analysis-backlog`: [`parse_wait`]'s durations, where zero means the count alone.
fn parse_backlog(text: &str) -> Result<std::time::Duration, String> {
    parse_duration_or_zero(text, "the count of --max-queued-analyses alone")
}

/// A duration, or zero in any unit; the error names what zero means (`zero_means`).
fn parse_duration_or_zero(text: &str, zero_means: &str) -> Result<std::time::Duration, String> {
    let number = text
        .trim()
        .trim_end_matches("ms")
        .trim_end_matches(['s', 'm']);
    if number.trim().parse::<f64>() == Ok(0.0) {
        return Ok(std::time::Duration::ZERO);
    }
    benchtrail_server::serve::parse_duration(text)
        .map_err(|e| format!("{e}; or 0 for {zero_means}"))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    use std::io::IsTerminal;
    benchtrail_server::memory::map_large_allocations();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn,tower_http=info".into()),
        )
        .init();
    match run(Args::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.removed_admin_token.is_some() {
        return Err(
            "--admin-token is not accepted: a command line is visible to every user of \
                    the machine (ps). Set the environment variable BENCHTRAIL_ADMIN_TOKEN, or \
                    write the token to a file only you can read and pass --admin-token-file PATH"
                .into(),
        );
    }
    let given = given_admin_token(args.admin_token_file.as_deref())?;
    if given.is_some() && args.reset_admin_token {
        return Err("--reset-admin-token generates a token, but one is given \
                    (BENCHTRAIL_ADMIN_TOKEN / --admin-token-file): use one or the other"
            .into());
    }
    if let Some(path) = &args.backup_to {
        refuse_missing_source(&args.database_url, path)?;
    }
    let store = Store::connect(&args.database_url).await.map_err(|e| {
        format!(
            "cannot open the database {}: {e}",
            redact(&args.database_url)
        )
    })?;
    tracing::info!(database = ?store.backend(), "migrations applied");
    if let Some(path) = &args.backup_to {
        store
            .backup_to(path)
            .await
            .map_err(|e| format!("backup to {}: {e}", path.display()))?;
        eprintln!("backup written to {}", path.display());
        store.close().await;
        return Ok(());
    }
    // Analyses stored by an older server (an older schema of the typed model) are recomputed
    // by the analysis workers; until its project is done, such a run reads as `pending`.
    match benchtrail_server::analysis::enqueue_stale(&store).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            projects = n,
            "analyses of an older schema queued for recomputation"
        ),
        Err(e) => tracing::error!("queueing the recomputation of analyses of an older schema: {e}"),
    }
    let analyzer = Analyzer::new(AnalyzerOptions {
        workers: args.analysis_workers,
        inline: args.inline_analyses,
        lease: std::time::Duration::from_secs(args.analysis_lease_secs),
        max_queued: args.max_queued_analyses,
        max_backlog: args.max_analysis_backlog,
        admission_wait: args.admission_wait,
        ..AnalyzerOptions::default()
    });
    let admin_token_hash =
        admin_token_hash(&store, given.as_deref(), args.reset_admin_token).await?;
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .map_err(|e| {
            format!(
                "cannot listen on {} (--bind / BENCHTRAIL_BIND): {e}",
                args.bind
            )
        })?;
    tracing::info!("listening on http://{}", listener.local_addr()?);
    let state = AppState {
        store: store.clone(),
        admin_token_hash: Arc::new(admin_token_hash),
        public_url: args
            .public_url
            .as_deref()
            .map(|u| Arc::from(u.trim_end_matches('/'))),
        analyzer,
        auth_throttle: Arc::new(AuthThrottle::new(ThrottleLimits {
            failures_per_minute: args.auth_failures_per_minute,
            ..ThrottleLimits::default()
        })),
        sessions: SessionSettings {
            lifetime: chrono::TimeDelta::hours(args.session_hours),
            secure_cookies: args.secure_cookies.unwrap_or_else(|| {
                args.public_url
                    .as_deref()
                    .is_some_and(|u| u.starts_with("https://"))
            }),
        },
    };
    benchtrail_server::serve::serve_with(listener, state, shutdown_signal(), args.serve.into())
        .await?;
    store.close().await;
    Ok(())
}

/// The admin token given by the environment or `file` (its first line, trimmed), checked for
/// length; `None` when neither gives one (an empty variable gives none).
///
/// # Errors
/// Both give one, the variable is set but blank, the file cannot be read or is empty, or the
/// token is shorter than
/// [`MIN_ADMIN_TOKEN_LEN`]. Messages never contain the token.
fn given_admin_token(file: Option<&Path>) -> Result<Option<String>, Box<dyn std::error::Error>> {
    let from_env = match std::env::var(ADMIN_TOKEN_ENV) {
        // Set but blank is a mistake (a container secret that did not resolve), never "unset":
        // starting with the stored or a new token would hide it.
        Ok(token) if token.trim().is_empty() => {
            return Err(format!(
                "{ADMIN_TOKEN_ENV} is set but empty: give the token, or unset the variable"
            )
            .into())
        }
        Ok(token) => Some(token.trim().to_string()),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(format!("{ADMIN_TOKEN_ENV} is not valid UTF-8").into())
        }
    };
    let token = match (from_env, file) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "both {ADMIN_TOKEN_ENV} and --admin-token-file give an admin token: use one"
            )
            .into())
        }
        (Some(token), None) => token,
        (None, Some(path)) => read_admin_token_file(path)?,
        (None, None) => return Ok(None),
    };
    let length = token.chars().count();
    if length < MIN_ADMIN_TOKEN_LEN {
        return Err(format!(
            "the admin token must be at least {MIN_ADMIN_TOKEN_LEN} characters long, not \
             {length} (e.g. `openssl rand -hex 32`)"
        )
        .into());
    }
    Ok(Some(token))
}

/// The first line of `path`, trimmed; warns when other users may read the file.
fn read_admin_token_file(path: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read the admin token file {} (--admin-token-file): {e}",
            path.display()
        )
    })?;
    let token = text.lines().next().unwrap_or_default().trim().to_string();
    if token.is_empty() {
        return Err(format!(
            "the admin token file {} has no token on its first line",
            path.display()
        )
        .into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                "the admin token file {} may be read by other users (mode {:o}): chmod 600 it",
                path.display(),
                mode & 0o777
            );
        }
    }
    Ok(token)
}

/// The admin token's hash: from the environment or file, else the stored one, else a new
/// token printed once.
async fn admin_token_hash(
    store: &Store,
    given: Option<&str>,
    reset: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    if let Some(token) = given {
        return Ok(hash_token(token));
    }
    if !reset {
        if let Some(hash) = store.admin_token_hash().await? {
            tracing::info!("using the admin token generated on the first start (lost it? restart with --reset-admin-token)");
            return Ok(hash);
        }
    }
    let token = new_token();
    let hash = hash_token(&token);
    store.set_admin_token_hash(&hash).await?;
    eprintln!(
        "\nbenchtrail admin token (shown once; only its hash is stored):\n\n    {token}\n\n\
         Use it with `benchtrail project create` and `benchtrail token create` (BENCHTRAIL_ADMIN_TOKEN).\n\
         Lost it? Restart with --reset-admin-token.\n"
    );
    Ok(hash)
}

/// Shortest admin token accepted from the environment or a file, in characters: 32 random hex
/// digits are 128 bits, so guessing is hopeless even unthrottled. Generated ones have 67.
const MIN_ADMIN_TOKEN_LEN: usize = 32;

/// `--backup-to` of a SQLite database that does not exist is a typo, not an empty backup:
/// connecting would create the file (and its folder) and back up nothing.
fn refuse_missing_source(
    database_url: &str,
    target: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(rest) = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
    else {
        return Ok(());
    };
    let file = rest.split('?').next().unwrap_or_default();
    if file != ":memory:" && !std::path::Path::new(file).exists() {
        return Err(format!(
            "--backup-to {}: there is no database at {file} (check --database-url / DATABASE_URL)",
            target.display()
        )
        .into());
    }
    Ok(())
}

/// The database URL with any password replaced by `***`, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
    tracing::info!("shutting down");
}

#[cfg(test)]
mod tests {
    use super::{parse_backlog, parse_wait};
    use std::time::Duration;

    #[test]
    fn an_admission_wait_is_zero_in_any_unit_or_a_positive_duration() {
        for zero in ["0", "0s", "0ms", " 0m "] {
            assert_eq!(parse_wait(zero), Ok(Duration::ZERO), "{zero}");
        }
        assert_eq!(parse_wait("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_wait("2"), Ok(Duration::from_secs(2)));
        for bad in ["-1", "abc", "", "2h"] {
            let e = parse_wait(bad).unwrap_err();
            assert!(e.ends_with("; or 0 for no wait"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_analysis_backlog_is_zero_or_a_duration_and_its_error_says_what_zero_means() {
        assert_eq!(parse_backlog("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_backlog("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_backlog("1500ms"), Ok(Duration::from_millis(1500)));
        let e = parse_backlog("soon").unwrap_err();
        assert!(
            e.ends_with("; or 0 for the count of --max-queued-analyses alone"),
            "{e}"
        );
    }
}
