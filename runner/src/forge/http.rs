//! HTTP to a forge's API (GitHub, GitLab) with the retries their rate limits ask for: a
//! connection error, a 5xx, a 429, or a 403 that is a rate limit (`x-ratelimit-remaining: 0`,
//! or a `Retry-After`: GitHub's secondary limit) is retried after `Retry-After` seconds, else
//! until `x-ratelimit-reset` (epoch seconds), else after 1, 2, 4 s; at most [`ATTEMPTS`]
//! tries, no single wait above [`MAX_WAIT`]. Any other status is the caller's to judge.

use super::ForgeError;
use benchtrail_core::report::comment::{retry_wait, RetryHeaders};
use reqwest::blocking::{RequestBuilder, Response};
use reqwest::header::HeaderMap;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Tries per request.
pub const ATTEMPTS: u32 = 4;
/// The longest wait before a retry: a rate limit that resets later than this fails instead
/// of holding a CI job.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// A blocking client for one forge, with its timeouts.
pub struct Http {
    client: reqwest::blocking::Client,
}

impl Http {
    /// A client with the CLI's timeouts and a `User-Agent` (GitHub refuses requests without).
    ///
    /// # Errors
    /// The TLS backend cannot start.
    pub fn new() -> Result<Http, ForgeError> {
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(crate::client::CONNECT_TIMEOUT)
            .timeout(Duration::from_secs(60))
            .user_agent(concat!("benchtrail/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ForgeError::Transport(e.to_string()))?;
        Ok(Http { client })
    }

    /// The underlying client, to build requests with.
    pub fn client(&self) -> &reqwest::blocking::Client {
        &self.client
    }

    /// Sends the request `make` builds (again for each try), retrying as the module says;
    /// each retry is one line on `err`. Returns the last response, whatever its status.
    ///
    /// # Errors
    /// No answer after the last try ([`ForgeError::Transport`]).
    pub fn send(
        &self,
        what: &str,
        make: &dyn Fn() -> RequestBuilder,
        err: &mut dyn Write,
    ) -> Result<Response, ForgeError> {
        let mut attempt = 1;
        loop {
            let (wait, why) = match make().send() {
                Ok(r) => match retry_after(r.status().as_u16(), r.headers(), attempt) {
                    Some(wait) if attempt < ATTEMPTS && wait <= MAX_WAIT => {
                        (wait, format!("HTTP {}", r.status().as_u16()))
                    }
                    _ => return Ok(r),
                },
                Err(e) if attempt < ATTEMPTS => (backoff(attempt), e.to_string()),
                Err(e) => return Err(ForgeError::Transport(format!("{what}: {e}"))),
            };
            let _ = writeln!(
                err,
                "{what}: {why}, retrying in {} s (attempt {} of {ATTEMPTS})",
                wait.as_secs_f64().ceil(),
                attempt + 1
            );
            std::thread::sleep(wait);
            attempt += 1;
        }
    }
}

/// 1, 2, 4, ... seconds before try `attempt + 1`.
fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1 << (attempt - 1).min(6))
}

/// How long to wait before retrying an answer of `status` with `headers`, or `None` when the
/// answer is final ([`retry_wait`]).
pub fn retry_after(status: u16, headers: &HeaderMap, attempt: u32) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let h = RetryHeaders {
        retry_after: header("retry-after"),
        remaining: header("x-ratelimit-remaining"),
        reset: header("x-ratelimit-reset"),
    };
    retry_wait(status, h, attempt, now).map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn what_is_retried_and_after_how_long() {
        let none = HeaderMap::new();
        assert_eq!(retry_after(502, &none, 1), Some(Duration::from_secs(1)));
        assert_eq!(retry_after(502, &none, 3), Some(Duration::from_secs(4)));
        assert_eq!(
            retry_after(429, &headers(&[("retry-after", "7")]), 1),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(403, &headers(&[("retry-after", "2")]), 1),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(403, &none, 1),
            None,
            "a permission 403 is final"
        );
        assert_eq!(retry_after(404, &none, 1), None);
        assert_eq!(retry_after(422, &none, 1), None);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let reset = (now + 5).to_string();
        let wait = retry_after(
            403,
            &headers(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", &reset),
            ]),
            1,
        )
        .unwrap();
        assert!((5..=6).contains(&wait.as_secs()), "{wait:?}");
    }
}
