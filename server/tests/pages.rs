//! The HTML pages over a real server and a real SQLite store: exact values as stored,
//! exact recorded commands, links between pages, 404s for unknown and private things, and
//! the embedded static assets.

use crate::common;

use common::web::{
    self, escaped, sha, tags, text_of, unescape, Fixture, BENCH_COMMAND, LAUNCH_COMMAND, REPO_URL,
};

#[tokio::test]
async fn index_lists_public_projects_only() {
    let f = Fixture::start().await;
    let html = f.ok_page("/").await;
    let projects = tags(&html, "<li data-project=");
    assert_eq!(projects.len(), 1, "{html}");
    assert_eq!(projects[0]["data-project"], "demo");
    assert!(
        html.contains(&format!(
            r#"<a href="/projects/demo">{}</a>"#,
            escaped("Demo <Serving>")
        )),
        "{html}"
    );
    assert!(
        !html.contains("secret"),
        "a private project is listed: {html}"
    );
}

#[tokio::test]
async fn project_page_groups_series_and_lists_runs() {
    let f = Fixture::start().await;
    let html = f.ok_page("/projects/demo").await;
    // Two configurations (A on every commit, B on commit 3), each with the one cell.
    assert!(html.contains("<h3>meta-llama/Llama-3.1-8B-Instruct · 1 × NVIDIA H100 80GB HBM3 · vllm · weights none · benchmark vllm-bench-serve</h3>"), "{html}");
    assert!(
        html.contains("<h3>Qwen/Qwen3-0.6B · NVIDIA L4</h3>"),
        "{html}"
    );
    let cells = tags(&html, "<div class=\"cell\"");
    assert_eq!(cells.len(), 2);
    assert!(
        cells.iter().all(|c| c["data-cell"]
            == "scenario=short-chat;max_concurrency=4;request_rate=inf;num_prompts=60"),
        "{cells:?}"
    );
    // Statistics link to their series, mean first then percentiles.
    let links: Vec<_> = tags(&html, "<a href=\"/projects/demo/series/")
        .into_iter()
        .map(|a| a["data-series"].clone())
        .collect();
    let mean = links
        .iter()
        .position(|s| *s == f.ttft_mean)
        .expect("mean linked");
    let p50 = links
        .iter()
        .position(|s| *s == f.ttft_p50)
        .expect("p50 linked");
    let p99 = links
        .iter()
        .position(|s| *s == f.ttft_p99)
        .expect("p99 linked");
    assert!(mean < p50 && p50 < p99, "{links:?}");
    assert_eq!(links.len(), 2 * 4, "4 series per configuration: {links:?}");
    // Recent runs, each linking to its page; the private run is absent.
    let runs = tags(&html, "<tr data-run-id=");
    assert_eq!(runs.len(), 5, "{html}");
    for r in &runs {
        assert!(html.contains(&format!("<a href=\"/runs/{}\">", r["data-run-id"])));
    }
    assert!(!html.contains(&f.secret_run.to_string()));
    assert!(
        html.contains(&format!(
            r#"<a class="sha" href="{REPO_URL}/commit/{0}" title="{0}" data-sha="{0}">{1}</a>"#,
            sha('4'),
            &sha('4')[..10]
        )),
        "{html}"
    );
}

#[tokio::test]
async fn series_page_shows_title_and_exact_points() {
    let f = Fixture::start().await;
    let html = f
        .ok_page(&format!("/projects/demo/series/{}", f.ttft_p50))
        .await;
    let title = &tags(&html, "<h1 id=\"series-title\"")[0];
    assert_eq!(title["data-metric"], "ttft");
    assert_eq!(title["data-stat"], "p50");
    assert_eq!(title["data-unit"], "ms");
    assert_eq!(title["data-direction"], "lower_is_better");
    assert!(html.contains(r#"Time to first token <span class="stat">p50</span> <span class="unit">(ms)</span></h1>"#), "{html}");
    assert!(html.contains(r#"<p class="direction direction-lower_is_better">lower is better</p>"#));
    assert_eq!(
        text_of(&html, "cell-key").unwrap(),
        "scenario=short-chat;max_concurrency=4;request_rate=inf;num_prompts=60"
    );
    assert!(
        html.contains(
            "<tr><th scope=\"row\">hardware.accelerator</th><td>NVIDIA H100 80GB HBM3</td></tr>"
        ),
        "{html}"
    );

    // The table: every point on main in commit order, repeats of commit 2 sharing x = 1,
    // values exactly as stored.
    let rows = tags(&html, "<tr data-x=");
    assert_eq!(rows.len(), f.main_points.len(), "{html}");
    let expected_x = ["0", "1", "1", "2"];
    for ((row, p), x) in rows.iter().zip(&f.main_points).zip(expected_x) {
        assert_eq!(row["data-x"], x);
        assert_eq!(row["data-commit-sha"], p.sha);
        assert_eq!(row["data-run-id"], p.run_id.to_string());
        assert_eq!(row["data-value"].parse::<f64>().unwrap(), p.value);
        assert_eq!(row["data-n"], "60");
    }
    assert_eq!(rows[0]["data-value"], "12.345678901");
    assert!(
        html.contains(r#"<td class="num value" title="12.345678901">12.346</td>"#),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<td><span class=\"clip subject\" title=\"{0}\">{0}</span></td>",
            escaped("Tune scheduler <fast> & safe")
        )),
        "subject escaped: {html}"
    );
    assert!(html.contains(&format!(r#"href="{REPO_URL}/commit/{}""#, sha('1'))));
    assert!(html.contains("4 points over 3 commits"));

    // The chart reads the API, on the same branch.
    let chart = &tags(&html, "<div id=\"chart\"")[0];
    assert_eq!(
        chart["data-api"],
        format!("/api/v1/projects/demo/series/{}?branch=main", f.ttft_p50)
    );
    assert!(html.contains(
        r#"<script src="/static/vendor/uplot/uPlot.iife.min.js?v=1.6.32" defer></script>"#
    ));
    // What the explorer script needs to fetch overlays and draw the baseline band: the
    // project, the series, the branch and the project's baseline window (default 10).
    assert_eq!(chart["data-project"], "demo");
    assert_eq!(chart["data-series-id"], f.ttft_p50);
    assert_eq!(chart["data-branch"], "main");
    assert_eq!(chart["data-window"], "10");
    assert!(html.contains(r#"<script src="/static/series_view.js" defer></script>"#));
    assert!(html.contains(r#"<script src="/static/series_columns.js" defer></script>"#));
    // The table stays readable without JavaScript and scrolls in its own box on a phone.
    assert!(html.contains("<div class=\"table-scroll\">\n<table class=\"points\" id=\"points\">"));

    // Sibling statistics of the same metric, cell and configuration.
    assert!(html.contains("<strong>p50</strong>"));
    assert!(
        html.contains(&format!(
            r#"<a href="/projects/demo/series/{}?branch=main">p99</a>"#,
            f.ttft_p99
        )),
        "{html}"
    );
    assert!(html.contains(&format!(
        r#"<a href="/projects/demo/series/{}?branch=main">mean</a>"#,
        f.ttft_mean
    )));
}

#[tokio::test]
async fn series_page_follows_the_branch() {
    let f = Fixture::start().await;
    let html = f
        .ok_page(&format!(
            "/projects/demo/series/{}?branch=feature%2Fx",
            f.ttft_p50
        ))
        .await;
    let rows = tags(&html, "<tr data-x=");
    assert_eq!(rows.len(), 1, "{html}");
    assert_eq!(rows[0]["data-value"], "99.5");
    assert_eq!(rows[0]["data-run-id"], f.feature_run.to_string());
    let chart = &tags(&html, "<div id=\"chart\"")[0];
    assert_eq!(
        chart["data-api"],
        format!(
            "/api/v1/projects/demo/series/{}?branch=feature%2Fx",
            f.ttft_p50
        )
    );
    // A branch without runs: an empty table, not an error.
    let html = f
        .ok_page(&format!("/projects/demo/series/{}?branch=nope", f.ttft_p50))
        .await;
    assert!(tags(&html, "<tr data-x=").is_empty());
    assert!(text_of(&html, "no-points")
        .unwrap()
        .starts_with("No points on branch"));
}

#[tokio::test]
async fn run_page_shows_metadata_files_results_and_warnings() {
    let f = Fixture::start().await;
    let html = f.ok_page(&format!("/runs/{}", f.feature_run)).await;
    assert_eq!(text_of(&html, "run-id").unwrap(), f.feature_run.to_string());
    assert_eq!(text_of(&html, "commit-link").unwrap(), sha('4'));
    assert!(html.contains(&format!(
        r#"<a id="commit-link" href="{REPO_URL}/commit/{}">"#,
        sha('4')
    )));
    assert_eq!(text_of(&html, "branch").unwrap(), "feature/x");
    assert_eq!(text_of(&html, "pr").unwrap(), "#42");
    assert!(html.contains(
        r#"<a id="ci-job" href="https://ci.example/jobs/7">https://ci.example/jobs/7</a>"#
    ));
    assert_eq!(text_of(&html, "repeat").unwrap(), "0");
    assert!(
        html.contains("<tr><th scope=\"row\">runner</th><td>gpu-1</td></tr>"),
        "tags: {html}"
    );
    assert!(html.contains(&format!(
        r#"<a href="/api/v1/runs/{}/files/0">results.json</a>"#,
        f.feature_run
    )));
    assert!(!html.contains("warning-summary"), "no warnings in this run");

    // The metric table: exact values, each linking to its series on the run's branch.
    let metrics = tags(&html, "<tr data-metric=");
    let p50 = metrics
        .iter()
        .find(|m| m["data-metric"] == "ttft" && m["data-stat"] == "p50")
        .unwrap();
    assert_eq!(p50["data-value"], "99.5");
    assert_eq!(p50["data-series"], f.ttft_p50);
    assert!(html.contains(&format!(r#"<a href="/projects/demo/series/{}?branch=feature%2Fx" title="ttft">Time to first token</a>"#, f.ttft_p50)), "{html}");
    let thr = metrics
        .iter()
        .find(|m| m["data-metric"] == "request_throughput")
        .unwrap();
    assert_eq!(thr["data-stat"], "value");
    assert_eq!(thr["data-value"], "5.25");
    assert!(html.contains(&format!(
        r#"<a class="config-link" href="/configs/{0}" title="{0}">"#,
        f.fingerprint_a
    )));

    // The run of commit 3: a warning shown at the top and in its result, and two results.
    let html = f.ok_page(&format!("/runs/{}", f.warned_run)).await;
    assert_eq!(
        text_of(&html, "warning-summary").unwrap(),
        "⚠ 1 warning in this run: see the results below."
    );
    assert!(html.contains(r#"<li class="warning" data-code="small_sample_tail"><strong>small_sample_tail</strong>: p99 of 60 requests rests on 1 sample.</li>"#), "{html}");
    let results = tags(&html, "<section class=\"result\"");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["data-fingerprint"], f.fingerprint_a);
    assert_eq!(results[1]["data-fingerprint"], f.fingerprint_b);
}

#[tokio::test]
async fn config_page_shows_every_section_and_the_recorded_commands() {
    let f = Fixture::start().await;
    let html = f.ok_page(&format!("/configs/{}", f.fingerprint_a)).await;
    // Its project, in the breadcrumb and in a line; the private project's name never.
    assert!(
        html.contains(&format!(
            "<nav class=\"crumbs\"><a class=\"brand\" href=\"/\">benchtrail</a> / <a href=\"/projects/demo\">{}</a> / configuration</nav>",
            escaped("Demo <Serving>")
        )),
        "{html}"
    );
    let used_by = tags(&html, "<a href=\"/projects/demo\" data-project=");
    assert_eq!(used_by.len(), 1, "{html}");
    assert_eq!(used_by[0]["data-project"], "demo");
    // Its runs: every run of the visible project with a result under it, newest first (the
    // private project's runs never), as the runs API lists them.
    let (_, listed) = f.server.get("/api/v1/projects/demo/runs?limit=100").await;
    let mut want = Vec::new();
    for run in listed["items"].as_array().unwrap() {
        let id = run["id"].as_str().unwrap();
        let (_, stored) = f.server.get(&format!("/api/v1/runs/{id}")).await;
        let uses = stored["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["config_fingerprint"] == f.fingerprint_a.as_str());
        if uses {
            want.push(id.to_string());
        }
    }
    assert!(want.len() >= 2, "{listed}");
    let rows: Vec<String> = tags(&html, "<tr data-run-id=")
        .iter()
        .map(|r| r["data-run-id"].clone())
        .collect();
    assert_eq!(rows, want, "{html}");
    assert!(!rows.contains(&f.secret_run.to_string()));
    assert_eq!(text_of(&html, "launch-command").unwrap(), LAUNCH_COMMAND);
    assert_eq!(text_of(&html, "benchmark-command").unwrap(), BENCH_COMMAND);
    assert!(
        html.contains("tee &#60;log&#62; &#38;&#38; echo done"),
        "escaped in HTML: {html}"
    );
    assert_eq!(text_of(&html, "canonical-json").unwrap(), f.canonical_a);
    let canonical: serde_json::Value = serde_json::from_str(&f.canonical_a).unwrap();
    let expected: benchtrail_core::Configuration = serde_json::from_value(web::config_a()).unwrap();
    assert_eq!(f.canonical_a, expected.canonical_json());
    assert_eq!(canonical["engine"]["launch_command"], LAUNCH_COMMAND);
    for section in [
        "hardware",
        "model",
        "engine",
        "quantization",
        "parallelism",
        "speculative_decoding",
        "scheduler",
        "sampling",
        "benchmark",
        "metadata",
    ] {
        assert!(
            html.contains(&format!(
                "<section class=\"config-section\" id=\"section-{section}\">"
            )),
            "section {section}: {html}"
        );
    }
    assert!(
        html.contains("<tr><th scope=\"row\">driver_version</th><td>570.86.15</td></tr>"),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<tr><th scope=\"row\">note</th><td>{}</td></tr>",
            escaped("a<b & c")
        )),
        "{html}"
    );

    // Configuration B recorded no command: said so, never invented.
    let html = f.ok_page(&format!("/configs/{}", f.fingerprint_b)).await;
    assert_eq!(
        text_of(&html, "launch-command-missing").unwrap(),
        "not recorded"
    );
    assert_eq!(
        text_of(&html, "benchmark-command-missing").unwrap(),
        "not recorded"
    );
    assert!(!html.contains("id=\"launch-command\""));
}

#[tokio::test]
async fn unknown_and_private_things_are_html_404s() {
    let f = Fixture::start().await;
    let missing = [
        "/projects/nope".to_string(),
        "/projects/secret".to_string(),
        format!("/projects/demo/series/{}", "0123456789abcdef"),
        format!("/projects/secret/series/{}", f.secret_series),
        // A series of another project under this one's address.
        format!("/projects/demo/series/{}", f.secret_series),
        format!("/runs/{}", uuid::Uuid::new_v4()),
        "/runs/not-a-uuid".to_string(),
        format!("/runs/{}", f.secret_run),
        format!("/configs/{}", "0".repeat(64)),
        "/configs/xyz".to_string(),
    ];
    for path in missing {
        let (status, ct, body) = f.page(&path).await;
        assert_eq!(status, 404, "GET {path}: {body}");
        assert_eq!(ct, "text/html; charset=utf-8", "GET {path}");
        assert!(body.contains("<h1>Not found</h1>"), "GET {path}: {body}");
        assert!(body.contains(r#"data-status="404""#));
    }
    // The private project's name is not revealed by its 404.
    let (_, _, body) = f.page(&format!("/runs/{}", f.secret_run)).await;
    assert!(!body.contains("secret"), "{body}");
}

#[tokio::test]
async fn static_assets_are_embedded_with_types_and_cache_headers() {
    let f = Fixture::start().await;
    let get = |path: &str| f.server.http.get(f.url(path)).send();
    let r = get("/static/vendor/uplot/uPlot.iife.min.js?v=1.6.32")
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    assert_eq!(
        r.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let body = r.bytes().await.unwrap();
    let on_disk = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../web/static/vendor/uplot/uPlot.iife.min.js"
    ))
    .unwrap();
    assert_eq!(&body[..], &on_disk[..]);

    let r = get("/static/vendor/uplot/uPlot.min.css").await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/css; charset=utf-8");

    for script in ["/static/series_view.js", "/static/series_columns.js"] {
        let r = get(script).await.unwrap();
        assert_eq!(r.status(), 200, "{script}");
        assert_eq!(
            r.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
    }

    let r = get("/static/series.js").await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    assert_eq!(r.headers()["cache-control"], "no-cache");
    let etag = r.headers()["etag"].to_str().unwrap().to_string();
    // Revalidation answers 304 without a body.
    let r = f
        .server
        .http
        .get(f.url("/static/series.js"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);

    let r = get("/static/site.css").await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/css; charset=utf-8");
    assert_eq!(get("/static/nope.js").await.unwrap().status(), 404);
    assert_eq!(get("/static/../Cargo.toml").await.unwrap().status(), 404);
}

#[test]
fn unescape_reverses_askama_escaping() {
    assert_eq!(
        unescape("a&lt;b &amp;&#38; &#39;c&#x27; &#34;d&quot;"),
        "a<b && 'c' \"d\""
    );
    assert_eq!(
        unescape(&escaped("<a href=\"x\">'&'</a>")),
        "<a href=\"x\">'&'</a>"
    );
}

/// The stored metric `name`/`stat` (and SLO profile) of a result in `GET /api/v1/runs/{id}`.
fn api_metric<'a>(
    result: &'a serde_json::Value,
    name: &str,
    stat: &str,
    profile: Option<&str>,
) -> &'a serde_json::Value {
    result["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name && m["stat"] == stat && m["slo_profile"].as_str() == profile)
        .unwrap_or_else(|| panic!("{name} {stat} {profile:?} in {result}"))
}

#[tokio::test]
async fn intervals_goodput_profiles_and_formats_are_shown() {
    let f = web::UploadFixture::start().await;
    let path = "examples/history/goodput_baseline_s11_c4.json";
    let run = f.upload(1, path, web::GOODPUT_FLAGS).await;
    let (_, api) = f.server.get(&format!("/api/v1/runs/{run}")).await;
    let result = &api["results"][0];
    let html = f.ok_page(&format!("/runs/{run}")).await;

    // The file and the format it was read as.
    let files = tags(&html, "<tr data-file=");
    assert_eq!(files.len(), 1);
    assert_eq!(
        files[0]["data-format"],
        api["files"][0]["format"].as_str().unwrap()
    );
    assert!(html.contains(&format!(
        "<td class=\"format\"><code>{}</code></td>",
        api["files"][0]["format"].as_str().unwrap()
    )));
    // Its SHA-256 shortened (the full hash in the title and a data attribute), so the table
    // fits a narrow window.
    let sha256 = api["files"][0]["sha256"].as_str().unwrap();
    assert_eq!(sha256.len(), 64);
    assert!(
        html.contains(&format!(
            "<td><code class=\"muted sha256\" title=\"{sha256}\" data-sha256=\"{sha256}\">{}…</code></td>",
            &sha256[..12]
        )),
        "{html}"
    );
    assert!(html.contains(&format!(
        "read as <code class=\"source-format\">{}</code> from file 0 “goodput_baseline_s11_c4.json”, record",
        result["source"]["format"].as_str().unwrap()
    )), "{html}");

    // p50 and p99 carry their interval: exact bounds, the level, the method as the title.
    for stat in ["p50", "p99"] {
        let m = api_metric(result, "ttft", stat, None);
        let ci = &m["ci"];
        let (low, high) = (ci["low"].as_f64().unwrap(), ci["high"].as_f64().unwrap());
        let row = tags(&html, "<tr data-metric=\"ttft\"")
            .into_iter()
            .find(|t| t["data-stat"] == stat)
            .unwrap();
        let series = &row["data-series"];
        let text = format!(
            "[{}, {}] 95 %",
            benchtrail_server::pages::format::display_number(low),
            benchtrail_server::pages::format::display_number(high)
        );
        let span = format!(
            "<span class=\"ci\" title=\"{}\" data-low=\"{low}\" data-high=\"{high}\" data-level=\"0.95\">{text}</span>",
            ci["method"].as_str().unwrap()
        );
        assert!(html.contains(&span), "{stat} {span}: {html}");
        // The series page shows the same interval on the point.
        let page = f.ok_page(&format!("/projects/demo/series/{series}")).await;
        assert!(page.contains("<th>Confidence interval</th>"), "{page}");
        assert!(page.contains(&span), "{page}");
        // And the series API, on the point.
        let (_, points) = f
            .server
            .get(&format!("/api/v1/projects/demo/series/{series}"))
            .await;
        assert_eq!(points["points"][0]["ci"], *ci, "{points}");
    }
    // Means have no interval.
    let mean = tags(&html, "<tr data-metric=\"ttft\"")
        .into_iter()
        .find(|t| t["data-stat"] == "mean")
        .unwrap();
    let page = f
        .ok_page(&format!("/projects/demo/series/{}", mean["data-series"]))
        .await;
    assert!(!page.contains("Confidence interval"));

    // Goodput per SLO profile: the default profile and the tool's own, with thresholds.
    let rows = tags(&html, "<tr data-profile=");
    let profiles: Vec<&str> = rows.iter().map(|r| r["data-profile"].as_str()).collect();
    assert_eq!(profiles, ["interactive", "tool"], "{html}");
    assert!(
        html.contains(
            "<th scope=\"row\"><code>interactive</code></th><td>ttft ≤ 2000 ms · tpot ≤ 50 ms</td>"
        ),
        "{html}"
    );
    assert!(html.contains("<th scope=\"row\"><code>tool</code></th><td>the tool&#39;s own: ttft ≤ 60 ms · tpot ≤ 12 ms · e2el ≤ 1800 ms</td>"), "{html}");
    let tool = api_metric(result, "request_goodput", "value", Some("tool"));
    let values: Vec<String> = tags(&html, "<a href=\"/projects/demo/series/")
        .into_iter()
        .filter(|a| a.get("class").is_some_and(|c| c == "goodput-value"))
        .map(|a| a["data-value"].clone())
        .collect();
    assert_eq!(values.len(), 2);
    assert_eq!(
        values[1].parse::<f64>().unwrap(),
        tool["value"].as_f64().unwrap()
    );
    assert!(!html.contains("not computable"));
    // Metric rows of goodput name their profile.
    assert!(
        html.contains(&format!(
            "<tr data-metric=\"request_goodput\" data-stat=\"value\" data-profile=\"tool\" data-value=\"{}\"",
            web::unescape(&tool["value"].to_string())
        )),
        "{html}"
    );

    // The series page of the tool's goodput names the profile and its siblings by profile.
    let series = tool["series_id"].as_str().unwrap();
    let page = f.ok_page(&format!("/projects/demo/series/{series}")).await;
    let title = &tags(&page, "<h1 id=\"series-title\"")[0];
    assert_eq!(title["data-profile"], "tool");
    assert!(
        page.contains(" <span class=\"profile\">· SLO profile <code>tool</code></span></h1>"),
        "{page}"
    );
    assert!(
        page.contains("(tool) · Demo · benchtrail</title>"),
        "{page}"
    );
    assert_eq!(
        text_of(&page, "profile-thresholds").unwrap(),
        "the tool's own: ttft ≤ 60 ms · tpot ≤ 12 ms · e2el ≤ 1800 ms"
    );
    assert!(page.contains("<strong>tool</strong>"), "{page}");
    let interactive = api_metric(result, "request_goodput", "value", Some("interactive"));
    assert!(page.contains(&format!(
        "<a href=\"/projects/demo/series/{}?branch=main\" data-profile=\"interactive\">interactive</a>",
        interactive["series_id"].as_str().unwrap()
    )), "{page}");

    // The project page lists goodput once per profile.
    let project = f.ok_page("/projects/demo").await;
    let goodput_rows: Vec<String> = tags(&project, "<tr data-metric=\"request_goodput\"")
        .into_iter()
        .map(|t| t["data-profile"].clone())
        .collect();
    assert_eq!(goodput_rows, ["interactive", "tool"], "{project}");

    // A file with neither samples nor the tool's goodput: "not computable", never 0.
    let path = "testdata/vllm/llm-benchmaxxing-vllm-bench-serve-2026-01-glm47-fp8-h100-tp8.json";
    let run = f.upload(2, path, "").await;
    let html = f.ok_page(&format!("/runs/{run}")).await;
    assert_eq!(
        text_of(&html, "goodput-none-0").unwrap(),
        "goodput: not computable"
    );
    assert!(tags(&html, "<table class=\"goodput\"").is_empty());
    assert!(!html.contains("data-metric=\"request_goodput\""));
    // The warning stays prominent: counted at the top, listed by code.
    assert!(text_of(&html, "warning-summary").unwrap().starts_with("⚠ "));
    assert!(
        html.contains("<a href=\"#result-0\" data-code=\"goodput_not_computable\">"),
        "{html}"
    );
    assert!(html.contains(
        "<li class=\"warning\" data-code=\"goodput_not_computable\"><strong>goodput_not_computable</strong>"
    ));

    // The tool's goodput without a recorded --goodput: thresholds unknown, said so.
    let run = f
        .upload(3, "examples/history/goodput_baseline_s12_c4.json", "")
        .await;
    let html = f.ok_page(&format!("/runs/{run}")).await;
    assert!(html.contains("<th scope=\"row\"><code>tool</code></th><td>the tool&#39;s own; thresholds unknown</td>"), "{html}");

    // Now the tool's goodput is two series (known and unknown thresholds): the project page
    // gives each its own row, named by its thresholds, and the series page links the other.
    let project = f.ok_page("/projects/demo").await;
    assert!(project.contains("SLO profile <code>tool</code> (the tool&#39;s own: ttft ≤ 60 ms · tpot ≤ 12 ms · e2el ≤ 1800 ms)</span>"), "{project}");
    assert!(
        project.contains(
            "SLO profile <code>tool</code> (the tool&#39;s own; thresholds unknown)</span>"
        ),
        "{project}"
    );
    let rows: Vec<String> = tags(&project, "<tr data-metric=\"request_goodput\"")
        .into_iter()
        .map(|t| t["data-profile"].clone())
        .collect();
    assert_eq!(rows, ["interactive", "tool", "tool"], "{project}");
    let page = f.ok_page(&format!("/projects/demo/series/{series}")).await;
    assert!(
        page.contains("data-profile=\"tool (thresholds unknown)\">tool (thresholds unknown)</a>"),
        "{page}"
    );
    assert!(
        !page.contains("aria-label=\"Other statistics\""),
        "one statistic only: {page}"
    );
}

/// An alert of the fixture's `demo` project to store.
fn new_alert(
    kind: benchtrail_server::storage::AlertKind,
    status: benchtrail_server::storage::AlertStatus,
    series_ids: &[&str],
    commit: char,
    run: uuid::Uuid,
    summary: &str,
) -> benchtrail_server::storage::NewAlert {
    benchtrail_server::storage::NewAlert {
        kind,
        status,
        reason: None,
        severity: Some("warn".into()),
        series_ids: series_ids.iter().map(|s| s.to_string()).collect(),
        metric: "ttft".into(),
        stat: "p50".parse().unwrap(),
        slo_profile: None,
        series_key_json: "{}".into(),
        cell_key: "scenario=short-chat".into(),
        branch: "main".into(),
        commit_sha: sha(commit),
        run_id: Some(run),
        baseline_commits: vec![sha('1')],
        summary: summary.into(),
        finding: serde_json::json!({}),
        settings_version: 1,
    }
}

#[tokio::test]
async fn alerts_are_listed_by_status_and_on_series_run_and_project_pages() {
    use benchtrail_server::storage::{AlertFilter, AlertKind, AlertStatus};
    let f = Fixture::start().await;
    let store = &f.server.store;
    let commit2_run = f.main_points[1].run_id;
    let save = |commit: char, alerts: Vec<benchtrail_server::storage::NewAlert>| async move {
        store
            .save_commit_alerts(
                f.demo.id,
                "main",
                &sha(commit),
                &AlertKind::ALL,
                None,
                &alerts,
                "gone",
            )
            .await
            .unwrap();
    };
    save(
        '3',
        vec![new_alert(
            AlertKind::Regression,
            AlertStatus::Open,
            &[&f.ttft_p50],
            '3',
            f.warned_run,
            "median TTFT +20.0 % <slower> & worse.",
        )],
    )
    .await;
    save(
        '2',
        vec![
            new_alert(
                AlertKind::Tradeoff,
                AlertStatus::Open,
                &[&f.ttft_mean, &f.ttft_p50],
                '2',
                commit2_run,
                "throughput up but TTFT worse.",
            ),
            new_alert(
                AlertKind::Improvement,
                AlertStatus::Resolved,
                &[&f.ttft_p99],
                '2',
                commit2_run,
                "p99 TTFT -10.0 %.",
            ),
        ],
    )
    .await;
    let all = store
        .list_alerts(f.demo.id, &AlertFilter::default(), None, 10)
        .await
        .unwrap()
        .items;
    let id_of = |kind: AlertKind| all.iter().find(|a| a.kind == kind).unwrap().id.to_string();
    let (regression, tradeoff, improvement) = (
        id_of(AlertKind::Regression),
        id_of(AlertKind::Tradeoff),
        id_of(AlertKind::Improvement),
    );
    store
        .set_alert_status(
            tradeoff.parse().unwrap(),
            AlertStatus::Dismissed,
            Some("expected"),
            None,
        )
        .await
        .unwrap();

    // The alerts page: every status has its section, each alert sits under its own.
    let html = f.ok_page("/projects/demo/alerts").await;
    let sections: Vec<String> = tags(&html, "<section class=\"alert-status\"")
        .into_iter()
        .map(|s| s["data-status"].clone())
        .collect();
    assert_eq!(sections, ["open", "acknowledged", "dismissed", "resolved"]);
    let section_of = |id: &str| {
        let at = html.find(&format!("data-alert-id=\"{id}\"")).unwrap();
        let before = &html[..at];
        let s = before.rfind("<section class=\"alert-status\"").unwrap();
        tags(&before[s..], "<section class=\"alert-status\"")[0]["data-status"].clone()
    };
    assert_eq!(section_of(&regression), "open");
    assert_eq!(section_of(&tradeoff), "dismissed");
    assert_eq!(section_of(&improvement), "resolved");
    assert!(html.contains(&format!(
        "<p class=\"summary\">{}</p>",
        escaped("median TTFT +20.0 % <slower> & worse.")
    )));
    assert!(html.contains("Reason: expected"), "{html}");
    // Links: the headline series on the alert's branch, the trade-off's other series, the run.
    assert!(html.contains(&format!(
        "<a href=\"/projects/demo/series/{}?branch=main\" class=\"series-link\">Time to first token p50</a>",
        f.ttft_p50
    )));
    assert!(html.contains(&format!(
        "<a href=\"/projects/demo/series/{}?branch=main\" class=\"series-link\">Time to first token mean</a> · <a href=\"/projects/demo/series/{}?branch=main\" class=\"series-link\">Time to first token p50</a>",
        f.ttft_mean, f.ttft_p50
    )), "{html}");
    assert!(html.contains(&format!(
        "<a href=\"/runs/{}\" class=\"run-link\">run</a>",
        f.warned_run
    )));

    // The series page lists the series' alerts with the x of their commit for the chart.
    let html = f
        .ok_page(&format!("/projects/demo/series/{}", f.ttft_p50))
        .await;
    let marks: Vec<(String, String, String)> = tags(&html, "<li class=\"alert ")
        .into_iter()
        .map(|a| {
            (
                a["data-kind"].clone(),
                a["data-x"].clone(),
                a["data-summary"].clone(),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            (
                "regression".into(),
                "2".into(),
                "median TTFT +20.0 % <slower> & worse.".into()
            ),
            (
                "tradeoff".into(),
                "1".into(),
                "throughput up but TTFT worse.".into()
            ),
        ]
    );
    // The trade-off names every series it involves, this one in bold.
    assert!(
        html.contains(&format!(
            "Involves: <a href=\"/projects/demo/series/{}?branch=main\" class=\"series-link\">Time to first token mean</a> · <strong>Time to first token p50</strong>",
            f.ttft_mean
        )),
        "{html}"
    );
    // On another branch, none.
    let html = f
        .ok_page(&format!(
            "/projects/demo/series/{}?branch=feature%2Fx",
            f.ttft_p50
        ))
        .await;
    assert!(!html.contains("series-alerts"));

    // The run page of commit 3: its alert, and no verdict as it was never analyzed.
    let html = f.ok_page(&format!("/runs/{}", f.warned_run)).await;
    let listed = tags(&html, "<li class=\"alert ");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["data-alert-id"], regression);
    assert_eq!(
        text_of(&html, "verdict-none").unwrap(),
        "Not analyzed: no verdict."
    );

    // The project page links the alerts page with the open count.
    let html = f.ok_page("/projects/demo").await;
    assert!(html.contains("<a id=\"alerts-link\" href=\"/projects/demo/alerts\">Alerts</a>"));
    assert_eq!(text_of(&html, "open-alerts").unwrap(), "1 open");
    // A private project's alerts page does not exist.
    let (status, _, _) = f.page("/projects/secret/alerts").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn run_page_verdict_is_the_verdict_api_s() {
    let f = web::UploadFixture::start().await;
    let mut runs = Vec::new();
    for (i, path) in [
        "examples/history/goodput_baseline_s11_c4.json",
        "examples/history/goodput_baseline_s12_c4.json",
        "examples/history/goodput_baseline_s13_c4.json",
        "examples/history/goodput_candidate_s21_c4.json",
    ]
    .iter()
    .enumerate()
    {
        runs.push(f.upload(i + 1, path, web::GOODPUT_FLAGS).await);
    }
    for run in &runs {
        let (status, api) = f.server.get(&format!("/api/v1/runs/{run}/verdict")).await;
        assert_eq!(status, 200, "{api}");
        let html = f.ok_page(&format!("/runs/{run}")).await;
        let section = &tags(&html, "<section class=\"verdict")[0];
        assert_eq!(section["data-verdict"], api["verdict"].as_str().unwrap());
        let reasons: Vec<(String, String)> = tags(&html, "<li class=\"reason ")
            .into_iter()
            .map(|r| (r["data-level"].clone(), r["data-code"].clone()))
            .collect();
        let expected: Vec<(String, String)> = api["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["level"].as_str().unwrap().to_string(),
                    r["code"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(reasons, expected, "{run}");
        for r in api["reasons"].as_array().unwrap() {
            assert!(
                html.contains(&escaped(r["message"].as_str().unwrap())),
                "{r}: {html}"
            );
        }
    }
    // The candidate is the trade-off: its verdict is not a pass, and says why.
    let (_, api) = f
        .server
        .get(&format!("/api/v1/runs/{}/verdict", runs[3]))
        .await;
    assert_ne!(api["verdict"], "pass", "{api}");
    assert!(api["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["code"] == "tradeoff"));
}

/// The `<h3>` group headings of a project page, in order (unescaped).
fn group_headings(html: &str) -> Vec<String> {
    html.split("<section class=\"config-group\">\n<h3>")
        .skip(1)
        .map(|rest| unescape(&rest[..rest.find("</h3>").expect("heading closes")]))
        .collect()
}

#[tokio::test]
async fn group_headings_name_the_benchmark_tool_and_what_else_tells_groups_apart() {
    use common::server::upload_doc;
    let f = web::UploadFixture::start().await;
    let vllm = "examples/history/baseline_completions_c4_isl512_osl128.json";
    let uploads = [
        upload_doc(&sha('1'), "2026-11-01T01:00:00Z", &[vllm]),
        upload_doc(
            &sha('2'),
            "2026-11-01T02:00:00Z",
            &[
                "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json",
                "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export.jsonl",
            ],
        ),
        upload_doc(
            &sha('3'),
            "2026-11-01T03:00:00Z",
            &["testdata/guidellm/baseline_concurrent_1-4-16_isl512_osl128.json"],
        ),
        // The same tool and model as the first, on a differently configured scheduler.
        {
            let mut doc = upload_doc(&sha('4'), "2026-11-01T04:00:00Z", &[vllm]);
            doc["configuration"] = serde_json::json!({"scheduler": {"max_num_seqs": 64}});
            doc
        },
    ];
    for doc in &uploads {
        let (status, receipt) = f.server.upload("demo", &f.token, doc).await;
        assert_eq!(status, 201, "{receipt}");
    }
    let html = f.ok_page("/projects/demo").await;
    let mut headings = group_headings(&html);
    headings.sort();
    assert_eq!(
        headings,
        [
            "mock-llm · benchmark aiperf",
            "mock-llm · benchmark guidellm",
            "mock-llm · benchmark vllm-bench-serve",
            "mock-llm · benchmark vllm-bench-serve · scheduler.max_num_seqs 64",
        ],
        "{html}"
    );
}

#[tokio::test]
async fn series_of_a_removed_slo_profile_are_no_longer_listed() {
    use common::server::ADMIN_TOKEN;
    use serde_json::json;
    let f = web::UploadFixture::start().await;
    let run = f
        .upload(
            1,
            "examples/history/goodput_baseline_s11_c4.json",
            web::GOODPUT_FLAGS,
        )
        .await;
    let interactive = json!({"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50});
    let tight = json!({"name": "tight", "ttft_ms": 37, "tpot_ms": 10.6, "e2el_ms": 1500});
    let settings = |profiles: Vec<&serde_json::Value>| json!({ "slo_profiles": profiles });
    let profile_rows = |html: &str| -> Vec<String> {
        tags(html, "<tr data-metric=\"request_goodput\"")
            .into_iter()
            .map(|t| t["data-profile"].clone())
            .collect()
    };
    let path = "/api/v1/projects/demo/settings";
    let (status, body) = f
        .server
        .send(
            "PUT",
            path,
            ADMIN_TOKEN,
            &settings(vec![&interactive, &tight]),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let html = f.ok_page("/projects/demo").await;
    assert_eq!(
        profile_rows(&html),
        ["interactive", "tight", "tool"],
        "{html}"
    );
    assert!(
        html.contains("SLO profile <code>tight</code></span>"),
        "{html}"
    );
    let (_, api) = f.server.get(&format!("/api/v1/runs/{run}")).await;
    let tight_series = api["results"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "request_goodput" && m["slo_profile"] == "tight")
        .unwrap()["series_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Removing the profile deletes its values: its series are no longer listed, on the page
    // or by the API; the series page (alerts may link it) says it has no points.
    let (status, body) = f
        .server
        .send("PUT", path, ADMIN_TOKEN, &settings(vec![&interactive]))
        .await;
    assert_eq!(status, 200, "{body}");
    let html = f.ok_page("/projects/demo").await;
    assert_eq!(profile_rows(&html), ["interactive", "tool"], "{html}");
    assert!(!html.contains("<code>tight</code>"), "{html}");
    assert!(!html.contains(&tight_series), "{html}");
    let (status, listed) = f
        .server
        .get("/api/v1/projects/demo/series?metric=request_goodput&limit=500")
        .await;
    assert_eq!(status, 200, "{listed}");
    let mut profiles: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["slo_profile"].as_str().unwrap())
        .collect();
    profiles.sort();
    assert_eq!(profiles, ["interactive", "tool"], "{listed}");
    let page = f
        .ok_page(&format!("/projects/demo/series/{tight_series}"))
        .await;
    assert_eq!(text_of(&page, "no-points").unwrap(), "No points on branch ");
}

/// The example history of the trade-off (three baseline commits, then the candidate) on
/// `main`, and the candidate's file once more on `feature/x`: the runs, oldest first, and the
/// feature run.
async fn seed_dashboard(f: &web::UploadFixture) -> (Vec<String>, String) {
    let mut runs = Vec::new();
    for (i, path) in [
        "examples/history/goodput_baseline_s11_c4.json",
        "examples/history/goodput_baseline_s12_c4.json",
        "examples/history/goodput_baseline_s13_c4.json",
        "examples/history/goodput_candidate_s21_c4.json",
    ]
    .iter()
    .enumerate()
    {
        runs.push(f.upload(i + 1, path, web::GOODPUT_FLAGS).await);
    }
    let mut doc = common::server::upload_doc(
        &format!("{:040x}", 9),
        "2026-11-01T09:00:00Z",
        &["examples/history/goodput_candidate_s21_c4.json"],
    );
    doc["run"]["branch"] = serde_json::json!("feature/x");
    doc["configuration"] = serde_json::json!({"benchmark": {"command": format!("vllm bench serve --model mock-llm {} --save-detailed", web::GOODPUT_FLAGS)}});
    let (status, receipt) = f.server.upload("demo", &f.token, &doc).await;
    assert_eq!(status, 201, "{receipt}");
    (runs, receipt["run_id"].as_str().unwrap().to_string())
}

/// The verdict `GET /api/v1/runs/{run}/verdict` answers.
async fn api_verdict(f: &web::UploadFixture, run: &str) -> String {
    let (status, v) = f.server.get(&format!("/api/v1/runs/{run}/verdict")).await;
    assert_eq!(status, 200, "{v}");
    v["verdict"].as_str().unwrap().to_string()
}

/// Each commit of a series API answer's points, in order, with the mean of its values.
fn commit_means(points: &serde_json::Value) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64, f64)> = Vec::new();
    for p in points.as_array().unwrap() {
        let sha = p["commit_sha"].as_str().unwrap().to_string();
        let v = p["value"].as_f64().unwrap();
        match out.last_mut() {
            Some((s, sum, n)) if *s == sha => {
                *sum += v;
                *n += 1.0;
            }
            _ => out.push((sha, v, 1.0)),
        }
    }
    out.into_iter().map(|(s, sum, n)| (s, sum / n)).collect()
}

#[tokio::test]
async fn dashboard_shows_findings_verdicts_and_key_metrics_on_both_stores() {
    common::db::for_each_store(|db, store| async move {
        let f = web::UploadFixture::start_on(store).await;
        let (runs, feature_run) = seed_dashboard(&f).await;
        let html = f.ok_page("/projects/demo").await;

        // Open findings come first, then the branches, key metrics, series and runs.
        let at = |id: &str| {
            html.find(&format!("id=\"{id}\""))
                .unwrap_or_else(|| panic!("{db}: no #{id}: {html}"))
        };
        assert!(at("findings") < at("branches"), "{db}");
        assert!(at("branches") < at("key-metrics"), "{db}");
        assert!(at("key-metrics") < at("series"), "{db}");
        assert!(at("series") < at("runs"), "{db}");
        // The findings are the open alerts' groups, the trade-off first.
        let open = f.server.alerts("demo", "?status=open&limit=100").await;
        assert!(!open.is_empty(), "{db}: the candidate opens alerts");
        let findings = tags(&html, "<li class=\"finding ");
        let mut listed: Vec<String> = findings.iter().map(|g| g["data-group"].clone()).collect();
        let mut expected: Vec<String> = open
            .iter()
            .map(|a| a["group"].as_str().unwrap().to_string())
            .collect();
        expected.sort();
        expected.dedup();
        assert_eq!(findings[0]["data-kind"], "tradeoff", "{db}: {findings:?}");
        listed.sort();
        assert_eq!(listed, expected, "{db}");
        for a in &open {
            let link = format!("href=\"/projects/demo/alerts#alert-{}\"", a["id"].as_str().unwrap());
            assert!(html.contains(&link), "{db}: {link}");
        }
        assert_eq!(text_of(&html, "open-alerts").unwrap(), format!("{} open", open.len()));

        // Every listed run's verdict is the verdict API's; the newest run of each branch,
        // the default branch first.
        let rows = tags(&html, "<tr data-run-id=");
        assert_eq!(rows.len(), 5, "{db}");
        for r in &rows {
            assert_eq!(r["data-verdict"], api_verdict(&f, &r["data-run-id"]).await, "{db}");
        }
        let branches = tags(&html, "<tr data-branch=");
        let got: Vec<(&str, &str)> = branches
            .iter()
            .map(|b| (b["data-branch"].as_str(), b["data-run"].as_str()))
            .collect();
        assert_eq!(got, [("main", runs[3].as_str()), ("feature/x", feature_run.as_str())], "{db}");
        for b in &branches {
            assert_eq!(b["data-verdict"], api_verdict(&f, &b["data-run"]).await, "{db}");
        }
        assert_eq!(api_verdict(&f, &runs[3]).await, "fail", "{db}: the trade-off fails");

        // The ttft p50 tile: the newest commit's value and its change from the previous
        // commit's, both from the series API; one sparkline point per stored point.
        let (_, run) = f.server.get(&format!("/api/v1/runs/{}", runs[3])).await;
        let cell = run["results"][0]["cell_key"].as_str().unwrap().to_string();
        let p50 = api_metric(&run["results"][0], "ttft", "p50", None)["series_id"]
            .as_str()
            .unwrap()
            .to_string();
        let (_, series) = f
            .server
            .get(&format!("/api/v1/projects/demo/series/{p50}?branch=main"))
            .await;
        let means = commit_means(&series["points"]);
        assert_eq!(means.len(), 4, "{db}: {series}");
        let (new, old) = (means[3].1, means[2].1);
        let delta = (new - old) / old.abs() * 100.0;
        let multiples = tags(&html, "<div class=\"multiples\"");
        assert_eq!(multiples.len(), 1, "{db}");
        assert_eq!(multiples[0]["data-cell"], cell);
        let tiles = tags(&html, "<li class=\"tile\"");
        let tile = tiles
            .iter()
            .find(|t| t["data-series"] == p50)
            .unwrap_or_else(|| panic!("{db}: no ttft p50 tile: {tiles:?}"));
        assert_eq!(tile["data-latest"], format!("{new}"), "{db}");
        assert_eq!(tile["data-delta"], format!("{delta}"), "{db}");
        let points = series["points"].as_array().unwrap().len();
        assert_eq!(tile["data-points"], points.min(30).to_string(), "{db}");
        let shown = format!(
            "<span class=\"tile-value\" title=\"{new}\">{} ms</span>",
            benchtrail_server::pages::format::display_number(new)
        );
        assert!(html.contains(&shown), "{db}: {shown}");
        let word = if delta > 0.0 { "▲ worse" } else { "▼ better" };
        assert!(
            html.contains(&format!("{delta:+.1} % {word}</span>")),
            "{db}: {delta}"
        );
        let labels: Vec<&str> = tiles
            .iter()
            .map(|t| (t["data-metric"].as_str(), t["data-stat"].as_str()))
            .map(|(m, s)| match (m, s) {
                ("output_throughput", _) => "output_throughput",
                ("ttft", "p50") => "ttft p50",
                ("ttft", "p99") => "ttft p99",
                ("tpot", _) => "tpot p50",
                ("e2el", _) => "e2el p50",
                ("request_goodput", _) => "goodput",
                _ => "other",
            })
            .collect();
        assert_eq!(
            labels,
            ["output_throughput", "ttft p50", "ttft p99", "tpot p50", "e2el p50", "goodput"],
            "{db}"
        );
        // The arrow says where the value went, the word what that means: a throughput that
        // rose is `▲ better` (the tiles once showed `▼ better` for it).
        let throughput = tiles
            .iter()
            .find(|t| t["data-metric"] == "output_throughput")
            .unwrap_or_else(|| panic!("{db}: no throughput tile: {tiles:?}"));
        let change: f64 = throughput["data-delta"].parse().unwrap();
        let at = html
            .find(&format!("data-series=\"{}\" data-metric", throughput["data-series"]))
            .unwrap();
        let mark = if change > 0.0 { "▲ better" } else { "▼ worse" };
        let tile_html = &html[at..at + html[at..].find("</li>").unwrap()];
        assert!(
            tile_html.contains(&format!("{change:+.1} % {mark}</span>")),
            "{db}: {tile_html}"
        );
        // The polyline has one vertex per point.
        let svg_at = html.find(&format!("data-series=\"{p50}\" data-metric")).unwrap();
        let poly = &tags(&html[svg_at..], "<polyline points=")[0]["points"];
        assert_eq!(poly.split(' ').count(), points.min(30), "{db}: {poly}");

        // The trade-off acknowledged: the candidate's verdict says by whom, on both lists.
        let write = f.server.token("demo", "write").await;
        for a in f.server.alerts("demo", "?status=open&limit=100").await {
            let (status, body) = f
                .server
                .send(
                    "PATCH",
                    &format!("/api/v1/alerts/{}", a["id"].as_str().unwrap()),
                    &write,
                    &serde_json::json!({"status": "acknowledged", "reason": "expected: candidate trades TTFT for throughput"}),
                )
                .await;
            assert_eq!(status, 200, "{body}");
        }
        assert_eq!(api_verdict(&f, &runs[3]).await, "fail", "{db}");
        let acked = f.server.alerts("demo", "?status=acknowledged&limit=100").await;
        let newest = acked
            .iter()
            .filter(|a| a["severity"] == "fail" && a["run_id"] == runs[3].as_str())
            .max_by_key(|a| a["triaged_at"].as_str().unwrap().to_string())
            .expect("a failing alert");
        let when: chrono::DateTime<chrono::Utc> =
            newest["triaged_at"].as_str().unwrap().parse().unwrap();
        let text = format!(
            "fail · acknowledged by {} {}",
            newest["triaged_by"].as_str().unwrap(),
            when.format("%Y-%m-%d %H:%M UTC")
        );
        let html = f.ok_page("/projects/demo").await;
        let expected = format!("<span class=\"verdict-text v-fail\">{}</span>", escaped(&text));
        assert_eq!(html.matches(&expected).count(), 2, "{db}: {expected}\n{html}");
        assert!(html.contains("id=\"no-findings\""), "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_project_without_runs_says_how_to_upload_the_first() {
    let f = web::UploadFixture::start().await;
    let html = f.ok_page("/projects/demo").await;
    assert_eq!(
        text_of(&html, "upload-command").unwrap(),
        "export BENCHTRAIL_URL=https://benchtrail.example.com BENCHTRAIL_TOKEN=bt_...\n\
         benchtrail upload --project demo --hardware auto --config engine-config.json results/*.json"
    );
    assert!(html.contains("<a href=\"/\" id=\"back-link\">"), "{html}");
    assert!(html.contains("benchtrail token create --project demo --scope upload"));
    for absent in ["id=\"findings\"", "id=\"runs\"", "id=\"key-metrics\""] {
        assert!(!html.contains(absent), "{absent}: {html}");
    }
}

#[tokio::test]
async fn series_page_names_the_project_s_baseline_window() {
    use common::server::ADMIN_TOKEN;
    let f = web::UploadFixture::start().await;
    f.upload(
        1,
        "examples/history/goodput_baseline_s11_c4.json",
        web::GOODPUT_FLAGS,
    )
    .await;
    let path = "/api/v1/projects/demo/settings";
    let (status, stored) = f.server.get(path).await;
    assert_eq!(status, 200, "{stored}");
    let mut doc = stored.get("settings").cloned().unwrap_or(stored);
    doc["detection"]["engine"]["baseline_window"] = 4.into();
    let (status, body) = f.server.send("PUT", path, ADMIN_TOKEN, &doc).await;
    assert_eq!(status, 200, "{body}");
    let (_, listed) = f
        .server
        .get("/api/v1/projects/demo/series?metric=ttft&stat=p50&limit=1")
        .await;
    let id = listed["items"][0]["series_id"]
        .as_str()
        .unwrap()
        .to_string();
    let html = f.ok_page(&format!("/projects/demo/series/{id}")).await;
    let chart = &tags(&html, "<div id=\"chart\"")[0];
    assert_eq!(chart["data-window"], "4", "{html}");
}

/// The FP8 KV-cache history (10 baseline commits, then the change; three cells) uploaded to
/// `demo` through the API; returns the candidate run.
async fn seed_fp8(f: &web::UploadFixture) -> String {
    let spec = benchtrail_core::regression::realistic::HistorySpec::fp8_case(3);
    let mut head = String::new();
    for i in 0..spec.commits {
        let (status, r) = f
            .server
            .upload("demo", &f.token, &common::fp8::upload(&spec, i))
            .await;
        assert_eq!(status, 201, "{r}");
        head = r["run_id"].as_str().unwrap().to_string();
    }
    head
}

/// The analysis API's series `metric stat` of group `cell`: (series id, delta %).
fn analysis_series(
    analysis: &serde_json::Value,
    cell: &str,
    metric: &str,
    stat: &str,
) -> (String, f64) {
    let group = analysis["analysis"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["cell"] == cell)
        .unwrap_or_else(|| panic!("no group {cell}"));
    let s = group["report"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["metric"] == metric && s["stat"] == stat)
        .unwrap_or_else(|| panic!("no {metric} {stat} in {cell}"));
    let delta = s["comparison"]["delta_pct"]
        .as_f64()
        .unwrap_or_else(|| panic!("{metric} {stat} of {cell} was not compared: {s}"));
    (s["series_id"].as_str().unwrap().to_string(), delta)
}

/// The texts of the elements whose opening tag is exactly `open` (leaf elements).
fn texts_after(html: &str, open: &str) -> Vec<String> {
    html.split(open)
        .skip(1)
        .map(|rest| unescape(&rest[..rest.find('<').unwrap()]))
        .collect()
}

/// The matrix color of a compare-page row: a finding's direction, strong; a tested change of
/// at least the minimum effect that is not one, light (worse when it went up and `worse_up`);
/// a smaller one, quiet.
fn expected_tone(
    row: &std::collections::HashMap<String, String>,
    min_effect: f64,
    worse_up: bool,
) -> String {
    let dir = row["class"]
        .split(' ')
        .find_map(|c| c.strip_prefix("dir-"))
        .unwrap();
    let delta: f64 = row["data-delta"].parse().unwrap();
    match row["data-state"].as_str() {
        "tradeoff" | "regression" | "improvement" => format!("tone-{dir}"),
        "no_change" if delta.abs() < min_effect => "tone-quiet".into(),
        "no_change" if (delta > 0.0) == worse_up => "tone-worse-light".into(),
        "no_change" => "tone-better-light".into(),
        other => panic!("an untested state in the FP8 history: {other}"),
    }
}

/// `+7.40 %` as the pages print a signed change.
fn signed_pct(v: f64) -> String {
    if v > 0.0 {
        format!("+{v:.2} %")
    } else {
        format!("{v:.2} %")
    }
}

#[tokio::test]
async fn validation_matrix_and_run_page_show_the_analysis_change_per_cell_on_both_stores() {
    common::db::for_each_store(|db, store| async move {
        let f = web::UploadFixture::start_on(store).await;
        let head = seed_fp8(&f).await;
        let (status, analysis) = f.server.get(&format!("/api/v1/runs/{head}/analysis")).await;
        assert_eq!(status, 200, "{db}: {analysis}");
        let compare = f.ok_page(&format!("/compare?head={head}")).await;
        let compare_rows = tags(&compare, "<tr class=\"compare-row ");
        let (_, settings) = f.server.get("/api/v1/projects/demo/settings").await;
        let min_effect = settings["detection"]["engine"]["min_effect_pct"]
            .as_f64()
            .unwrap_or_else(|| panic!("{settings}"));

        // The run page links the matrix.
        let run_html = f.ok_page(&format!("/runs/{head}")).await;
        assert!(
            run_html.contains(&format!(
                "<a id=\"matrix-link\" href=\"/runs/{head}/matrix\">Validation matrix</a>"
            )),
            "{db}"
        );

        // Default: TTFT p50. No labels: one grid, the load axis as columns in numeric order.
        let html = f.ok_page(&format!("/runs/{head}/matrix")).await;
        let grids = tags(&html, "<section class=\"matrix\"");
        assert_eq!(grids.len(), 1, "{db}: {html}");
        assert_eq!(grids[0]["data-layout"], "load", "{db}");
        assert_eq!(grids[0]["data-empty-slots"], "0", "{db}");
        assert_eq!(
            texts_after(&html, "<th scope=\"col\" class=\"column-label\">"),
            ["1", "4", "16"],
            "{db}"
        );
        assert!(
            html.contains("<th scope=\"col\" class=\"axes\">workload ╲ max_concurrency</th>"),
            "{db}"
        );
        assert_eq!(
            texts_after(&html, "<th scope=\"row\" class=\"row-label\">"),
            ["input_len=8000; output_len=1000"],
            "{db}"
        );
        assert_eq!(
            text_of(&html, "matrix-chosen").unwrap(),
            "median TTFT",
            "{db}"
        );
        assert!(html.contains("<option value=\"ttft\" selected>"), "{db}");
        assert!(html.contains("<option value=\"p50\" selected>"), "{db}");
        let cells = tags(&html, "<div class=\"matrix-cell ");
        assert_eq!(cells.len(), 3, "{db}: {cells:?}");
        for (cell, c) in cells.iter().zip([
            "max_concurrency=1;",
            "max_concurrency=4;",
            "max_concurrency=16;",
        ]) {
            assert!(cell["data-cell"].starts_with(c), "{db}: {cell:?}");
            let (series, delta) = analysis_series(&analysis, &cell["data-cell"], "ttft", "p50");
            assert_eq!(
                cell["data-delta"].parse::<f64>().unwrap(),
                delta,
                "{db}: {cell:?}"
            );
            let row = compare_rows
                .iter()
                .find(|r| r["data-series"] == series)
                .unwrap();
            assert_eq!(cell["data-state"], row["data-state"], "{db}: {cell:?}");
            assert!(
                cell["class"]
                    .split(' ')
                    .any(|c| c == expected_tone(row, min_effect, true)),
                "{db}: {cell:?} {row:?}"
            );
            assert!(
                html.contains(&format!(
                    "<span class=\"delta\">{}</span>",
                    signed_pct(delta)
                )),
                "{db}"
            );
            // The run page's row of the same series: baseline, change and state.
            let at = run_html.find(&format!("data-series=\"{series}\"")).unwrap();
            let tr = &run_html[at..at + run_html[at..].find("</tr>").unwrap()];
            let td = &tags(tr, "<td class=\"num delta ")[0];
            assert_eq!(
                td["data-delta"].parse::<f64>().unwrap(),
                delta,
                "{db}: {tr}"
            );
            let state = &tags(tr, "<td class=\"state ")[0];
            assert_eq!(state["data-state"], row["data-state"], "{db}: {tr}");
            assert_eq!(
                tags(tr, "<td class=\"num baseline\"")[0]["data-baseline"],
                row["data-baseline"],
                "{db}"
            );
        }
        // The FP8 change raised median TTFT in every cell.
        assert!(
            cells
                .iter()
                .all(|c| c["data-delta"].parse::<f64>().unwrap() > 0.0),
            "{db}"
        );

        // Another metric; a statistic it does not have falls back to its own, and says so.
        let html = f
            .ok_page(&format!(
                "/runs/{head}/matrix?metric=output_throughput&stat=p50"
            ))
            .await;
        assert_eq!(
            text_of(&html, "matrix-notice").unwrap(),
            "Output token throughput has no statistic p50 here: showing value.",
            "{db}"
        );
        assert!(html.contains("<option value=\"value\" selected>"), "{db}");
        let cells = tags(&html, "<div class=\"matrix-cell ");
        assert_eq!(cells.len(), 3, "{db}");
        for cell in &cells {
            let (series, delta) =
                analysis_series(&analysis, &cell["data-cell"], "output_throughput", "value");
            assert_eq!(cell["data-delta"].parse::<f64>().unwrap(), delta, "{db}");
            assert!(delta > 0.0, "{db}: throughput rose");
            let row = compare_rows
                .iter()
                .find(|r| r["data-series"] == series)
                .unwrap();
            assert_eq!(cell["data-state"], row["data-state"], "{db}: {cell:?}");
            assert!(
                cell["class"]
                    .split(' ')
                    .any(|c| c == expected_tone(row, min_effect, false)),
                "{db}: {cell:?} {row:?}"
            );
        }

        // A run that does not exist, and an id that cannot be one: the 404 page.
        for path in [
            format!("/runs/{}/matrix", uuid::Uuid::new_v4()),
            "/runs/nope/matrix".to_string(),
        ] {
            let r = f.server.http.get(f.server.url(&path)).send().await.unwrap();
            assert_eq!(r.status(), 404, "{db}: {path}");
        }
        // A private project's run: 404 signed out, shown to a reader of the project.
        let hidden = common::seed::seed(&f.server, "hidden", false).await;
        let path = format!("/runs/{}/matrix", hidden.run_id);
        let r = f.server.http.get(f.server.url(&path)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{db}");
        let reader = common::session::sign_in(&f.server, &hidden.read).await;
        let (status, html) = reader.get(&f.server, &path).await;
        assert_eq!(status, 200, "{db}: {html}");
        assert!(html.contains("<section class=\"matrix\""), "{db}");
    })
    .await;
}

#[tokio::test]
async fn the_standard_matrix_lays_out_all_eighteen_cells_on_both_stores() {
    common::db::for_each_store(|db, store| async move {
        let f = web::UploadFixture::start_on(store).await;
        // Ten baseline commits of 17 cells, then a candidate missing one cell whose
        // long-doc-qa · fresh · typical TTFT rose by 30 % (`common::matrix18`).
        let head = common::matrix18::seed(&f.server, "demo", &f.token).await;
        let (_, analysis) = f.server.get(&format!("/api/v1/runs/{head}/analysis")).await;
        let html = f.ok_page(&format!("/runs/{head}/matrix")).await;
        let grids = tags(&html, "<section class=\"matrix\"");
        assert_eq!(grids.len(), 1, "{db}");
        assert_eq!(grids[0]["data-layout"], "standard", "{db}");
        assert_eq!(grids[0]["data-empty-slots"], "1", "{db}");
        assert_eq!(
            texts_after(&html, "<th scope=\"col\" class=\"column-label\">"),
            ["low", "typical", "near-capacity"],
            "{db}"
        );
        assert_eq!(
            texts_after(&html, "<th scope=\"row\" class=\"row-label\">"),
            [
                "short-chat · fresh", "short-chat · reusable", "long-doc-qa · fresh",
                "long-doc-qa · reusable", "long-output · fresh", "long-output · reusable"
            ],
            "{db}"
        );
        // 18 slots: 16 measured, 1 missing from the candidate, 1 never measured.
        let cells = tags(&html, "<div class=\"matrix-cell ");
        assert_eq!(cells.len(), 18, "{db}");
        let count = |state: &str| cells.iter().filter(|c| c["data-state"] == state).count();
        assert_eq!(count("regression"), 1, "{db}: {cells:?}");
        assert_eq!(count("no_change"), 15, "{db}: {cells:?}");
        assert_eq!(count("missing"), 1, "{db}: {cells:?}");
        assert_eq!(count("not_measured"), 1, "{db}: {cells:?}");
        // In grid order: the missing cell is the first slot, the empty one the last.
        assert_eq!(cells[0]["data-state"], "missing", "{db}");
        assert!(cells[0]["data-cell"].starts_with("scenario=short-chat;prefix_mode=fresh;load_level=low;"), "{db}");
        assert_eq!(cells[17]["data-state"], "not_measured", "{db}");
        let regressed = cells.iter().find(|c| c["data-state"] == "regression").unwrap();
        assert!(regressed["data-cell"].starts_with("scenario=long-doc-qa;prefix_mode=fresh;load_level=typical;"), "{db}");
        assert_eq!(cells.iter().position(|c| c["data-state"] == "regression"), Some(7), "{db}");
        let (_, delta) = analysis_series(&analysis, &regressed["data-cell"], "ttft", "p50");
        assert_eq!(regressed["data-delta"].parse::<f64>().unwrap(), delta, "{db}");
        assert!(regressed["class"].contains("tone-worse"), "{db}");
        assert!(html.contains(&format!("<span class=\"delta\">{}</span> <span class=\"mark\">▲ worse</span><br><span class=\"state-word\">regression</span>", signed_pct(delta))), "{db}: {html}");
    })
    .await;
}

/// The alert ids listed in `html` (one `data-alert-id` per card), in order.
fn listed_alerts(html: &str) -> Vec<String> {
    tags(html, "<li class=\"alert ")
        .into_iter()
        .map(|a| a["data-alert-id"].clone())
        .collect()
}

/// The ids of `alerts` (API items), sorted.
fn ids(alerts: &[&serde_json::Value]) -> Vec<String> {
    let mut v: Vec<String> = alerts
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn alerts_page_filters_and_sets_other_branches_apart_on_both_stores() {
    // (The dashboard's findings are checked here too: this history has a pull request.)
    common::db::for_each_store(|db, store| async move {
        let f = web::UploadFixture::start_on(store).await;
        seed_dashboard(&f).await;
        // A pull request of the candidate's change, branched at commit 3.
        let mut doc = common::server::upload_doc(
            &format!("{:040x}", 11),
            "2026-11-01T11:00:00Z",
            &["examples/history/goodput_candidate_s21_c4.json"],
        );
        doc["run"]["branch"] = serde_json::json!("pr/7");
        doc["run"]["pull_request"] = serde_json::json!({"number": 7, "merge_base": format!("{:040x}", 3)});
        doc["configuration"] = serde_json::json!({"benchmark": {"command": format!("vllm bench serve --model mock-llm {} --save-detailed", web::GOODPUT_FLAGS)}});
        let (status, receipt) = f.server.upload("demo", &f.token, &doc).await;
        assert_eq!(status, 201, "{db}: {receipt}");
        let all = f.server.alerts("demo", "?limit=100").await;
        let on = |b: &str| all.iter().filter(|a| a["branch"] == b).collect::<Vec<_>>();
        let (main, feature) = (on("main"), on("pr/7"));
        assert!(!main.is_empty() && !feature.is_empty(), "{db}: {all:?}");
        // feature/x has no merge base and no parent: no baseline, so no alert.
        assert_eq!(main.len() + feature.len(), all.len(), "{db}");

        // The dashboard's open findings are the base branch's; the pull request's open alerts
        // are counted beside them and linked to their own section.
        let dashboard = f.ok_page("/projects/demo").await;
        let open_of = |alerts: &[&serde_json::Value]| {
            alerts.iter().filter(|a| a["status"] == "open").count()
        };
        let mut groups: Vec<String> = tags(&dashboard, "<li class=\"finding ")
            .iter()
            .map(|g| g["data-group"].clone())
            .collect();
        groups.sort();
        groups.dedup();
        let mut want: Vec<String> = main
            .iter()
            .filter(|a| a["status"] == "open")
            .map(|a| a["group"].as_str().unwrap().to_string())
            .collect();
        want.sort();
        want.dedup();
        assert_eq!(groups, want, "{db}");
        assert_eq!(text_of(&dashboard, "open-alerts").unwrap(), format!("{} open", open_of(&main)), "{db}");
        assert!(open_of(&feature) > 0, "{db}");
        assert!(
            dashboard.contains(&format!(
                "<p class=\"muted\" id=\"other-branch-findings\">{} open on pull requests and other branches: <a href=\"/projects/demo/alerts#other-branches\">listed apart on the alerts page</a>.</p>",
                open_of(&feature)
            )),
            "{db}: {dashboard}"
        );

        // Unfiltered: the base branch by status, then the pull request in its own section.
        let html = f.ok_page("/projects/demo/alerts").await;
        let split = html.find("id=\"other-branches\"").expect("other branches section");
        let (base_html, other_html) = html.split_at(split);
        assert_eq!(sorted(listed_alerts(base_html)), ids(&main), "{db}");
        assert_eq!(sorted(listed_alerts(other_html)), ids(&feature), "{db}");
        // There, open alerts first: statuses in triage order.
        let rank = |s: &str| ["open", "acknowledged", "dismissed", "resolved"].iter().position(|x| *x == s);
        let statuses: Vec<_> = tags(other_html, "<li class=\"alert ")
            .iter()
            .map(|a| rank(&a["data-status"]))
            .collect();
        assert!(statuses.windows(2).all(|w| w[0] <= w[1]), "{db}: {statuses:?}");
        assert_eq!(statuses[0], Some(0), "{db}: the pull request's trade-off is open");
        for s in ["open", "acknowledged", "dismissed", "resolved"] {
            let n = main.iter().filter(|a| a["status"] == s).count();
            let section = &tags(&html, &format!("<section class=\"alert-status\" id=\"status-{s}\""))[0];
            assert_eq!(section["data-count"], n.to_string(), "{db}: {s}");
        }
        let branches = tags(&html, "<section class=\"branch-alerts\"");
        assert_eq!(branches.len(), 1, "{db}");
        assert_eq!(branches[0]["data-branch"], "pr/7", "{db}");
        assert_eq!(branches[0]["data-count"], feature.len().to_string(), "{db}");
        assert!(text_of(&html, "filter-summary").is_none(), "{db}");

        // Each filter, alone and together: exactly the API's alerts, the values kept in the form.
        let tradeoff = all.iter().find(|a| a["kind"] == "tradeoff").unwrap();
        let cell = tradeoff["cell"].as_str().unwrap();
        let metric = tradeoff["metric"].as_str().unwrap();
        let cases: Vec<(String, Vec<&serde_json::Value>)> = vec![
            ("kind=tradeoff".into(), all.iter().filter(|a| a["kind"] == "tradeoff").collect()),
            ("status=open".into(), all.iter().filter(|a| a["status"] == "open").collect()),
            (format!("metric={metric}"), all.iter().filter(|a| a["metric"] == metric).collect()),
            (
                format!("cell={}", urlencode(cell)),
                all.iter().filter(|a| a["cell"] == cell).collect(),
            ),
            ("branch=pr%2F7".into(), feature.clone()),
            ("branch=main&status=resolved".into(), main.iter().copied().filter(|a| a["status"] == "resolved").collect()),
            (
                "status=open&kind=regression&branch=".into(),
                all.iter().filter(|a| a["status"] == "open" && a["kind"] == "regression").collect(),
            ),
        ];
        for (query, expected) in &cases {
            let html = f.ok_page(&format!("/projects/demo/alerts?{query}")).await;
            assert_eq!(sorted(listed_alerts(&html)), ids(expected), "{db}: {query}");
            assert_eq!(text_of(&html, "shown-count").unwrap(), expected.len().to_string(), "{db}: {query}");
        }
        let html = f.ok_page("/projects/demo/alerts?branch=pr%2F7&kind=tradeoff&metric=output_throughput").await;
        assert!(!html.contains("id=\"base-branch\""), "{db}: another branch hides the base branch");
        assert!(html.contains("<input type=\"text\" name=\"branch\" id=\"filter-branch\" value=\"pr/7\""), "{db}");
        assert!(html.contains("<input type=\"text\" name=\"metric\" id=\"filter-metric\" value=\"output_throughput\""), "{db}");
        assert!(html.contains("<option value=\"tradeoff\" selected>trade-off</option>"), "{db}");
        assert!(html.contains("<a href=\"/projects/demo/alerts\" id=\"clear-filters\">Clear filters</a>"), "{db}");
        let html = f.ok_page("/projects/demo/alerts?branch=main").await;
        assert!(!html.contains("id=\"other-branches\""), "{db}");
        let html = f.ok_page("/projects/demo/alerts?status=dismissed").await;
        let sections = tags(&html, "<section class=\"alert-status\"");
        assert_eq!(sections.len(), 1, "{db}");
        assert_eq!(sections[0]["data-status"], "dismissed", "{db}");
        assert!(html.contains("<option value=\"dismissed\" selected>Dismissed</option>"), "{db}");
        // A value the form never sends: 400, saying what is accepted.
        let r = f.server.http.get(f.server.url("/projects/demo/alerts?status=closed")).send().await.unwrap();
        let (status, body) = (r.status(), r.text().await.unwrap());
        assert_eq!(status, 400, "{db}: {body}");
        assert_eq!(
            text_of(&body, "error-message").unwrap(),
            "Unknown status “closed”: open, acknowledged, dismissed or resolved.",
            "{db}"
        );
        let html = f.ok_page("/projects/demo/alerts?metric=nothing").await;
        assert_eq!(text_of(&html, "shown-count").unwrap(), "0", "{db}");
    })
    .await;
}

/// `s` percent-encoded for a query value.
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn empty_states_say_what_to_do_next() {
    let f = web::UploadFixture::start().await;
    // A project without alerts: the alerts page says when they come, and links the project.
    let html = f.ok_page("/projects/demo/alerts").await;
    assert!(html.contains("id=\"no-alerts\""), "{html}");
    assert!(
        html.contains("See the <a href=\"/projects/demo\">project's runs and series</a>."),
        "{html}"
    );
    // A series on a branch without points: the upload command for that branch, back links.
    let run = f
        .upload(
            1,
            "examples/history/baseline_completions_c1_isl512_osl128.json",
            "",
        )
        .await;
    let (_, stored) = f.server.get(&format!("/api/v1/runs/{run}")).await;
    let series = stored["results"][0]["metrics"][0]["series_id"]
        .as_str()
        .unwrap()
        .to_string();
    let html = f
        .ok_page(&format!("/projects/demo/series/{series}?branch=pr%2F7"))
        .await;
    assert_eq!(
        text_of(&html, "no-points-command").unwrap(),
        "benchtrail upload --project demo --branch pr/7 --hardware auto --config engine-config.json results/*.json"
    );
    assert!(html.contains(&format!("<a href=\"/projects/demo/series/{series}\" id=\"no-points-back\">← This series on main</a>")), "{html}");
    // No chart, so no default-branch context is announced for it.
    assert!(!html.contains("id=\"branch-context\""), "{html}");
    assert!(
        html.contains("<a href=\"/projects/demo\" id=\"no-points-project\">"),
        "{html}"
    );
}

/// The series page of one cell's `ttft p50` in the FP8 history (three cells of one
/// configuration): one metric link per metric the cell measured, each to that metric's p50
/// series (or its only statistic, `value`, for throughputs), and one cell link per cell in
/// numeric order (1, 4, 16; not the text order 1, 16, 4), the shown one in bold. On both
/// stores.
#[tokio::test]
async fn series_page_links_the_cell_s_other_metrics_and_the_other_cells() {
    common::db::for_each_store(|db, store| async move {
        let f = web::UploadFixture::start_on(store).await;
        let spec = benchtrail_core::regression::realistic::HistorySpec::fp8_case(3);
        for i in 0..2 {
            let (status, r) = f
                .server
                .upload("demo", &f.token, &common::fp8::upload(&spec, i))
                .await;
            assert_eq!(status, 201, "{r}");
        }
        // Every series of the project, page by page.
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/api/v1/projects/demo/series?limit=500&cursor={c}"),
                None => "/api/v1/projects/demo/series?limit=500".to_string(),
            };
            let (status, page) = f.server.get(&path).await;
            assert_eq!(status, 200, "{page}");
            items.extend(page["items"].as_array().unwrap().iter().cloned());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        let listed = serde_json::Value::Array(items.clone());
        let all: Vec<&serde_json::Value> = items.iter().collect();
        let cell_of = |s: &serde_json::Value| s["cell_key"].as_str().unwrap().to_string();
        let ttft_p50: Vec<&serde_json::Value> = all
            .iter()
            .copied()
            .filter(|s| s["metric"] == "ttft" && s["stat"] == "p50" && s["slo_profile"].is_null())
            .collect();
        assert_eq!(ttft_p50.len(), 3, "{listed}");
        let shown = ttft_p50
            .iter()
            .find(|s| cell_of(s).contains("max_concurrency=4;"))
            .unwrap();
        let id = shown["series_id"].as_str().unwrap();
        let html = f.ok_page(&format!("/projects/demo/series/{id}")).await;

        // Metric links: one per metric of the shown cell, each to its p50 (else `value`) series.
        let nav = |html: &str, nav_id: &str| -> String {
            let start = html
                .find(&format!("id=\"{nav_id}\""))
                .unwrap_or_else(|| panic!("no #{nav_id}: {html}"));
            let end = start + html[start..].find("</nav>").unwrap();
            html[start..end].to_string()
        };
        let metrics_nav = nav(&html, "metric-links");
        let same_cell: Vec<&serde_json::Value> = all
            .iter()
            .copied()
            .filter(|s| cell_of(s) == cell_of(shown) && s["series_key"] == shown["series_key"])
            .collect();
        let mut metrics: Vec<&str> = same_cell
            .iter()
            .map(|s| s["metric"].as_str().unwrap())
            .collect();
        metrics.sort();
        metrics.dedup();
        assert!(metrics.len() >= 7, "{metrics:?}");
        let linked: Vec<String> = tags(&metrics_nav, "<a href=")
            .iter()
            .map(|a| a["href"].clone())
            .collect();
        assert_eq!(linked.len(), metrics.len() - 1, "{metrics_nav}");
        for metric in metrics.iter().filter(|m| **m != "ttft") {
            let of_metric: Vec<&&serde_json::Value> = same_cell
                .iter()
                .filter(|s| s["metric"] == *metric && s["slo_profile"].is_null())
                .collect();
            let want = of_metric
                .iter()
                .find(|s| s["stat"] == "p50")
                .or_else(|| of_metric.iter().find(|s| s["stat"] == "value"))
                .unwrap_or_else(|| panic!("{metric}: {of_metric:?}"));
            let href = format!(
                "/projects/demo/series/{}?branch=main",
                want["series_id"].as_str().unwrap()
            );
            assert!(linked.contains(&href), "{metric}: {href} not in {linked:?}");
        }
        assert!(
            metrics_nav.contains("<strong>Time to first token</strong>"),
            "{metrics_nav}"
        );

        // Cell links: the three cells in numeric order, the shown one in bold.
        let cells_nav = nav(&html, "cell-links");
        let order: Vec<usize> = [
            "max_concurrency=1<",
            "max_concurrency=4<",
            "max_concurrency=16<",
        ]
        .iter()
        .map(|c| {
            cells_nav
                .find(c)
                .unwrap_or_else(|| panic!("{c}: {cells_nav}"))
        })
        .collect();
        assert!(order[0] < order[1] && order[1] < order[2], "{cells_nav}");
        assert!(
            cells_nav.contains("<strong>max_concurrency=4</strong>"),
            "{cells_nav}"
        );
        for s in ttft_p50
            .iter()
            .filter(|s| s["series_id"] != shown["series_id"])
        {
            let href = format!(
                "/projects/demo/series/{}?branch=main",
                s["series_id"].as_str().unwrap()
            );
            assert!(cells_nav.contains(&href), "{href}: {cells_nav}");
        }
        println!("{db}: metric and cell links checked");
    })
    .await;
}
