//! The pages in a real headless Chromium, driven over WebDriver (chromedriver + fantoccini):
//! the uPlot chart draws every point from the JSON API, hovering a point shows its commit and
//! exact value, and clicking it opens its run; the alerts of the trade-off fixture (seeded
//! through the upload API, so the analysis runs) are marked on the chart and listed on the
//! run, alerts and project pages; and with a long workload-cell key, a 255-character branch,
//! long commit subject, file name, tag and triage reason, no page scrolls sideways in a 1200 px
//! wide window (run, alerts, configuration, project and series pages).
//!
//! Needs `chromium` and `chromedriver` on `PATH` (Debian: `apt-get install chromium
//! chromium-driver`; or set `BENCHTRAIL_CHROMIUM` / `BENCHTRAIL_CHROMEDRIVER` to their
//! paths). Without them the test prints a skip line and passes, unless
//! `BENCHTRAIL_REQUIRE_BROWSER=1` (as in CI), where it fails. Set `BENCHTRAIL_SCREENSHOT` to
//! a file path to keep a PNG of the series page, `BENCHTRAIL_SCREENSHOT_ALERTS` to a path
//! prefix to keep PNGs of the marked chart, the run page and the alerts page (and of each page
//! of the long-cell check).
//!
//! Signing in: a private project is the 404 of a missing one until the sign-in form is filled
//! with a write token; then its alerts page shows, an alert is dismissed through its card's
//! form with a reason, and the card shows its status, who and when; signing out hides the
//! project again.
//!
//! Screenshots (`browser/screenshots.rs`): every kind of page at 1280 × 800 and 390 × 844,
//! written to `target/screenshots/`; none is wider than 390 px on the phone.
//!
//! The series explorer (`browser/series_explorer.rs`): plotted columns, baseline band and
//! time axis equal the series API's; zoom, log scale, x axis and overlay live in the URL; an
//! overlay draws a second series; the tooltip and touch taps; the page fits 390 px.

use crate::common;
#[path = "browser/screenshots.rs"]
mod screenshots;
#[path = "browser/series_explorer.rs"]
mod series_explorer;

use common::web::{Fixture, UploadFixture, GOODPUT_FLAGS};
use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long any awaited condition may take before the test fails. Generous: a cold Chromium
/// start on a loaded 2-core CI machine takes seconds.
const DEADLINE: Duration = Duration::from_secs(30);
/// Interval between two checks of a condition (polling, not a timed assertion).
const POLL: Duration = Duration::from_millis(50);

/// An executable: from `env_var` if set, else the first of `names` found on `PATH`.
fn find_executable(env_var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env_var).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    names
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |dir| dir.join(n)))
        .find(|p| p.is_file())
}

/// A chromedriver process started by this test; killed (it alone, by its handle) on drop.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago on loopback.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `check` yields `Some`, polling until [`DEADLINE`]; panics naming `what`.
async fn until<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Starts chromedriver on a free port and waits until it reports ready.
async fn start_driver(chromedriver: &Path) -> Driver {
    let port = free_port();
    let child = Command::new(chromedriver)
        .arg(format!("--port={port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", chromedriver.display()));
    let driver = Driver { child, port };
    let http = reqwest::Client::new();
    let status = format!("http://127.0.0.1:{port}/status");
    until("chromedriver to be ready", || async {
        let r = http.get(&status).send().await.ok()?;
        let body: Value = r.json().await.ok()?;
        body["value"]["ready"].as_bool().filter(|ready| *ready)
    })
    .await;
    driver
}

/// Runs a script in the page and returns its value.
async fn js(client: &Client, script: &str) -> Value {
    client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
}

/// A browser session (with its chromedriver and profile folder), or `None` when Chromium is
/// not installed and not required.
struct Browser {
    client: Client,
    driver: Driver,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Runs `body` in the browser; a failed assertion still closes the session before the
    /// failure is reported.
    async fn run<Fut>(self, body: Fut)
    where
        Fut: Future<Output = ()> + Send + 'static,
    {
        let outcome = tokio::spawn(body).await;
        let _ = self.client.close().await;
        drop(self.driver);
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}

/// Starts chromedriver and a headless Chromium session, or `None` (after a skip line) when
/// they are not installed and `BENCHTRAIL_REQUIRE_BROWSER` is not `1`.
async fn start_browser() -> Option<Browser> {
    let require = std::env::var("BENCHTRAIL_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let chromium = find_executable(
        "BENCHTRAIL_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    );
    let chromedriver = find_executable("BENCHTRAIL_CHROMEDRIVER", &["chromedriver"]);
    let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
        assert!(
            !require,
            "BENCHTRAIL_REQUIRE_BROWSER=1 but chromium or chromedriver is not installed"
        );
        eprintln!("skipped: chromium and chromedriver are not installed (set BENCHTRAIL_REQUIRE_BROWSER=1 to fail instead)");
        return None;
    };
    let driver = start_driver(&chromedriver).await;
    let profile = tempfile::tempdir().unwrap();
    let caps = json!({
        "browserName": "chrome",
        // The console, for Content-Security-Policy violations (`browser_log`).
        "goog:loggingPrefs": {"browser": "ALL"},
        "goog:chromeOptions": {
            "binary": chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--window-size=1280,1000",
                format!("--user-data-dir={}", profile.path().display()),
            ],
        },
    });
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps.as_object().unwrap().clone())
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("starting a Chromium session");
    Some(Browser {
        client,
        driver,
        _profile: profile,
    })
}

#[tokio::test]
async fn series_chart_draws_hovers_and_clicks_through() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = Fixture::start().await;
    let client = browser.client.clone();
    browser.run(drive(client, fixture)).await;
}

/// The checks, in a page of the fixture's `ttft p50` series on `main`.
async fn drive(client: Client, f: Fixture) {
    let series_url = f.url(&format!("/projects/demo/series/{}", f.ttft_p50));
    client.goto(&series_url).await.unwrap();

    // The chart is drawn once the API answered: one point per stored value.
    let state = until("the chart to load", || async {
        let s = js(
            &client,
            "return document.getElementById('chart').dataset.state || null;",
        )
        .await;
        s.as_str().filter(|s| *s != "loading").map(str::to_string)
    })
    .await;
    assert_eq!(
        state,
        "ready",
        "chart status: {}",
        js(
            &client,
            "return document.getElementById('chart-status').textContent;"
        )
        .await
    );
    let n = f.main_points.len();
    assert_eq!(
        js(
            &client,
            "return document.getElementById('chart').dataset.points;"
        )
        .await,
        json!(n.to_string())
    );
    client
        .find(Locator::Css("#chart canvas"))
        .await
        .expect("a canvas in the chart");

    // Every point is really painted: the canvas pixel at each point's position has the
    // point colour (#1f5fbf), and the columns hold the stored values in commit order.
    let painted = js(
        &client,
        r#"const {u, columns: c} = window.benchtrailChart;
           const ctx = u.ctx;
           return c.xs.map((x, i) => {
             const px = Math.round(u.valToPos(x, 'x', true)), py = Math.round(u.valToPos(c.ys[i], 'y', true));
             const d = ctx.getImageData(px, py, 1, 1).data;
             return {x, y: c.ys[i], sha: c.shas[i], rgba: [d[0], d[1], d[2], d[3]]};
           });"#,
    )
    .await;
    let painted = painted.as_array().unwrap();
    assert_eq!(painted.len(), n);
    let expected_x = [0, 1, 1, 2];
    for ((p, want), x) in painted.iter().zip(&f.main_points).zip(expected_x) {
        assert_eq!(p["x"], json!(x));
        assert_eq!(p["y"].as_f64().unwrap(), want.value);
        assert_eq!(p["sha"], json!(want.sha));
        let rgba: Vec<i64> = p["rgba"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let close = |a: i64, b: i64| (a - b).abs() <= 40;
        assert!(
            close(rgba[0], 0x1f) && close(rgba[1], 0x5f) && close(rgba[2], 0xbf) && rgba[3] > 200,
            "point {p} is not painted: {rgba:?}"
        );
    }

    // Hover the second repeat of commit 2 (13.25, just below the first repeat's 13.5 at the
    // same x): the tooltip names that very point.
    let target = &f.main_points[2];
    assert_eq!(target.repeat, 1);
    let at = js(
        &client,
        r#"const {u, columns: c} = window.benchtrailChart;
           const r = u.over.getBoundingClientRect();
           return [r.left + u.valToPos(c.xs[2], 'x'), r.top + u.valToPos(c.ys[2], 'y')];"#,
    )
    .await;
    let (x, y) = (
        at[0].as_f64().unwrap().round(),
        at[1].as_f64().unwrap().round(),
    );
    let mouse = || MouseActions::new("mouse".into());
    // Approach from the left so the page sees a real mouse movement into the plot.
    client
        .perform_actions(
            mouse()
                .then(PointerAction::MoveTo {
                    duration: None,
                    x: x - 30.0,
                    y,
                })
                .then(PointerAction::MoveTo {
                    duration: Some(Duration::from_millis(100)),
                    x,
                    y,
                }),
        )
        .await
        .unwrap();
    let tooltip = until("the tooltip to show the hovered point", || async {
        let t = js(
            &client,
            r#"const t = document.getElementById('chart-tooltip');
               return t && !t.hidden ? {sha: t.dataset.commitSha, value: t.dataset.value, run: t.dataset.runId, text: t.textContent} : null;"#,
        )
        .await;
        (!t.is_null() && t["sha"] == json!(target.sha) && t["run"] == json!(target.run_id.to_string())).then_some(t)
    })
    .await;
    assert_eq!(tooltip["value"], json!("13.25"));
    let text = tooltip["text"].as_str().unwrap();
    assert!(text.contains(&target.sha[..10]), "{text}");
    assert!(text.contains("13.25 ms"), "{text}");
    assert!(text.contains("n=60"), "{text}");
    assert!(text.contains("Tune scheduler <fast> & safe"), "{text}");
    assert!(text.contains("repeat 1"), "{text}");

    // A picture of the page with the tooltip, for people (optional).
    if let Ok(path) = std::env::var("BENCHTRAIL_SCREENSHOT") {
        std::fs::write(&path, client.screenshot().await.unwrap()).unwrap();
    }

    // Clicking the point opens its run.
    client
        .perform_actions(
            mouse()
                .then(PointerAction::MoveTo {
                    duration: None,
                    x,
                    y,
                })
                .then(PointerAction::Down {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::Up {
                    button: MOUSE_BUTTON_LEFT,
                }),
        )
        .await
        .unwrap();
    let run_path = format!("/runs/{}", target.run_id);
    until("the click to open the run page", || async {
        let url = client.current_url().await.ok()?;
        (url.path() == run_path).then_some(())
    })
    .await;
    let run_id = until("the run page to render", || async {
        let el = client.find(Locator::Id("run-id")).await.ok()?;
        el.text().await.ok()
    })
    .await;
    assert_eq!(run_id, target.run_id.to_string());
}

/// The trade-off fixture: three baseline commits, then the candidate, uploaded in order.
const TRADEOFF_FILES: [&str; 4] = [
    "examples/history/goodput_baseline_s11_c4.json",
    "examples/history/goodput_baseline_s12_c4.json",
    "examples/history/goodput_baseline_s13_c4.json",
    "examples/history/goodput_candidate_s21_c4.json",
];

#[tokio::test]
async fn tradeoff_alerts_show_on_chart_run_alerts_and_project_pages() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_alerts(client, fixture)).await;
}

/// The text of the first element matching `css`, or null.
async fn text_at(client: &Client, css: &str) -> Value {
    let script = format!(
        "const e = document.querySelector({}); return e ? e.textContent : null;",
        json!(css)
    );
    js(client, &script).await
}

/// Loads `url` and waits until the element `css` exists.
async fn open(client: &Client, url: &str, css: &str) {
    client.goto(url).await.unwrap();
    until(&format!("{css} on {url}"), || async {
        client.find(Locator::Css(css)).await.ok().map(|_| ())
    })
    .await;
}

/// Keeps a PNG of the page as `{BENCHTRAIL_SCREENSHOT_ALERTS}-{name}.png`, when that is set
/// (for people; optional).
async fn screenshot(client: &Client, name: &str) {
    if let Ok(prefix) = std::env::var("BENCHTRAIL_SCREENSHOT_ALERTS") {
        let png = client.screenshot().await.unwrap();
        std::fs::write(format!("{prefix}-{name}.png"), png).unwrap();
    }
}

async fn drive_alerts(client: Client, f: UploadFixture) {
    use benchtrail_server::storage::{AlertFilter, AlertKind};
    let mut runs = Vec::new();
    for (i, path) in TRADEOFF_FILES.iter().enumerate() {
        runs.push(f.upload(i + 1, path, GOODPUT_FLAGS).await);
    }
    let candidate = &runs[3];
    let store = &f.server.store;
    let project = store.project("demo").await.unwrap().unwrap();
    let all = store
        .list_alerts(project.id, &AlertFilter::default(), None, 100)
        .await
        .unwrap()
        .items;
    let alert = all
        .iter()
        .find(|a| a.kind == AlertKind::Tradeoff)
        .unwrap_or_else(|| panic!("no trade-off alert stored: {all:#?}"))
        .clone();
    assert_eq!(alert.commit, format!("{:040x}", 4));
    assert_eq!(
        alert.run_id.map(|r| r.to_string()).as_deref(),
        Some(candidate.as_str())
    );
    let id = alert.id.to_string();
    let summary = alert.summary.clone();
    assert!(!summary.is_empty());

    // The series chart marks the trade-off at the candidate commit (x = 3), in its own colour
    // and shape, and the tooltip of that commit's point carries the summary.
    let series_url = f
        .server
        .url(&format!("/projects/demo/series/{}", alert.series_id));
    client.goto(&series_url).await.unwrap();
    let state = until("the chart to load", || async {
        let s = js(
            &client,
            "return document.getElementById('chart').dataset.state || null;",
        )
        .await;
        s.as_str().filter(|s| *s != "loading").map(str::to_string)
    })
    .await;
    assert_eq!(state, "ready");
    let markers = js(&client, "return window.benchtrailChart.markers;").await;
    let k = markers
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("the alert is not marked: {markers}"));
    let marker = &markers[k];
    assert_eq!(marker["kind"], "tradeoff");
    assert_eq!(marker["x"], json!(3));
    assert_eq!(marker["summary"], json!(summary));
    let rgba = js(
        &client,
        &format!(
            "const g = window.benchtrailChart.glyph({k}); const d = window.benchtrailChart.u.ctx.getImageData(g.x, g.y, 1, 1).data; return [d[0], d[1], d[2], d[3]];"
        ),
    )
    .await;
    let rgba: Vec<i64> = rgba
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let close = |a: i64, b: i64| (a - b).abs() <= 40;
    assert!(
        close(rgba[0], 0x8a) && close(rgba[1], 0x3f) && close(rgba[2], 0xfc) && rgba[3] > 200,
        "the trade-off glyph is not painted in its colour: {rgba:?}"
    );
    // Regressions and improvements are drawn differently (kind → colour and glyph).
    let kinds = js(
        &client,
        "return ['regression','improvement','tradeoff'].map(k => document.querySelector('.legend .mark-' + k).textContent);",
    )
    .await;
    assert_eq!(
        kinds,
        json!(["▼ regression", "▲ improvement", "◆ trade-off"])
    );

    let at = js(
        &client,
        r#"const {u, columns: c} = window.benchtrailChart;
           const i = c.xs.indexOf(3);
           const r = u.over.getBoundingClientRect();
           return [r.left + u.valToPos(c.xs[i], 'x'), r.top + u.valToPos(c.ys[i], 'y')];"#,
    )
    .await;
    let (x, y) = (
        at[0].as_f64().unwrap().round(),
        at[1].as_f64().unwrap().round(),
    );
    client
        .perform_actions(
            MouseActions::new("mouse".into())
                .then(PointerAction::MoveTo {
                    duration: None,
                    x: x - 30.0,
                    y,
                })
                .then(PointerAction::MoveTo {
                    duration: Some(Duration::from_millis(100)),
                    x,
                    y,
                }),
        )
        .await
        .unwrap();
    let line = until("the tooltip to show the alert", || async {
        let t = js(
            &client,
            r#"const t = document.getElementById('chart-tooltip');
               if (!t || t.hidden) return null;
               const l = t.querySelector('.alert-line[data-kind="tradeoff"]');
               return l ? l.textContent : null;"#,
        )
        .await;
        t.as_str().map(str::to_string)
    })
    .await;
    assert!(line.starts_with("◆ trade-off (open): "), "{line}");
    assert!(line.ends_with(&summary), "{line}");
    screenshot(&client, "series").await;

    // The candidate's run page: the alert with its summary, and the verdict with the
    // trade-off among its reasons.
    let alert_li = format!("li[data-alert-id=\"{id}\"]");
    open(
        &client,
        &f.server.url(&format!("/runs/{candidate}")),
        &format!("#run-alerts {alert_li}"),
    )
    .await;
    assert_eq!(
        text_at(&client, &format!("#run-alerts {alert_li} .summary")).await,
        json!(summary)
    );
    assert_eq!(
        text_at(&client, &format!("#run-alerts {alert_li} .kind")).await,
        json!("trade-off")
    );
    let verdict = js(
        &client,
        "return document.getElementById('verdict').dataset.verdict;",
    )
    .await;
    let reason = js(
        &client,
        "const r = document.querySelector('#verdict li[data-code=\"tradeoff\"]'); return r ? [r.dataset.level, r.textContent] : null;",
    )
    .await;
    assert!(!reason.is_null(), "no trade-off reason in the verdict");
    assert!(reason[1].as_str().unwrap().contains(&summary), "{reason}");
    assert_eq!(verdict, reason[0], "a trade-off reason sets the verdict");
    assert!(verdict == "fail" || verdict == "warn", "{verdict}");
    assert_eq!(
        text_at(&client, "#verdict .verdict-word").await,
        verdict,
        "the verdict is shown in words"
    );

    screenshot(&client, "run").await;

    // The alerts page: under "open", with links to the series and the run.
    open(
        &client,
        &f.server.url("/projects/demo/alerts"),
        &format!("#status-open {alert_li}"),
    )
    .await;
    assert_eq!(
        text_at(&client, &format!("#status-open {alert_li} .summary")).await,
        json!(summary)
    );
    let links = js(
        &client,
        &format!(
            "const li = document.querySelector('#status-open {}'); return [li.querySelector('a.series-link').getAttribute('href'), li.querySelector('a.run-link').getAttribute('href'), li.querySelectorAll('a.series-link').length];",
            alert_li.replace('"', "\\\"")
        ),
    )
    .await;
    assert_eq!(
        links[0],
        json!(format!(
            "/projects/demo/series/{}?branch=main",
            alert.series_id
        ))
    );
    assert_eq!(links[1], json!(format!("/runs/{candidate}")));
    assert_eq!(
        links[2],
        json!(alert.series_ids.len()),
        "every series of the trade-off is linked"
    );
    screenshot(&client, "alerts").await;
    for status in ["acknowledged", "dismissed", "resolved"] {
        assert!(client
            .find(Locator::Id(&format!("status-{status}")))
            .await
            .is_ok());
    }
    // Following the series link opens the marked chart.
    client
        .find(Locator::Css(&format!(
            "#status-open {alert_li} a.series-link"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until("the series page", || async {
        let url = client.current_url().await.ok()?;
        (url.path() == format!("/projects/demo/series/{}", alert.series_id)).then_some(())
    })
    .await;

    // The project page links the alerts page with the open count.
    open(&client, &f.server.url("/projects/demo"), "#alerts-link").await;
    let open_count = all.iter().filter(|a| a.status.as_str() == "open").count();
    assert_eq!(
        text_at(&client, "#open-alerts").await,
        json!(format!("{open_count} open"))
    );
    assert_eq!(
        js(
            &client,
            "return document.getElementById('alerts-link').getAttribute('href');"
        )
        .await,
        json!("/projects/demo/alerts")
    );

    // The p50 TTFT chart draws each point's confidence interval (teal whiskers with caps);
    // the intervals are the stored ones.
    let mut cis = Vec::new();
    let mut series = String::new();
    for run in &runs {
        let (_, api) = f.server.get(&format!("/api/v1/runs/{run}")).await;
        let m = api["results"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "ttft" && m["stat"] == "p50")
            .unwrap()
            .clone();
        series = m["series_id"].as_str().unwrap().to_string();
        cis.push(json!([m["ci"]["low"], m["ci"]["high"]]));
    }
    client
        .goto(&f.server.url(&format!("/projects/demo/series/{series}")))
        .await
        .unwrap();
    until("the p50 chart to load", || async {
        let s = js(
            &client,
            "return document.getElementById('chart').dataset.state || null;",
        )
        .await;
        (s == json!("ready")).then_some(())
    })
    .await;
    let drawn = js(
        &client,
        r#"const {u, columns: c} = window.benchtrailChart;
           return c.cis.map((ci, i) => {
             // The upper cap, 5 px right of the point's centre: clear of the point itself.
             const x = Math.round(u.valToPos(c.xs[i], 'x', true)) + 5, y = Math.round(u.valToPos(ci.high, 'y', true));
             const d = u.ctx.getImageData(x, y, 1, 1).data;
             return {ci: [ci.low, ci.high], rgba: [d[0], d[1], d[2], d[3]]};
           });"#,
    )
    .await;
    screenshot(&client, "intervals").await;
    let drawn = drawn.as_array().unwrap();
    assert_eq!(drawn.len(), 4);
    for (d, want) in drawn.iter().zip(&cis) {
        assert_eq!(d["ci"], *want);
        let rgba: Vec<i64> = d["rgba"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert!(
            close(rgba[0], 0x2a) && close(rgba[1], 0x9d) && close(rgba[2], 0x8f) && rgba[3] > 200,
            "interval {d} is not drawn"
        );
    }
}

/// A workload cell whose key is long (about 230 characters, one unbreakable word): what the
/// upload states besides what the vLLM files state (concurrency, rate, prompts). Its lengths
/// are the ones the files measured (512 in, 128 out): others would be `requested_len_mismatch`
/// and leave the trade-off untested.
fn long_cell() -> Value {
    json!({
        "scenario": "long-document-question-answering-with-shared-system-prompt",
        "prefix_mode": "reusable",
        "load_level": "near-capacity",
        "input_len": 512,
        "output_len": 128,
        "dataset": "/datasets/sharegpt/ShareGPT_V3_unfiltered_cleaned_split_long_context_subset.json",
    })
}

#[tokio::test]
async fn long_cell_keys_do_not_widen_pages_at_1200_px() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_long_cell(client, fixture)).await;
}

/// `n` characters of `unit` repeated (one long word when `unit` has no space).
fn long_text(unit: &str, n: usize) -> String {
    unit.chars().cycle().take(n).collect()
}

/// The trade-off history uploaded with [`long_cell`], then one more run on a 255-character
/// branch with a long commit subject, file name, tag and tag name, and the trade-off acknowledged with a
/// 2,000-character reason (the most accepted) of one word: at a 1200 px wide window no page
/// that shows them (run, alerts, project, series on either branch) or the configuration
/// scrolls sideways, and the long values are there in full (wrapped, or cut with the whole
/// value in the title).
async fn drive_long_cell(client: Client, f: UploadFixture) {
    let mut run = String::new();
    for (i, path) in TRADEOFF_FILES.iter().enumerate() {
        let mut doc = common::server::upload_doc(
            &format!("{:040x}", i + 1),
            &format!("2026-11-01T{:02}:00:00Z", i + 1),
            &[path],
        );
        doc["cell"] = long_cell();
        doc["configuration"] = json!({
            "benchmark": {"command": format!("vllm bench serve --model mock-llm {GOODPUT_FLAGS} --save-detailed")},
            "metadata": {"artifact": "s3://benchmark-artifacts/llama-3.1-8b-instruct/h100-80gb/tp1/vllm-0.11.0/long-document-question-answering.tar.zst"},
        });
        let (status, receipt) = f.server.upload("demo", &f.token, &doc).await;
        assert_eq!(status, 201, "{receipt}");
        run = receipt["run_id"].as_str().unwrap().to_string();
    }
    let (_, stored) = f.server.get(&format!("/api/v1/runs/{run}")).await;
    let key = stored["results"][0]["cell_key"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        key,
        "scenario=long-document-question-answering-with-shared-system-prompt;prefix_mode=reusable;\
         load_level=near-capacity;max_concurrency=4;request_rate=inf;input_len=512;output_len=128;\
         dataset=/datasets/sharegpt/ShareGPT_V3_unfiltered_cleaned_split_long_context_subset.json;\
         num_prompts=60"
    );
    let fingerprint = stored["results"][0]["config_fingerprint"].as_str().unwrap();
    let series = stored["results"][0]["metrics"][0]["series_id"]
        .as_str()
        .unwrap();

    // A run on a branch, subject, file name and tag as long as uploads accept
    // (`benchtrail_core::upload_limits`).
    let branch = format!("feature/{}", long_text("very_long_branch_name_", 247));
    assert_eq!(branch.chars().count(), 255);
    let subject = long_text("Subject_without_spaces_", 1024);
    let file_name = format!("{}.json", long_text("benchmark_result_file_", 400));
    let tag = long_text("tag_value_", 800);
    let mut doc = common::server::upload_doc(
        &format!("{:040x}", 5),
        "2026-11-01T05:00:00Z",
        &[TRADEOFF_FILES[3]],
    );
    doc["run"]["branch"] = json!(branch);
    doc["run"]["commit"]["subject"] = json!(subject);
    let tag_key = long_text("tag_key_", 128);
    doc["run"]["tags"] = json!({ "note": tag, tag_key.clone(): "x" });
    doc["files"][0]["name"] = json!(file_name);
    doc["cell"] = long_cell();
    let (status, receipt) = f.server.upload("demo", &f.token, &doc).await;
    assert_eq!(status, 201, "{receipt}");
    let branch_run = receipt["run_id"].as_str().unwrap().to_string();
    let (_, stored_branch_run) = f.server.get(&format!("/api/v1/runs/{branch_run}")).await;
    let sha256 = stored_branch_run["files"][0]["sha256"]
        .as_str()
        .unwrap()
        .to_string();

    // The trade-off, acknowledged with the longest reason accepted (one 2,000-character word).
    let alert = f
        .server
        .alerts("demo", "?kind=tradeoff")
        .await
        .into_iter()
        .next()
        .expect("a trade-off alert");
    let alert_id = alert["id"].as_str().unwrap().to_string();
    let reason = long_text("reason_without_any_space_", 2000);
    let write = f.server.token("demo", "write").await;
    let (status, body) = f
        .server
        .send(
            "PATCH",
            &format!("/api/v1/alerts/{alert_id}"),
            &write,
            &json!({"status": "acknowledged", "reason": reason}),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    client.set_window_size(1200, 1000).await.unwrap();
    let pages = [
        ("run", format!("/runs/{run}"), "#run-alerts .alert"),
        ("branch-run", format!("/runs/{branch_run}"), "#files"),
        (
            "alerts",
            "/projects/demo/alerts".to_string(),
            "#status-acknowledged .alert",
        ),
        (
            "config",
            format!("/configs/{fingerprint}"),
            "#canonical-json",
        ),
        ("project", "/projects/demo".to_string(), "#runs"),
        (
            "series",
            format!("/projects/demo/series/{series}"),
            "#cell-key",
        ),
        (
            "branch-series",
            format!("/projects/demo/series/{series}?branch={branch}"),
            "#points",
        ),
    ];
    for (label, path, ready) in pages {
        open(&client, &f.server.url(&path), ready).await;
        // The key is on the page (not cut): its full text, wherever it wraps.
        if label != "config" {
            let shown = js(
                &client,
                "return [...document.querySelectorAll('code.cell-key')].map(c => c.textContent);",
            )
            .await;
            let shown = shown.as_array().unwrap();
            assert!(!shown.is_empty(), "{label}: no cell key shown");
            assert!(shown.iter().all(|k| k == &json!(key)), "{label}: {shown:?}");
        }
        // The long values are on the page in full: as text, or as the title of a cut box.
        let texts = js(
            &client,
            r#"const t = document.body.textContent;
               const titles = [...document.querySelectorAll('[title]')].map(e => e.title);
               return {text: t, titles: titles};"#,
        )
        .await;
        let text = texts["text"].as_str().unwrap();
        let titles: Vec<&str> = texts["titles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let full = |value: &str| text.contains(value) || titles.contains(&value);
        match label {
            "branch-run" => {
                for value in [&branch, &subject, &file_name, &tag, &tag_key] {
                    assert!(text.contains(value.as_str()), "{label}: {value} is cut");
                }
                assert!(
                    titles.contains(&sha256.as_str()),
                    "{label}: no full SHA-256"
                );
                assert_eq!(
                    text_at(&client, "#files code.sha256").await,
                    json!(format!("{}…", &sha256[..12]))
                );
            }
            "project" => {
                assert!(
                    full(&branch) && full(&subject),
                    "{label}: branch or subject lost"
                );
            }
            "branch-series" => {
                assert!(text.contains(branch.as_str()), "{label}: branch cut");
                assert!(full(&subject), "{label}: subject lost");
            }
            "alerts" => {
                assert!(text.contains(reason.as_str()), "{label}: reason cut");
            }
            _ => {}
        }
        let size = js(
            &client,
            r#"const wide = [...document.querySelectorAll('body *')]
                 .filter(e => e.getBoundingClientRect().right > window.innerWidth)
                 .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : ''));
               return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, wide: wide.slice(0, 8)};"#,
        )
        .await;
        screenshot(&client, &format!("long-cell-{label}")).await;
        assert_eq!(size["inner"], 1200, "{label}");
        assert!(
            size["scroll"].as_i64().unwrap() <= size["inner"].as_i64().unwrap(),
            "{label} ({path:.200}) scrolls sideways at 1200 px: {size}"
        );
    }
}

/// chromedriver's browser console log since the last read (`POST /session/{id}/se/log`, a
/// Selenium extension W3C WebDriver lacks), for the Content-Security-Policy violations
/// Chromium reports there.
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type": "browser"}"#.into()))
    }
}

/// The console messages since the last call that report a Content-Security-Policy violation.
async fn csp_violations(client: &Client) -> Vec<String> {
    let log = client
        .issue_cmd(BrowserLog)
        .await
        .expect("reading the browser log");
    log.as_array()
        .unwrap_or_else(|| panic!("the browser log is not a list: {log}"))
        .iter()
        .filter_map(|entry| entry["message"].as_str())
        .filter(|m| m.contains("Content Security Policy"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn the_pages_satisfy_their_content_security_policy() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_csp(client, fixture)).await;
}

/// Every page, the series chart drawn (its scripts, styles and API fetch) and the run page
/// with its alerts: no violation in the console, nor a `securitypolicyviolation` event once
/// loaded; and a violation made on purpose is seen, so the check can see one.
async fn drive_csp(client: Client, f: UploadFixture) {
    let mut runs = Vec::new();
    for (i, path) in TRADEOFF_FILES.iter().enumerate() {
        runs.push(f.upload(i + 1, path, GOODPUT_FLAGS).await);
    }
    let (_, series) = f
        .server
        .get("/api/v1/projects/demo/series?metric=ttft&stat=p50")
        .await;
    let series_id = series["items"][0]["series_id"]
        .as_str()
        .unwrap()
        .to_string();
    let _ = csp_violations(&client).await;
    let listen = "window.cspViolations = []; document.addEventListener('securitypolicyviolation', \
                  e => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI)); \
                  return true;";
    for (path, css) in [
        (
            format!("/projects/demo/series/{series_id}"),
            "#chart canvas",
        ),
        (format!("/runs/{}", runs[3]), "#run-id"),
        (format!("/runs/{}/matrix", runs[3]), "table.matrix"),
        ("/projects/demo/alerts".to_string(), "main"),
        ("/projects/demo".to_string(), "main"),
        ("/".to_string(), "main"),
    ] {
        open(&client, &f.server.url(&path), css).await;
        if path.contains("/series/") {
            let state = until("the chart to load", || async {
                let s = js(
                    &client,
                    "return document.getElementById('chart').dataset.state || null;",
                )
                .await;
                s.as_str().filter(|s| *s != "loading").map(str::to_string)
            })
            .await;
            assert_eq!(state, "ready", "{path}");
            // Hovering draws the tooltip (styles set from the script).
            js(&client, listen).await;
            client
                .perform_actions(
                    MouseActions::new("mouse".into()).then(PointerAction::MoveTo {
                        duration: Some(Duration::from_millis(100)),
                        x: 300.0,
                        y: 300.0,
                    }),
                )
                .await
                .unwrap();
            assert_eq!(
                js(&client, "return window.cspViolations;").await,
                json!([]),
                "{path}"
            );
        }
        assert_eq!(
            csp_violations(&client).await,
            Vec::<String>::new(),
            "{path}"
        );
    }

    // The check sees a violation: an inline style added by a script is refused and reported.
    js(&client, listen).await;
    js(
        &client,
        "const s = document.createElement('style'); s.textContent = 'body { color: red; }'; \
         document.head.appendChild(s); return true;",
    )
    .await;
    let events = until("the violation event", || async {
        let v = js(&client, "return window.cspViolations;").await;
        (v != json!([])).then_some(v)
    })
    .await;
    assert!(events.to_string().contains("style-src"), "{events}");
    let logged = until("the violation in the console", || async {
        let v = csp_violations(&client).await;
        (!v.is_empty()).then_some(v)
    })
    .await;
    assert!(logged[0].contains("style-src"), "{logged:?}");
}

#[tokio::test]
async fn the_compare_page_names_the_tradeoff_and_fits_a_phone() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_compare(client, fixture)).await;
}

/// The FP8 KV-cache history (10 baseline commits, then the change; three cells) uploaded to
/// `demo`; the candidate's compare page at 1280 × 800 and 390 × 844: the trade-off is the
/// first row of every cell's table, and at phone width the page itself never scrolls sideways
/// (the wide tables scroll inside their own box).
async fn drive_compare(client: Client, f: UploadFixture) {
    let spec = benchtrail_core::regression::realistic::HistorySpec::fp8_case(3);
    let mut head = String::new();
    for i in 0..spec.commits {
        let doc = common::fp8::upload(&spec, i);
        let (status, r) = f.server.upload("demo", &f.token, &doc).await;
        assert_eq!(status, 201, "{r}");
        head = r["run_id"].as_str().unwrap().to_string();
    }
    let url = f.server.url(&format!("/compare?head={head}"));
    for (label, width, height) in [("desktop", 1280, 800), ("phone", 390, 844)] {
        client.set_window_size(width, height).await.unwrap();
        open(&client, &url, "table.compare").await;
        let first_rows = js(
            &client,
            r#"return [...document.querySelectorAll('table.compare')].map(t => {
                 const r = t.querySelector('tr.compare-row');
                 return [r.dataset.metric, r.dataset.state, r.querySelector('.state-word').textContent];
               });"#,
        )
        .await;
        let first_rows = first_rows.as_array().unwrap();
        assert_eq!(first_rows.len(), 3, "{label}");
        for r in first_rows {
            assert_eq!(r[1], "tradeoff", "{label}: {r}");
            assert_eq!(r[2], "trade-off", "{label}: {r}");
        }
        let size = js(
            &client,
            r#"return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth};"#,
        )
        .await;
        screenshot(&client, &format!("compare-{label}")).await;
        js(
            &client,
            "document.querySelector('table.compare').scrollIntoView(); return null;",
        )
        .await;
        screenshot(&client, &format!("compare-{label}-table")).await;
        assert!(
            size["scroll"].as_i64().unwrap() <= size["inner"].as_i64().unwrap(),
            "{label}: the compare page scrolls sideways: {size}"
        );
    }

    // Two runs with a load sweep: the attainment curves are drawn from their tables.
    let (_, base, head) = common::aiperf::seed(&f.server, "capacity", true).await;
    let url = f.server.url(&format!("/compare?base={base}&head={head}"));
    for (label, width, height) in [("desktop", 1280, 800), ("phone", 390, 844)] {
        client.set_window_size(width, height).await.unwrap();
        open(&client, &url, ".capacity-chart[data-state=ready]").await;
        let drawn = js(
            &client,
            r#"const fig = document.getElementById('capacity-curve-0');
               const rows = [...fig.querySelectorAll('tr.curve-point')].map(r =>
                 [Number(r.dataset.load), Number(r.dataset.baseline), Number(r.dataset.candidate),
                  Number(r.dataset.baselineGoodput), Number(r.dataset.candidateGoodput)]);
               const d = window.benchtrailCapacity['capacity-curve-0'];
               return {rows: rows, x: d.x, baseline: d.baseline, candidate: d.candidate,
                       baseline_goodput: d.baseline_goodput, candidate_goodput: d.candidate_goodput,
                       goodput_ready: fig.querySelector('.goodput-chart').dataset.state,
                       points: fig.querySelector('.capacity-chart').dataset.points,
                       canvas: fig.querySelectorAll('canvas').length,
                       scroll: document.documentElement.scrollWidth, inner: window.innerWidth};"#,
        )
        .await;
        assert_eq!(drawn["points"], "3", "{label}: {drawn}");
        assert_eq!(drawn["canvas"], 2, "{label}: {drawn}");
        let rows = drawn["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 3, "{label}: {drawn}");
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(drawn["x"][i], r[0], "{label}");
            assert_eq!(drawn["baseline"][i], r[1], "{label}");
            assert_eq!(drawn["candidate"][i], r[2], "{label}");
            assert_eq!(drawn["baseline_goodput"][i], r[3], "{label}");
            assert_eq!(drawn["candidate_goodput"][i], r[4], "{label}");
        }
        assert_eq!(drawn["goodput_ready"], "ready", "{label}: {drawn}");
        js(
            &client,
            "document.getElementById('capacity-curve-0').scrollIntoView(); return null;",
        )
        .await;
        screenshot(&client, &format!("compare-capacity-{label}")).await;
        // Every per-request distribution is drawn, from its own figure's numbers.
        let cdf = js(
            &client,
            r#"const figs = [...document.querySelectorAll('figure.cdf')];
               const same = figs.every(f => {
                 const d = window.benchtrailCdf[f.id];
                 return d && d.baseline.map(p => p.join(':')).join(',') === f.dataset.baseline
                          && d.candidate.map(p => p.join(':')).join(',') === f.dataset.candidate;
               });
               figs[0].scrollIntoView();
               return {figures: figs.length, ready: document.querySelectorAll('.cdf-chart[data-state=ready]').length, same: same};"#,
        )
        .await;
        assert_eq!(cdf["figures"], 6, "{label}: {cdf}");
        assert_eq!(cdf["ready"], 6, "{label}: {cdf}");
        assert_eq!(cdf["same"], true, "{label}: {cdf}");
        screenshot(&client, &format!("compare-cdf-{label}")).await;
        assert!(
            drawn["scroll"].as_i64().unwrap() <= drawn["inner"].as_i64().unwrap(),
            "{label}: the capacity section scrolls sideways: {drawn}"
        );
    }
}

#[tokio::test]
async fn signing_in_shows_a_private_project_and_its_alerts_are_dismissed_from_the_page() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = benchtrail_server::storage::Store::connect(&format!(
        "sqlite://{}/t.db?mode=rwc",
        dir.path().display()
    ))
    .await
    .unwrap();
    let server = common::server::TestServer::start(store).await;
    common::seed::seed(&server, "secret", false).await;
    let (status, token) = server
        .send(
            "POST",
            "/api/v1/projects/secret/tokens",
            common::server::ADMIN_TOKEN,
            &json!({"scope": "write", "label": "release-bot"}),
        )
        .await;
    assert_eq!(status, 201, "{token}");
    let token = token["token"].as_str().unwrap().to_string();
    let client = browser.client.clone();
    browser
        .run(async move {
            drive_sign_in(client, &server, &token).await;
            drop(dir);
        })
        .await;
}

/// The text of the element matching `css` inside the alert card `id`.
async fn card_text(client: &Client, id: &str, css: &str) -> Value {
    text_at(client, &format!("#alert-{id} {css}")).await
}

async fn drive_sign_in(client: Client, server: &common::server::TestServer, token: &str) {
    let r = server
        .http
        .get(server.url("/api/v1/projects/secret/alerts?status=open&limit=1"))
        .bearer_auth(common::server::ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    let page: Value = r.json().await.unwrap();
    let alert = page["items"][0]["id"].as_str().unwrap().to_string();

    // Signed out: the private project is the page of a missing one.
    open(&client, &server.url("/projects/secret"), "#error-message").await;
    assert_eq!(
        text_at(&client, "#error-message").await,
        json!("There is no project “secret”.")
    );
    assert_eq!(text_at(&client, "#sign-in-link").await, json!("Sign in"));

    // Sign in by filling the form.
    client
        .find(Locator::Css("#sign-in-link"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until("the sign-in form", || async {
        client.find(Locator::Css("#token")).await.ok().map(|_| ())
    })
    .await;
    client
        .find(Locator::Css("#token"))
        .await
        .unwrap()
        .send_keys(token)
        .await
        .unwrap();
    client
        .find(Locator::Css("#sign-in-submit"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until("the signed-in header", || async {
        client
            .find(Locator::Css("#signed-in-as"))
            .await
            .ok()
            .map(|_| ())
    })
    .await;
    assert_eq!(
        text_at(&client, "#signed-in-as").await,
        json!("release-bot")
    );
    open(&client, &server.url("/projects/secret"), "main h1").await;
    assert_eq!(
        js(
            &client,
            "return document.querySelector('#error-message') === null;"
        )
        .await,
        json!(true)
    );

    // Dismiss the alert as expected, with a reason, from its card.
    open(
        &client,
        &server.url("/projects/secret/alerts"),
        &format!("#alert-{alert} form.triage-dismiss"),
    )
    .await;
    assert_eq!(card_text(&client, &alert, ".status").await, json!("open"));
    client
        .find(Locator::Css(&format!(
            "#alert-{alert} form.triage-dismiss .triage-reason"
        )))
        .await
        .unwrap()
        .send_keys("expected: the new scheduler batches more")
        .await
        .unwrap();
    client
        .find(Locator::Css(&format!(
            "#alert-{alert} form.triage-dismiss button"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until("the dismissed card", || async {
        let s = js(
            &client,
            &format!("const e = document.getElementById('alert-{alert}'); return e ? e.dataset.status : null;"),
        )
        .await;
        (s == json!("dismissed")).then_some(())
    })
    .await;
    let stored = server
        .store
        .alert(alert.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.triaged_by.as_deref(), Some("release-bot"));
    let at = stored.triaged_at.unwrap();
    assert_eq!(
        card_text(&client, &alert, ".status").await,
        json!("dismissed")
    );
    assert_eq!(
        card_text(&client, &alert, ".triaged-by").await,
        json!("release-bot")
    );
    assert_eq!(
        card_text(&client, &alert, ".triaged-at").await,
        json!(at.format("%Y-%m-%d %H:%M UTC").to_string())
    );
    assert_eq!(
        card_text(&client, &alert, ".reason").await,
        json!("Reason: expected: the new scheduler batches more")
    );
    assert!(client
        .current_url()
        .await
        .unwrap()
        .as_str()
        .ends_with(&format!("/projects/secret/alerts#alert-{alert}")));
    assert_eq!(csp_violations(&client).await, Vec::<String>::new());

    // Signed out, the project is hidden again.
    client
        .find(Locator::Css("#sign-out"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until("the signed-out header", || async {
        client
            .find(Locator::Css("#sign-in-link"))
            .await
            .ok()
            .map(|_| ())
    })
    .await;
    open(&client, &server.url("/projects/secret"), "#error-message").await;
    assert_eq!(
        js(
            &client,
            "return document.getElementById('error-message').dataset.status;"
        )
        .await,
        json!("404")
    );
}

#[tokio::test]
async fn the_project_dashboard_filters_series_and_fits_a_phone() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_dashboard(client, fixture)).await;
}

/// The trade-off history plus a c=1 run, the project page at 390 × 844: the filter box is
/// shown (the script ran), typing `max_concurrency=1 ttft` leaves only the TTFT row of the c=1
/// cell (every other series row, and the c=4 cell, hidden), clearing it shows every row again,
/// and the page never scrolls sideways.
async fn drive_dashboard(client: Client, f: UploadFixture) {
    for (i, path) in TRADEOFF_FILES.iter().enumerate() {
        f.upload(i + 1, path, GOODPUT_FLAGS).await;
    }
    f.upload(
        5,
        "examples/history/baseline_completions_c1_isl512_osl128.json",
        "",
    )
    .await;
    client.set_window_size(390, 844).await.unwrap();
    open(&client, &f.server.url("/projects/demo"), "#series-filter").await;
    let rows_state = r#"const rows = [...document.querySelectorAll('#series tr[data-search]')];
        const shown = rows.filter(r => r.offsetParent !== null);
        return {rows: rows.length,
                shown: shown.map(r => [r.closest('div.cell').dataset.cell, r.dataset.metric]),
                cells: [...document.querySelectorAll('#series div.cell')].filter(c => c.offsetParent !== null).length,
                box: document.getElementById('series-filter-box').offsetParent !== null,
                scroll: document.documentElement.scrollWidth, inner: window.innerWidth};"#;
    let before = js(&client, rows_state).await;
    let rows = before["rows"].as_u64().unwrap();
    assert!(rows > 10, "{before}");
    assert_eq!(
        before["shown"].as_array().unwrap().len() as u64,
        rows,
        "{before}"
    );
    assert_eq!(before["cells"], 2, "{before}");
    assert_eq!(before["box"], true, "{before}");
    screenshot(&client, "dashboard-phone").await;
    js(
        &client,
        "document.getElementById('key-metrics').scrollIntoView(); return null;",
    )
    .await;
    screenshot(&client, "dashboard-phone-key-metrics").await;
    assert!(before["inner"].as_i64().unwrap() <= 390, "{before}");
    assert!(
        before["scroll"].as_i64().unwrap() <= before["inner"].as_i64().unwrap(),
        "the project page scrolls sideways at 390 px: {before}"
    );

    let input = client.find(Locator::Css("#series-filter")).await.unwrap();
    input.send_keys("max_concurrency=1 ttft").await.unwrap();
    let after = until("the filter to apply", || async {
        let s = js(&client, rows_state).await;
        (s["shown"].as_array().unwrap().len() == 1).then_some(s)
    })
    .await;
    let shown = &after["shown"][0];
    assert!(
        shown[0].as_str().unwrap().contains("max_concurrency=1;"),
        "{after}"
    );
    assert_eq!(shown[1], "ttft", "{after}");
    assert_eq!(after["cells"], 1, "{after}");
    assert_eq!(
        text_at(&client, "#series-shown").await,
        json!(format!("1 of {rows} rows"))
    );
    assert!(
        after["scroll"].as_i64().unwrap() <= after["inner"].as_i64().unwrap(),
        "{after}"
    );

    input.clear().await.unwrap();
    // `clear` fires no input event: type and delete a character.
    input.send_keys(" ").await.unwrap();
    let cleared = until("every row again", || async {
        let s = js(&client, rows_state).await;
        (s["shown"].as_array().unwrap().len() as u64 == rows).then_some(s)
    })
    .await;
    assert_eq!(cleared["cells"], 2, "{cleared}");
}

#[tokio::test]
async fn every_page_is_screenshot_at_desktop_and_phone_width_and_fits_the_phone() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser
        .run(screenshots::drive_screenshots(client, fixture))
        .await;
}
