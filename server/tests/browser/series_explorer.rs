//! The series explorer in Chromium: what the chart plots (x/y columns, baseline band, time
//! axis) equals what the series API answers; the view (zoom range, log scale, x axis,
//! overlay) is read from the URL on load and written back on every change, including a drag
//! zoom; an overlay draws a second series; a pull request's branch is drawn against the
//! default branch with its merge base marked; and the page fits a 390 px phone.

use super::common::web::{Fixture, UploadFixture, GOODPUT_FLAGS};
use super::{common, js, open, start_browser, until};
use fantoccini::actions::{
    InputSource, MouseActions, PointerAction, TouchActions, MOUSE_BUTTON_LEFT,
};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};
use std::time::Duration;

/// Characters of a short commit SHA on the pages.
const SHORT_SHA: usize = 10;

/// GETs a JSON API path of `server`.
async fn api(server: &common::server::TestServer, path: &str) -> Value {
    let r = server.http.get(server.url(path)).send().await.unwrap();
    assert_eq!(r.status(), 200, "GET {path}");
    r.json().await.unwrap()
}

/// Waits for the chart to be drawn (with `series` series plotted) and returns its state.
async fn chart(client: &Client, series: usize) -> Value {
    until("the chart to be drawn", || async {
        let s = js(
            client,
            r#"const el = document.getElementById('chart'), b = window.benchtrailChart;
               if (el.dataset.state !== 'ready' || !b) return null;
               const c = b.columns;
               return {series: Number(el.dataset.series), xs: c.xs, ys: c.ys, ovYs: c.ovYs, band: b.band,
                       min: b.u.scales.x.min, max: b.u.scales.x.max, full: b.fullRange, log: b.log,
                       distr: b.u.scales.y.distr, time: b.u.scales.x.time, search: location.search,
                       legend: [...document.querySelectorAll('#chart-legend [data-series]')].map(e => e.dataset.series),
                       window: Number(el.dataset.window)};"#,
        )
        .await;
        (!s.is_null() && s["series"] == json!(series)).then_some(s)
    })
    .await
}

/// The per-commit means of API points, in commit order.
fn commit_means(points: &[Value]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64, usize)> = Vec::new();
    for p in points {
        let sha = p["commit_sha"].as_str().unwrap();
        let v = p["value"].as_f64().unwrap();
        match out.iter_mut().find(|(s, _, _)| s == sha) {
            Some(e) => {
                e.1 += v;
                e.2 += 1;
            }
            None => out.push((sha.to_string(), v, 1)),
        }
    }
    out.into_iter()
        .map(|(s, sum, n)| (s, sum / n as f64))
        .collect()
}

/// The baseline band the page must draw: per commit with at least two earlier commits, mean
/// and ±1 sample σ of the up to `window` earlier commit means, as (commit index, lo, mid, hi).
fn expected_band(means: &[f64], window: usize) -> Vec<(usize, f64, f64, f64)> {
    (0..means.len())
        .filter_map(|k| {
            let prev = &means[k.saturating_sub(window)..k];
            if prev.len() < 2 {
                return None;
            }
            let mean = prev.iter().sum::<f64>() / prev.len() as f64;
            let var =
                prev.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (prev.len() - 1) as f64;
            Some((k, mean - var.sqrt(), mean, mean + var.sqrt()))
        })
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "{what}: {got:?} vs {want:?}");
    }
}

/// The viewport position of point `i` of the chart's columns (main series).
async fn point_at(client: &Client, i: usize) -> (f64, f64) {
    let at = js(
        client,
        &format!(
            r#"const {{u, columns: c}} = window.benchtrailChart; const r = u.over.getBoundingClientRect();
               return [r.left + u.valToPos(c.xs[{i}], 'x'), r.top + u.valToPos(c.ys[{i}], 'y')];"#
        ),
    )
    .await;
    (
        at[0].as_f64().unwrap().round(),
        at[1].as_f64().unwrap().round(),
    )
}

/// The tooltip's text once it shows point `i`.
async fn tooltip_of(client: &Client, i: usize) -> String {
    until("the tooltip to show the point", || async {
        let t = js(
            client,
            r#"const t = document.getElementById('chart-tooltip');
               return t && !t.hidden ? {i: t.dataset.index, text: t.textContent} : null;"#,
        )
        .await;
        (t["i"] == json!(i.to_string())).then(|| t["text"].as_str().unwrap().to_string())
    })
    .await
}

#[tokio::test]
async fn series_explorer_plots_the_api_and_keeps_its_view_in_the_url() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = Fixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_explorer(client, fixture)).await;
}

/// `ttft p50` of the fixture (4 points, 3 commits): opened zoomed from the URL, the columns
/// and band equal the API's, then log scale, reset, a drag zoom and the time axis.
async fn drive_explorer(client: Client, f: Fixture) {
    let doc = api(
        &f.server,
        &format!("/api/v1/projects/demo/series/{}", f.ttft_p50),
    )
    .await;
    let points = doc["points"].as_array().unwrap().clone();
    let means = commit_means(&points);
    let index = |sha: &str| means.iter().position(|(s, _)| s == sha).unwrap() as f64;
    let want_xs: Vec<f64> = points
        .iter()
        .map(|p| index(p["commit_sha"].as_str().unwrap()))
        .collect();
    let want_ys: Vec<f64> = points
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .collect();

    let page = f.url(&format!(
        "/projects/demo/series/{}?from=0.5&to=2.25",
        f.ttft_p50
    ));
    open(&client, &page, "#chart canvas").await;
    let s = chart(&client, 1).await;
    assert_close(&floats(&s["xs"]), &want_xs, "x column");
    assert_close(&floats(&s["ys"]), &want_ys, "y column");
    // The zoom of the URL is the x range shown.
    assert_eq!(
        (s["min"].as_f64(), s["max"].as_f64()),
        (Some(0.5), Some(2.25)),
        "{s}"
    );
    assert_eq!(s["window"], json!(10), "the default baseline window");
    let band = expected_band(&means.iter().map(|m| m.1).collect::<Vec<_>>(), 10);
    assert_eq!(band.len(), 1, "only the third commit has two earlier ones");
    assert_close(
        &floats(&s["band"]["xs"]),
        &band.iter().map(|b| b.0 as f64).collect::<Vec<_>>(),
        "band x",
    );
    assert_close(&floats(&s["band"]["lo"]), &[band[0].1], "band low");
    assert_close(&floats(&s["band"]["mid"]), &[band[0].2], "band mean");
    assert_close(&floats(&s["band"]["hi"]), &[band[0].3], "band high");
    let legend = s["legend"].as_array().unwrap();
    for key in ["points", "mean", "band"] {
        assert!(
            legend.contains(&json!(key)),
            "legend {legend:?} lacks {key}"
        );
    }

    // Hovering the third commit's point: its value with the unit, the commit date, and its
    // change against the baseline band's mean in percent.
    let (x, y) = point_at(&client, 3).await;
    let hover = MouseActions::new("mouse".into())
        .then(PointerAction::MoveTo {
            duration: None,
            x: x - 30.0,
            y,
        })
        .then(PointerAction::MoveTo {
            duration: Some(Duration::from_millis(100)),
            x,
            y,
        });
    client.perform_actions(hover).await.unwrap();
    let text = tooltip_of(&client, 3).await;
    let value = want_ys[3];
    let pct = (value - band[0].2) / band[0].2.abs() * 100.0;
    assert!(text.contains(&format!("{value} ms")), "{text}");
    assert!(text.contains("2026-01-03 00:00 UTC"), "{text}");
    assert!(text.contains(&format!("{pct:+.1} % vs baseline")), "{text}");
    assert!(text.contains("Fuse kernels"), "{text}");

    // The band is painted: the pixel at the band's mean (dashed line aside: an edge of the
    // fill) at the third commit is tinted blue, not the white of the plot.
    let tint = js(
        &client,
        r#"const {u, band: b} = window.benchtrailChart;
           const x = Math.round(u.valToPos(b.xs[0], 'x', true)) + 3;
           const y = Math.round((u.valToPos(b.hi[0], 'y', true) * 3 + u.valToPos(b.lo[0], 'y', true)) / 4);
           const d = u.ctx.getImageData(x, y, 1, 1).data;
           return [d[0], d[1], d[2], d[3]];"#,
    )
    .await;
    let tint = floats(&tint);
    assert!(
        tint[3] > 0.0 && tint[2] > tint[0],
        "band not painted: {tint:?}"
    );

    // Log scale: the y axis is logarithmic and the URL says so.
    client
        .find(Locator::Id("chart-log"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let s = until("the log scale", || async {
        let s = chart(&client, 1).await;
        (s["log"] == json!(true)).then_some(s)
    })
    .await;
    assert_eq!(s["distr"], json!(3), "{s}");
    let search = s["search"].as_str().unwrap();
    assert!(
        search.contains("log=1") && search.contains("from=0.5") && search.contains("to=2.25"),
        "{search}"
    );

    // Reset: every point again, no range in the URL.
    client
        .find(Locator::Id("chart-reset"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let s = until("the reset", || async {
        let s = chart(&client, 1).await;
        (s["min"] == json!(-0.5)).then_some(s)
    })
    .await;
    assert_eq!(s["max"], json!(2.5), "{s}");
    assert_eq!(s["full"], json!([-0.5, 2.5]), "{s}");
    assert!(!s["search"].as_str().unwrap().contains("from="), "{s}");

    // A drag across the plot zooms in and writes the range it shows into the URL.
    let at = js(
        &client,
        r#"const {u} = window.benchtrailChart; const r = u.over.getBoundingClientRect();
           return [r.left + u.valToPos(0.2, 'x'), r.left + u.valToPos(1.8, 'x'), r.top + r.height / 2];"#,
    )
    .await;
    let (x0, x1, y) = (
        at[0].as_f64().unwrap().round(),
        at[1].as_f64().unwrap().round(),
        at[2].as_f64().unwrap().round(),
    );
    let mouse = MouseActions::new("mouse".into())
        .then(PointerAction::MoveTo {
            duration: None,
            x: x0,
            y,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveTo {
            duration: Some(Duration::from_millis(200)),
            x: x1,
            y,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    client.perform_actions(mouse).await.unwrap();
    let s = until("the drag zoom in the URL", || async {
        let s = chart(&client, 1).await;
        s["search"].as_str().unwrap().contains("from=").then_some(s)
    })
    .await;
    let q: std::collections::HashMap<String, String> = url::form_urlencoded::parse(
        s["search"]
            .as_str()
            .unwrap()
            .trim_start_matches('?')
            .as_bytes(),
    )
    .into_owned()
    .collect();
    let (from, to): (f64, f64) = (q["from"].parse().unwrap(), q["to"].parse().unwrap());
    let (min, max) = (s["min"].as_f64().unwrap(), s["max"].as_f64().unwrap());
    assert!(
        (from - min).abs() < 0.001 && (to - max).abs() < 0.001,
        "{s}"
    );
    assert!(
        (0.0..0.5).contains(&from) && (1.5..2.0).contains(&to),
        "{s}"
    );
    assert_eq!(q["log"], "1", "{s}");

    // The time axis: x is each point's commit time (seconds), the tooltip shows the date.
    client
        .find(Locator::Css("#chart-x option[value=time]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let s = until("the time axis", || async {
        let s = chart(&client, 1).await;
        (s["time"] == json!(true)).then_some(s)
    })
    .await;
    let want_times: Vec<f64> = points
        .iter()
        .map(|p| {
            chrono::DateTime::parse_from_rfc3339(p["commit_time"].as_str().unwrap())
                .unwrap()
                .timestamp() as f64
        })
        .collect();
    assert_close(&floats(&s["xs"]), &want_times, "time column");
    let search = s["search"].as_str().unwrap();
    assert!(
        search.contains("x=time") && !search.contains("from="),
        "{search}"
    );

    // Reloading the URL restores the view.
    let url = client.current_url().await.unwrap();
    open(&client, url.as_str(), "#chart canvas").await;
    let s = chart(&client, 1).await;
    assert_eq!(
        (s["time"].clone(), s["log"].clone()),
        (json!(true), json!(true)),
        "{s}"
    );

    // On touch, the first tap shows the tooltip and stays; the second opens the run.
    let (x, y) = point_at(&client, 3).await;
    let tap = || {
        TouchActions::new("finger".into())
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
            })
    };
    client.perform_actions(tap()).await.unwrap();
    tooltip_of(&client, 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        client
            .current_url()
            .await
            .unwrap()
            .path()
            .starts_with("/projects/"),
        "one tap navigated"
    );
    client.perform_actions(tap()).await.unwrap();
    let run_path = format!("/runs/{}", points[3]["run_id"].as_str().unwrap());
    until("the second tap to open the run", || async {
        let url = client.current_url().await.ok()?;
        (url.path() == run_path).then_some(())
    })
    .await;
}

#[tokio::test]
async fn series_explorer_overlays_another_cell_and_fits_a_phone() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_overlay(client, fixture)).await;
}

/// `ttft p50` of the c=4 cell (four trade-off commits) overlaid with the c=1 cell's (a fifth
/// commit): two series, the overlay's values as the API has them, its own legend entry, the
/// overlay in the URL and the select; at 390 px the page does not scroll sideways.
async fn drive_overlay(client: Client, f: UploadFixture) {
    for (i, path) in super::TRADEOFF_FILES.iter().enumerate() {
        f.upload(i + 1, path, GOODPUT_FLAGS).await;
    }
    f.upload(
        5,
        "examples/history/baseline_completions_c1_isl512_osl128.json",
        "",
    )
    .await;
    let list = api(
        &f.server,
        "/api/v1/projects/demo/series?metric=ttft&stat=p50&limit=500",
    )
    .await;
    let id_of = |c: &str| {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["cell_key"].as_str().unwrap().contains(c) && s["slo_profile"].is_null())
            .unwrap_or_else(|| panic!("no ttft p50 series of {c}: {list}"))["series_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (c4, c1) = (id_of("max_concurrency=4;"), id_of("max_concurrency=1;"));
    let overlay = api(&f.server, &format!("/api/v1/projects/demo/series/{c1}")).await;
    let want: Vec<f64> = overlay["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .collect();
    assert!(!want.is_empty());

    client.set_window_size(390, 844).await.unwrap();
    open(
        &client,
        &f.server
            .url(&format!("/projects/demo/series/{c4}?overlay={c1}")),
        "#chart canvas",
    )
    .await;
    let s = chart(&client, 2).await;
    let got: Vec<f64> = s["ovYs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert_close(&got, &want, "overlay values");
    assert!(
        s["legend"].as_array().unwrap().contains(&json!("overlay")),
        "{s}"
    );
    let b = js(&client, "return window.benchtrailChart.overlay;").await;
    assert_eq!(b["seriesId"], json!(c1));
    let selected = until("the overlay list", || async {
        let v = js(&client, "const s = document.getElementById('chart-overlay'); return s.dataset.state === 'ready' ? s.value : null;").await;
        v.as_str().map(str::to_string)
    })
    .await;
    assert_eq!(selected, c1);

    let width = js(&client, "return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, table: !!document.getElementById('points'), wide: [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ':' + Math.round(e.getBoundingClientRect().right))};").await;
    assert!(width["inner"].as_i64().unwrap() <= 390, "{width}");
    assert!(
        width["scroll"].as_i64().unwrap() <= width["inner"].as_i64().unwrap(),
        "the series page scrolls sideways at 390 px: {width}"
    );
    assert_eq!(width["table"], json!(true));
    super::screenshot(&client, "series-overlay-phone").await;

    // Choosing no overlay leaves one series and clears the URL parameter.
    client
        .find(Locator::Css("#chart-overlay option[value='none']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let s = chart(&client, 1).await;
    assert!(!s["search"].as_str().unwrap().contains("overlay="), "{s}");
}

#[tokio::test]
async fn a_pull_request_branch_is_drawn_against_main_with_its_merge_base() {
    let Some(browser) = start_browser().await else {
        return;
    };
    let fixture = UploadFixture::start().await;
    let client = browser.client.clone();
    browser.run(drive_branch_context(client, fixture)).await;
}

/// Three commits on `main`, then a pull request's commit on `pr-7` whose merge base is main's
/// second commit. Its series page draws the PR's point and, as the overlay, main's points of
/// the same series (the values the API has on main), the merge base at main's second commit
/// (x = 1 in commit order: main's commits come first by commit time), named in the legend and
/// the page; choosing no overlay keeps `overlay=none` in the URL, and a reload keeps it off.
async fn drive_branch_context(client: Client, f: UploadFixture) {
    for (i, path) in super::TRADEOFF_FILES[..3].iter().enumerate() {
        f.upload(i + 1, path, GOODPUT_FLAGS).await;
    }
    let merge_base = format!("{:040x}", 2);
    f.upload_with(4, super::TRADEOFF_FILES[3], GOODPUT_FLAGS, |doc| {
        doc["run"]["branch"] = json!("pr-7");
        doc["run"]["commit"]["parents"] = json!([merge_base.clone()]);
        doc["run"]["pull_request"] = json!({"number": 7, "merge_base": merge_base.clone()});
    })
    .await;
    let list = api(
        &f.server,
        "/api/v1/projects/demo/series?metric=ttft&stat=p50&limit=500",
    )
    .await;
    let id = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["slo_profile"].is_null())
        .unwrap()["series_id"]
        .as_str()
        .unwrap()
        .to_string();
    let values = |doc: &Value| -> Vec<f64> {
        doc["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["value"].as_f64().unwrap())
            .collect()
    };
    let main = values(&api(&f.server, &format!("/api/v1/projects/demo/series/{id}")).await);
    let pr = values(
        &api(
            &f.server,
            &format!("/api/v1/projects/demo/series/{id}?branch=pr-7"),
        )
        .await,
    );
    assert_eq!((main.len(), pr.len()), (3, 1));

    client.set_window_size(1280, 800).await.unwrap();
    let page = f
        .server
        .url(&format!("/projects/demo/series/{id}?branch=pr-7"));
    open(&client, &page, "#chart canvas").await;
    let s = chart(&client, 2).await;
    let got = |key: &str| -> Vec<f64> {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_f64)
            .collect()
    };
    assert_close(&got("ys"), &pr, "the branch's points");
    assert_close(&got("ovYs"), &main, "main's points as context");
    assert_eq!(floats(&s["xs"]), vec![0.0, 1.0, 2.0, 3.0], "{s}");
    let b = js(
        &client,
        "const b = window.benchtrailChart; return {overlay: b.overlay, mergeBase: b.mergeBase};",
    )
    .await;
    assert_eq!(b["overlay"]["branch"], json!("main"), "{b}");
    assert_eq!(b["mergeBase"], json!({"sha": merge_base, "x": 1}), "{b}");
    let legend: Vec<Value> = s["legend"].as_array().unwrap().clone();
    assert!(
        legend.contains(&json!("merge-base")) && legend.contains(&json!("overlay")),
        "{s}"
    );
    let text = js(
        &client,
        "return document.getElementById('branch-context').textContent;",
    )
    .await;
    let text = text.as_str().unwrap();
    let squashed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        squashed.starts_with(&format!(
            "Branch pr-7 forked from main at {} (its merge base).",
            &merge_base[..SHORT_SHA]
        )),
        "{squashed}"
    );
    let selected = until("the overlay list", || async {
        let v = js(&client, "const s = document.getElementById('chart-overlay'); return s.dataset.state === 'ready' ? s.value : null;").await;
        v.as_str().map(str::to_string)
    })
    .await;
    assert_eq!(selected, "@main");
    super::screenshot(&client, "series-pull-request").await;

    // No overlay: one series, and the choice survives a reload.
    client
        .find(Locator::Css("#chart-overlay option[value='none']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let s = chart(&client, 1).await;
    assert!(
        s["search"].as_str().unwrap().contains("overlay=none"),
        "{s}"
    );
    let again = format!("{page}&overlay=none");
    open(&client, &again, "#chart canvas").await;
    let s = chart(&client, 1).await;
    assert_eq!(floats(&s["xs"]), vec![0.0], "{s}");
}
