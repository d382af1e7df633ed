//! Failed authentication, throttled per client address.
//!
//! Every client address has a token bucket of `failures_per_minute` failed authentications,
//! refilled at `failures_per_minute` per minute. A failure is an API answer 401 to a request
//! that carried an `Authorization` header (an unknown, expired, revoked or malformed token).
//! Once an address's bucket is empty, its API requests that carry a token get 429 with
//! `Retry-After` (seconds until the bucket holds one failure again) **without the token being
//! looked at**: were a valid token let through, 429-or-200 would tell a guess right from wrong
//! and guessing would go on at full speed. So while an address is throttled, its valid tokens
//! wait too (and clients that honour `Retry-After`, as `benchtrail` does, simply retry);
//! requests without a token (public reads, pages) and every other address are not affected.
//! A sign-in (`POST /sign-in`) counts as a request with a token: an unknown pasted token is a
//! failure (its answer is 401), and a throttled address gets a 429 page.
//!
//! The address is the TCP peer's ([`axum::extract::ConnectInfo`]); `X-Forwarded-For` is not
//! read, since any client can send it. Behind a reverse proxy every client has the proxy's
//! address: throttle at the proxy instead, and turn this off (`failures_per_minute` 0). IPv6
//! addresses count per /64, the block one host usually has. Requests that arrive without a
//! peer address (a router served without connect info) share one bucket.
//!
//! Memory is bounded: at most `max_clients` addresses are tracked. When a new one arrives at
//! the cap, addresses whose bucket has refilled are dropped (a full bucket is the same as
//! none), then, if still at the cap, the one idle longest.
//!
//! The check comes before the request is served and the failure is counted after its answer,
//! so concurrent guesses already in flight when the bucket empties still get their 401: the
//! overshoot is bounded by the client's concurrent connections.

use crate::app::AppState;
use crate::error::ApiError;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Default failed authentications per minute (and burst) per client address.
pub const DEFAULT_FAILURES_PER_MINUTE: u32 = 30;

/// Default number of client addresses tracked at once (about 50 bytes each).
pub const DEFAULT_MAX_CLIENTS: usize = 10_000;

/// How much failed authentication each address may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottleLimits {
    /// Failures per minute, and the burst an idle address may spend at once; 0 turns the
    /// throttle off.
    pub failures_per_minute: u32,
    /// Addresses tracked at once (at least 1).
    pub max_clients: usize,
}

impl Default for ThrottleLimits {
    fn default() -> Self {
        ThrottleLimits {
            failures_per_minute: DEFAULT_FAILURES_PER_MINUTE,
            max_clients: DEFAULT_MAX_CLIENTS,
        }
    }
}

/// One address's allowance of failures.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Failures it may still make (fractional while refilling), at most the burst.
    allowance: f64,
    /// When `allowance` was last brought up to date.
    updated: Instant,
}

/// The per-address buckets of failed authentication (see the module documentation).
#[derive(Debug)]
pub struct AuthThrottle {
    limits: ThrottleLimits,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl Default for AuthThrottle {
    fn default() -> Self {
        AuthThrottle::new(ThrottleLimits::default())
    }
}

impl AuthThrottle {
    /// A throttle with `limits` and no address tracked yet.
    pub fn new(limits: ThrottleLimits) -> AuthThrottle {
        AuthThrottle {
            limits: ThrottleLimits {
                max_clients: limits.max_clients.max(1),
                ..limits
            },
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Whether it throttles at all.
    pub fn enabled(&self) -> bool {
        self.limits.failures_per_minute > 0
    }

    /// Addresses tracked now.
    pub fn tracked(&self) -> usize {
        self.lock().len()
    }

    /// `Ok` if `client` may try a token at `now`, else how long until it may.
    pub fn check(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        if !self.enabled() {
            return Ok(());
        }
        let buckets = self.lock();
        let Some(bucket) = buckets.get(&key(client)) else {
            return Ok(());
        };
        let allowance = self.refilled(bucket, now);
        if allowance >= 1.0 {
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - allowance) / self.per_second(),
            ))
        }
    }

    /// Counts one failed authentication of `client` at `now`; `true` when it used up the
    /// address's allowance (the moment it becomes throttled).
    pub fn failed(&self, client: IpAddr, now: Instant) -> bool {
        if !self.enabled() {
            return false;
        }
        let client = key(client);
        let mut buckets = self.lock();
        if !buckets.contains_key(&client) && buckets.len() >= self.limits.max_clients {
            self.evict(&mut buckets, now);
        }
        let burst = self.burst();
        let bucket = buckets.entry(client).or_insert(Bucket {
            allowance: burst,
            updated: now,
        });
        let before = self.refilled(bucket, now);
        *bucket = Bucket {
            allowance: (before - 1.0).max(0.0),
            updated: now,
        };
        before >= 1.0 && bucket.allowance < 1.0
    }

    /// Makes room for one address: drops those whose bucket is full again, then, if none
    /// was, the one idle longest.
    fn evict(&self, buckets: &mut HashMap<IpAddr, Bucket>, now: Instant) {
        let burst = self.burst();
        buckets.retain(|_, b| self.refilled(b, now) < burst);
        if buckets.len() >= self.limits.max_clients {
            let oldest = buckets
                .iter()
                .min_by_key(|(_, b)| b.updated)
                .map(|(ip, _)| *ip);
            if let Some(ip) = oldest {
                buckets.remove(&ip);
            }
        }
    }

    /// `bucket`'s allowance at `now`.
    fn refilled(&self, bucket: &Bucket, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        (bucket.allowance + elapsed * self.per_second()).min(self.burst())
    }

    fn burst(&self) -> f64 {
        f64::from(self.limits.failures_per_minute)
    }

    fn per_second(&self) -> f64 {
        f64::from(self.limits.failures_per_minute) / 60.0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Bucket>> {
        // A panic while holding the lock leaves consistent buckets; keep using them.
        self.buckets.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What an address is counted as: IPv4 (also when mapped into IPv6) as it is, IPv6 by /64.
fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// The middleware: 429 for a throttled address's API requests that carry a token, without
/// serving them; counts the 401s of those it serves.
pub async fn middleware(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let throttle = &state.auth_throttle;
    // A token pasted into the sign-in form is a guess as much as a bearer token is.
    let sign_in =
        request.method() == axum::http::Method::POST && request.uri().path() == "/sign-in";
    let guarded = throttle.enabled()
        && (sign_in
            || (request.uri().path().starts_with("/api/")
                && request.headers().contains_key(header::AUTHORIZATION)));
    if !guarded {
        return next.run(request).await;
    }
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V6(Ipv6Addr::UNSPECIFIED), |c| c.0.ip());
    if let Err(wait) = throttle.check(client, Instant::now()) {
        if sign_in {
            let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
            return crate::pages::PageError::TooManyFailures(seconds).into_response();
        }
        return too_many_failures(wait);
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::UNAUTHORIZED && throttle.failed(client, Instant::now()) {
        tracing::warn!(%client, "too many failed authentications: requests with a token from this address get 429 for now");
    }
    response
}

/// The 429 problem, with `Retry-After` in whole seconds (at least 1).
fn too_many_failures(wait: Duration) -> Response {
    let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
    let mut response = ApiError::Rejected {
        status: StatusCode::TOO_MANY_REQUESTS,
        detail: format!(
            "too many failed authentications from this address: requests with a token are \
             refused, unchecked, for {seconds} s (Retry-After)"
        ),
    }
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn throttle(per_minute: u32, max_clients: usize) -> AuthThrottle {
        AuthThrottle::new(ThrottleLimits {
            failures_per_minute: per_minute,
            max_clients,
        })
    }

    /// [`AuthThrottle::check`] with the wait in whole milliseconds (rounded).
    fn wait_ms(t: &AuthThrottle, ip: IpAddr, now: Instant) -> Result<(), u64> {
        t.check(ip, now)
            .map_err(|d| (d.as_secs_f64() * 1000.0).round() as u64)
    }

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));

    #[test]
    fn a_burst_of_failures_then_one_every_two_seconds() {
        let t = throttle(30, 10);
        let start = Instant::now();
        for i in 0..29 {
            assert!(!t.failed(A, start), "failure {i}");
            assert_eq!(t.check(A, start), Ok(()));
        }
        assert!(t.failed(A, start), "the 30th failure empties the bucket");
        assert_eq!(wait_ms(&t, A, start), Err(2000));
        assert_eq!(
            t.check(B, start),
            Ok(()),
            "other addresses are not affected"
        );
        let later = start + Duration::from_millis(1500);
        assert_eq!(wait_ms(&t, A, later), Err(500));
        let refilled = start + Duration::from_secs(2);
        assert_eq!(t.check(A, refilled), Ok(()));
        assert!(t.failed(A, refilled), "one more failure, throttled again");
        assert_eq!(wait_ms(&t, A, refilled), Err(2000));
    }

    #[test]
    fn ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() {
        let t = throttle(1, 10);
        let now = Instant::now();
        t.failed("2001:db8:1:2::1".parse().unwrap(), now);
        assert!(t
            .check("2001:db8:1:2:ffff::9".parse().unwrap(), now)
            .is_err());
        assert_eq!(t.check("2001:db8:1:3::1".parse().unwrap(), now), Ok(()));
        t.failed("::ffff:192.0.2.1".parse().unwrap(), now);
        assert!(t.check(A, now).is_err());
        assert_eq!(t.tracked(), 2);
    }

    #[test]
    fn memory_is_bounded_refilled_addresses_go_first_then_the_idle_longest() {
        let t = throttle(60, 3);
        let start = Instant::now();
        let ms = |n: u64| start + Duration::from_millis(n);
        let x = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1));
        let y = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 2));
        let c = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 1));
        t.failed(A, ms(0));
        for _ in 0..60 {
            t.failed(x, ms(100));
        }
        for _ in 0..60 {
            t.failed(y, ms(200));
        }
        assert_eq!(t.tracked(), 3);
        // After 1 s A's one failure has refilled: A makes room for B.
        t.failed(B, ms(1000));
        assert_eq!(t.tracked(), 3);
        assert_eq!(wait_ms(&t, A, ms(1000)), Ok(()), "A is no longer tracked");
        assert_eq!(wait_ms(&t, x, ms(1000)), Err(100));
        // None has refilled now: x, idle longest, makes room for c.
        t.failed(c, ms(1000));
        assert_eq!(t.tracked(), 3);
        assert_eq!(wait_ms(&t, x, ms(1000)), Ok(()), "x is no longer tracked");
        assert_eq!(wait_ms(&t, y, ms(1000)), Err(200));
    }

    #[test]
    fn zero_turns_it_off() {
        let t = throttle(0, 10);
        let now = Instant::now();
        for _ in 0..100 {
            assert!(!t.failed(A, now));
        }
        assert_eq!(t.check(A, now), Ok(()));
        assert_eq!(t.tracked(), 0);
    }
}
