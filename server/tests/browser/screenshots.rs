//! Every kind of page in one browser session, at 1280 × 800 and at 390 × 844 (a phone): a PNG
//! of each is written to `target/screenshots/` (kept out of git: `target/` is ignored), the
//! first screen as `{page}-{width}.png` and up to five more, scrolled a screen at a time, as
//! `{page}-{width}-{k}.png`, for people to look at; at 390 px no page is wider than the
//! screen (`document.documentElement.scrollWidth <= 390`); and no page breaks its
//! Content-Security-Policy.
//!
//! The data: the trade-off history on `demo` (four commits of the real goodput files, then
//! the candidate once more as pull request 7), the FP8 KV-cache history on `fp8` (three
//! cells), the 18-cell standard matrix on `matrix`, the AIPerf load sweeps on `capacity` (for
//! the compare report) and a project without runs.

use super::common::web::{UploadFixture, GOODPUT_FLAGS};
use super::{csp_violations, js, open, TRADEOFF_FILES};
use fantoccini::Client;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Where the PNGs go: `$CARGO_TARGET_DIR/screenshots`, else the workspace's
/// `target/screenshots`.
fn folder() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")));
    target.join("screenshots")
}

/// Screens below the first kept of a long page.
const SCREENS: u64 = 5;

/// A script naming (tag, id, class, right edge) the elements that reach past the window's
/// right edge outside any box that scrolls or clips them: what widens the page.
const WIDE_ELEMENTS: &str = r#"
const clipped = e => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
    if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(a).overflowX)) return true; } return false; };
return [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !clipped(e))
  .slice(0, 8)
  .map(e => [e.tagName, e.id, e.className, Math.round(e.getBoundingClientRect().right)].join(' '));"#;

/// The first value of `metric stat` in a stored run (`GET /api/v1/runs/{id}`): its series.
fn series_of(run: &Value, metric: &str, stat: &str) -> String {
    run["results"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == metric && m["stat"] == stat)
        .and_then(|m| m["series_id"].as_str())
        .unwrap_or_else(|| panic!("no {metric} {stat} in {run}"))
        .to_string()
}

/// Seeds the projects, then visits each page at both sizes.
pub(super) async fn drive_screenshots(client: Client, f: UploadFixture) {
    let mut runs = Vec::new();
    for (i, path) in TRADEOFF_FILES.iter().enumerate() {
        runs.push(f.upload(i + 1, path, GOODPUT_FLAGS).await);
    }
    let mut doc = super::common::server::upload_doc(
        &format!("{:040x}", 9),
        "2026-11-01T09:00:00Z",
        &[TRADEOFF_FILES[3]],
    );
    doc["run"]["branch"] = json!("feature/x");
    doc["run"]["pull_request"] = json!({"number": 7, "merge_base": format!("{:040x}", 3)});
    doc["configuration"] = json!({"benchmark": {"command": format!("vllm bench serve --model mock-llm {GOODPUT_FLAGS} --save-detailed")}});
    let (status, r) = f.server.upload("demo", &f.token, &doc).await;
    assert_eq!(status, 201, "{r}");
    let candidate = &runs[3];
    let (_, stored) = f.server.get(&format!("/api/v1/runs/{candidate}")).await;
    let series = series_of(&stored, "ttft", "p50");
    let fingerprint = stored["results"][0]["config_fingerprint"]
        .as_str()
        .unwrap()
        .to_string();

    let fp8_token = f
        .server
        .project_with_token("fp8", json!({"name": "FP8 KV cache", "public": true}))
        .await;
    let spec = benchtrail_core::regression::realistic::HistorySpec::fp8_case(3);
    let mut fp8_head = String::new();
    for i in 0..spec.commits {
        let (status, r) = f
            .server
            .upload("fp8", &fp8_token, &super::common::fp8::upload(&spec, i))
            .await;
        assert_eq!(status, 201, "{r}");
        fp8_head = r["run_id"].as_str().unwrap().to_string();
    }
    let matrix_token = f
        .server
        .project_with_token("matrix", json!({"name": "Standard matrix", "public": true}))
        .await;
    let matrix_head = super::common::matrix18::seed(&f.server, "matrix", &matrix_token).await;
    let (_, base, head) = super::common::aiperf::seed(&f.server, "capacity", true).await;
    f.server
        .project_with_token("empty", json!({"name": "Nothing yet", "public": true}))
        .await;

    let pages: Vec<(&str, String, &str)> = vec![
        ("index", "/".into(), "#projects"),
        ("dashboard", "/projects/demo".into(), "#key-metrics"),
        ("dashboard-empty", "/projects/empty".into(), "#empty-state"),
        ("alerts", "/projects/demo/alerts".into(), "#alert-filters"),
        (
            "series",
            format!("/projects/demo/series/{series}"),
            "#chart canvas",
        ),
        (
            "series-no-points",
            format!("/projects/demo/series/{series}?branch=nope"),
            "#chart[data-state]:not([data-state=loading])",
        ),
        ("run", format!("/runs/{candidate}"), "#verdict"),
        ("matrix", format!("/runs/{fp8_head}/matrix"), "table.matrix"),
        (
            "matrix-standard",
            format!("/runs/{matrix_head}/matrix"),
            "table.matrix",
        ),
        ("config", format!("/configs/{fingerprint}"), "h1"),
        (
            "compare",
            format!("/compare?head={fp8_head}"),
            "table.compare",
        ),
        (
            "compare-report",
            format!("/compare/report?base={base}&head={head}"),
            ".capacity-chart[data-state=ready]",
        ),
        ("sign-in", "/sign-in".into(), "form.sign-in"),
        (
            "error",
            "/projects/no-such-project".into(),
            "#error-message",
        ),
    ];
    let dir = folder();
    std::fs::create_dir_all(&dir).unwrap();
    let mut too_wide = Vec::new();
    let mut csp = Vec::new();
    let _ = csp_violations(&client).await;
    for (width, height) in [(1280u32, 800u32), (390, 844)] {
        for (name, path, css) in &pages {
            client.set_window_size(width, height).await.unwrap();
            open(&client, &f.server.url(path), css).await;
            let size = js(
                &client,
                "return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, \
                 height: document.documentElement.scrollHeight};",
            )
            .await;
            let png = client.screenshot().await.unwrap();
            std::fs::write(dir.join(format!("{name}-{width}.png")), png).unwrap();
            // The rest of the page, a screen at a time (at most SCREENS more).
            let screens =
                (size["height"].as_u64().unwrap().saturating_sub(1) / height as u64).min(SCREENS);
            for k in 1..=screens {
                js(
                    &client,
                    &format!("window.scrollTo(0, {}); return null;", k * height as u64),
                )
                .await;
                let png = client.screenshot().await.unwrap();
                std::fs::write(dir.join(format!("{name}-{width}-{k}.png")), png).unwrap();
            }
            let refused = csp_violations(&client).await;
            if !refused.is_empty() {
                csp.push(format!("{name} ({path}): {refused:?}"));
            }
            if width == 390 && size["scroll"].as_i64().unwrap() > 390 {
                // Name the widest elements that no scrolling box clips.
                let culprits = js(&client, WIDE_ELEMENTS).await;
                too_wide.push(format!("{name} ({path}): {size} {culprits}"));
            }
        }
    }
    assert!(
        csp.is_empty(),
        "Content-Security-Policy violations: {csp:#?}"
    );
    assert!(
        too_wide.is_empty(),
        "pages wider than 390 px: {too_wide:#?} (screenshots in {})",
        dir.display()
    );
}
