//! Waiting, over HTTP, for a server's background work: the verdicts of runs and the queue
//! `/readyz` reports. Shared by the tests that kill, starve or double servers.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Waits until every run of `ids` on `base` has a final verdict (`pass`, `warn`, `fail` or
/// `incomplete`: not `pending`, and an answer at all); returns those without one at the
/// deadline, with what their verdict endpoint answered (`null` when it did not).
pub async fn settled(
    http: &reqwest::Client,
    base: &str,
    ids: &BTreeSet<Uuid>,
    within: Duration,
) -> BTreeMap<Uuid, Value> {
    let deadline = Instant::now() + within;
    loop {
        let mut pending = BTreeMap::new();
        for id in ids {
            let r = http
                .get(format!("{base}/api/v1/runs/{id}/verdict"))
                .send()
                .await;
            let v: Value = match r {
                Ok(r) => r.json().await.unwrap_or(Value::Null),
                Err(_) => Value::Null,
            };
            if !["pass", "warn", "fail", "incomplete"]
                .contains(&v["verdict"].as_str().unwrap_or(""))
            {
                pending.insert(*id, v);
            }
        }
        if pending.is_empty() || Instant::now() > deadline {
            return pending;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `GET /readyz` of `base`: status and body (`null` when it is not JSON).
pub async fn readyz(http: &reqwest::Client, base: &str) -> (u16, Value) {
    let r = http.get(format!("{base}/readyz")).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// `/readyz` once it shows nothing queued (analyses, change-point scans, PR comments: a scan
/// the analyses asked for may still run after every verdict is in), or at the deadline.
pub async fn drained(http: &reqwest::Client, base: &str, within: Duration) -> (u16, Value) {
    let deadline = Instant::now() + within;
    loop {
        let (status, ready) = readyz(http, base).await;
        if (status == 200 && ready["queued_analyses"] == 0) || Instant::now() > deadline {
            return (status, ready);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
