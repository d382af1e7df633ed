//! Retries of requests that are safe to repeat, on transient failures (no connection, HTTP 429,
//! most 5xx: [`ClientError::is_transient`]).
//!
//! The wait before retry *n* (1-based) is the server's `Retry-After` when a 429 or 503 answer
//! gives one (capped at [`MAX_RETRY_AFTER`]), else an exponential backoff with jitter from
//! backon: `min_delay · 2^(n-1)`, capped at [`MAX_DELAY`], plus a random part of up to as
//! much again (so many CI jobs failing together do not retry in step). With the defaults (4
//! retries, 1 s) the waits are about 1, 2, 4 and 8 s, at most 30 s in all. Each retry prints one
//! line on stderr: `retrying METHOD URL in 1.3 s (attempt 2 of 5): REASON`.
//!
//! backon's own blocking retry loop is not used: it has no hook for a delay the server asks
//! for (its async loop's `adjust` has), so [`with_retries`] is that loop with one.

use crate::client::ClientError;
use backon::{BackoffBuilder, ExponentialBuilder};
use std::io::Write;
use std::time::Duration;

/// Retries after the first attempt unless `--retries` (or `BENCHTRAIL_RETRIES`) says otherwise.
pub const DEFAULT_RETRIES: u32 = 4;
/// The first backoff wait unless `BENCHTRAIL_RETRY_DELAY_MS` says otherwise.
pub const DEFAULT_MIN_DELAY: Duration = Duration::from_secs(1);
/// The longest backoff wait before jitter (so at most twice this with it).
pub const MAX_DELAY: Duration = Duration::from_secs(20);
/// The longest `Retry-After` honoured: a CI job should fail rather than sleep for an hour; a
/// request retried too early is refused again and counts as one more attempt.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// How often and how patiently a request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: one attempt only).
    pub retries: u32,
    /// The first backoff wait; each next one doubles (see the module documentation).
    pub min_delay: Duration,
}

impl RetryPolicy {
    /// One attempt, no retry.
    pub const NONE: RetryPolicy = RetryPolicy {
        retries: 0,
        min_delay: DEFAULT_MIN_DELAY,
    };

    /// Attempts in all: `retries + 1`.
    pub fn attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }

    /// The backoff waits, one per retry.
    fn backoff(&self) -> impl Iterator<Item = Duration> {
        ExponentialBuilder::default()
            .with_min_delay(self.min_delay)
            .with_max_delay(MAX_DELAY.max(self.min_delay))
            .with_factor(2.0)
            .with_jitter()
            .with_max_times(self.retries as usize)
            .build()
    }
}

impl Default for RetryPolicy {
    /// [`DEFAULT_RETRIES`] retries from [`DEFAULT_MIN_DELAY`].
    fn default() -> RetryPolicy {
        RetryPolicy {
            retries: DEFAULT_RETRIES,
            min_delay: DEFAULT_MIN_DELAY,
        }
    }
}

/// Calls `attempt` until it succeeds, fails with an error that is not transient, or
/// `policy.attempts()` attempts have failed; before each retry, writes one line to `err`
/// naming `what` (e.g. `POST https://…/runs`), the wait, the attempt and the reason, and sleeps.
/// After the last attempt fails, a line says so.
///
/// # Errors
/// The first error that is not transient, or the last attempt's.
pub fn with_retries<T>(
    policy: &RetryPolicy,
    what: &str,
    err: &mut dyn Write,
    mut attempt: impl FnMut() -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    let mut waits = policy.backoff();
    let attempts = policy.attempts();
    let mut number = 1;
    loop {
        let e = match attempt() {
            Ok(v) => return Ok(v),
            Err(e) if !e.is_transient() => return Err(e),
            Err(e) => e,
        };
        let Some(backoff) = waits.next() else {
            if attempts > 1 {
                // A failed stderr write must not hide the request's error.
                let _ = writeln!(err, "giving up on {what} after {attempts} attempts");
            }
            return Err(e);
        };
        let wait = e
            .retry_after()
            .map_or(backoff, |asked| asked.min(MAX_RETRY_AFTER));
        number += 1;
        let _ = writeln!(
            err,
            "retrying {what} in {:.1} s (attempt {number} of {attempts}): {}",
            wait.as_secs_f64(),
            e.short_reason()
        );
        std::thread::sleep(wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable() -> ClientError {
        ClientError::Unreachable {
            url: "http://127.0.0.1:9/x".into(),
            message: "connection refused".into(),
        }
    }

    fn http(status: u16, retry_after: Option<Duration>) -> ClientError {
        ClientError::Http {
            method: "POST",
            url: "http://h/x".into(),
            status,
            body: String::new(),
            retry_after,
        }
    }

    const FAST: RetryPolicy = RetryPolicy {
        retries: 3,
        min_delay: Duration::from_millis(1),
    };

    #[test]
    fn transient_failures_are_retried_up_to_the_attempts() {
        let mut calls = 0;
        let mut log = Vec::new();
        let outcome: Result<(), _> = with_retries(&FAST, "POST http://h/x", &mut log, || {
            calls += 1;
            Err(unreachable())
        });
        assert!(matches!(outcome, Err(ClientError::Unreachable { .. })));
        assert_eq!(calls, 4);
        let log = String::from_utf8(log).unwrap();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 4, "{log}");
        assert!(
            lines[0].starts_with(
                "retrying POST http://h/x in 0.0 s (attempt 2 of 4): connection refused"
            ),
            "{log}"
        );
        assert!(lines[2].contains("(attempt 4 of 4)"), "{log}");
        assert_eq!(lines[3], "giving up on POST http://h/x after 4 attempts");
    }

    #[test]
    fn a_final_answer_is_not_retried_and_a_success_ends_the_loop() {
        let mut calls = 0;
        let mut log = Vec::new();
        let outcome: Result<(), _> = with_retries(&FAST, "GET u", &mut log, || {
            calls += 1;
            Err(http(422, None))
        });
        assert!(matches!(
            outcome,
            Err(ClientError::Http { status: 422, .. })
        ));
        assert_eq!((calls, log.len()), (1, 0));

        let mut calls = 0;
        let outcome = with_retries(&FAST, "GET u", &mut log, || {
            calls += 1;
            if calls < 3 {
                Err(http(502, None))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(outcome.unwrap(), 3);
    }

    #[test]
    fn retry_after_sets_the_wait() {
        let mut calls = 0;
        let mut log = Vec::new();
        let started = std::time::Instant::now();
        let outcome = with_retries(&FAST, "GET u", &mut log, || {
            calls += 1;
            if calls == 1 {
                Err(http(429, Some(Duration::from_millis(300))))
            } else {
                Ok(())
            }
        });
        assert!(outcome.is_ok());
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(
            String::from_utf8(log).unwrap(),
            "retrying GET u in 0.3 s (attempt 2 of 4): HTTP 429\n"
        );
    }

    #[test]
    fn which_statuses_are_transient() {
        for s in [429, 500, 502, 503, 504, 599] {
            assert!(http(s, None).is_transient(), "{s}");
        }
        for s in [400, 401, 403, 404, 409, 413, 422, 501, 505] {
            assert!(!http(s, None).is_transient(), "{s}");
        }
        assert!(unreachable().is_transient());
        // Retry-After counts on 429 and 503 only.
        let asked = Some(Duration::from_secs(5));
        assert_eq!(http(503, asked).retry_after(), asked);
        assert_eq!(http(500, asked).retry_after(), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            retries: 8,
            min_delay: Duration::from_secs(1),
        };
        let waits: Vec<Duration> = policy.backoff().collect();
        assert_eq!(waits.len(), 8);
        for (i, w) in waits.iter().enumerate() {
            let base = Duration::from_secs(1 << i).min(MAX_DELAY);
            assert!(*w >= base && *w <= base * 2, "retry {i}: {w:?}");
        }
        assert_eq!(RetryPolicy::NONE.backoff().count(), 0);
        assert_eq!(RetryPolicy::default().attempts(), 5);
    }
}
