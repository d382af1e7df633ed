//! `benchtrail-server`: starts the benchtrail web service.
//!
//! `benchtrail-server [--bind ADDR] [--database-url URL]` (env `BENCHTRAIL_BIND`,
//! `DATABASE_URL`). The default database is a SQLite file under `./benchtrail-data/`, so a new
//! user needs nothing installed. Logs go to stderr (`RUST_LOG` filters them).

use benchtrail_server::app::{serve, AppState};
use benchtrail_server::auth::{hash_token, new_token};
use benchtrail_server::storage::Store;
use clap::Parser;
use std::net::SocketAddr;
use std::sync::Arc;

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
    /// The admin token (creates projects and tokens). When unset, one is generated on the
    /// first start, printed once, and only its hash is kept.
    #[arg(long, env = "BENCHTRAIL_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// The address users reach this server at, e.g. `https://bench.example.com`: absolute
    /// links in reports and PR comments. Default: each request's `Host` header.
    #[arg(long, env = "BENCHTRAIL_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
    /// Generate a new admin token (replacing the stored one), print it, and go on serving.
    #[arg(long)]
    reset_admin_token: bool,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    use std::io::IsTerminal;
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
    let store = Store::connect(&args.database_url).await.map_err(|e| {
        format!(
            "cannot open the database {}: {e}",
            redact(&args.database_url)
        )
    })?;
    tracing::info!(database = ?store.backend(), "migrations applied");
    // Analyses stored by an older server (an older schema of the typed model) are recomputed
    // in the background; until its project is done, such a run reads as not analyzed.
    let upgrading = store.clone();
    tokio::spawn(async move {
        match benchtrail_server::analysis::recompute_stale(&upgrading).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(projects = n, "analyses of an older schema recomputed"),
            Err(e) => tracing::error!("recomputing analyses of an older schema: {e}"),
        }
    });
    let admin_token_hash =
        admin_token_hash(&store, args.admin_token.as_deref(), args.reset_admin_token).await?;
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
    };
    serve(listener, state, shutdown_signal()).await?;
    store.close().await;
    Ok(())
}

/// The admin token's hash: from the flag/env, else the stored one, else a new token printed once.
async fn admin_token_hash(
    store: &Store,
    given: Option<&str>,
    reset: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    if let Some(token) = given.filter(|t| !t.is_empty()) {
        if reset {
            return Err("--reset-admin-token generates a token, but one is given (--admin-token / BENCHTRAIL_ADMIN_TOKEN): use one or the other".into());
        }
        if token.len() < MIN_ADMIN_TOKEN_LEN {
            return Err(format!(
                "the admin token must be at least {MIN_ADMIN_TOKEN_LEN} characters long"
            )
            .into());
        }
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
         Use it with `benchtrail project create` and `benchtrail token create` (--token or BENCHTRAIL_TOKEN).\n\
         Lost it? Restart with --reset-admin-token.\n"
    );
    Ok(hash)
}

/// Shortest admin token accepted from the flag or environment: guessing must be hopeless.
const MIN_ADMIN_TOKEN_LEN: usize = 16;

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
