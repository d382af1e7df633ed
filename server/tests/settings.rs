//! `PUT /api/v1/projects/{project}/settings` over real HTTP on every database: a fault anywhere
//! in the document (a wrong type, an unknown key, a missing `slo_profiles`, a value out of its
//! bounds) answers 422 problem+json whose `pointer` names the very field, and stores nothing.

use crate::common;

use common::db::for_each_store;
use common::server::TestServer;
use serde_json::{json, Value};

const PATH: &str = "/api/v1/projects/demo/settings";

/// A document with the default profile and this `detection` section.
fn settings(detection: Value) -> Value {
    json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}], "detection": detection})
}

#[tokio::test]
async fn a_faulty_document_answers_422_with_the_pointer_of_the_field_and_stores_nothing() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server.project_with_token("demo", json!({})).await;
        let write = server.token("demo", "write").await;
        // One accepted change, so that the version to keep is not the initial one.
        let (status, stored) = server
            .send("PUT", PATH, &write, &settings(json!({"engine": {"min_effect_pct": 3}})))
            .await;
        assert_eq!((status, stored["version"].clone()), (200, json!(2)), "{db}: {stored}");

        let cases = [
            (
                settings(json!({"engine": {"min_effect_pct": "five"}})),
                "/detection/engine/min_effect_pct",
                "invalid type: string \"five\", expected a number",
            ),
            (
                settings(json!({"engine": {"confirm_commits": -1}})),
                "/detection/engine/confirm_commits",
                "invalid value: integer `-1`, expected a whole number ≥ 0",
            ),
            (
                settings(json!({"invalid_run_fails": "yes"})),
                "/detection/invalid_run_fails",
                "invalid type: string \"yes\", expected a boolean",
            ),
            (
                json!({"slo_profiles": [{"name": "a", "ttft_ms": 5}, {"name": "b", "e2el_ms": "1s"}]}),
                "/slo_profiles/1/e2el_ms",
                "invalid type: string \"1s\", expected a number",
            ),
            (
                json!({"detection": {}}),
                "/slo_profiles",
                "missing: PUT replaces the whole settings document; send `slo_profiles` as GET \
                 returns them",
            ),
            (
                settings(json!({"engine": {"confirm_commits": 11}})),
                "/detection/engine/confirm_commits",
                "expected at most 10 commits, found 11: each one holds a real regression back \
                 one more commit",
            ),
            (
                settings(json!({"engine": {"change_points": {"permutations": 100000}}})),
                "/detection/engine/change_points/permutations",
                "expected 99 to 9999 permutations, found 100000: each one is a full scan of the \
                 history",
            ),
        ];
        for (body, pointer, detail) in cases {
            let r = server
                .http
                .put(server.url(PATH))
                .bearer_auth(&write)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{db} {body}");
            assert_eq!(r.headers()["content-type"], "application/problem+json", "{db}");
            let problem: Value = r.json().await.unwrap();
            assert_eq!(
                (problem["pointer"].as_str(), problem["detail"].as_str()),
                (Some(pointer), Some(detail)),
                "{db} {body}: {problem}"
            );
            assert_eq!(problem["status"], 422, "{db}: {problem}");
        }

        // An unknown key names itself and the keys that are known.
        let body = settings(json!({"engine": {"min_effect_pc": 5}}));
        let (status, problem) = server.send("PUT", PATH, &write, &body).await;
        assert_eq!(status, 422, "{db}");
        assert_eq!(problem["pointer"], "/detection/engine/min_effect_pc", "{db}");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("unknown field `min_effect_pc`, expected one of `version`,")
                && detail.contains("`min_effect_pct`"),
            "{db}: {detail}"
        );

        // Nothing was stored: the version and the settings are those of the accepted change.
        let (status, current) = server.get(PATH).await;
        assert_eq!(status, 200);
        assert_eq!(current["version"], 2, "{db}: refused changes store nothing");
        assert_eq!(current["detection"]["engine"]["min_effect_pct"], 3.0, "{db}");

        // What GET returned is accepted back as it is.
        let (status, stored) = server.send("PUT", PATH, &write, &current).await;
        assert_eq!((status, stored["version"].clone()), (200, json!(3)), "{db}: {stored}");
    })
    .await;
}

/// JSON Schema counts `3.0` as an integer, so the integer settings take one and store the
/// integer (issue 13); a fraction is still the 422 at the field that any wrong type gets.
#[tokio::test]
async fn whole_floats_in_integer_settings_are_stored_as_integers() {
    for_each_store(|db, store| async move {
        let server = TestServer::start(store).await;
        server.project_with_token("demo", json!({})).await;
        let write = server.token("demo", "write").await;
        let body = settings(json!({
            "repeats": 3.0,
            "engine": {
                "version": 1.0,
                "baseline_window": 12.0,
                "min_baseline_commits": 4.0,
                "spread_window": 4e1,
                "confirm_commits": 2.0,
                "per_request_max_per_side": 100.0,
                "change_points": {"permutations": 1999.0, "seed": 7.0, "min_segment": 3.0}
            }
        }));
        let (status, stored) = server.send("PUT", PATH, &write, &body).await;
        assert_eq!(status, 200, "{db}: {stored}");
        let (_, current) = server.get(PATH).await;
        let detection = &current["detection"];
        let engine = &detection["engine"];
        assert_eq!(
            [
                &detection["repeats"],
                &engine["version"],
                &engine["baseline_window"],
                &engine["min_baseline_commits"],
                &engine["spread_window"],
                &engine["confirm_commits"],
                &engine["per_request_max_per_side"],
                &engine["change_points"]["permutations"],
                &engine["change_points"]["seed"],
                &engine["change_points"]["min_segment"],
            ],
            [
                &json!(3),
                &json!(1),
                &json!(12),
                &json!(4),
                &json!(40),
                &json!(2),
                &json!(100),
                &json!(1999),
                &json!(7),
                &json!(3),
            ],
            "{db}: {current}"
        );

        let (status, problem) = server
            .send(
                "PUT",
                PATH,
                &write,
                &settings(json!({"engine": {"confirm_commits": 1.5}})),
            )
            .await;
        assert_eq!(status, 422, "{db}: {problem}");
        assert_eq!(
            (&problem["pointer"], &problem["detail"]),
            (
                &json!("/detection/engine/confirm_commits"),
                &json!("invalid type: floating point `1.5`, expected a whole number ≥ 0")
            ),
            "{db}: {problem}"
        );
        let (_, after) = server.get(PATH).await;
        assert_eq!(after, current, "{db}: the refused change stored nothing");
    })
    .await;
}
