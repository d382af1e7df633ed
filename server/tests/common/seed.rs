//! A project with something of every kind a write route touches: runs, a series and an open
//! alert (the real goodput history, uploaded through the API so the analysis runs).

use super::goodput::{vllm_doc, GOODPUT_HISTORY};
use super::server::{TestServer, ADMIN_TOKEN};
use serde_json::json;

/// What [`seed`] made.
pub struct Seeded {
    /// The project's slug.
    pub slug: String,
    /// Tokens of the project by scope.
    pub read: String,
    /// An `upload` token.
    pub upload: String,
    /// A `write` token.
    pub write: String,
    /// The candidate run (the last upload).
    pub run_id: String,
    /// A series of the project.
    pub series_id: String,
    /// An alert of the project.
    pub alert_id: String,
}

/// Creates project `slug` (`public` or not) whose SLO profile matches the history's
/// `--goodput` flags, and uploads the history; the candidate raises a trade-off alert.
pub async fn seed(server: &TestServer, slug: &str, public: bool) -> Seeded {
    let upload = server
        .project_with_token(slug, json!({"public": public}))
        .await;
    let (read, write) = (
        server.token(slug, "read").await,
        server.token(slug, "write").await,
    );
    let (status, body) = server
        .send(
            "PUT",
            &format!("/api/v1/projects/{slug}/settings"),
            ADMIN_TOKEN,
            &json!({"slo_profiles": [{"name": "file", "ttft_ms": 60, "tpot_ms": 12, "e2el_ms": 1800}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut run_id = String::new();
    for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
        let (status, receipt) = server.upload(slug, &upload, &vllm_doc(i, path)).await;
        assert_eq!(status, 201, "{path}: {receipt}");
        run_id = receipt["run_id"].as_str().unwrap().to_string();
    }
    let get = |path: String| {
        let (server, write) = (&server, &write);
        async move {
            let r = server
                .http
                .get(server.url(&path))
                .bearer_auth(write)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "{path}");
            r.json::<serde_json::Value>().await.unwrap()
        }
    };
    let series = get(format!("/api/v1/projects/{slug}/series?limit=1")).await;
    let alerts = get(format!("/api/v1/projects/{slug}/alerts?limit=1")).await;
    Seeded {
        slug: slug.to_string(),
        read,
        upload,
        write,
        run_id,
        series_id: series["items"][0]["series_id"].as_str().unwrap().into(),
        alert_id: alerts["items"][0]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no alert in {alerts}"))
            .into(),
    }
}
