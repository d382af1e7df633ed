//! Signing in from the browser, on both stores: the session cookie's exact flags, CSRF
//! refusals that change nothing, a private project's pages (404 signed out, 200 signed in),
//! triage from the alerts and run pages (write scope only, recorded with who and when, shared
//! with the API), sign-out, revocation and expiry ending a session.

use crate::common;

use benchtrail_server::pages::session::SessionSettings;
use common::db::for_each_store;
use common::seed::{seed, Seeded};
use common::server::{TestServer, ADMIN_TOKEN};
use common::session::{
    client, input_value, post_sign_in, set_cookies, sign_in, sign_in_form, Session,
};
use common::web::{escaped, tags};
use serde_json::{json, Value};

/// A 64-hex-digit secret.
fn is_secret(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The value of cookie `name` in a `Set-Cookie` header.
fn cookie_value<'a>(set_cookie: &'a str, name: &str) -> &'a str {
    set_cookie
        .strip_prefix(&format!("{name}="))
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("{set_cookie} sets no {name}"))
}

/// A new token of `slug` with `scope` and `label` (admin API); returns (secret, id).
async fn labelled_token(
    server: &TestServer,
    slug: &str,
    scope: &str,
    label: &str,
) -> (String, i64) {
    let (status, body) = server
        .send(
            "POST",
            &format!("/api/v1/projects/{slug}/tokens"),
            ADMIN_TOKEN,
            &json!({"scope": scope, "label": label}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    (
        body["token"].as_str().unwrap().to_string(),
        body["id"].as_i64().unwrap(),
    )
}

/// Alert `id` as the API shows it (admin token).
async fn api_alert(server: &TestServer, id: &str) -> Value {
    let r = server
        .http
        .get(server.url(&format!("/api/v1/alerts/{id}")))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

/// An open alert of project `slug` (the seed's trade-off; its improvements are born resolved).
async fn open_alert(server: &TestServer, slug: &str) -> String {
    let r = server
        .http
        .get(server.url(&format!(
            "/api/v1/projects/{slug}/alerts?status=open&limit=1"
        )))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    let page: Value = r.json().await.unwrap();
    page["items"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no open alert: {page}"))
        .to_string()
}

/// Every page of the seeded private project: project, alerts, series, run, its comparison with
/// its baseline, configuration.
async fn private_pages(server: &TestServer, s: &Seeded) -> Vec<String> {
    let r = server
        .http
        .get(server.url(&format!("/api/v1/runs/{}", s.run_id)))
        .bearer_auth(&s.read)
        .send()
        .await
        .unwrap();
    let run: Value = r.json().await.unwrap();
    let fingerprint = run["results"][0]["config_fingerprint"]
        .as_str()
        .unwrap_or_else(|| panic!("no fingerprint in {run}"))
        .to_string();
    vec![
        format!("/projects/{}", s.slug),
        format!("/projects/{}/alerts", s.slug),
        format!("/projects/{}/series/{}", s.slug, s.series_id),
        format!("/runs/{}", s.run_id),
        format!("/runs/{}/matrix", s.run_id),
        format!("/compare?head={}", s.run_id),
        format!("/configs/{fingerprint}"),
    ]
}

#[tokio::test]
async fn signing_in_sets_a_strict_http_only_cookie_and_signing_out_ends_the_session() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        seed(&server, "secret", false).await;
        let (read, _) = labelled_token(&server, "secret", "read", "dashboard").await;

        // The form's double-submit cookie, sent to /sign-in only.
        let (form_cookie, csrf) = sign_in_form(&server).await;
        assert!(is_secret(&csrf), "{db}: {csrf}");
        assert_eq!(
            form_cookie,
            format!(
                "benchtrail_sign_in={csrf}; HttpOnly; SameSite=Strict; Path=/sign-in; Max-Age=3600"
            ),
            "{db}"
        );
        let pair = format!("benchtrail_sign_in={csrf}");
        let r = post_sign_in(
            &server,
            Some(&pair),
            &[
                ("csrf", &csrf),
                ("token", &read),
                ("next", "/projects/secret"),
            ],
        )
        .await;
        assert_eq!(r.status(), 303, "{db}");
        assert_eq!(r.headers()["location"], "/projects/secret", "{db}");
        let cookies = set_cookies(&r);
        assert_eq!(cookies.len(), 2, "{db}: {cookies:?}");
        let id = cookie_value(&cookies[0], "benchtrail_session");
        assert!(is_secret(id), "{db}: {id}");
        assert_eq!(
            cookies[0],
            format!("benchtrail_session={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200"),
            "{db}"
        );
        assert_eq!(
            cookies[1], "benchtrail_sign_in=; HttpOnly; SameSite=Strict; Path=/sign-in; Max-Age=0",
            "{db}"
        );
        let session = Session {
            cookie: format!("benchtrail_session={id}"),
            set_cookie: cookies[0].clone(),
        };
        // Only a hash of the id is stored: the id itself names no session in the table.
        assert_eq!(
            server.store.session(id, "").await.unwrap(),
            None,
            "{db}: the raw id must not be a key"
        );
        let stored = server
            .store
            .session(&benchtrail_server::auth::hash_token(id), "")
            .await
            .unwrap()
            .expect("the session is stored under its hash");
        assert_eq!(stored.actor, "dashboard", "{db}");

        let (status, html) = session.get(&server, "/projects/secret").await;
        assert_eq!(status, 200, "{db}");
        assert!(
            html.contains("Signed in as <strong id=\"signed-in-as\">dashboard</strong>"),
            "{db}"
        );
        assert!(!html.contains("id=\"sign-in-link\""), "{db}");

        // Sign-out without the session's CSRF token, or with another one: 403, still signed in.
        let page_csrf = session.csrf(&server).await;
        for fields in [
            vec![],
            vec![("csrf", "0".repeat(64))],
            vec![("csrf", csrf.clone())],
        ] {
            let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let r = session.post(&server, "/sign-out", &fields).await;
            assert_eq!(r.status(), 403, "{db}: {fields:?}");
            assert!(set_cookies(&r).is_empty(), "{db}");
            let body = r.text().await.unwrap();
            assert!(body.contains("Nothing was changed."), "{db}: {body}");
            assert_eq!(
                session.get(&server, "/projects/secret").await.0,
                200,
                "{db}"
            );
        }
        let r = session
            .post(&server, "/sign-out", &[("csrf", &page_csrf)])
            .await;
        assert_eq!(r.status(), 303, "{db}");
        assert_eq!(r.headers()["location"], "/", "{db}");
        assert_eq!(
            set_cookies(&r),
            vec!["benchtrail_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0".to_string()],
            "{db}"
        );
        // The old cookie names no session any more.
        let (status, html) = session.get(&server, "/projects/secret").await;
        assert_eq!(status, 404, "{db}");
        assert!(html.contains("id=\"sign-in-link\""), "{db}");
    })
    .await;
}

#[tokio::test]
async fn cookies_are_secure_when_the_server_is_told_it_is_reached_over_https() {
    for_each_store(|db, store| async move {
        let server = TestServer::start_with_sessions(
            store,
            SessionSettings {
                secure_cookies: true,
                ..SessionSettings::default()
            },
        )
        .await;
        let (form_cookie, csrf) = sign_in_form(&server).await;
        assert_eq!(
            form_cookie,
            format!("benchtrail_sign_in={csrf}; HttpOnly; SameSite=Strict; Path=/sign-in; Max-Age=3600; Secure"),
            "{db}"
        );
        let session = sign_in(&server, ADMIN_TOKEN).await;
        let id = cookie_value(&session.set_cookie, "benchtrail_session");
        // An admin session lasts while the admin token is the one it was made with.
        let hash = benchtrail_server::auth::hash_token(id);
        let admin = benchtrail_server::auth::hash_token(ADMIN_TOKEN);
        assert!(server.store.session(&hash, &admin).await.unwrap().is_some(), "{db}");
        let replaced = benchtrail_server::auth::hash_token("bt_a_new_admin_token");
        assert_eq!(server.store.session(&hash, &replaced).await.unwrap(), None, "{db}");
        assert_eq!(
            session.set_cookie,
            format!("benchtrail_session={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200; Secure"),
            "{db}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_sign_in_without_its_form_token_or_with_an_unknown_token_makes_no_session() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        seed(&server, "secret", false).await;
        let (_, csrf) = sign_in_form(&server).await;
        let pair = format!("benchtrail_sign_in={csrf}");
        let other = "f".repeat(64);
        let other_pair = format!("benchtrail_sign_in={other}");
        // No cookie, a cookie of another form, no field: refused before the token is read.
        for (cookie, fields) in [
            (None, vec![("csrf", csrf.as_str()), ("token", ADMIN_TOKEN)]),
            (
                Some(other_pair.as_str()),
                vec![("csrf", csrf.as_str()), ("token", ADMIN_TOKEN)],
            ),
            (Some(pair.as_str()), vec![("token", ADMIN_TOKEN)]),
        ] {
            let r = post_sign_in(&server, cookie, &fields).await;
            assert_eq!(r.status(), 403, "{db}: {cookie:?} {fields:?}");
            assert!(set_cookies(&r).is_empty(), "{db}");
            let html = r.text().await.unwrap();
            assert!(html.contains("data-status=\"403\""), "{db}: {html}");
        }
        // An unknown token: the form again, 401, saying why; no session cookie.
        let r = post_sign_in(
            &server,
            Some(&pair),
            &[("csrf", &csrf), ("token", "bt_not_a_token")],
        )
        .await;
        assert_eq!(r.status(), 401, "{db}");
        let cookies = set_cookies(&r);
        assert_eq!(cookies.len(), 1, "{db}: {cookies:?}");
        assert!(cookies[0].starts_with("benchtrail_sign_in="), "{db}");
        let html = r.text().await.unwrap();
        assert!(
            html.contains("<p class=\"warning\" id=\"sign-in-error\">That token is not known: it may be mistyped, expired or revoked. Paste a project token or the admin token.</p>"),
            "{db}: {html}"
        );
    })
    .await;
}

#[tokio::test]
async fn failed_sign_ins_are_throttled_like_failed_bearer_tokens() {
    use benchtrail_server::auth::throttle::ThrottleLimits;
    for_each_store(|db, store| async move {
        let server = TestServer::start_with_throttle(
            store,
            ThrottleLimits {
                failures_per_minute: 2,
                ..ThrottleLimits::default()
            },
        )
        .await;
        let (_, csrf) = sign_in_form(&server).await;
        let pair = format!("benchtrail_sign_in={csrf}");
        for _ in 0..2 {
            let r = post_sign_in(&server, Some(&pair), &[("csrf", &csrf), ("token", "bt_guess")])
                .await;
            assert_eq!(r.status(), 401, "{db}");
        }
        // Even the right token is refused, unchecked, while the address is throttled.
        let r = post_sign_in(&server, Some(&pair), &[("csrf", &csrf), ("token", ADMIN_TOKEN)])
            .await;
        assert_eq!(r.status(), 429, "{db}");
        let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=30).contains(&wait), "{db}: {wait}");
        assert!(set_cookies(&r).is_empty(), "{db}");
        let html = r.text().await.unwrap();
        assert!(
            html.contains(&format!("<p id=\"error-message\" data-status=\"429\">Too many unknown tokens were tried from this address; try again in {wait} s.</p>")),
            "{db}: {html}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_private_project_is_404_signed_out_and_visible_signed_in() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let s = seed(&server, "secret", false).await;
        let other = server.project_with_token("other", json!({})).await;
        let pages = private_pages(&server, &s).await;
        let r = client()
            .get(server.url("/projects/ghost1"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{db}");
        let missing = r.text().await.unwrap();
        let anonymous = Session {
            cookie: "benchtrail_session=".into(),
            set_cookie: String::new(),
        };
        let forged = Session {
            cookie: format!("benchtrail_session={}", "a".repeat(64)),
            set_cookie: String::new(),
        };
        let other_session = sign_in(&server, &other).await;
        for who in [&anonymous, &forged, &other_session] {
            for path in &pages {
                let (status, html) = who.get(&server, path).await;
                assert_eq!(status, 404, "{db}: {path} as {}", who.cookie);
                if path == "/projects/secret" && who.cookie != other_session.cookie {
                    // Word for word the page of a project that does not exist.
                    assert_eq!(html, missing.replace("ghost1", "secret"), "{db}");
                }
            }
        }
        // The index lists the private project to its readers only.
        let (_, index) = other_session.get(&server, "/").await;
        assert!(!index.contains("data-project=\"secret\""), "{db}");
        for token in [s.read.as_str(), ADMIN_TOKEN] {
            let session = sign_in(&server, token).await;
            for path in &pages {
                let (status, html) = session.get(&server, path).await;
                assert_eq!(status, 200, "{db}: {path}: {html}");
                assert!(html.contains("id=\"signed-in-as\""), "{db}: {path}");
            }
            let (_, index) = session.get(&server, "/").await;
            assert!(index.contains("data-project=\"secret\""), "{db}");
        }
    })
    .await;
}

#[tokio::test]
async fn triage_from_the_pages_needs_the_csrf_token_and_write_scope_and_records_who_and_when() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let s = seed(&server, "secret", false).await;
        let (write, _) = labelled_token(&server, "secret", "write", "ci-bot").await;
        let alert = open_alert(&server, "secret").await;
        let path = format!("/alerts/{alert}/triage");
        let before = api_alert(&server, &alert).await;
        assert_eq!(before["status"], "open", "{db}");
        assert_eq!(before.get("triaged_by"), None, "{db}");

        // A read session sees the alert without forms, and its POST is refused.
        let reader = sign_in(&server, &s.read).await;
        let (_, html) = reader.get(&server, "/projects/secret/alerts").await;
        assert!(html.contains(&format!("id=\"alert-{alert}\"")), "{db}");
        assert!(!html.contains("class=\"triage-forms\""), "{db}");
        let reader_csrf = reader.csrf(&server).await;
        let r = reader
            .post(
                &server,
                &path,
                &[("csrf", &reader_csrf), ("status", "acknowledged"), ("return_to", "alerts")],
            )
            .await;
        assert_eq!(r.status(), 403, "{db}");
        let body = r.text().await.unwrap();
        assert!(
            body.contains("but not triage its alerts: that needs a token with the `write` scope"),
            "{db}: {body}"
        );
        assert_eq!(api_alert(&server, &alert).await, before, "{db}");

        // A write session: forms on each card; without the CSRF token, 403 and nothing changed.
        let writer = sign_in(&server, &write).await;
        let (_, html) = writer.get(&server, "/projects/secret/alerts").await;
        let forms = tags(&html, "<form class=\"triage ");
        assert_eq!(
            forms
                .iter()
                .filter(|f| f["action"] == path)
                .map(|f| f["class"].clone())
                .collect::<Vec<_>>(),
            ["triage triage-acknowledge", "triage triage-dismiss"],
            "{db}"
        );
        let csrf = input_value(&html, "csrf").unwrap();
        for fields in [
            vec![("status", "dismissed"), ("reason", "expected")],
            vec![("csrf", reader_csrf.as_str()), ("status", "dismissed"), ("reason", "expected")],
            vec![("csrf", ""), ("status", "dismissed"), ("reason", "expected")],
        ] {
            let r = writer.post(&server, &path, &fields).await;
            assert_eq!(r.status(), 403, "{db}: {fields:?}");
            assert_eq!(api_alert(&server, &alert).await, before, "{db}");
        }
        // No cookie at all, with the right token in the form: 403 as well.
        let r = client()
            .post(server.url(&path))
            .form(&[("csrf", csrf.as_str()), ("status", "dismissed"), ("reason", "x")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{db}");
        // A dismissal without a reason: 422, nothing changed.
        let r = writer
            .post(&server, &path, &[("csrf", &csrf), ("status", "dismissed"), ("reason", "  ")])
            .await;
        assert_eq!(r.status(), 422, "{db}");
        assert!(r.text().await.unwrap().contains("Dismissing an alert needs a reason"), "{db}");
        assert_eq!(api_alert(&server, &alert).await, before, "{db}");

        // Dismissed as expected with a reason: back to the alerts page, recorded with who/when.
        let t0 = chrono::Utc::now();
        let r = writer
            .post(
                &server,
                &path,
                &[
                    ("csrf", &csrf),
                    ("status", "dismissed"),
                    ("reason", "expected: <new scheduler> & more batching"),
                    ("return_to", "alerts"),
                ],
            )
            .await;
        assert_eq!(r.status(), 303, "{db}");
        assert_eq!(
            r.headers()["location"],
            format!("/projects/secret/alerts#alert-{alert}").as_str(),
            "{db}"
        );
        let after = api_alert(&server, &alert).await;
        assert_eq!(after["status"], "dismissed", "{db}");
        assert_eq!(after["reason"], "expected: <new scheduler> & more batching", "{db}");
        assert_eq!(after["triaged_by"], "ci-bot", "{db}");
        let at: chrono::DateTime<chrono::Utc> =
            after["triaged_at"].as_str().unwrap().parse().unwrap();
        assert!(at >= t0 - chrono::TimeDelta::seconds(1) && at <= chrono::Utc::now(), "{db}");
        let shown = at.format("%Y-%m-%d %H:%M UTC").to_string();
        let (_, html) = writer.get(&server, "/projects/secret/alerts").await;
        let card = &html[html.find(&format!("id=\"alert-{alert}\"")).unwrap()..];
        let card = &card[..card.find("</li>").unwrap()];
        assert!(card.contains("data-status=\"dismissed\""), "{db}: {card}");
        assert!(
            card.contains(&format!(
                "<span class=\"triaged muted\" data-triaged-by=\"ci-bot\">dismissed by <strong class=\"triaged-by\">ci-bot</strong> <time class=\"triaged-at\" datetime=\"{}\">{shown}</time></span>",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )),
            "{db}: {card}"
        );
        assert!(
            card.contains(&format!(
                "<span class=\"reason\">Reason: {}</span>",
                escaped("expected: <new scheduler> & more batching")
            )),
            "{db}: {card}"
        );
        // A dismissed alert offers reopening only.
        assert!(card.contains("triage triage-reopen"), "{db}");
        assert!(!card.contains("triage triage-dismiss"), "{db}");

        // From the run page: reopen, then acknowledge; back to the run each time.
        let run_path = format!("/runs/{}", s.run_id);
        let return_to = format!("run:{}", s.run_id);
        for status in ["open", "acknowledged"] {
            let r = writer
                .post(
                    &server,
                    &path,
                    &[("csrf", &csrf), ("status", status), ("return_to", &return_to)],
                )
                .await;
            assert_eq!(r.status(), 303, "{db}");
            assert_eq!(
                r.headers()["location"],
                format!("{run_path}#alert-{alert}").as_str(),
                "{db}"
            );
            assert_eq!(api_alert(&server, &alert).await["status"], status, "{db}");
        }
        let acked = api_alert(&server, &alert).await;
        let at: chrono::DateTime<chrono::Utc> =
            acked["triaged_at"].as_str().unwrap().parse().unwrap();
        let (_, run_html) = writer.get(&server, &run_path).await;
        let verdict = tags(&run_html, "<section class=\"verdict")[0]["data-verdict"].clone();
        if acked["severity"] == "fail" && verdict == "fail" {
            assert!(
                run_html.contains(&format!(
                    "<span class=\"verdict-acknowledged\" id=\"verdict-acknowledged\">· acknowledged by ci-bot {}</span>",
                    at.format("%Y-%m-%d %H:%M UTC")
                )),
                "{db}: {run_html}"
            );
        } else {
            assert!(!run_html.contains("verdict-acknowledged"), "{db}: {verdict}");
        }
        assert!(run_html.contains("data-triaged-by=\"ci-bot\""), "{db}");

        // The API's triage is the same code: it records the admin as `admin`.
        let (status, body) = server
            .send("PATCH", &format!("/api/v1/alerts/{alert}"), ADMIN_TOKEN, &json!({"status": "open"}))
            .await;
        assert_eq!(status, 200, "{db}: {body}");
        assert_eq!(body["triaged_by"], "admin", "{db}");
        assert_eq!(body["status"], "open", "{db}");
    })
    .await;
}

#[tokio::test]
async fn a_failing_run_whose_alert_is_acknowledged_says_by_whom_and_when() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let s = seed(&server, "secret", false).await;
        let (_, run_alerts) = {
            let r = server
                .http
                .get(server.url(&format!("/api/v1/runs/{}/alerts", s.run_id)))
                .bearer_auth(ADMIN_TOKEN)
                .send()
                .await
                .unwrap();
            (r.status(), r.json::<Value>().await.unwrap())
        };
        let failing: Vec<String> = run_alerts["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["severity"] == "fail" && a["status"] == "open")
            .map(|a| a["id"].as_str().unwrap().to_string())
            .collect();
        assert!(!failing.is_empty(), "{db}: the candidate fails: {run_alerts}");
        let admin = sign_in(&server, ADMIN_TOKEN).await;
        let csrf = admin.csrf(&server).await;
        let run_path = format!("/runs/{}", s.run_id);
        let (_, html) = admin.get(&server, &run_path).await;
        assert_eq!(tags(&html, "<section class=\"verdict")[0]["data-verdict"], "fail", "{db}");
        assert!(!html.contains("verdict-acknowledged"), "{db}");
        for (i, id) in failing.iter().enumerate() {
            let r = admin
                .post(
                    &server,
                    &format!("/alerts/{id}/triage"),
                    &[("csrf", &csrf), ("status", "acknowledged"), ("return_to", &format!("run:{}", s.run_id))],
                )
                .await;
            assert_eq!(r.status(), 303, "{db}");
            let (_, html) = admin.get(&server, &run_path).await;
            // Said only once every failing alert is acknowledged.
            assert_eq!(
                html.contains("verdict-acknowledged"),
                i + 1 == failing.len(),
                "{db}: {i}"
            );
        }
        let newest = {
            let mut times = Vec::new();
            for id in &failing {
                let a = api_alert(&server, id).await;
                assert_eq!(a["triaged_by"], "admin", "{db}");
                times.push(a["triaged_at"].as_str().unwrap().parse::<chrono::DateTime<chrono::Utc>>().unwrap());
            }
            times.into_iter().max().unwrap()
        };
        let (_, html) = admin.get(&server, &run_path).await;
        assert!(
            html.contains(&format!(
                "<h2>Verdict: <span class=\"verdict-word\">fail</span> <span class=\"verdict-acknowledged\" id=\"verdict-acknowledged\">· acknowledged by admin {}</span>",
                newest.format("%Y-%m-%d %H:%M UTC")
            )),
            "{db}: {html}"
        );
    })
    .await;
}

#[tokio::test]
async fn revoking_a_token_ends_its_sessions() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        let _ = seed(&server, "secret", false).await;
        let (read, id) = labelled_token(&server, "secret", "read", "laptop").await;
        let first = sign_in(&server, &read).await;
        let second = sign_in(&server, &read).await;
        assert_eq!(
            server.store.token_session_count(id).await.unwrap(),
            2,
            "{db}"
        );
        for s in [&first, &second] {
            assert_eq!(s.get(&server, "/projects/secret").await.0, 200, "{db}");
        }
        let (status, body) = server
            .send(
                "DELETE",
                &format!("/api/v1/projects/secret/tokens/{id}"),
                ADMIN_TOKEN,
                &json!({}),
            )
            .await;
        assert_eq!(status, 204, "{db}: {body}");
        assert_eq!(
            server.store.token_session_count(id).await.unwrap(),
            0,
            "{db}"
        );
        for s in [&first, &second] {
            let (status, html) = s.get(&server, "/projects/secret").await;
            assert_eq!(status, 404, "{db}");
            assert!(html.contains("id=\"sign-in-link\""), "{db}");
        }
    })
    .await;
}

#[tokio::test]
async fn sessions_expire() {
    for_each_store(|db, store| async move {
        let server = TestServer::start_with_sessions(
            store,
            SessionSettings {
                lifetime: chrono::TimeDelta::seconds(2),
                ..SessionSettings::default()
            },
        )
        .await;
        let _ = seed(&server, "secret", false).await;
        let session = sign_in(&server, ADMIN_TOKEN).await;
        assert!(
            session.set_cookie.ends_with("; Max-Age=2"),
            "{db}: {}",
            session.set_cookie
        );
        assert_eq!(
            session.get(&server, "/projects/secret").await.0,
            200,
            "{db}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        let (status, html) = session.get(&server, "/projects/secret").await;
        assert_eq!(status, 404, "{db}");
        assert!(html.contains("id=\"sign-in-link\""), "{db}");
        // The expired session was deleted when it was looked up.
        let id = cookie_value(&session.set_cookie, "benchtrail_session");
        let hash = benchtrail_server::auth::hash_token(id);
        assert!(!server.store.delete_session(&hash).await.unwrap(), "{db}");
    })
    .await;
}
