//! Project tokens through the HTTP API, on both stores: listed without secrets, revoked at
//! once, expired like unknown ones, their last use recorded; and the admin-only rule (401/403
//! before the project is looked up, so these routes are no existence oracle).

use crate::common;

use chrono::{DateTime, TimeDelta, Utc};
use common::db::for_each_store;
use common::server::{TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// `GET/DELETE/POST` with an optional bearer token: status and body text.
async fn call(
    server: &TestServer,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, String) {
    let mut request = server
        .http
        .request(method.parse().unwrap(), server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let r = request.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// Creates a token of `slug` with `body` (admin): the 201 answer.
async fn create(server: &TestServer, slug: &str, body: Value) -> Value {
    let (status, text) = call(
        server,
        "POST",
        &format!("/api/v1/projects/{slug}/tokens"),
        Some(ADMIN_TOKEN),
        Some(body),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// The listing of `slug`'s tokens (admin): its items.
async fn list(server: &TestServer, slug: &str) -> Vec<Value> {
    let (status, text) = call(
        server,
        "GET",
        &format!("/api/v1/projects/{slug}/tokens"),
        Some(ADMIN_TOKEN),
        None,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let page: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(page["next_cursor"], Value::Null);
    page["items"].as_array().unwrap().clone()
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str().unwrap().parse().unwrap()
}

/// What a private project's read answers `token`: status and body.
async fn read_private(server: &TestServer, token: &str) -> (u16, String) {
    call(server, "GET", "/api/v1/projects/priv", Some(token), None).await
}

/// The answer to a token that was never issued.
async fn unknown_answer(server: &TestServer) -> (u16, String) {
    read_private(server, &format!("bt_{}", "0".repeat(64))).await
}

#[tokio::test]
async fn the_listing_shows_every_token_without_its_secret() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server
            .project_with_token("priv", json!({"public": false}))
            .await;
        let before = Utc::now();
        let read = create(&server, "priv", json!({"scope": "read", "label": "nightly CI"})).await;
        let write = create(&server, "priv", json!({"scope": "write", "expires_in_days": 30})).await;
        let secret = read["token"].as_str().unwrap();
        assert_eq!(secret.len(), 67, "{db}");
        assert_eq!(read["prefix"], secret[..11], "{db}");
        assert_eq!(read["project"], "priv", "{db}");
        assert_eq!(read["label"], "nightly CI", "{db}");
        assert_eq!(read["expires_at"], Value::Null, "{db}");
        assert_eq!(
            time(&write["expires_at"]) - time(&write["created_at"]),
            TimeDelta::days(30),
            "{db}"
        );

        let items = list(&server, "priv").await;
        // The upload token project_with_token made, then the two above, oldest first.
        assert_eq!(items.len(), 3, "{db}: {items:?}");
        let keys: BTreeSet<&str> = items[1].as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            BTreeSet::from(["created_at", "expires_at", "id", "label", "last_used_at", "prefix", "scope"]),
            "{db}"
        );
        assert_eq!(
            items.iter().map(|t| t["scope"].as_str().unwrap()).collect::<Vec<_>>(),
            ["upload", "read", "write"],
            "{db}"
        );
        assert_eq!(
            items[1],
            json!({"id": read["id"], "scope": "read", "prefix": read["prefix"], "label": "nightly CI",
                   "created_at": read["created_at"], "expires_at": null, "last_used_at": null}),
            "{db}"
        );
        assert_eq!(
            items[2],
            json!({"id": write["id"], "scope": "write", "prefix": write["prefix"], "label": null,
                   "created_at": write["created_at"], "expires_at": write["expires_at"], "last_used_at": null}),
            "{db}"
        );
        assert!(time(&items[1]["created_at"]) >= before - TimeDelta::seconds(1), "{db}");
        let listing = serde_json::to_string(&items).unwrap();
        for t in [&read, &write] {
            let secret = t["token"].as_str().unwrap();
            assert!(!listing.contains(&secret[11..]), "{db}: a secret is listed");
            let hash = benchtrail_server::auth::hash_token(secret);
            assert!(!listing.contains(&hash), "{db}: a hash is listed");
        }
    })
    .await;
}

#[tokio::test]
async fn only_the_admin_lists_and_revokes_and_no_one_else_learns_whether_a_project_exists() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let own = server
            .project_with_token("priv", json!({"public": false}))
            .await;
        let write = server.token("priv", "write").await;
        let id = list(&server, "priv").await[0]["id"].clone();
        for (token, status) in [
            (None, 401),
            (Some(own.as_str()), 403),
            (Some(write.as_str()), 403),
        ] {
            for (method, suffix) in [("GET", String::new()), ("DELETE", format!("/{id}"))] {
                let real = call(
                    &server,
                    method,
                    &format!("/api/v1/projects/priv/tokens{suffix}"),
                    token,
                    None,
                )
                .await;
                let missing = call(
                    &server,
                    method,
                    &format!("/api/v1/projects/ghost/tokens{suffix}"),
                    token,
                    None,
                )
                .await;
                assert_eq!(real.0, status, "{db}: {method} with {token:?}: {}", real.1);
                assert_eq!(real, missing, "{db}: {method} with {token:?}");
            }
        }
        assert_eq!(
            list(&server, "priv").await.len(),
            2,
            "{db}: nothing was revoked"
        );
        let (status, text) = call(
            &server,
            "GET",
            "/api/v1/projects/ghost/tokens",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
        assert_eq!(
            (status, text.contains("no project `ghost`")),
            (404, true),
            "{db}: {text}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_revoked_token_is_refused_at_once_and_the_others_keep_working() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server
            .project_with_token("priv", json!({"public": false}))
            .await;
        let other_project = server.project_with_token("other", json!({})).await;
        let doomed = create(&server, "priv", json!({"scope": "read"})).await;
        let kept = create(&server, "priv", json!({"scope": "read"})).await;
        let doomed_token = doomed["token"].as_str().unwrap();
        let kept_token = kept["token"].as_str().unwrap();
        assert_eq!(read_private(&server, doomed_token).await.0, 200, "{db}");

        let path = format!("/api/v1/projects/priv/tokens/{}", doomed["id"]);
        let (status, body) = call(&server, "DELETE", &path, Some(ADMIN_TOKEN), None).await;
        assert_eq!((status, body.as_str()), (204, ""), "{db}");
        // Refused from the next request on, exactly like a token never issued.
        let refused = read_private(&server, doomed_token).await;
        assert_eq!(refused.0, 401, "{db}: {}", refused.1);
        assert_eq!(refused, unknown_answer(&server).await, "{db}");
        assert_eq!(read_private(&server, kept_token).await.0, 200, "{db}");
        let ids: Vec<Value> = list(&server, "priv")
            .await
            .iter()
            .map(|t| t["id"].clone())
            .collect();
        assert!(
            !ids.contains(&doomed["id"]) && ids.contains(&kept["id"]),
            "{db}: {ids:?}"
        );

        // Gone: a second revocation, a token of another project, an id that is no number.
        let (status, text) = call(&server, "DELETE", &path, Some(ADMIN_TOKEN), None).await;
        assert_eq!(status, 404, "{db}: {text}");
        let problem: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            problem["detail"],
            format!("no token `{}` in project `priv`", doomed["id"]),
            "{db}"
        );
        let other_id = list(&server, "other").await[0]["id"].clone();
        let (status, _) = call(
            &server,
            "DELETE",
            &format!("/api/v1/projects/priv/tokens/{other_id}"),
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
        assert_eq!(
            status, 404,
            "{db}: another project's token is not this one's"
        );
        let (status, _) = call(
            &server,
            "GET",
            "/api/v1/projects/other",
            Some(&other_project),
            None,
        )
        .await;
        assert_eq!(status, 200, "{db}: and it still works");
        let (status, text) = call(
            &server,
            "DELETE",
            "/api/v1/projects/priv/tokens/x1",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
        assert_eq!(status, 404, "{db}: {text}");

        // Ids are never reused: revoking the newest token and creating another gives a new
        // id, so a repeated revocation cannot hit a stranger.
        let newest = create(&server, "priv", json!({})).await;
        let path = format!("/api/v1/projects/priv/tokens/{}", newest["id"]);
        assert_eq!(
            call(&server, "DELETE", &path, Some(ADMIN_TOKEN), None)
                .await
                .0,
            204,
            "{db}"
        );
        let next = create(&server, "priv", json!({})).await;
        assert_ne!(next["id"], newest["id"], "{db}");
        assert_eq!(
            call(&server, "DELETE", &path, Some(ADMIN_TOKEN), None)
                .await
                .0,
            404,
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn an_expired_token_is_refused_like_an_unknown_one() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server
            .project_with_token("priv", json!({"public": false}))
            .await;
        let expires_at = Utc::now() + TimeDelta::milliseconds(1500);
        let short = create(
            &server,
            "priv",
            json!({"scope": "read", "expires_at": expires_at.to_rfc3339()}),
        )
        .await;
        assert_eq!(
            time(&short["expires_at"]),
            expires_at.trunc_subsecs_6(),
            "{db}"
        );
        let token = short["token"].as_str().unwrap();
        assert_eq!(read_private(&server, token).await.0, 200, "{db}");
        let wait = (expires_at - Utc::now()).to_std().unwrap_or_default();
        tokio::time::sleep(wait + std::time::Duration::from_millis(100)).await;
        let refused = read_private(&server, token).await;
        assert_eq!(refused.0, 401, "{db}: {}", refused.1);
        assert_eq!(refused, unknown_answer(&server).await, "{db}");
        // Still listed (so it can be seen and revoked), with its expiry.
        let items = list(&server, "priv").await;
        assert_eq!(items[1]["expires_at"], short["expires_at"], "{db}");
    })
    .await;
}

#[tokio::test]
async fn bad_token_requests_are_422_problems_naming_the_field() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server.project_with_token("p", json!({})).await;
        let past = (Utc::now() - TimeDelta::hours(1)).to_rfc3339();
        for (body, pointer) in [
            (json!({"expires_at": past}), "/expires_at"),
            (json!({"expires_at": "next week"}), "/expires_at"),
            (json!({"expires_in_days": 0}), "/expires_in_days"),
            (json!({"expires_in_days": 3651}), "/expires_in_days"),
            (
                json!({"expires_in_days": 1, "expires_at": "2099-01-01T00:00:00Z"}),
                "/expires_in_days",
            ),
            (json!({"label": "a\nb"}), "/label"),
            (json!({"label": "x".repeat(101)}), "/label"),
            (json!({"scope": "admin"}), "/scope"),
        ] {
            let (status, text) = call(
                &server,
                "POST",
                "/api/v1/projects/p/tokens",
                Some(ADMIN_TOKEN),
                Some(body.clone()),
            )
            .await;
            assert_eq!(status, 422, "{db}: {body}: {text}");
            let problem: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(problem["pointer"], pointer, "{db}: {body}: {text}");
        }
        assert_eq!(
            list(&server, "p").await.len(),
            1,
            "{db}: nothing was created"
        );
        let ok = create(
            &server,
            "p",
            json!({"expires_in_days": 3650, "label": "x".repeat(100)}),
        )
        .await;
        assert_eq!(ok["label"].as_str().unwrap().len(), 100, "{db}");
    })
    .await;
}

/// JSON Schema counts `224.0` as an integer, so `expires_in_days` takes it (issue 13): the
/// token expires 224 days after it was created. A fraction is still the 400 at the field that
/// any wrong type gets, and a whole float out of range the same 422 as the integer.
#[tokio::test]
async fn expires_in_days_takes_a_whole_float() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server.project_with_token("p", json!({})).await;
        let token = create(&server, "p", json!({"expires_in_days": 224.0})).await;
        assert_eq!(
            time(&token["expires_at"]) - time(&token["created_at"]),
            TimeDelta::days(224),
            "{db}: {token}"
        );
        let listed = list(&server, "p").await;
        assert_eq!(listed[1]["expires_at"], token["expires_at"], "{db}");

        for (body, status, detail) in [
            (
                json!({"expires_in_days": 224.5}),
                400,
                // serde_json's detail with the value's position, as for any wrong type.
                "invalid type: floating point `224.5`, expected i64 at line 1 column 24",
            ),
            (
                json!({"expires_in_days": 3651.0}),
                422,
                "3651 is not between 1 and 3650 days",
            ),
        ] {
            let (got, text) = call(
                &server,
                "POST",
                "/api/v1/projects/p/tokens",
                Some(ADMIN_TOKEN),
                Some(body.clone()),
            )
            .await;
            assert_eq!(got, status, "{db}: {body}: {text}");
            let problem: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                (&problem["pointer"], &problem["detail"]),
                (&json!("/expires_in_days"), &json!(detail)),
                "{db}: {body}: {text}"
            );
        }
        assert_eq!(
            list(&server, "p").await.len(),
            2,
            "{db}: nothing more was created"
        );
    })
    .await;
}

#[tokio::test]
async fn last_used_at_is_recorded_on_use_at_most_once_a_minute() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server
            .project_with_token("priv", json!({"public": false}))
            .await;
        let t = create(&server, "priv", json!({"scope": "read"})).await;
        let token = t["token"].as_str().unwrap();
        assert_eq!(
            list(&server, "priv").await[1]["last_used_at"],
            Value::Null,
            "{db}"
        );
        let before = Utc::now() - TimeDelta::milliseconds(1);
        assert_eq!(read_private(&server, token).await.0, 200, "{db}");
        let after = Utc::now();
        // Written in the background: the request does not wait for it.
        let mut used = Value::Null;
        for _ in 0..100 {
            used = list(&server, "priv").await[1]["last_used_at"].clone();
            if !used.is_null() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(!used.is_null(), "{db}: last_used_at was never set");
        assert!(
            before <= time(&used) && time(&used) <= after,
            "{db}: {used}"
        );
        // Another use within the minute writes nothing.
        assert_eq!(read_private(&server, token).await.0, 200, "{db}");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let items = list(&server, "priv").await;
        assert_eq!(items[1]["last_used_at"], used, "{db}");
        assert_eq!(
            items[0]["last_used_at"],
            Value::Null,
            "{db}: an unused token"
        );
    })
    .await;
}

/// `DateTime` truncated to the microseconds storage keeps.
trait Micros {
    fn trunc_subsecs_6(self) -> Self;
}

impl Micros for DateTime<Utc> {
    fn trunc_subsecs_6(self) -> Self {
        chrono::SubsecRound::trunc_subsecs(self, 6)
    }
}
