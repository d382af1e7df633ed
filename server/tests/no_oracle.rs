//! A private project, its runs and alerts answer a caller who may not read them exactly like
//! ones that do not exist, on every API route (reads and writes) and every page: the same
//! status, headers and problem, word for word but for the name asked for; so do the pages and
//! the triage form to a browser signed in with another project's token. And a run id that
//! another project holds is a 409 that says nothing of that project.

use crate::common;

use common::db::for_each_store;
use common::seed::seed;
use common::server::TestServer;
use reqwest::Response;
use serde_json::{json, Value};

/// A request: method, path, body.
type Probe = (&'static str, String, Option<Value>);

/// Every API route that names a project, a run or an alert, for project `p`, series `series`,
/// run `run` and alert `alert`.
fn api_probes(p: &str, series: &str, run: &str, alert: &str) -> Vec<Probe> {
    let upload = json!({"run": {"commit": {"sha": "f".repeat(40)}}, "files": []});
    vec![
        ("GET", format!("/api/v1/projects/{p}"), None),
        ("GET", format!("/api/v1/projects/{p}/settings"), None),
        (
            "PUT",
            format!("/api/v1/projects/{p}/settings"),
            Some(json!({"slo_profiles": []})),
        ),
        ("GET", format!("/api/v1/projects/{p}/runs"), None),
        ("POST", format!("/api/v1/projects/{p}/runs"), Some(upload)),
        ("GET", format!("/api/v1/projects/{p}/series"), None),
        ("GET", format!("/api/v1/projects/{p}/series/{series}"), None),
        (
            "GET",
            format!("/api/v1/projects/{p}/series/{series}/alerts"),
            None,
        ),
        ("GET", format!("/api/v1/projects/{p}/alerts"), None),
        ("GET", format!("/api/v1/projects/{p}/baselines"), None),
        (
            "PUT",
            format!("/api/v1/projects/{p}/baselines/{series}"),
            Some(json!({"run_id": run})),
        ),
        (
            "DELETE",
            format!("/api/v1/projects/{p}/baselines/{series}"),
            None,
        ),
        (
            "POST",
            format!("/api/v1/projects/{p}/tokens"),
            Some(json!({"scope": "read"})),
        ),
        ("GET", format!("/api/v1/runs/{run}"), None),
        ("GET", format!("/api/v1/runs/{run}/verdict"), None),
        ("GET", format!("/api/v1/runs/{run}/analysis"), None),
        ("GET", format!("/api/v1/runs/{run}/report"), None),
        ("GET", format!("/api/v1/runs/{run}/alerts"), None),
        ("GET", format!("/api/v1/runs/{run}/files/0"), None),
        (
            "POST",
            format!("/api/v1/runs/{run}/exclusion"),
            Some(json!({"reason": "probe"})),
        ),
        ("DELETE", format!("/api/v1/runs/{run}/exclusion"), None),
        ("GET", format!("/api/v1/alerts/{alert}"), None),
        (
            "PATCH",
            format!("/api/v1/alerts/{alert}"),
            Some(json!({"status": "acknowledged"})),
        ),
    ]
}

/// Every page that names a project or a run.
fn page_probes(p: &str, series: &str, run: &str) -> Vec<Probe> {
    vec![
        ("GET", format!("/projects/{p}"), None),
        ("GET", format!("/projects/{p}/alerts"), None),
        ("GET", format!("/projects/{p}/series/{series}"), None),
        ("GET", format!("/runs/{run}"), None),
        ("GET", format!("/runs/{run}/matrix"), None),
        ("GET", format!("/compare?head={run}"), None),
    ]
}

/// What a caller can observe of an answer: status, the headers that differ between kinds of
/// answer, and the body.
async fn observe(server: &TestServer, probe: &Probe, token: Option<&str>) -> (u16, String, String) {
    let (method, path, body) = probe;
    let mut request = server
        .http
        .request(method.parse().unwrap(), server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let r: Response = request.send().await.unwrap();
    let status = r.status().as_u16();
    let headers = ["content-type", "www-authenticate", "allow"]
        .iter()
        .map(|h| format!("{h}: {:?}", r.headers().get(*h)))
        .collect::<Vec<_>>()
        .join("; ");
    (status, headers, r.text().await.unwrap())
}

#[tokio::test]
async fn a_private_project_answers_like_a_missing_one_to_callers_who_may_not_read_it() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let secret = seed(&server, "secret", false).await;
        let other = server.project_with_token("other", json!({})).await;
        let other_write = server.token("other", "write").await;
        // What does not exist, named with ids of the same shape.
        let (ghost_run, ghost_alert) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        let real = [
            api_probes(
                "secret",
                &secret.series_id,
                &secret.run_id,
                &secret.alert_id,
            ),
            page_probes("secret", &secret.series_id, &secret.run_id),
        ]
        .concat();
        let missing = [
            api_probes(
                "ghost1",
                &secret.series_id,
                &ghost_run.to_string(),
                &ghost_alert.to_string(),
            ),
            page_probes("ghost1", &secret.series_id, &ghost_run.to_string()),
        ]
        .concat();
        // The missing one's answer, with the private one's names put back.
        let named_back = |text: &str| {
            text.replace("ghost1", "secret")
                .replace(&ghost_run.to_string(), &secret.run_id)
                .replace(&ghost_alert.to_string(), &secret.alert_id)
        };
        let mut not_found = 0;
        for (token, who) in [
            (None, "no token"),
            (Some(other.as_str()), "an upload token of another project"),
            (
                Some(other_write.as_str()),
                "a write token of another project",
            ),
            (Some("bt_unknown"), "an unknown token"),
        ] {
            for (real, missing) in real.iter().zip(&missing) {
                let what = format!("{db}: {} {} with {who}", real.0, real.1);
                let (status, headers, body) = observe(&server, real, token).await;
                let (m_status, m_headers, m_body) = observe(&server, missing, token).await;
                assert_eq!(status, m_status, "{what}: {body} / {m_body}");
                assert_eq!(headers, m_headers, "{what}");
                assert_eq!(body, named_back(&m_body), "{what}");
                assert!([401, 403, 404].contains(&status), "{what}: {status} {body}");
                not_found += usize::from(status == 404);
            }
        }
        // All but the unknown token's 401s and the admin-only route's 401/403 are 404s.
        assert!(not_found >= 3 * (real.len() - 1), "{db}: {not_found}");

        // The project's own read token still reads, and learns that it may not write.
        let (status, _, body) = observe(&server, &real[0], Some(&secret.read)).await;
        assert_eq!(status, 200, "{db}: {body}");
        let (status, _, body) = observe(&server, &real[2], Some(&secret.read)).await;
        assert_eq!(status, 403, "{db}: {body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap()["detail"],
            "this token's scope does not allow this; it needs `write`"
        );
    })
    .await;
}

#[tokio::test]
async fn a_run_id_another_project_holds_is_a_409_that_names_nothing_of_it() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let secret = seed(&server, "secret", false).await;
        let other = server.project_with_token("other", json!({})).await;
        let (_, run) = {
            let r = server
                .http
                .get(server.url(&format!("/api/v1/runs/{}", secret.run_id)))
                .bearer_auth(&secret.read)
                .send()
                .await
                .unwrap();
            (r.status(), r.json::<Value>().await.unwrap())
        };
        // The very upload, under the other project: the id is taken, by whom is not said.
        let mut doc = common::goodput::vllm_doc(3, common::goodput::GOODPUT_HISTORY[3]);
        doc["run"]["id"] = json!(secret.run_id);
        assert_eq!(run["commit_sha"], doc["run"]["commit"]["sha"], "{db}");
        let (status, problem) = server.upload("other", &other, &doc).await;
        assert_eq!(status, 409, "{db}: {problem}");
        assert_eq!(
            problem["detail"],
            format!(
                "run id {} is taken; upload with a new run id, or with none (the server picks one)",
                secret.run_id
            ),
            "{db}"
        );
        let text = problem.to_string();
        for leak in ["secret", "another project", "belongs"] {
            assert!(!text.contains(leak), "{db}: {text}");
        }
        // Nothing was stored under the other project.
        let (_, runs) = server.get("/api/v1/projects/other/runs").await;
        assert_eq!(runs["items"], json!([]), "{db}");
    })
    .await;
}

#[tokio::test]
async fn signed_in_visitors_who_may_not_read_a_private_project_get_the_missing_ones_pages() {
    use common::session::{client, sign_in};
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let secret = seed(&server, "secret", false).await;
        let other = seed(&server, "other", true).await;
        let (ghost_run, ghost_alert) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        let named_back = |text: &str| {
            text.replace("ghost1", "secret")
                .replace(&ghost_run.to_string(), &secret.run_id)
                .replace(&ghost_alert.to_string(), &secret.alert_id)
        };
        let alert_now = || async {
            let r = server
                .http
                .get(server.url(&format!("/api/v1/alerts/{}", secret.alert_id)))
                .bearer_auth(&secret.read)
                .send()
                .await
                .unwrap();
            r.json::<Value>().await.unwrap()
        };
        let before = alert_now().await;
        let real = page_probes("secret", &secret.series_id, &secret.run_id);
        let missing = page_probes("ghost1", &secret.series_id, &ghost_run.to_string());
        let mut checked = 0;
        for token in [&other.read, &other.write] {
            let session = sign_in(&server, token).await;
            let csrf = session.csrf(&server).await;
            for (real, missing) in real.iter().zip(&missing) {
                let (status, body) = session.get(&server, &real.1).await;
                let (m_status, m_body) = session.get(&server, &missing.1).await;
                assert_eq!(
                    (status, body),
                    (m_status, named_back(&m_body)),
                    "{db}: {}",
                    real.1
                );
                assert_eq!(status, 404, "{db}: {}", real.1);
                checked += 1;
            }
            // Triage: with the session's own CSRF token, the 404 of a missing alert; without
            // one, the same 403 wherever it points.
            for fields in [
                vec![("csrf", csrf.as_str()), ("status", "acknowledged")],
                vec![("status", "acknowledged")],
            ] {
                let mut answers = Vec::new();
                for alert in [secret.alert_id.clone(), ghost_alert.to_string()] {
                    let r = session
                        .post(&server, &format!("/alerts/{alert}/triage"), &fields)
                        .await;
                    let status = r.status().as_u16();
                    answers.push((status, named_back(&r.text().await.unwrap())));
                }
                assert_eq!(answers[0], answers[1], "{db}: {fields:?}");
                let expected = if fields.len() == 2 { 404 } else { 403 };
                assert_eq!(answers[0].0, expected, "{db}: {fields:?}");
                checked += 1;
            }
        }
        // Anonymous triage posts: one 403 for a real, private alert and a missing one.
        let mut answers = Vec::new();
        for alert in [secret.alert_id.clone(), ghost_alert.to_string()] {
            let r = client()
                .post(server.url(&format!("/alerts/{alert}/triage")))
                .form(&[("status", "acknowledged")])
                .send()
                .await
                .unwrap();
            answers.push((r.status().as_u16(), named_back(&r.text().await.unwrap())));
        }
        assert_eq!(answers[0], answers[1], "{db}");
        assert_eq!(answers[0].0, 403, "{db}");
        assert_eq!(checked, 2 * (real.len() + 2), "{db}");
        // Nothing was triaged.
        assert_eq!(alert_now().await, before, "{db}");
    })
    .await;
}
