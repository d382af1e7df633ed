//! `ProjectSettings::from_json` names every fault by the JSON pointer (RFC 6901) of the very
//! field, with one sentence: wrong types and unknown keys anywhere in the document (through
//! serde_path_to_error), a missing `slo_profiles`, and every documented bound.

use benchtrail_core::regression::SETTINGS_VERSION;
use benchtrail_core::settings::{DetectionSettings, ProjectSettings};
use serde_json::{json, Value};

/// The fault of `doc`, as (pointer, message).
fn fault(doc: Value) -> (String, String) {
    let e = ProjectSettings::from_json(&doc).expect_err("a fault");
    (e.pointer, e.message)
}

/// A document with one valid profile and this `detection` section.
fn detection(d: Value) -> Value {
    json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000, "tpot_ms": 50}], "detection": d})
}

/// A document with this `detection.engine` section.
fn engine(e: Value) -> Value {
    detection(json!({ "engine": e }))
}

/// A document with this `detection.engine.change_points` section.
fn change_points(c: Value) -> Value {
    engine(json!({ "change_points": c }))
}

/// A document with a valid profile first and then `p`.
fn profile(p: Value) -> Value {
    json!({"slo_profiles": [{"name": "a", "ttft_ms": 1}, p]})
}

fn is(pointer: &str, message: &str) -> (String, String) {
    (pointer.to_string(), message.to_string())
}

#[test]
fn a_type_error_points_at_its_field() {
    assert_eq!(
        fault(engine(json!({"min_effect_pct": "five"}))),
        is(
            "/detection/engine/min_effect_pct",
            "invalid type: string \"five\", expected a number"
        )
    );
    assert_eq!(
        fault(engine(json!({"confirm_commits": -1}))),
        is(
            "/detection/engine/confirm_commits",
            "invalid value: integer `-1`, expected a whole number ≥ 0"
        )
    );
    assert_eq!(
        fault(engine(json!({"confirm_commits": 1.5}))),
        is(
            "/detection/engine/confirm_commits",
            "invalid type: floating point `1.5`, expected a whole number ≥ 0"
        )
    );
    assert_eq!(
        fault(detection(json!({"invalid_run_fails": "yes"}))),
        is(
            "/detection/invalid_run_fails",
            "invalid type: string \"yes\", expected a boolean"
        )
    );
    assert_eq!(
        fault(detection(json!({"fail_metrics": ["ttft", 3]}))),
        is(
            "/detection/fail_metrics/1",
            "invalid type: integer `3`, expected a string"
        )
    );
    assert_eq!(
        fault(change_points(json!({"permutations": "many"}))),
        is(
            "/detection/engine/change_points/permutations",
            "invalid type: string \"many\", expected a whole number ≥ 0"
        )
    );
    assert_eq!(
        fault(change_points(json!({"enabled": 1}))),
        is(
            "/detection/engine/change_points/enabled",
            "invalid type: integer `1`, expected a boolean"
        )
    );
    // serde would read a struct from an array, by position: not here.
    assert_eq!(
        fault(detection(json!([]))),
        is("/detection", "expected an object, found an array")
    );
    assert_eq!(
        fault(engine(json!([1]))),
        is("/detection/engine", "expected an object, found an array")
    );
    assert_eq!(
        fault(change_points(json!([true]))),
        is(
            "/detection/engine/change_points",
            "expected an object, found an array"
        )
    );
    assert_eq!(
        fault(profile(json!(["b", 5]))),
        is("/slo_profiles/1", "expected an object, found an array")
    );
    assert_eq!(
        fault(profile(json!({"name": "b", "ttft_ms": "5"}))),
        is(
            "/slo_profiles/1/ttft_ms",
            "invalid type: string \"5\", expected a number"
        )
    );
    assert_eq!(
        fault(profile(json!({"name": 5, "ttft_ms": 5}))),
        is(
            "/slo_profiles/1/name",
            "invalid type: integer `5`, expected a string"
        )
    );
    assert_eq!(
        fault(profile(json!("fast"))),
        is(
            "/slo_profiles/1",
            "invalid type: string \"fast\", expected struct SloProfile"
        )
    );
    assert_eq!(
        fault(json!({"slo_profiles": {"name": "a"}})),
        is("/slo_profiles", "invalid type: map, expected a sequence")
    );
}

#[test]
fn an_unknown_key_points_at_itself_and_lists_the_known_ones() {
    let (pointer, message) = fault(engine(json!({"min_effect_pc": 5})));
    assert_eq!(pointer, "/detection/engine/min_effect_pc");
    assert!(
        message.starts_with(
            "unknown field `min_effect_pc`, expected one of `version`, `baseline_window`, \
             `min_baseline_commits`, `min_effect_pct`, `fail_effect_pct`"
        ),
        "{message}"
    );
    assert_eq!(
        fault(change_points(json!({"permutation": 99}))),
        is(
            "/detection/engine/change_points/permutation",
            "unknown field `permutation`, expected one of `enabled`, `alpha`, `permutations`, \
             `seed`, `min_segment`, `exponent`"
        )
    );
    let (pointer, message) = fault(detection(json!({"fail_metric": ["ttft"]})));
    assert_eq!(pointer, "/detection/fail_metric");
    assert!(
        message.starts_with("unknown field `fail_metric`, expected one of `engine`"),
        "{message}"
    );
    assert_eq!(
        fault(profile(json!({"name": "b", "itl_ms": 5}))),
        is(
            "/slo_profiles/1/itl_ms",
            "unknown field `itl_ms`, expected one of `name`, `ttft_ms`, `tpot_ms`, `e2el_ms`"
        )
    );
    assert_eq!(
        fault(json!({"slo_profiles": [], "slo_profile": []})),
        is(
            "/slo_profile",
            "unknown field `slo_profile`, expected one of `slo_profiles`, `detection`, `pr_comments`, `cost`"
        )
    );
    // RFC 6901: `~` is `~0` and `/` is `~1` in a reference token.
    assert_eq!(
        fault(engine(json!({"a/b~c": 1}))).0,
        "/detection/engine/a~1b~0c"
    );
}

#[test]
fn a_missing_field_points_at_itself() {
    assert_eq!(
        fault(json!({"detection": {}})),
        is(
            "/slo_profiles",
            "missing: PUT replaces the whole settings document; send `slo_profiles` as GET \
             returns them"
        )
    );
    assert_eq!(
        fault(json!({"version": 4})).0,
        "/slo_profiles",
        "read-only keys do not stand for the document"
    );
    // A misspelt key is named before the key it misses.
    assert_eq!(
        fault(json!({"slo_profile": []})),
        is(
            "/slo_profile",
            "unknown field `slo_profile`, expected one of `slo_profiles`, `detection`, `pr_comments`, `cost`"
        )
    );
    assert_eq!(
        fault(profile(json!({"ttft_ms": 5}))),
        is("/slo_profiles/1/name", "missing field `name`")
    );
    assert_eq!(fault(json!([])), is("", "settings are a JSON object"));
}

#[test]
fn read_only_keys_and_a_null_detection_are_accepted() {
    let s = ProjectSettings::from_json(&json!({"version": 3, "updated_at": "2026-01-01T00:00:00Z",
        "slo_profiles": [{"name": "batch", "e2el_ms": 60000, "ttft_ms": null}], "detection": null}))
    .unwrap();
    assert_eq!(s.slo_profiles[0].e2el_ms, Some(60000.0));
    assert_eq!(s.slo_profiles[0].ttft_ms, None);
    assert_eq!(s.detection, DetectionSettings::default());
    // What GET returns is accepted back as it is.
    let mut doc = serde_json::to_value(ProjectSettings::default()).unwrap();
    doc["version"] = json!(1);
    assert_eq!(
        ProjectSettings::from_json(&doc).unwrap(),
        ProjectSettings::default()
    );
}

#[test]
fn profiles_are_bounded() {
    assert_eq!(
        fault(profile(json!({"name": "b", "ttft_ms": 0}))),
        is(
            "/slo_profiles/1/ttft_ms",
            "a threshold is a number of ms in (0, 1e7], found 0: no request runs longer"
        )
    );
    assert_eq!(
        fault(profile(json!({"name": "b", "tpot_ms": -5}))),
        is(
            "/slo_profiles/1/tpot_ms",
            "a threshold is a number of ms in (0, 1e7], found -5: no request runs longer"
        )
    );
    assert_eq!(
        fault(profile(json!({"name": "b", "e2el_ms": 1.5e7}))),
        is(
            "/slo_profiles/1/e2el_ms",
            "a threshold is a number of ms in (0, 1e7], found 15000000: no request runs longer"
        )
    );
    assert!(ProjectSettings::from_json(&profile(json!({"name": "b", "e2el_ms": 1e7}))).is_ok());
    assert_eq!(
        fault(profile(json!({"name": "b"}))),
        is(
            "/slo_profiles/1",
            "a profile needs at least one of ttft_ms, tpot_ms, e2el_ms"
        )
    );
    assert_eq!(
        fault(profile(json!({"name": "a", "tpot_ms": 5}))),
        is("/slo_profiles/1/name", "duplicate profile name `a`")
    );
    let malformed = "a profile name is 1–64 of a-z, 0-9, `-`, `_`, starting with a letter or digit";
    for name in ["", "Fast", "-a", "a b", &"a".repeat(65)] {
        assert_eq!(
            fault(profile(json!({"name": name, "ttft_ms": 5}))),
            is("/slo_profiles/1/name", malformed),
            "{name:?}"
        );
    }
    assert_eq!(
        fault(profile(json!({"name": "tool", "ttft_ms": 5}))),
        is(
            "/slo_profiles/1/name",
            "`tool` is reserved for the benchmark tool's own goodput"
        )
    );
    let many: Vec<Value> = (0..21)
        .map(|i| json!({"name": format!("p{i}"), "ttft_ms": 100}))
        .collect();
    assert_eq!(
        fault(json!({ "slo_profiles": many[..21] })),
        is(
            "/slo_profiles/20",
            "at most 20 profiles, found 21: each adds goodput and attainment series to every \
             result with samples"
        )
    );
    assert!(ProjectSettings::from_json(&json!({ "slo_profiles": many[..20] })).is_ok());
}

#[test]
fn the_verdict_rules_are_bounded() {
    assert_eq!(
        fault(detection(json!({"fail_metrics": ["ttft", "x"]}))),
        is(
            "/detection/fail_metrics/1",
            "`x` is not a metric of the vocabulary"
        )
    );
    assert_eq!(
        fault(detection(json!({"fail_metrics": ["ttft", "tpot", "ttft"]}))),
        is("/detection/fail_metrics/2", "`ttft` is listed twice")
    );
    assert_eq!(
        fault(detection(json!({"fail_severity": "error"}))),
        is("/detection/fail_severity", "expected `warn` or `fail`")
    );
    assert_eq!(
        fault(detection(json!({"max_error_rate_pct": 101}))),
        is(
            "/detection/max_error_rate_pct",
            "expected a percentage in [0, 100], found 101"
        )
    );
    assert_eq!(
        fault(detection(json!({"min_completed_pct": -1}))),
        is(
            "/detection/min_completed_pct",
            "expected a percentage in [0, 100], found -1"
        )
    );
}

#[test]
fn the_engine_is_bounded() {
    let cases: Vec<(Value, &str, String)> = vec![
        (
            json!({"version": SETTINGS_VERSION + 1}),
            "version",
            format!(
                "settings version {} is not supported: this server reads version \
                 {SETTINGS_VERSION} (leave `version` out to mean it)",
                SETTINGS_VERSION + 1
            ),
        ),
        (
            json!({"version": 0}),
            "version",
            format!(
                "settings version 0 is not supported: this server reads version \
                 {SETTINGS_VERSION} (leave `version` out to mean it)"
            ),
        ),
        (
            json!({"baseline_window": 0}),
            "baseline_window",
            "expected 1 to 100 commits, found 0: a longer baseline mixes old regimes into the \
             normal"
                .into(),
        ),
        (
            json!({"baseline_window": 101}),
            "baseline_window",
            "expected 1 to 100 commits, found 101: a longer baseline mixes old regimes into the \
             normal"
                .into(),
        ),
        (
            json!({"min_baseline_commits": 0}),
            "min_baseline_commits",
            "expected 1 to baseline_window (10) commits, found 0: otherwise no series could \
             ever be tested"
                .into(),
        ),
        (
            json!({"baseline_window": 5, "min_baseline_commits": 6}),
            "min_baseline_commits",
            "expected 1 to baseline_window (5) commits, found 6: otherwise no series could ever \
             be tested"
                .into(),
        ),
        (
            json!({"min_effect_pct": -1}),
            "min_effect_pct",
            "expected a percentage in [0, 1000], found -1".into(),
        ),
        (
            json!({"min_effect_pct": 1001, "fail_effect_pct": 1001}),
            "min_effect_pct",
            "expected a percentage in [0, 1000], found 1001".into(),
        ),
        (
            json!({"min_effect_pct": 10}),
            "fail_effect_pct",
            "expected a percentage in [min_effect_pct (10), 1000], found 5: below \
             min_effect_pct every finding would fail"
                .into(),
        ),
        (
            json!({"fail_effect_pct": 1000.5}),
            "fail_effect_pct",
            "expected a percentage in [min_effect_pct (2), 1000], found 1000.5: below \
             min_effect_pct every finding would fail"
                .into(),
        ),
        (
            json!({"alpha": 0}),
            "alpha",
            "expected a level in (0, 0.1], found 0: every commit is a test, so a larger level \
             alerts on noise"
                .into(),
        ),
        (
            json!({"alpha": 0.2}),
            "alpha",
            "expected a level in (0, 0.1], found 0.2: every commit is a test, so a larger level \
             alerts on noise"
                .into(),
        ),
        (
            json!({"confidence_level": 0.4}),
            "confidence_level",
            "expected a level in [0.5, 1), found 0.4".into(),
        ),
        (
            json!({"confidence_level": 1}),
            "confidence_level",
            "expected a level in [0.5, 1), found 1".into(),
        ),
        (
            json!({"confirm_commits": 11}),
            "confirm_commits",
            "expected at most 10 commits, found 11: each one holds a real regression back one \
             more commit"
                .into(),
        ),
        (
            json!({"per_request_max_per_side": 19}),
            "per_request_max_per_side",
            "expected 20 to 5000 requests, found 19: the pairwise differences grow with its \
             square"
                .into(),
        ),
        (
            json!({"per_request_max_per_side": 5001}),
            "per_request_max_per_side",
            "expected 20 to 5000 requests, found 5001: the pairwise differences grow with its \
             square"
                .into(),
        ),
    ];
    for (e, field, message) in cases {
        assert_eq!(
            fault(engine(e.clone())),
            is(&format!("/detection/engine/{field}"), &message),
            "{e}"
        );
    }
    // The edges are accepted.
    for e in [
        json!({"version": SETTINGS_VERSION}),
        json!({"baseline_window": 100, "min_baseline_commits": 100}),
        json!({"baseline_window": 1, "min_baseline_commits": 1}),
        json!({"min_effect_pct": 0, "fail_effect_pct": 0}),
        json!({"min_effect_pct": 1000, "fail_effect_pct": 1000}),
        json!({"min_effect_pct": 5, "fail_effect_pct": 5}),
        json!({"alpha": 0.1, "confidence_level": 0.5, "confirm_commits": 10}),
        json!({"per_request_max_per_side": 20}),
        json!({"per_request_max_per_side": 5000}),
    ] {
        assert!(
            ProjectSettings::from_json(&engine(e.clone())).is_ok(),
            "{e}"
        );
    }
}

#[test]
fn the_change_point_scan_is_bounded() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"permutations": 98}),
            "permutations",
            "expected 99 to 9999 permutations, found 98: each one is a full scan of the history",
        ),
        (
            json!({"permutations": 10000}),
            "permutations",
            "expected 99 to 9999 permutations, found 10000: each one is a full scan of the \
             history",
        ),
        (
            json!({"alpha": 0}),
            "alpha",
            "expected a level in (0, 0.1], found 0",
        ),
        (
            json!({"alpha": 0.5}),
            "alpha",
            "expected a level in (0, 0.1], found 0.5",
        ),
        (
            json!({"alpha": 0.0001}),
            "alpha",
            "0.0001 can never be reached with 999 permutations (the smallest p-value is \
             1/(1 + permutations) = 0.001): no change point could ever be found",
        ),
        (
            json!({"alpha": 0.005, "permutations": 99}),
            "alpha",
            "0.005 can never be reached with 99 permutations (the smallest p-value is \
             1/(1 + permutations) = 0.01): no change point could ever be found",
        ),
        (
            json!({"min_segment": 1}),
            "min_segment",
            "expected 2 to 50 commits, found 1",
        ),
        (
            json!({"min_segment": 51}),
            "min_segment",
            "expected 2 to 50 commits, found 51",
        ),
        (
            json!({"exponent": 0}),
            "exponent",
            "expected an exponent in (0, 2), found 0: the energy distance needs it",
        ),
        (
            json!({"exponent": 2}),
            "exponent",
            "expected an exponent in (0, 2), found 2: the energy distance needs it",
        ),
    ];
    for (c, field, message) in cases {
        assert_eq!(
            fault(change_points(c.clone())),
            is(&format!("/detection/engine/change_points/{field}"), message),
            "{c}"
        );
    }
    for c in [
        json!({"alpha": 0.001, "permutations": 999}),
        json!({"alpha": 0.0001, "permutations": 9999}),
        json!({"alpha": 0.01, "permutations": 99}),
        json!({"alpha": 0.1, "permutations": 9999, "min_segment": 2, "exponent": 1.99}),
        json!({"min_segment": 50, "exponent": 0.01, "enabled": false, "seed": 7}),
    ] {
        assert!(
            ProjectSettings::from_json(&change_points(c.clone())).is_ok(),
            "{c}"
        );
    }
}

#[test]
fn detection_from_json_prefixes_its_own_pointer() {
    let e = DetectionSettings::from_json("/x", &json!({"engine": {"alpha": "low"}})).unwrap_err();
    assert_eq!(e.pointer, "/x/engine/alpha");
    let e = DetectionSettings::from_json("/x", &json!({"engine": {"alpha": 0.5}})).unwrap_err();
    assert_eq!(e.pointer, "/x/engine/alpha");
}

#[test]
fn tested_stats_must_be_statistics_as_series_name_them() {
    use benchtrail_core::settings::ProjectSettings;
    let doc = |stats: serde_json::Value| serde_json::json!({"slo_profiles": [], "detection": {"engine": {"tested_stats": stats}}});
    let err = ProjectSettings::from_json(&doc(serde_json::json!(["p50", "median"]))).unwrap_err();
    assert_eq!(err.pointer, "/detection/engine/tested_stats/1");
    assert_eq!(
        err.message,
        "`median` is not a statistic as series name them (`value`, `mean`, `std`, `min`, `max`, `p50`, `p99.9`, ...)"
    );
    let err = ProjectSettings::from_json(&doc(serde_json::json!(["p50", "p50"]))).unwrap_err();
    assert_eq!(
        (err.pointer.as_str(), err.message.as_str()),
        ("/detection/engine/tested_stats/1", "`p50` is listed twice")
    );
    let ok = ProjectSettings::from_json(&doc(serde_json::json!(["mean", "p99.9"]))).unwrap();
    assert_eq!(ok.detection.engine.tested_stats, ["mean", "p99.9"]);
}

#[test]
fn pr_comments_name_a_forge_token_variable_never_a_token() {
    use benchtrail_core::settings::ProjectSettings;
    let doc = |pc: serde_json::Value| {
        serde_json::json!({"slo_profiles": [{"name": "interactive", "ttft_ms": 2000}],
                           "pr_comments": pc})
    };
    let err = |pc: serde_json::Value| {
        let e = ProjectSettings::from_json(&doc(pc)).unwrap_err();
        (e.pointer, e.message)
    };
    let ok = ProjectSettings::from_json(&doc(serde_json::json!({
        "provider": "gitlab", "repository": "group/engine", "token_env": "BENCHTRAIL_FORGE_GL"
    })))
    .unwrap();
    let pc = ok.pr_comments.unwrap();
    assert_eq!(
        (pc.suite.as_str(), pc.always, pc.api()),
        ("benchmarks", false, "https://gitlab.com/api/v4")
    );
    assert_eq!(
        err(
            serde_json::json!({"provider": "github", "repository": "acme/engine", "token_env": "DATABASE_URL"})
        ),
        (
            "/pr_comments/token_env".to_string(),
            "`DATABASE_URL` is not a token variable: name one that starts with BENCHTRAIL_FORGE_ \
             (A-Z, 0-9, _), e.g. BENCHTRAIL_FORGE_GITHUB_TOKEN; the token itself never goes in \
             the settings"
                .to_string()
        )
    );
    assert_eq!(
        err(serde_json::json!({"provider": "github", "repository": "engine", "token_env": "BENCHTRAIL_FORGE_X"})).0,
        "/pr_comments/repository"
    );
    assert_eq!(
        err(serde_json::json!({"provider": "github", "repository": "a/b", "token_env": "BENCHTRAIL_FORGE_X", "api_url": "ftp://x"})).0,
        "/pr_comments/api_url"
    );
    assert_eq!(
        err(serde_json::json!({"provider": "bitbucket", "repository": "a/b", "token_env": "BENCHTRAIL_FORGE_X"})).0,
        "/pr_comments/provider"
    );
    assert_eq!(
        err(serde_json::json!({"provider": "github", "repository": "a/b", "token_env": "BENCHTRAIL_FORGE_X", "token": "ghp_secret"})).0,
        "/pr_comments/token"
    );
}
