//! Baselines a person chooses, over real HTTP on every database: undoing an exclusion and a
//! pin (each recomputing the analysis), the list of pins, refusing to pin a run that cannot be
//! a baseline, where exclusions and pins are shown (API and pages), and who may read a
//! configuration.

use crate::common;

use benchtrail_core::metric::{MetricValue, Stat};
use chrono::{DateTime, Utc};
use common::db::for_each_store;
use common::goodput::{vllm_doc, GOODPUT_HISTORY};
use common::server::{TestServer, ADMIN_TOKEN};
use common::web::{tags, text_of};
use serde_json::{json, Value};

fn commit(i: usize) -> String {
    format!("{i:040x}")
}

/// A public project `demo` with the goodput history uploaded; returns (upload token, write
/// token, run ids in commit order).
async fn goodput_history(server: &TestServer) -> (String, String, Vec<String>) {
    let upload = server
        .project_with_token("demo", json!({"public": true}))
        .await;
    let write = server.token("demo", "write").await;
    let body =
        json!({"slo_profiles": [{"name": "file", "ttft_ms": 60, "tpot_ms": 12, "e2el_ms": 1800}]});
    let (status, stored) = server
        .send("PUT", "/api/v1/projects/demo/settings", ADMIN_TOKEN, &body)
        .await;
    assert_eq!(status, 200, "{stored}");
    let mut runs = Vec::new();
    for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
        let (status, receipt) = server.upload("demo", &upload, &vllm_doc(i, path)).await;
        assert_eq!(status, 201, "{receipt}");
        runs.push(receipt["run_id"].as_str().unwrap().to_string());
    }
    (upload, write, runs)
}

/// Sends `method` to `path` with `token` (none: anonymous) and no body; status and JSON body.
async fn call(server: &TestServer, method: &str, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut r = server
        .http
        .request(method.parse().unwrap(), server.url(path));
    if let Some(token) = token {
        r = r.bearer_auth(token);
    }
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    if status != 204 {
        assert_eq!(
            r.headers()["content-type"],
            if status < 300 {
                "application/json"
            } else {
                "application/problem+json"
            },
            "{method} {path}"
        );
    }
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The `excluded` flags of a series' points, in order.
async fn excluded_flags(server: &TestServer, series: &str) -> Vec<Value> {
    let (status, body) = server
        .get(&format!("/api/v1/projects/demo/series/{series}"))
        .await;
    assert_eq!(status, 200, "{body}");
    body["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["excluded"].clone())
        .collect()
}

async fn tradeoff(server: &TestServer) -> Value {
    let list = server.alerts("demo", "?kind=tradeoff").await;
    assert_eq!(list.len(), 1, "{list:#?}");
    list[0].clone()
}

/// The pinned baseline commit and the history commits of a run's (only) group, from its
/// stored analysis.
async fn baseline(server: &TestServer, run: &str) -> (Value, Value) {
    let (status, a) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
    assert_eq!(status, 200, "{a}");
    let groups = a["analysis"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{a}");
    (
        groups[0]["pinned_baseline"].clone(),
        groups[0]["history_commits"].clone(),
    )
}

async fn verdict(server: &TestServer, run: &str) -> Value {
    let (status, v) = server.get(&format!("/api/v1/runs/{run}/verdict")).await;
    assert_eq!(status, 200, "{v}");
    v["verdict"].clone()
}

#[tokio::test]
async fn an_exclusion_and_a_pin_are_undone_and_the_analysis_follows() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let (upload, write, runs) = goodput_history(&server).await;
        let t = tradeoff(&server).await;
        assert_eq!(t["status"], "open", "{db}: {t}");
        assert_eq!(verdict(&server, &runs[3]).await, "fail", "{db}");
        let series = t["series_id"].as_str().unwrap().to_string();
        let (_, run) = server.get(&format!("/api/v1/runs/{}", runs[0])).await;
        assert_eq!(run["exclusion"], Value::Null, "{db}: {run}");
        assert_eq!(
            excluded_flags(&server, &series).await,
            [false, false, false, false]
        );

        // Excluded: shown on the run and on the series' points.
        let path = format!("/api/v1/runs/{}/exclusion", runs[0]);
        let long = json!({"reason": "x".repeat(2001)});
        let (status, problem) = server.send("POST", &path, &write, &long).await;
        assert_eq!((status, problem["pointer"].as_str()), (422, Some("/reason")), "{problem}");
        assert_eq!(problem["detail"], "the reason has 2001 characters; at most 2000 are accepted");
        let reason = json!({"reason": "noisy neighbour"});
        let (status, ex) = server.send("POST", &path, &write, &reason).await;
        assert_eq!(status, 200, "{ex}");
        let (_, run) = server.get(&format!("/api/v1/runs/{}", runs[0])).await;
        assert_eq!(run["exclusion"], ex, "{db}");
        assert_eq!(run["exclusion"]["run_id"], runs[0].as_str());
        assert_eq!(run["exclusion"]["reason"], "noisy neighbour");
        assert_eq!(
            excluded_flags(&server, &series).await,
            [true, false, false, false]
        );
        assert_eq!(tradeoff(&server).await["status"], "resolved", "{db}");
        assert_eq!(verdict(&server, &runs[3]).await, "warn", "{db}");

        // Undone: refused without `write`, then removed once; the trade-off is back.
        assert_eq!(call(&server, "DELETE", &path, None).await.0, 401);
        let (status, problem) = call(&server, "DELETE", &path, Some(&upload)).await;
        assert_eq!(status, 403, "{problem}");
        assert_eq!(
            problem["detail"],
            "this token's scope does not allow this; it needs `write`"
        );
        let (status, body) = call(&server, "DELETE", &path, Some(&write)).await;
        assert_eq!((status, body), (204, Value::Null), "{db}");
        let (_, run) = server.get(&format!("/api/v1/runs/{}", runs[0])).await;
        assert_eq!(run["exclusion"], Value::Null, "{db}");
        assert_eq!(
            excluded_flags(&server, &series).await,
            [false, false, false, false]
        );
        let t = tradeoff(&server).await;
        assert_eq!(t["status"], "open", "{db}: {t}");
        assert_eq!(
            t["baseline_commits"],
            json!([commit(0), commit(1), commit(2)])
        );
        assert_eq!(verdict(&server, &runs[3]).await, "fail", "{db}");
        let (status, problem) = call(&server, "DELETE", &path, Some(&write)).await;
        assert_eq!(status, 404);
        assert_eq!(
            problem["detail"],
            format!("run {} is not excluded from baselines", runs[0])
        );
        let missing = "/api/v1/runs/00000000-0000-0000-0000-000000000000/exclusion";
        assert_eq!(call(&server, "DELETE", missing, Some(&write)).await.0, 404);

        // Pinned, listed, and unpinned.
        let (status, list) = server.get("/api/v1/projects/demo/baselines").await;
        assert_eq!((status, list), (200, json!({"items": [], "next_cursor": null})));
        let pin_path = format!("/api/v1/projects/demo/baselines/{series}");
        let (status, pin) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[1]}))
            .await;
        assert_eq!(status, 200, "{pin}");
        let (_, list) = server.get("/api/v1/projects/demo/baselines").await;
        assert_eq!(list, json!({"items": [pin], "next_cursor": null}), "{db}");
        assert_eq!(baseline(&server, &runs[3]).await.0, commit(1), "{db}");
        // Another series of the pinned group: no pin of its own; the detail names the pin.
        let (_, all) = server
            .get("/api/v1/projects/demo/series?metric=ttft&stat=mean")
            .await;
        let sibling = all["items"][0]["series_id"].as_str().unwrap().to_string();
        assert_ne!(sibling, series);
        let (status, problem) = call(
            &server,
            "DELETE",
            &format!("/api/v1/projects/demo/baselines/{sibling}"),
            Some(&write),
        )
        .await;
        assert_eq!(status, 404);
        assert_eq!(
            problem["detail"],
            format!("series `{sibling}` of `demo` has no pinned baseline; its group is pinned through series `{series}`: remove that pin")
        );
        assert_eq!(call(&server, "DELETE", &pin_path, None).await.0, 401);
        assert_eq!(
            call(&server, "DELETE", &pin_path, Some(&upload)).await.0,
            403
        );
        let (status, body) = call(&server, "DELETE", &pin_path, Some(&write)).await;
        assert_eq!((status, body), (204, Value::Null), "{db}");
        let (_, list) = server.get("/api/v1/projects/demo/baselines").await;
        assert_eq!(list["items"], json!([]));
        assert_eq!(
            baseline(&server, &runs[3]).await,
            (Value::Null, json!([commit(0), commit(1), commit(2)])),
            "{db}"
        );
        let (status, problem) = call(&server, "DELETE", &pin_path, Some(&write)).await;
        assert_eq!(status, 404);
        assert_eq!(
            problem["detail"],
            format!("series `{series}` of `demo` has no pinned baseline")
        );
        let (status, _) = call(
            &server,
            "DELETE",
            "/api/v1/projects/nope/baselines/0000000000000000",
            Some(ADMIN_TOKEN),
        )
        .await;
        assert_eq!(status, 404);
    })
    .await;
}

/// One commit of a small chat cell in benchtrail's own format.
fn chat_upload(i: usize, ttft_p50: f64, completed: f64, failed: f64) -> Value {
    let m = |name: &str, stat: Stat, v: f64| {
        serde_json::to_value(MetricValue::new(name, stat, v, None)).unwrap()
    };
    json!({
        "run": {"commit": {"sha": commit(i), "time": format!("2026-11-01T09:{i:02}:00Z")}, "branch": "main"},
        "results": [{
            "cell": {"load": {"max_concurrency": 4}, "input_len": 512, "output_len": 128, "num_prompts": 100},
            "configuration": {"engine": {"name": "vllm"}, "model": {"name": "mock-llm"}},
            "metrics": [
                m("ttft", Stat::Percentile("50".into()), ttft_p50),
                m("output_throughput", Stat::Value, 1000.0),
                m("completed", Stat::Value, completed),
                m("failed", Stat::Value, failed),
            ],
        }],
    })
}

#[tokio::test]
async fn a_run_that_cannot_be_a_baseline_is_not_pinned() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let upload = server
            .project_with_token("demo", json!({"public": false}))
            .await;
        let write = server.token("demo", "write").await;
        let mut runs = Vec::new();
        for (i, (completed, failed)) in [(100.0, 0.0), (100.0, 0.0), (70.0, 30.0), (50.0, 0.0)]
            .into_iter()
            .enumerate()
        {
            let doc = chat_upload(i, 100.0 + i as f64, completed, failed);
            let (status, receipt) = server.upload("demo", &upload, &doc).await;
            assert_eq!(status, 201, "{receipt}");
            runs.push(receipt["run_id"].as_str().unwrap().to_string());
        }
        let (_, list) = server
            .send(
                "GET",
                "/api/v1/projects/demo/series?metric=ttft",
                &write,
                &Value::Null,
            )
            .await;
        let series = list["items"][0]["series_id"].as_str().unwrap().to_string();
        let pin_path = format!("/api/v1/projects/demo/baselines/{series}");
        let refused = |detail: String| {
            json!({"type": "about:blank", "title": "Unprocessable content", "status": 422,
                "detail": detail, "pointer": "/run_id",
                "errors": [{"detail": detail, "pointer": "/run_id"}]})
        };

        // Invalid by its own health: too many failed, or too few completed requests.
        let (status, problem) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[2]}))
            .await;
        assert_eq!(status, 422, "{db}: {problem}");
        assert_eq!(problem, refused(format!("run {} is not valid (30.0 % of requests failed (more than 5 %)), so it cannot be a baseline; pin another run", runs[2])));
        let (status, problem) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[3]}))
            .await;
        assert_eq!(status, 422, "{db}: {problem}");
        assert_eq!(problem, refused(format!("run {} is not valid (50 of 100 prompts completed (fewer than 90 %)), so it cannot be a baseline; pin another run", runs[3])));

        // Excluded by a person.
        let exclusion = format!("/api/v1/runs/{}/exclusion", runs[0]);
        let (status, _) = server
            .send("POST", &exclusion, &write, &json!({"reason": "GPU throttled"}))
            .await;
        assert_eq!(status, 200);
        let (status, problem) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[0]}))
            .await;
        assert_eq!(status, 422, "{db}: {problem}");
        assert_eq!(problem, refused(format!("run {0} is excluded from baselines (GPU throttled), so it cannot be one; remove its exclusion first (DELETE /api/v1/runs/{0}/exclusion) or pin another run", runs[0])));
        let (_, list) = server
            .send("GET", "/api/v1/projects/demo/baselines", &write, &Value::Null)
            .await;
        assert_eq!(list["items"], json!([]), "{db}: nothing was pinned");

        // A valid run is pinned; once its exclusion is removed, the first one can be too.
        let (status, pin) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[1]}))
            .await;
        assert_eq!(status, 200, "{pin}");
        assert_eq!(pin["commit_sha"], commit(1));
        let (status, _) = call(&server, "DELETE", &exclusion, Some(&write)).await;
        assert_eq!(status, 204);
        let (status, pin) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[0]}))
            .await;
        assert_eq!(status, 200, "{pin}");

        // A group has one pin: pinning through another of its series replaces it.
        let (_, list) = server
            .send(
                "GET",
                "/api/v1/projects/demo/series?metric=output_throughput",
                &write,
                &Value::Null,
            )
            .await;
        let other = list["items"][0]["series_id"].as_str().unwrap().to_string();
        let other_path = format!("/api/v1/projects/demo/baselines/{other}");
        let (status, replaced) = server
            .send("PUT", &other_path, &write, &json!({"run_id": runs[1]}))
            .await;
        assert_eq!(status, 200, "{replaced}");
        let (_, list) = server
            .send("GET", "/api/v1/projects/demo/baselines", &write, &Value::Null)
            .await;
        assert_eq!(list["items"], json!([replaced]), "{db}");
        // A pinned run cannot be excluded: its group would be left without a baseline.
        let pinned_exclusion = format!("/api/v1/runs/{}/exclusion", runs[1]);
        let (status, problem) = server
            .send("POST", &pinned_exclusion, &write, &json!({"reason": "noisy"}))
            .await;
        assert_eq!(status, 409, "{db}: {problem}");
        assert_eq!(
            problem["detail"],
            format!(
                "run {} is the pinned baseline of series {other}: unpin it first \
                 (DELETE /api/v1/projects/demo/baselines/{other})",
                runs[1]
            )
        );
        let (status, _) = call(&server, "DELETE", &other_path, Some(&write)).await;
        assert_eq!(status, 204);
        let (status, pin) = server
            .send("PUT", &pin_path, &write, &json!({"run_id": runs[0]}))
            .await;
        assert_eq!(status, 200, "{pin}");

        // The list of a private project is as private as the project.
        let (status, _) = server.get("/api/v1/projects/demo/baselines").await;
        assert_eq!(status, 404);
        let read = server.token("demo", "read").await;
        let (status, list) = server
            .send("GET", "/api/v1/projects/demo/baselines", &read, &Value::Null)
            .await;
        assert_eq!(status, 200);
        assert_eq!(list["items"], json!([pin]));
    })
    .await;
}

#[tokio::test]
async fn the_pages_show_exclusions_and_pins() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let (_, write, runs) = goodput_history(&server).await;
        let page = |path: String| {
            let server = &server;
            async move {
                let r = server.http.get(server.url(&path)).send().await.unwrap();
                assert_eq!(r.status(), 200, "GET {path}");
                r.text().await.unwrap()
            }
        };
        let html = page(format!("/runs/{}", runs[0])).await;
        assert!(!html.contains("id=\"run-baselines\""), "{db}: nothing to say");

        let (status, ex) = server
            .send(
                "POST",
                &format!("/api/v1/runs/{}/exclusion", runs[0]),
                &write,
                &json!({"reason": "noisy <neighbour>"}),
            )
            .await;
        assert_eq!(status, 200, "{ex}");
        let at: DateTime<Utc> = ex["created_at"].as_str().unwrap().parse().unwrap();
        let t = tradeoff(&server).await;
        let series = t["series_id"].as_str().unwrap().to_string();
        let (status, pin) = server
            .send(
                "PUT",
                &format!("/api/v1/projects/demo/baselines/{series}"),
                &write,
                &json!({"run_id": runs[1]}),
            )
            .await;
        assert_eq!(status, 200, "{pin}");

        // The excluded run says so, with the reason (escaped) and when.
        let html = page(format!("/runs/{}", runs[0])).await;
        let machine = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        assert!(
            html.contains(&format!(
                "<p class=\"warning\" id=\"exclusion\" data-reason=\"noisy &#60;neighbour&#62;\" data-at=\"{machine}\">Excluded from baselines: noisy &#60;neighbour&#62;, <time datetime=\"{machine}\">{}</time>. It is neither a baseline nor tested.</p>",
                at.format("%Y-%m-%d %H:%M UTC")
            )),
            "{db}: {html}"
        );
        assert!(!html.contains("id=\"pinned\""));

        // The pinned run names the series it is the baseline of.
        let html = page(format!("/runs/{}", runs[1])).await;
        assert!(!html.contains("id=\"exclusion\""));
        assert_eq!(
            text_of(&html, "pinned").unwrap(),
            "Pinned as the baseline of 1 series (with the rest of its result group):\n"
        );
        let links = tags(&html, "<a class=\"pinned-series\"");
        assert_eq!(links.len(), 1, "{db}: {html}");
        assert_eq!(links[0]["data-series"], series);
        assert_eq!(
            links[0]["href"],
            format!("/projects/demo/series/{series}")
        );
        let (_, info) = server
            .get(&format!("/api/v1/projects/demo/series/{series}"))
            .await;
        let (_, vocabulary) = server.get("/api/v1/metrics").await;
        let label = vocabulary["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == info["series"]["metric"])
            .unwrap()["label"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(html.contains(&format!(
            "data-series=\"{series}\">{label} {}</a> <span class=\"muted\">(cell <code class=\"cell-key\">{}</code>)</span>.</p>",
            info["series"]["stat"].as_str().unwrap(),
            info["series"]["cell_key"].as_str().unwrap(),
        )), "{db}: {html}");

        // The series' points table marks the excluded run and the pinned baseline.
        let html = page(format!("/projects/demo/series/{series}")).await;
        let rows = tags(&html, "<tr data-x=");
        let marks: Vec<(&str, Option<&str>, Option<&str>)> = rows
            .iter()
            .map(|r| {
                (
                    r["data-run-id"].as_str(),
                    r.get("data-excluded").map(String::as_str),
                    r.get("data-pinned").map(String::as_str),
                )
            })
            .collect();
        assert_eq!(
            marks,
            [
                (runs[0].as_str(), Some("true"), None),
                (runs[1].as_str(), None, Some("true")),
                (runs[2].as_str(), None, None),
                (runs[3].as_str(), None, None),
            ],
            "{db}"
        );
        assert_eq!(html.matches("<span class=\"muted point-excluded\" title=\"Excluded from baselines: see the run\">excluded</span>").count(), 1);
        assert_eq!(html.matches("<strong class=\"point-pinned\" title=\"The pinned baseline of this series\">pinned baseline</strong>").count(), 1);
        // Another series of the group shows the same pinned baseline.
        let (_, all) = server
            .get("/api/v1/projects/demo/series?metric=ttft&stat=mean")
            .await;
        let sibling = all["items"][0]["series_id"].as_str().unwrap();
        let html = page(format!("/projects/demo/series/{sibling}")).await;
        let pinned: Vec<String> = tags(&html, "<tr data-x=")
            .iter()
            .filter(|r| r.contains_key("data-pinned"))
            .map(|r| r["data-run-id"].clone())
            .collect();
        assert_eq!(pinned, [runs[1].clone()], "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_configuration_is_readable_only_through_a_project_the_caller_may_read() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let open = server
            .project_with_token("open", json!({"public": true}))
            .await;
        let secret = server
            .project_with_token("secret", json!({"public": false}))
            .await;
        server
            .project_with_token("other", json!({"public": false}))
            .await;
        let other_write = server.token("other", "write").await;
        let secret_read = server.token("secret", "read").await;
        let path = GOODPUT_HISTORY[0];
        // One configuration used only by `secret`, one shared by `secret` and `open`.
        let mut private_doc = vllm_doc(0, path);
        private_doc["configuration"] =
            json!({"engine": {"launch_command": "vllm serve /secret/weights"}});
        let mut shared_doc = vllm_doc(1, path);
        shared_doc["configuration"] = json!({"engine": {"launch_command": "vllm serve shared"}});
        let mut fingerprints = Vec::new();
        for (slug, token, doc) in [
            ("secret", &secret, &private_doc),
            ("secret", &secret, &shared_doc),
            ("open", &open, &shared_doc),
        ] {
            let (status, receipt) = server.upload(slug, token, doc).await;
            assert_eq!(status, 201, "{receipt}");
            let run = receipt["run_id"].as_str().unwrap();
            let (_, stored) = server
                .send(
                    "GET",
                    &format!("/api/v1/runs/{run}"),
                    ADMIN_TOKEN,
                    &Value::Null,
                )
                .await;
            fingerprints.push(
                stored["results"][0]["config_fingerprint"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        let (private, shared) = (&fingerprints[0], &fingerprints[1]);
        assert_eq!(&fingerprints[2], shared);
        assert_ne!(private, shared);
        let status_of = |path: String, token: Option<String>| {
            let server = &server;
            async move {
                let mut r = server.http.get(server.url(&path));
                if let Some(t) = token {
                    r = r.bearer_auth(t);
                }
                r.send().await.unwrap().status().as_u16()
            }
        };
        for (token, who, private_status) in [
            (None, "anonymous", 404),
            (
                Some(other_write.clone()),
                "a write token of another private project",
                404,
            ),
            (Some(open.clone()), "a token of the public project", 404),
            (Some(secret_read.clone()), "a read token of the owner", 200),
            (Some(ADMIN_TOKEN.to_string()), "the admin", 200),
        ] {
            let api = |fp: &str| format!("/api/v1/configs/{fp}");
            assert_eq!(
                status_of(api(private), token.clone()).await,
                private_status,
                "{db}: {who}"
            );
            assert_eq!(
                status_of(api(shared), token.clone()).await,
                200,
                "{db}: {who}"
            );
        }
        let (_, problem) = server.get(&format!("/api/v1/configs/{private}")).await;
        assert_eq!(
            problem["detail"],
            format!("no configuration `{private}`"),
            "the same answer as for an unknown fingerprint"
        );
        // Pages are anonymous: only a configuration of a public project is shown.
        assert_eq!(status_of(format!("/configs/{private}"), None).await, 404);
        assert_eq!(status_of(format!("/configs/{shared}"), None).await, 200);
    })
    .await;
}
