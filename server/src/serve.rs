//! The accept loop: HTTP/1.1 connections with timeouts, a connection limit and graceful
//! shutdown, served by hyper directly (axum's own `serve` has neither timeouts nor a limit).
//!
//! What bounds each way a client can hold the server:
//! - **Header read** ([`ServeOptions::header_timeout`]): hyper's `header_read_timeout`. Its
//!   timer starts whenever hyper waits for a request head, which is on a new connection and
//!   again after every response of a keep-alive connection (hyper 1.x `Conn::poll_read_head`
//!   arms it as soon as the connection is back to reading), so it is also the idle keep-alive
//!   timeout: a client that connects and sends nothing, sends a head one byte a second, or
//!   leaves a kept-alive connection idle is disconnected after it.
//! - **Body read** ([`ServeOptions::body_timeout`]): the longest pause between two chunks of a
//!   request body ([`crate::timeouts`]), answered 408.
//! - **Whole request** ([`ServeOptions::request_timeout`]): generous, because an upload is
//!   analysed before it is answered; answered 503 with `Retry-After` ([`crate::timeouts`]).
//! - **Connections** ([`ServeOptions::max_connections`]): the loop accepts a connection only
//!   while it holds a permit for it. Beyond the limit, new connections wait in the kernel's
//!   listen backlog (and are accepted, in order, as others close) rather than being accepted
//!   and dropped: a burst of legitimate clients is delayed, not refused, and the header
//!   timeout guarantees that permits held by silent clients come back.
//! - **Descriptors**: an `accept` failing with `EMFILE`/`ENFILE` (or any other non-connection
//!   error) is logged and retried after a short, growing pause, so the server serves again
//!   as soon as descriptors are free.

use crate::app::AppState;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

/// Default of [`ServeOptions::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(15);
/// Default of [`ServeOptions::body_timeout`].
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`ServeOptions::request_timeout`]: an upload of a 25 MB file on a slow link plus
/// its analysis fits with room to spare.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Default of [`ServeOptions::max_connections`]: half of the usual soft limit of 1024 open
/// files, leaving room for the database and log files.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// The first pause after an `accept` error (`EMFILE`, `ENFILE`, `ENOMEM`, ...).
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(50);
/// The longest pause after repeated `accept` errors.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// How long no analysis or scan must finish before freed memory goes back to the operating
/// system (`crate::memory`): long enough that a CI job's repeats, uploaded back to back, are
/// one burst; short enough that RSS at rest is reached within seconds.
const RELEASE_AFTER_QUIET: Duration = Duration::from_secs(2);

/// The limits of [`serve_with`]. `Default` gives the `DEFAULT_*` constants of this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// The longest a connection may take to send a request head, counted from when the
    /// server starts waiting for it: on a new connection, and after each response of a
    /// keep-alive connection (so it is also the idle keep-alive timeout). Then the connection
    /// is closed without an answer.
    pub header_timeout: Duration,
    /// The longest pause between two chunks of a request body; then the request is answered
    /// 408 (a problem document under `/api/`) and the connection closed.
    pub body_timeout: Duration,
    /// The longest a request may take from its head to its answer; then it is answered 503
    /// with `Retry-After` (a problem document under `/api/`). The handler is dropped: an upload
    /// interrupted that way is either stored whole or not at all, and a retry is idempotent.
    pub request_timeout: Duration,
    /// How many connections are served at once (at least 1); further ones wait in the
    /// kernel's listen backlog until one closes.
    pub max_connections: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Serves the application of `state` on `listener` under `options` until `shutdown`
/// completes; then stops accepting, lets every connection finish its request in flight
/// (idle ones close at once), and returns when all are closed.
///
/// # Errors
/// None in practice: failed `accept` calls are retried, failed connections logged.
pub async fn serve_with(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    options: ServeOptions,
) -> std::io::Result<()> {
    // The analysis workers run while the server serves (`crate::analysis::jobs`).
    state.analyzer.start(&state);
    // Stops with the server (aborted below): one per served application.
    let trimmer = tokio::spawn(crate::memory::release_when_idle(RELEASE_AFTER_QUIET));
    let analyzer = state.analyzer.clone();
    let app = crate::app::router_with(state, &options);
    let max = u32::try_from(options.max_connections.max(1)).unwrap_or(u32::MAX);
    let permits = Arc::new(Semaphore::new(max as usize));
    let (stop, stopping) = watch::channel(false);
    tokio::pin!(shutdown);
    let mut backoff = ACCEPT_BACKOFF_MIN;
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break, // never closed
            },
        };
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                backoff = ACCEPT_BACKOFF_MIN;
                tokio::spawn(connection(
                    stream,
                    peer,
                    app.clone(),
                    options.header_timeout,
                    stopping.clone(),
                    permit,
                ));
            }
            // The peer gave up before the accept: nothing to wait for.
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                // Most likely out of descriptors (EMFILE/ENFILE): the pending connection stays
                // in the backlog, so retrying at once would spin. Descriptors come back as
                // connections finish or time out.
                tracing::error!(
                    error = %e,
                    pause_ms = backoff.as_millis() as u64,
                    "accept failed; retrying after a pause"
                );
                drop(permit);
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
    // New connections are refused from here on.
    drop(listener);
    let _ = stop.send(true);
    // Every connection holds a permit until it is closed.
    let _ = permits.acquire_many(max).await;
    analyzer.stop();
    trimmer.abort();
    Ok(())
}

/// Errors of `accept` that concern one connection only (the peer reset it while it waited).
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

/// Serves one connection until it closes (or, once `stopping` turns true, until its request
/// in flight is answered). `_permit` is its slot under the connection limit.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    header_timeout: Duration,
    mut stopping: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    // Answers are written whole; Nagle would only delay their last segment.
    let _ = stream.set_nodelay(true);
    // The peer's address for handlers that ask for it (`ConnectInfo<SocketAddr>`), as axum's
    // `into_make_service_with_connect_info` would give it.
    let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        tower::ServiceExt::oneshot(app.clone(), request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = async {
            // The guard `wait_for` returns is not `Send`: dropped here.
            let _ = stopping.wait_for(|stop| *stop).await;
        } => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        // Timeouts, resets and malformed requests: the client's doing, not the server's.
        tracing::debug!(%peer, error = %e, "connection closed with an error");
    }
}

/// The command-line flags (and environment variables) of [`ServeOptions`], for
/// `benchtrail-server` (`#[command(flatten)]`).
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Longest wait for a request head, on a new connection and between the requests of a
    /// kept-alive one (so also the idle keep-alive timeout); then the connection is closed.
    /// A number of seconds, or with a unit: `500ms`, `15s`, `2m`.
    #[arg(long, env = "BENCHTRAIL_HEADER_TIMEOUT", value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub header_timeout: Duration,
    /// Longest pause between two chunks of a request body; then 408.
    #[arg(long, env = "BENCHTRAIL_BODY_TIMEOUT", value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub body_timeout: Duration,
    /// Longest time from a request's head to its answer (an upload is analysed before it is
    /// answered); then 503 with `Retry-After`.
    #[arg(long, env = "BENCHTRAIL_REQUEST_TIMEOUT", value_name = "DURATION", default_value = "120s", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Most connections served at once; further ones wait in the listen backlog.
    #[arg(long, env = "BENCHTRAIL_MAX_CONNECTIONS", value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
}

impl From<ServeArgs> for ServeOptions {
    fn from(args: ServeArgs) -> Self {
        ServeOptions {
            header_timeout: args.header_timeout,
            body_timeout: args.body_timeout,
            request_timeout: args.request_timeout,
            max_connections: args.max_connections as usize,
        }
    }
}

/// A positive duration: `15` (seconds), `15s`, `500ms` or `2m`.
///
/// # Errors
/// A sentence naming the accepted forms, for anything else (zero included: a zero timeout
/// would refuse every request).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let error = || {
        format!(
            "`{text}` is not a duration benchtrail reads: a positive number of ms, s or m, \
             such as `15s`, `500ms` or `2m`"
        )
    };
    let value: f64 = number.trim().parse().map_err(|_| error())?;
    let seconds = value * scale;
    if !(seconds.is_finite() && seconds > 0.0 && seconds < 1e9) {
        return Err(error());
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_seconds_or_a_unit() {
        assert_eq!(parse_duration("15"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        for bad in ["", "0", "-1s", "ten", "1h", "infs"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn flag_defaults_are_the_option_defaults() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let parsed: ServeOptions = Cli::parse_from(["x"]).serve.into();
        assert_eq!(parsed, ServeOptions::default());
    }
}
