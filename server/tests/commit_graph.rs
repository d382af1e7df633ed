//! History in commit order over HTTP, on SQLite and Postgres: uploads with `parents` are
//! plotted and baselined by ancestry (committer time only between unrelated commits), a pull
//! request's baseline holds only ancestors of its merge base, commit times keep their UTC
//! offset, identical re-uploads are counted, and an upload out of order (a parent after its
//! child, another run of an earlier commit) brings the later commits it affects up to date.

use crate::common;

use common::db::for_each_store;
use common::server::{repo_file, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

/// Five real `vllm bench serve` files of one series (ttft p50 at max_concurrency=4).
const FILES: [&str; 5] = [
    "examples/history/goodput_baseline_s11_c4.json",
    "examples/history/goodput_baseline_s12_c4.json",
    "examples/history/goodput_baseline_s13_c4.json",
    "examples/history/baseline_completions_c4_isl512_osl128.json",
    "examples/history/goodput_candidate_s21_c4.json",
];

/// A 40-hex SHA made of one letter.
fn sha(c: char) -> String {
    c.to_string().repeat(40)
}

/// The median TTFT a file states (its value in the series).
fn median_ttft(path: &str) -> f64 {
    serde_json::from_str::<Value>(&repo_file(path)).unwrap()["median_ttft_ms"]
        .as_f64()
        .unwrap()
}

/// An upload of `file` at commit `c` with `parents` and committer `time` on `branch`.
fn doc(c: char, parents: &[char], time: &str, branch: &str, file: &str) -> Value {
    json!({
        "run": {"commit": {"sha": sha(c), "parents": parents.iter().map(|p| sha(*p)).collect::<Vec<_>>(),
                           "time": time, "subject": format!("commit {c}")},
                "branch": branch},
        "files": [{"name": file.rsplit('/').next().unwrap(), "content": repo_file(file)}],
    })
}

/// Uploads each document (expecting 201) and waits until the analyses they asked for are done;
/// returns the run ids by commit letter.
async fn upload_all(
    server: &TestServer,
    token: &str,
    docs: &[(char, Value)],
) -> Vec<(char, String)> {
    let mut ids = Vec::new();
    for (c, d) in docs {
        let (status, receipt) = server.upload("demo", token, d).await;
        assert_eq!(status, 201, "{c}: {receipt}");
        ids.push((*c, receipt["run_id"].as_str().unwrap().to_string()));
    }
    // The re-analyses an upload out of order asks for run in the background.
    server.drained().await;
    ids
}

/// The ttft p50 series at max_concurrency=4 of project `demo`.
async fn ttft_series(server: &TestServer) -> String {
    let (status, list) = server
        .get("/api/v1/projects/demo/series?metric=ttft&stat=p50&cell=max_concurrency%3D4")
        .await;
    assert_eq!(status, 200, "{list}");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{list}");
    items[0]["series_id"].as_str().unwrap().to_string()
}

/// `(commit letter, value, commit_time)` of the series' points on `branch`.
async fn points(server: &TestServer, series: &str, branch: &str) -> Vec<(char, f64, Value)> {
    let (status, body) = server
        .get(&format!(
            "/api/v1/projects/demo/series/{series}?branch={branch}"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    body["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["commit_sha"].as_str().unwrap().chars().next().unwrap(),
                p["value"].as_f64().unwrap(),
                p["commit_time"].clone(),
            )
        })
        .collect()
}

/// The baseline commits (letters, sorted) of a run's only group, from its stored analysis.
async fn baseline_commits(server: &TestServer, run: &str) -> Vec<char> {
    let (status, a) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
    assert_eq!(status, 200, "{a}");
    let groups = a["analysis"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{a}");
    groups[0]["history_commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().chars().next().unwrap())
        .collect()
}

/// Recomputes every analysis of `demo` (a settings change does), now that all is uploaded.
async fn recompute(server: &TestServer) {
    let (status, body) = server
        .send(
            "PUT",
            "/api/v1/projects/demo/settings",
            ADMIN_TOKEN,
            &json!({"slo_profiles": []}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

fn id_of(ids: &[(char, String)], c: char) -> &str {
    &ids.iter().find(|(k, _)| *k == c).unwrap().1
}

#[tokio::test]
async fn a_history_uploaded_out_of_order_plots_and_baselines_by_ancestry() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // a ← b ← c ← d on main, and e ← a: a sibling of b (a line that was force-pushed
        // away) uploaded to main too. d was committed before its parent c (a rebase), e between
        // b and c. Uploaded d, e, b, c, a.
        let docs = [
            (
                'd',
                doc('d', &['c'], "2026-11-03T09:00:00Z", "main", FILES[3]),
            ),
            (
                'e',
                doc('e', &['a'], "2026-11-03T12:00:00Z", "main", FILES[4]),
            ),
            (
                'b',
                doc('b', &['a'], "2026-11-02T10:00:00+01:00", "main", FILES[1]),
            ),
            (
                'c',
                doc('c', &['b'], "2026-11-04T09:00:00Z", "main", FILES[2]),
            ),
            (
                'a',
                doc('a', &['0'], "2026-11-01T09:00:00Z", "main", FILES[0]),
            ),
        ];
        let ids = upload_all(&server, &token, &docs).await;
        let series = ttft_series(&server).await;
        // Ancestry first: d after c although committed earlier; e (unrelated to b, c, d but a
        // child of a) placed by its time among them.
        assert_eq!(
            points(&server, &series, "main").await,
            vec![
                ('a', median_ttft(FILES[0]), json!("2026-11-01T09:00:00Z")),
                (
                    'b',
                    median_ttft(FILES[1]),
                    json!("2026-11-02T10:00:00+01:00")
                ),
                ('e', median_ttft(FILES[4]), json!("2026-11-03T12:00:00Z")),
                ('c', median_ttft(FILES[2]), json!("2026-11-04T09:00:00Z")),
                ('d', median_ttft(FILES[3]), json!("2026-11-03T09:00:00Z")),
            ],
            "{db}"
        );
        // No recomputation asked for: each upload of a commit that a stored commit names as
        // its parent (c after d, b after c, a after b and e) analyzed the project again, so
        // the commits uploaded before their ancestors follow the completed graph.
        // Baselines hold ancestors only: never e (not an ancestor of b, c, d), never a child.
        let expected = [
            ('a', vec![]),
            ('b', vec!['a']),
            ('e', vec!['a']),
            ('c', vec!['a', 'b']),
            ('d', vec!['a', 'b', 'c']),
        ];
        for (c, base) in expected {
            assert_eq!(
                baseline_commits(&server, id_of(&ids, c)).await,
                base,
                "{db}: {c}"
            );
        }
        // The series page plots the same order (its points' commits, left to right).
        let page = server
            .text(&format!("/projects/demo/series/{series}"))
            .await;
        let at = |c: char| {
            page.find(&sha(c)[..10])
                .unwrap_or_else(|| panic!("{db}: {c} on the page"))
        };
        assert!(
            at('a') < at('b') && at('b') < at('e') && at('e') < at('c') && at('c') < at('d'),
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn descendants_uploaded_before_their_ancestors_are_judged_again_when_the_graph_completes() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // 1 ← 2 ← 3 ← 4 ← 5 ← 6 on main, committer times running backwards (a rebase).
        // The changed commits 4, 5, 6 (the real candidate file, TTFT about doubled) are
        // uploaded first, then their ancestors 1, 2, 3 (three baseline files).
        let time = |h: u32| format!("2026-11-0{}T09:00:00Z", 9 - h);
        let docs = [
            ('4', doc('4', &['3'], &time(3), "main", FILES[4])),
            ('5', doc('5', &['4'], &time(4), "main", FILES[4])),
            ('6', doc('6', &['5'], &time(5), "main", FILES[4])),
            ('1', doc('1', &[], &time(0), "main", FILES[0])),
            ('2', doc('2', &['1'], &time(1), "main", FILES[1])),
            ('3', doc('3', &['2'], &time(2), "main", FILES[2])),
        ];
        let ids = upload_all(&server, &token, &docs).await;
        // 3's upload completed the graph (4 names it as its parent): every commit was judged
        // again against its ancestors only.
        for (c, base) in [
            ('1', vec![]),
            ('2', vec!['1']),
            ('3', vec!['1', '2']),
            ('4', vec!['1', '2', '3']),
        ] {
            assert_eq!(
                baseline_commits(&server, id_of(&ids, c)).await,
                base,
                "{db}: {c}"
            );
        }
        // The root 1, judged at its upload against 4, 5, 6 (unrelated then, committed
        // earlier), keeps no alert and no failing verdict; the change is 4's.
        let (_, alerts) = server.get("/api/v1/projects/demo/alerts?status=open").await;
        let at: Vec<&str> = alerts["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|a| a["commit"].as_str())
            .collect();
        assert!(!at.is_empty(), "{db}: the change at 4 opens an alert");
        assert!(at.iter().all(|c| *c == sha('4')), "{db}: {at:?}");
        let (_, v) = server
            .get(&format!("/api/v1/runs/{}/verdict", id_of(&ids, '1')))
            .await;
        assert_ne!(v["verdict"], "fail", "{db}: {v}");
        let (_, v) = server
            .get(&format!("/api/v1/runs/{}/verdict", id_of(&ids, '4')))
            .await;
        assert_eq!(v["verdict"], "fail", "{db}: {v}");
    })
    .await;
}

#[tokio::test]
async fn a_commit_with_an_earlier_committer_time_than_its_parent_still_follows_it() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // b's committer clock was 4 hours behind: committed "before" its parent a. Uploaded
        // b first, then a.
        let docs = [
            (
                'b',
                doc('b', &['a'], "2026-11-02T08:00:00+02:00", "main", FILES[1]),
            ),
            (
                'a',
                doc('a', &['0'], "2026-11-02T10:00:00Z", "main", FILES[0]),
            ),
        ];
        let ids = upload_all(&server, &token, &docs).await;
        let series = ttft_series(&server).await;
        let got: Vec<char> = points(&server, &series, "main")
            .await
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(got, ['a', 'b'], "{db}");
        // a's analysis, at its upload, did not take its own child as its baseline.
        assert_eq!(
            baseline_commits(&server, id_of(&ids, 'a')).await,
            Vec::<char>::new(),
            "{db}"
        );
        recompute(&server).await;
        assert_eq!(
            baseline_commits(&server, id_of(&ids, 'b')).await,
            ['a'],
            "{db}"
        );
        assert_eq!(
            baseline_commits(&server, id_of(&ids, 'a')).await,
            Vec::<char>::new(),
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_pull_request_baseline_holds_only_ancestors_of_its_merge_base() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // main: a ← e, a ← b ← c ← d, e committed between a and b (so before the merge base by
        // time), c and d after it. The PR commit f branches from b.
        let mut pr = doc('f', &['b'], "2026-11-05T09:00:00Z", "feature", FILES[4]);
        pr["run"]["pull_request"] = json!({"number": 7, "merge_base": sha('b')});
        let docs = [
            (
                'a',
                doc('a', &['0'], "2026-11-01T09:00:00Z", "main", FILES[0]),
            ),
            (
                'e',
                doc('e', &['a'], "2026-11-01T12:00:00Z", "main", FILES[3]),
            ),
            (
                'b',
                doc('b', &['a'], "2026-11-02T09:00:00Z", "main", FILES[1]),
            ),
            (
                'c',
                doc('c', &['b'], "2026-11-03T09:00:00Z", "main", FILES[2]),
            ),
            (
                'd',
                doc('d', &['c'], "2026-11-04T09:00:00Z", "main", FILES[3]),
            ),
            ('f', pr),
        ];
        let ids = upload_all(&server, &token, &docs).await;
        let (status, a) = server
            .get(&format!("/api/v1/runs/{}/analysis", id_of(&ids, 'f')))
            .await;
        assert_eq!(status, 200, "{a}");
        assert_eq!(
            a["analysis"]["groups"][0]["baseline_rule"],
            format!(
                "the default branch `main` up to the merge base {}",
                sha('b')
            ),
            "{db}"
        );
        assert_eq!(
            baseline_commits(&server, id_of(&ids, 'f')).await,
            ['a', 'b'],
            "{db}"
        );
        // A merge base that was never benchmarked: the PR commit's own ancestry decides (its
        // parent b, then a), not the time order.
        let mut pr2 = doc('9', &['c'], "2026-11-06T09:00:00Z", "feature2", FILES[4]);
        pr2["run"]["pull_request"] = json!({"number": 8, "merge_base": sha('8')});
        let ids2 = upload_all(&server, &token, &[('9', pr2)]).await;
        assert_eq!(
            baseline_commits(&server, id_of(&ids2, '9')).await,
            ['a', 'b', 'c'],
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn commit_time_offsets_round_trip_through_the_api_and_the_run_page() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        let docs = [
            ('a', doc('a', &[], "2026-11-02T10:00:00+01:00", "main", FILES[0])),
            ('b', doc('b', &['a'], "2026-11-02T05:30:00.250-04:30", "main", FILES[1])),
            ('c', doc('c', &['b'], "2026-11-02T12:00:00+00:00", "main", FILES[2])),
        ];
        let ids = upload_all(&server, &token, &docs).await;
        for (c, time) in [
            ('a', "2026-11-02T10:00:00+01:00"),
            ('b', "2026-11-02T05:30:00.250-04:30"),
            ('c', "2026-11-02T12:00:00Z"),
        ] {
            let (status, run) = server.get(&format!("/api/v1/runs/{}", id_of(&ids, c))).await;
            assert_eq!(status, 200, "{run}");
            assert_eq!(run["commit_time"], time, "{db}: {c}");
        }
        let (_, list) = server.get("/api/v1/projects/demo/runs").await;
        let times: Vec<&Value> = list["items"].as_array().unwrap().iter().map(|r| &r["commit_time"]).collect();
        assert_eq!(
            times,
            [&json!("2026-11-02T12:00:00Z"), &json!("2026-11-02T05:30:00.250-04:30"), &json!("2026-11-02T10:00:00+01:00")],
            "{db}: newest upload first"
        );
        let series = ttft_series(&server).await;
        let got: Vec<Value> = points(&server, &series, "main").await.into_iter().map(|p| p.2).collect();
        assert_eq!(
            got,
            [json!("2026-11-02T10:00:00+01:00"), json!("2026-11-02T05:30:00.250-04:30"), json!("2026-11-02T12:00:00Z")],
            "{db}"
        );
        let page = server.text(&format!("/runs/{}", id_of(&ids, 'b'))).await;
        assert!(
            page.contains(r#"<time id="committed-at" datetime="2026-11-02T05:30:00-04:30">2026-11-02 05:30 -04:30</time>"#),
            "{db}: {page}"
        );
        // A time without an offset is refused, naming the field.
        let mut bad = doc('7', &[], "2026-11-02T10:00:00", "main", FILES[0]);
        bad["run"]["repeat_index"] = json!(0);
        let (status, problem) = server.upload("demo", &token, &bad).await;
        assert_eq!(status, 400, "{db}: {problem}");
        assert_eq!(problem["pointer"], "/run/commit/time", "{db}: {problem}");
    })
    .await;
}

#[tokio::test]
async fn an_identical_reupload_answers_200_and_is_counted() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // Without a run id: the server derives it, so each retry finds the stored run.
        let d = doc('a', &[], "2026-11-01T09:00:00Z", "main", FILES[0]);
        let (status, first) = server.upload("demo", &token, &d).await;
        assert_eq!(status, 201, "{first}");
        let id = first["run_id"].as_str().unwrap().to_string();
        for n in 2..=3 {
            let (status, again) = server.upload("demo", &token, &d).await;
            assert_eq!(status, 200, "{db}: {again}");
            assert_eq!(again["run_id"], id.as_str(), "{db}");
            assert_eq!(again["created"], false, "{db}");
            let (_, run) = server.get(&format!("/api/v1/runs/{id}")).await;
            assert_eq!(run["upload_count"], n, "{db}");
        }
        // With a run id: the early path counts too.
        let run_id = "5d7d1c38-8e5f-4a0c-9d3a-0b7c5d0e1f20";
        let mut with_id = doc('b', &['a'], "2026-11-02T09:00:00Z", "main", FILES[1]);
        with_id["run"]["id"] = json!(run_id);
        assert_eq!(server.upload("demo", &token, &with_id).await.0, 201, "{db}");
        let (_, run) = server.get(&format!("/api/v1/runs/{run_id}")).await;
        assert_eq!(run["upload_count"], 1, "{db}");
        assert_eq!(server.upload("demo", &token, &with_id).await.0, 200, "{db}");
        let (_, run) = server.get(&format!("/api/v1/runs/{run_id}")).await;
        assert_eq!(run["upload_count"], 2, "{db}");
        // A different upload under that id is refused and counts nothing.
        let mut other = doc('b', &['a'], "2026-11-02T09:00:00Z", "main", FILES[2]);
        other["run"]["id"] = json!(run_id);
        assert_eq!(server.upload("demo", &token, &other).await.0, 409, "{db}");
        let (_, run) = server.get(&format!("/api/v1/runs/{run_id}")).await;
        assert_eq!(run["upload_count"], 2, "{db}");
        // The run page shows the count.
        let page = server.text(&format!("/runs/{id}")).await;
        assert!(
            page.contains(r#"<td id="upload-count">×3</td>"#),
            "{db}: {page}"
        );
        assert!(
            page.contains(r#"id="upload-badge""#) && page.contains(">×3</span>"),
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn another_run_of_a_commit_after_a_later_commit_brings_the_later_one_up_to_date() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("demo", json!({})).await;
        // a ← b ← c ← d on main, one run each (d the candidate); then a second run of b
        // (another CI job of the same commit that finished late), uploaded after d.
        let docs = [
            ('a', doc('a', &[], "2026-11-01T09:00:00Z", "main", FILES[0])),
            (
                'b',
                doc('b', &['a'], "2026-11-02T09:00:00Z", "main", FILES[1]),
            ),
            (
                'c',
                doc('c', &['b'], "2026-11-03T09:00:00Z", "main", FILES[2]),
            ),
            (
                'd',
                doc('d', &['c'], "2026-11-04T09:00:00Z", "main", FILES[4]),
            ),
        ];
        let ids = upload_all(&server, &token, &docs).await;
        let report_of = |run: String| {
            let server = &server;
            async move {
                let (status, a) = server.get(&format!("/api/v1/runs/{run}/analysis")).await;
                assert_eq!(status, 200, "{a}");
                a["analysis"]["groups"][0]["report"].clone()
            }
        };
        let d = id_of(&ids, 'd').to_string();
        let before = report_of(d.clone()).await;
        let mut late = doc('b', &['a'], "2026-11-02T09:00:00Z", "main", FILES[3]);
        late["run"]["repeat_index"] = json!(1);
        let (status, receipt) = server.upload("demo", &token, &late).await;
        assert_eq!(status, 201, "{receipt}");
        server.drained().await;
        // d's baseline now holds both runs of b: analyzed again after the late upload ...
        let after = report_of(d.clone()).await;
        assert_ne!(after, before, "{db}: d was not analyzed again: {before:#}");
        // ... exactly as a recomputation of the whole project analyzes it.
        recompute(&server).await;
        assert_eq!(report_of(d).await, after, "{db}");
    })
    .await;
}
