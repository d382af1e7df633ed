//! The server as the PR bot (`pr_comments` in the project settings), against a fake GitHub on
//! loopback (a real HTTP server: runner/tests/common/forge.rs) and real uploads on SQLite and
//! Postgres: the exact requests after a PR upload (the comment created), none for a repeated
//! upload of the same run, an update to "no regressions at <sha>" after a clean push, a 503
//! retried, a missing token recorded as `failed`; and the settings refusing a token variable
//! outside `BENCHTRAIL_FORGE_*`.

mod common;
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

/// The variable the settings name. Set once, before any server starts, in this binary of one
/// test, so no other thread reads the environment meanwhile.
const TOKEN_ENV: &str = "BENCHTRAIL_FORGE_TEST_GITHUB_TOKEN";

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
    // SAFETY: set before any other thread of this test binary reads the environment.
    unsafe { std::env::set_var(TOKEN_ENV, "ghs_server") };
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
        let post_of = |run| {
            let store = server.store.clone();
            async move { store.pr_comment_post(run).await.unwrap().unwrap() }
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
