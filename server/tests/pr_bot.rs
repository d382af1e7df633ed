//! The server as the PR bot (`pr_comments` in the project settings), against a fake GitHub on
//! loopback (a real HTTP server: runner/tests/common/forge.rs) and real uploads on SQLite and
//! Postgres: the exact requests after a PR upload (the comment created), none for a repeated
//! upload of the same run, an update to "no regressions at <sha>" after a clean push, a 503
//! retried, a missing token recorded as `failed`; and the settings refusing a token variable
//! outside `BENCHTRAIL_FORGE_*`. And the refresh after a report changes without an upload (new
//! settings, a triage, an exclusion): the same comment updated in place for the PR's newest run
//! only, and no request at all after a recomputation or a triage that leaves the report as it
//! was.

use crate::common;
#[path = "../../runner/tests/common/forge.rs"]
#[allow(dead_code)]
mod forge;

use common::db::for_each_store;
use common::server::TestServer;
use common::server::ADMIN_TOKEN;
use forge::FakeForge;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The variable the settings name. Set once ([`set_token`]), first thing in every test of this
/// binary, before any server starts.
const TOKEN_ENV: &str = "BENCHTRAIL_FORGE_TEST_GITHUB_TOKEN";

/// Sets [`TOKEN_ENV`] once: the first test to call it sets it while any other waits in
/// `call_once`, so no other thread of this binary reads the environment meanwhile.
fn set_token() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: every test calls this before it starts anything that reads the environment,
    // and `call_once` holds the others back until the variable is set.
    ONCE.call_once(|| unsafe { std::env::set_var(TOKEN_ENV, "ghs_server") });
}

fn sha(i: u32) -> String {
    format!("{:040x}", 0xb0770000u32 + i)
}

fn file(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../examples/history/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn doc(
    commit: &str,
    parent: Option<&str>,
    branch: &str,
    pr: Option<(u64, &str)>,
    name: &str,
) -> Value {
    let mut run = json!({"commit": {"sha": commit, "parents": parent.into_iter().collect::<Vec<_>>()},
                         "branch": branch});
    if let Some((n, base)) = pr {
        run["pull_request"] = json!({"number": n, "merge_base": base});
    }
    json!({"run": run, "files": [{"name": name, "content": file(name)}]})
}

/// Waits (at most 30 s) until the fake has received `n` requests in all.
async fn wait_for(forge: &FakeForge, seen: &mut Vec<forge::Seen>, n: usize) {
    let start = Instant::now();
    while seen.len() < n && start.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen.extend(forge.take_seen());
    }
}

fn calls(seen: &[forge::Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| format!("{} {}", s.method, s.uri))
        .collect()
}

#[tokio::test]
async fn the_server_posts_one_sticky_comment_per_project_and_never_twice_for_a_run() {
    set_token();
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("bot", json!({})).await;
        let forge = FakeForge::start();
        forge.seed(7, 120, 0);
        let settings = |token_env: &str| {
            json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}],
                   "pr_comments": {"provider": "github", "repository": "acme/engine",
                                   "api_url": forge.base, "token_env": token_env}})
        };
        // The token itself never goes in the settings.
        let (status, problem) = server
            .send(
                "PUT",
                "/api/v1/projects/bot/settings",
                ADMIN_TOKEN,
                &settings("GITHUB_TOKEN"),
            )
            .await;
        assert_eq!(status, 422, "{db}: {problem}");
        assert_eq!(problem["pointer"], "/pr_comments/token_env", "{db}");
        let (status, stored) = server
            .send(
                "PUT",
                "/api/v1/projects/bot/settings",
                ADMIN_TOKEN,
                &settings(TOKEN_ENV),
            )
            .await;
        assert_eq!(status, 200, "{db}: {stored}");
        assert_eq!(
            stored["pr_comments"]["suite"], "benchmarks",
            "{db}: {stored}"
        );

        let main = [
            "goodput_baseline_s11_c4.json",
            "goodput_baseline_s12_c4.json",
            "goodput_baseline_s13_c4.json",
        ];
        for (i, f) in main.iter().enumerate() {
            let parent = (i > 0).then(|| sha(i as u32 - 1));
            let (status, r) = server
                .upload(
                    "bot",
                    &token,
                    &doc(&sha(i as u32), parent.as_deref(), "main", None, f),
                )
                .await;
            assert_eq!(status, 201, "{db}: {r}");
        }
        assert!(
            forge.take_seen().is_empty(),
            "{db}: main-branch uploads name no PR"
        );

        // A PR push trading TTFT for throughput: the comment is created (both pages listed).
        let base = sha(2);
        let failing = doc(
            &sha(10),
            Some(&base),
            "feature",
            Some((7, &base)),
            "goodput_candidate_s21_c4.json",
        );
        let (status, r) = server.upload("bot", &token, &failing).await;
        assert_eq!(status, 201, "{db}: {r}");
        let run: Uuid = r["run_id"].as_str().unwrap().parse().unwrap();
        let mut seen = Vec::new();
        wait_for(&forge, &mut seen, 3).await;
        let list1 = "GET /repos/acme/engine/issues/7/comments?per_page=100";
        let list2 = "GET /repos/acme/engine/issues/7/comments?per_page=100&page=2";
        let post = "POST /repos/acme/engine/issues/7/comments";
        assert_eq!(calls(&seen), [list1, list2, post], "{db}");
        assert!(
            seen.iter()
                .all(|s| s.auth.as_deref() == Some("Bearer ghs_server")),
            "{db}"
        );
        let body = seen[2].body.clone().unwrap();
        assert!(
            body.starts_with(&format!(
                "<!-- benchtrail:comment project=bot -->\n<!-- benchtrail:suite benchmarks -->\n\
             ### benchtrail: ❌ **FAIL** at `{}`",
                &sha(10)[..12]
            )),
            "{db}: {body}"
        );
        assert!(
            body.contains(&format!("[run]({}/runs/{run})", server.base)),
            "{db}: {body}"
        );
        let (id, _) = forge.ours(7)[0].clone();
        // The post as recorded once its outcome is stored: the forge sees the request before
        // the job stores what the forge answered, so a read right after the request may
        // still find the claim without an outcome.
        let post_of = |run| {
            let store = server.store.clone();
            async move {
                let start = Instant::now();
                loop {
                    let post = store.pr_comment_post(run).await.unwrap().unwrap();
                    if post.outcome.is_some() || start.elapsed() > Duration::from_secs(30) {
                        return post;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        let recorded = post_of(run).await;
        assert_eq!(
            (recorded.outcome.as_deref(), recorded.comment_id.clone()),
            (Some("created"), Some(id.to_string())),
            "{db}"
        );

        // The same upload again (a CI retry): stored nothing, posts nothing.
        let (status, _) = server.upload("bot", &token, &failing).await;
        assert_eq!(status, 200, "{db}");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(forge.take_seen().is_empty(), "{db}");

        // A clean push, with the forge failing once: retried, the same comment updated.
        forge.fail_next(503, &[]);
        let passing = doc(
            &sha(11),
            Some(&sha(10)),
            "feature",
            Some((7, &base)),
            "goodput_baseline_s12_c4.json",
        );
        let (status, r) = server.upload("bot", &token, &passing).await;
        assert_eq!(status, 201, "{db}: {r}");
        let clean: Uuid = r["run_id"].as_str().unwrap().parse().unwrap();
        let mut seen = Vec::new();
        wait_for(&forge, &mut seen, 4).await;
        assert_eq!(
            calls(&seen),
            [
                list1,
                list1,
                list2,
                &format!("PATCH /repos/acme/engine/issues/comments/{id}")
            ],
            "{db}"
        );
        assert!(
            seen[3].body.as_deref().unwrap().contains(&format!(
                "### benchtrail: ✅ **PASS** — no regressions at `{}`",
                &sha(11)[..12]
            )),
            "{db}"
        );
        assert_eq!(forge.ours(7).len(), 1, "{db}");
        assert_eq!(
            post_of(clean).await.outcome.as_deref(),
            Some("updated"),
            "{db}"
        );

        // A token variable the server does not have: recorded as failed, nothing sent.
        let (status, _) = server
            .send(
                "PUT",
                "/api/v1/projects/bot/settings",
                ADMIN_TOKEN,
                &settings("BENCHTRAIL_FORGE_UNSET"),
            )
            .await;
        assert_eq!(status, 200, "{db}");
        let again = doc(
            &sha(12),
            Some(&sha(11)),
            "feature",
            Some((7, &base)),
            "goodput_baseline_s13_c4.json",
        );
        let (_, r) = server.upload("bot", &token, &again).await;
        let third: Uuid = r["run_id"].as_str().unwrap().parse().unwrap();
        let start = Instant::now();
        let recorded = loop {
            let p = server.store.pr_comment_post(third).await.unwrap();
            if p.as_ref().is_some_and(|p| p.outcome.is_some())
                || start.elapsed() > Duration::from_secs(20)
            {
                break p.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(recorded.outcome.as_deref(), Some("failed"), "{db}");
        assert_eq!(
            recorded.detail.as_deref(),
            Some("the server's environment has no BENCHTRAIL_FORGE_UNSET (pr_comments.token_env)"),
            "{db}"
        );
        assert!(forge.take_seen().is_empty(), "{db}");

        // The same on GitLab: merge request 9's notes (system notes skipped), a note created.
        forge.seed(9, 100, 3);
        let gitlab = json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}],
                            "pr_comments": {"provider": "gitlab", "repository": "group/engine",
                                            "api_url": format!("{}/api/v4", forge.base),
                                            "token_env": TOKEN_ENV}});
        let (status, _) = server
            .send("PUT", "/api/v1/projects/bot/settings", ADMIN_TOKEN, &gitlab)
            .await;
        assert_eq!(status, 200, "{db}");
        let mr = doc(&sha(20), Some(&base), "mr", Some((9, &base)), "goodput_candidate_s21_c4.json");
        let (status, _) = server.upload("bot", &token, &mr).await;
        assert_eq!(status, 201, "{db}");
        let mut seen = Vec::new();
        wait_for(&forge, &mut seen, 3).await;
        let notes = "/api/v4/projects/group%2Fengine/merge_requests/9/notes";
        assert_eq!(
            calls(&seen),
            [
                format!("GET {notes}?per_page=100&sort=asc&order_by=created_at&page=1"),
                format!("GET {notes}?per_page=100&sort=asc&order_by=created_at&page=2"),
                format!("POST {notes}"),
            ],
            "{db}"
        );
        assert!(seen.iter().all(|s| s.auth.as_deref() == Some("ghs_server")), "{db}");
        assert_eq!(forge.ours(9).len(), 1, "{db}");
    })
    .await;
}

/// Waits (at most 30 s) until the server has nothing queued (analyses, scans, PR comments and
/// their refreshes), so the forge has seen every request it will get.
async fn drained(server: &TestServer) {
    let start = Instant::now();
    while server.store.queued_jobs().await.unwrap() > 0 && start.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_verdict_changed_without_an_upload_updates_the_same_comment_once() {
    set_token();
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("refresh", json!({})).await;
        let forge = FakeForge::start();
        let settings = |detection: Value| {
            json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}],
                   "detection": detection,
                   "pr_comments": {"provider": "github", "repository": "acme/engine",
                                   "api_url": forge.base, "token_env": TOKEN_ENV}})
        };
        let put = |detection: Value| {
            let body = settings(detection);
            let server = &server;
            async move {
                let (status, stored) = server
                    .send("PUT", "/api/v1/projects/refresh/settings", ADMIN_TOKEN, &body)
                    .await;
                assert_eq!(status, 200, "{db}: {stored}");
            }
        };
        put(json!({})).await;
        let main = [
            "goodput_baseline_s11_c4.json",
            "goodput_baseline_s12_c4.json",
            "goodput_baseline_s13_c4.json",
        ];
        let mut main_runs = Vec::new();
        for (i, f) in main.iter().enumerate() {
            let parent = (i > 0).then(|| sha(i as u32 - 1));
            let (status, r) = server
                .upload(
                    "refresh",
                    &token,
                    &doc(&sha(i as u32), parent.as_deref(), "main", None, f),
                )
                .await;
            assert_eq!(status, 201, "{db}: {r}");
            main_runs.push(r["run_id"].as_str().unwrap().to_string());
        }
        let list = "GET /repos/acme/engine/issues/5/comments?per_page=100";
        let post = "POST /repos/acme/engine/issues/5/comments";

        // Two pushes of PR 5 trading TTFT for throughput: the comment created, then updated
        // to name the newer push.
        let base = sha(2);
        let mut runs = Vec::new();
        for (i, parent) in [(10, sha(2)), (11, sha(10))] {
            let push = doc(
                &sha(i),
                Some(&parent),
                "feature",
                Some((5, &base)),
                "goodput_candidate_s21_c4.json",
            );
            let (status, r) = server.upload("refresh", &token, &push).await;
            assert_eq!(status, 201, "{db}: {r}");
            assert_eq!(r["verdict"], "fail", "{db}: {r}");
            runs.push(r["run_id"].as_str().unwrap().parse::<Uuid>().unwrap());
            drained(&server).await;
        }
        let seen = forge.take_seen();
        let (id, _) = forge.ours(5)[0].clone();
        let patch = format!("PATCH /repos/acme/engine/issues/comments/{id}");
        assert_eq!(calls(&seen), [list, post, list, &patch], "{db}");
        let headline = |level: &str, at: u32| {
            format!(
                "### benchtrail: {level} at `{}`",
                &sha(at)[..12]
            )
        };
        assert!(
            seen[3]
                .body
                .as_deref()
                .unwrap()
                .contains(&headline("❌ **FAIL**", 11)),
            "{db}: {:?}",
            seen[3].body
        );
        let newest = runs[1];

        // Trade-offs no longer fail: every commit recomputed, no upload. The newest push's
        // report changed (fail → warn): the same comment updated once, for that push only.
        put(json!({"tradeoff_fails": false})).await;
        let (_, verdict) = server
            .get(&format!("/api/v1/runs/{newest}/verdict"))
            .await;
        assert_eq!(verdict["verdict"], "warn", "{db}: {verdict}");
        drained(&server).await;
        let seen = forge.take_seen();
        assert_eq!(calls(&seen), [list, &patch], "{db}");
        let body = seen[1].body.clone().unwrap();
        assert!(
            body.starts_with(
                "<!-- benchtrail:comment project=refresh -->\n<!-- benchtrail:suite benchmarks -->\n"
            ),
            "{db}: {body}"
        );
        assert!(body.contains(&headline("⚠️ **WARN**", 11)), "{db}: {body}");
        assert!(body.contains(&format!("/runs/{newest})")), "{db}: {body}");
        assert!(!body.contains("❌"), "{db}: {body}");
        assert_eq!(forge.ours(5), [(id, body.clone())], "{db}");
        let recorded = server.store.pr_comment_post(newest).await.unwrap().unwrap();
        assert_eq!(
            (recorded.outcome.as_deref(), recorded.comment_id.clone()),
            (Some("updated"), Some(id.to_string())),
            "{db}"
        );

        // A recomputation that leaves every report as it was (a rule these runs do not
        // touch): not a single forge request.
        put(json!({"tradeoff_fails": false, "max_error_rate_pct": 6.0})).await;
        drained(&server).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(forge.take_seen().is_empty(), "{db}");

        // Trade-offs fail again: the report is the one posted first again, and the comment,
        // which shows the warning now, says so again.
        put(json!({})).await;
        drained(&server).await;
        let seen = forge.take_seen();
        assert_eq!(calls(&seen), [list, &patch], "{db}");
        let failing = seen[1].body.clone().unwrap();
        assert!(failing.contains(&headline("❌ **FAIL**", 11)), "{db}: {failing}");

        // The trade-off dismissed: it no longer counts, the verdict is the warning of the
        // finding left undecided, and the same comment says so. Dismissing it again changes
        // no report and sends nothing.
        let alerts = server
            .alerts("refresh", &format!("?commit={}&kind=tradeoff", sha(11)))
            .await;
        assert_eq!(alerts.len(), 1, "{db}: {alerts:?}");
        let path = format!("/api/v1/alerts/{}", alerts[0]["id"].as_str().unwrap());
        let dismiss = json!({"status": "dismissed", "reason": "the throughput is worth it"});
        let write = server.token("refresh", "write").await;
        let (status, r) = server.send("PATCH", &path, &write, &dismiss).await;
        assert_eq!(status, 200, "{db}: {r}");
        let (_, verdict) = server
            .get(&format!("/api/v1/runs/{newest}/verdict"))
            .await;
        assert_eq!(verdict["verdict"], "warn", "{db}: {verdict}");
        drained(&server).await;
        let seen = forge.take_seen();
        assert_eq!(calls(&seen), [list, &patch], "{db}");
        let body = seen[1].body.clone().unwrap();
        assert!(body.contains(&headline("⚠️ **WARN**", 11)), "{db}: {body}");
        assert!(body.contains(&format!("/runs/{newest})")), "{db}: {body}");
        let (status, r) = server.send("PATCH", &path, &write, &dismiss).await;
        assert_eq!(status, 200, "{db}: {r}");
        drained(&server).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(forge.take_seen().is_empty(), "{db}");
        assert_eq!(forge.ours(5), [(id, body.clone())], "{db}");

        // A baseline run excluded: the PR's report is compared with two commits, not three,
        // and the same comment follows.
        let exclusion = format!("/api/v1/runs/{}/exclusion", main_runs[0]);
        let why = json!({"reason": "a noisy host"});
        let (status, r) = server.send("POST", &exclusion, &write, &why).await;
        assert_eq!(status, 200, "{db}: {r}");
        drained(&server).await;
        let seen = forge.take_seen();
        assert_eq!(calls(&seen), [list, &patch], "{db}");
        let excluded = seen[1].body.clone().unwrap();
        assert_ne!(excluded, body, "{db}");
        assert!(excluded.contains(&format!("/runs/{newest})")), "{db}: {excluded}");
        assert_eq!(forge.ours(5), [(id, excluded)], "{db}");
    })
    .await;
}

/// A PR run whose load sweep (the generated AIPerf candidate at concurrency 1, 4, 16) pairs
/// with its baseline's (three main commits of the AIPerf baseline): the comment carries the
/// capacity summary, the validation report's own answer and summary paragraph (change in
/// requests per hour, the slowest users' wait, as `GET /api/v1/compare/report` of the two
/// runs gives them), and the link to the report page.
#[tokio::test]
async fn a_pr_run_with_paired_sweeps_gets_the_capacity_summary() {
    set_token();
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("sweep-bot", json!({})).await;
        let forge = FakeForge::start();
        let settings = json!({"slo_profiles": [{"name": "chat", "ttft_ms": 120, "tpot_ms": 12}],
                              "pr_comments": {"provider": "github", "repository": "acme/engine",
                                              "api_url": forge.base, "token_env": TOKEN_ENV}});
        let (status, body) = server
            .send("PUT", "/api/v1/projects/sweep-bot/settings", ADMIN_TOKEN, &settings)
            .await;
        assert_eq!(status, 200, "{db}: {body}");
        let mut base_runs = Vec::new();
        for i in 0..3u32 {
            let mut d = common::aiperf::upload_of("baseline", 'a');
            d["run"]["commit"] = json!({"sha": sha(i), "parents": (i > 0).then(|| sha(i - 1)).into_iter().collect::<Vec<_>>(),
                                        "time": format!("2026-12-01T10:0{i}:00Z")});
            let (status, r) = server.upload("sweep-bot", &token, &d).await;
            assert_eq!(status, 201, "{db}: {r}");
            base_runs.push(r["run_id"].as_str().unwrap().to_string());
        }
        let mut pr = common::aiperf::upload_of("candidate", 'b');
        pr["run"] = json!({"commit": {"sha": sha(10), "parents": [sha(2)], "time": "2026-12-01T11:00:00Z"},
                           "branch": "feature", "pull_request": {"number": 5, "merge_base": sha(2)}});
        let (status, r) = server.upload("sweep-bot", &token, &pr).await;
        assert_eq!(status, 201, "{db}: {r}");
        let head = r["run_id"].as_str().unwrap().to_string();
        let mut seen = Vec::new();
        wait_for(&forge, &mut seen, 2).await;
        let body = seen
            .iter()
            .find(|s| s.method == "POST")
            .and_then(|s| s.body.clone())
            .unwrap_or_else(|| panic!("{db}: no comment posted: {:?}", calls(&seen)));

        // The baseline run is the newest of the baseline commits: the third upload.
        let (status, report) = server
            .get(&format!("/api/v1/compare/report?base={}&head={head}", base_runs[2]))
            .await;
        assert_eq!(status, 200, "{db}: {report}");
        let section = format!(
            "#### Capacity at SLO\n\n{}\n\n{}\n\n[Validation report]({}/compare/report?base={}&head={head})\n",
            report["answer"].as_str().unwrap(),
            report["summary"].as_str().unwrap(),
            server.base,
            base_runs[2]
        );
        assert!(body.contains(&section), "{db}: no\n{section}\nin\n{body}");
        // The figures checked against the records in capacity_report.rs.
        assert!(
            body.contains("the candidate completes 15,731 more requests per hour than the baseline at SLO capacity (26,478 instead of 10,747 per hour"),
            "{db}: {body}"
        );
        assert!(body.contains("the slowest 1 % of users wait"), "{db}: {body}");
        // The run's report says the same (the comment is rendered from it).
        let md = server
            .text(&format!("/api/v1/runs/{head}/report?format=markdown"))
            .await;
        assert!(md.contains(&section), "{db}: {md}");
    })
    .await;
}
