//! The authorization matrix: every operation of the OpenAPI document the server serves (so a
//! new route cannot be missed: the router and the document are one list) × every kind of
//! caller × the project it addresses being public, private or missing. The status each cell
//! must get is derived from the operation's own access declaration (`x-benchtrail-access`,
//! [`benchtrail_server::api::contract::Access`]), never written per route; an operation
//! without one fails here (and stops the server from starting). The no-oracle rule is checked
//! on the way: a private project's thing that the caller may not read answers exactly as a
//! missing one does (status, title, challenge header).

use crate::common;

use benchtrail_server::api::contract::{Access, Needs, Of};
use common::db::for_each_store;
use common::goodput::{vllm_doc, GOODPUT_HISTORY};
use common::server::{TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Who calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// No `Authorization` header.
    Anonymous,
    /// A well-formed token benchtrail never issued.
    UnknownToken,
    /// Tokens of the addressed project, by scope.
    Read,
    Upload,
    Write,
    /// A `write` token of another (public) project.
    OtherProject,
    /// The admin token.
    Admin,
}

const CALLERS: [Caller; 7] = [
    Caller::Anonymous,
    Caller::UnknownToken,
    Caller::Read,
    Caller::Upload,
    Caller::Write,
    Caller::OtherProject,
    Caller::Admin,
];

/// What the path addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A public project's project, run, alert, series, configuration.
    Public,
    /// A private project's.
    Private,
    /// Ones that do not exist.
    Missing,
}

/// The status `caller` must get from an operation declaring `access` on `target`, whose
/// success is `success`. The rules of `api::access` and `auth::Caller`: an unknown token is a
/// 401 wherever a token is looked at; a project (run, alert, configuration) the caller may not
/// read is the 404 of a missing one, before any scope is checked; then no token is a 401 and a
/// short scope or another project's token a 403. Admin routes check the admin token first.
fn expected(access: Access, caller: Caller, target: Target, success: u16) -> u16 {
    if access.needs == Needs::Nothing {
        return success;
    }
    if caller == Caller::UnknownToken {
        return 401;
    }
    let own = matches!(
        caller,
        Caller::Read | Caller::Upload | Caller::Write | Caller::Admin
    );
    let readable = access.of == Of::None
        || match target {
            Target::Public => true,
            Target::Private => own,
            Target::Missing => false,
        };
    match access.needs {
        Needs::Nothing => unreachable!(),
        Needs::Read => {
            if readable {
                success
            } else {
                404
            }
        }
        Needs::Upload | Needs::Write => {
            let allowed = match caller {
                Caller::Admin | Caller::Write => true,
                Caller::Upload => access.needs == Needs::Upload,
                _ => false,
            };
            if !readable {
                404
            } else if allowed {
                success
            } else if caller == Caller::Anonymous {
                401
            } else {
                403
            }
        }
        Needs::Admin => match caller {
            Caller::Anonymous => 401,
            Caller::Admin if readable => success,
            Caller::Admin => 404,
            _ => 403,
        },
    }
}

/// One project of the matrix and what it holds.
struct Seeded {
    slug: String,
    read: String,
    upload: String,
    write: String,
    run_id: String,
    series_id: String,
    alert_id: String,
    fingerprint: String,
    /// A token no caller of the matrix uses, for `DELETE .../tokens/{id}` to revoke.
    spare_token_id: String,
}

/// The SLO profile matching the history's `--goodput` flags.
fn settings() -> Value {
    json!({"slo_profiles": [{"name": "file", "ttft_ms": 60, "tpot_ms": 12, "e2el_ms": 1800}]})
}

/// An upload of history file `i` for project `slug`, on a configuration of its own (so a
/// private project's configuration is not readable through a public one).
fn upload_of(slug: &str, i: usize, path: &str) -> Value {
    let mut doc = vllm_doc(i, path);
    doc["configuration"]["hardware"] = json!({"accelerator": format!("matrix-{slug}")});
    doc
}

/// Creates `slug` and uploads the goodput history (the candidate raises an alert).
async fn seed(server: &TestServer, slug: &str, public: bool) -> Seeded {
    let upload = server
        .project_with_token(slug, json!({"public": public}))
        .await;
    let (read, write) = (
        server.token(slug, "read").await,
        server.token(slug, "write").await,
    );
    let path = format!("/api/v1/projects/{slug}/settings");
    let (status, body) = server.send("PUT", &path, ADMIN_TOKEN, &settings()).await;
    assert_eq!(status, 200, "{body}");
    let mut run_id = String::new();
    for (i, path) in GOODPUT_HISTORY.iter().enumerate() {
        let (status, receipt) = server
            .upload(slug, &upload, &upload_of(slug, i, path))
            .await;
        assert_eq!(status, 201, "{path}: {receipt}");
        run_id = receipt["run_id"].as_str().unwrap().to_string();
    }
    let admin_get = |path: String| async move {
        let r = server
            .http
            .get(server.url(&path))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r.json::<Value>().await.unwrap()
    };
    let (status, spare) = server
        .send(
            "POST",
            &format!("/api/v1/projects/{slug}/tokens"),
            ADMIN_TOKEN,
            &json!({"scope": "read", "label": "spare"}),
        )
        .await;
    assert_eq!(status, 201, "{spare}");
    let series = admin_get(format!("/api/v1/projects/{slug}/series?limit=1")).await;
    let alerts = admin_get(format!("/api/v1/projects/{slug}/alerts?limit=1")).await;
    let run = admin_get(format!("/api/v1/runs/{run_id}")).await;
    Seeded {
        slug: slug.into(),
        read,
        upload,
        write,
        series_id: series["items"][0]["series_id"].as_str().unwrap().into(),
        alert_id: alerts["items"][0]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no alert in {alerts}"))
            .into(),
        fingerprint: run["results"][0]["config_fingerprint"]
            .as_str()
            .unwrap()
            .into(),
        spare_token_id: spare["id"].to_string(),
        run_id,
    }
}

/// `path` with its parameters filled for `target` (`p` for public and private, nothing real
/// for missing).
fn fill(path: &str, p: Option<&Seeded>) -> String {
    let missing_id = "00000000-0000-4000-8000-000000000000";
    let (project, run, alert, series, fingerprint, token) = match p {
        Some(p) => (
            p.slug.as_str(),
            p.run_id.as_str(),
            p.alert_id.as_str(),
            p.series_id.as_str(),
            p.fingerprint.as_str(),
            p.spare_token_id.as_str(),
        ),
        None => (
            "missing-project",
            missing_id,
            missing_id,
            "0000000000000000",
            "0000000000000000000000000000000000000000000000000000000000000000",
            "999999",
        ),
    };
    let id = if path.starts_with("/api/v1/alerts/") {
        alert
    } else if path.contains("/tokens/{id}") {
        token
    } else {
        run
    };
    let url = path
        .replace("{project}", project)
        .replace("{series_id}", series)
        .replace("{fingerprint}", fingerprint)
        .replace("{n}", "0")
        .replace("{id}", id);
    assert!(
        !url.contains('{'),
        "{path}: the matrix has no value for a parameter"
    );
    url
}

/// The address of `op` for `target` ([`fill`]), with the query a comparison needs: `base` and
/// `head` are both the project's run (a run compared with itself is a valid comparison), or
/// a missing run for a missing project.
fn address(op: &Operation, p: Option<&Seeded>) -> String {
    let url = fill(&op.path, p);
    if op.access.of != Of::Runs {
        return url;
    }
    let run = p.map_or("00000000-0000-4000-8000-000000000000", |p| &p.run_id);
    format!("{url}?base={run}&head={run}")
}

/// A valid body for an operation whose request body is the component `schema` (valid, so what
/// answers is the authorization; fresh where a success creates something).
fn body_for(schema: &str, p: Option<&Seeded>, fresh: usize) -> Value {
    match schema {
        "CreateProject" => json!({"slug": format!("matrix-new-{fresh}")}),
        "CreateToken" => json!({"scope": "read"}),
        "UploadDocument" => {
            let mut doc = upload_of(p.map_or("missing", |p| &p.slug), 0, GOODPUT_HISTORY[0]);
            doc["run"]["commit"] =
                json!({"sha": format!("{:040x}", 1000 + fresh), "time": "2026-12-01T09:00:00Z"});
            doc
        }
        "ProjectSettings" => settings(),
        "PinBody" => {
            json!({"run_id": p.map_or("00000000-0000-4000-8000-000000000000", |p| &p.run_id)})
        }
        "AlertPatch" => json!({"status": "acknowledged"}),
        "ExclusionBody" => json!({"reason": "authorization matrix"}),
        other => panic!("the matrix needs a valid body for `{other}`: add it to body_for"),
    }
}

/// The order operations of one path run in: what makes something before what removes it (a
/// pin before its removal, an exclusion before its end).
fn method_rank(method: &str) -> usize {
    ["get", "post", "put", "patch", "delete"]
        .iter()
        .position(|m| *m == method)
        .unwrap_or_else(|| panic!("the matrix does not know the method {method}"))
}

/// One operation of the document.
struct Operation {
    method: String,
    path: String,
    access: Access,
    success: u16,
    documented: Vec<u16>,
    body_schema: Option<String>,
}

/// Every operation of `doc`, in path order and [`method_rank`] within a path.
fn operations(doc: &Value) -> Vec<Operation> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let mut methods: Vec<(&String, &Value)> = item.as_object().unwrap().iter().collect();
        methods.sort_by_key(|(m, _)| method_rank(m));
        for (method, op) in methods {
            let what = format!("{} {path}", method.to_uppercase());
            let access = Access::of_operation(op).unwrap_or_else(|e| panic!("{what}: {e}"));
            let documented: Vec<u16> = op["responses"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.parse().unwrap())
                .collect();
            let successes: Vec<u16> = documented
                .iter()
                .copied()
                .filter(|s| (200..300).contains(s))
                .collect();
            // A creation answers 201 (a 200 beside it is the idempotent retry).
            let success = if successes.contains(&201) {
                201
            } else {
                assert_eq!(successes.len(), 1, "{what}: one success status");
                successes[0]
            };
            let security = op.get("security").cloned().unwrap_or(Value::Null);
            let expected_security = match access.needs {
                Needs::Nothing => Value::Null,
                Needs::Read => json!([{}, {"bearer": []}]),
                _ => json!([{"bearer": []}]),
            };
            assert_eq!(security, expected_security, "{what}: security");
            let body_schema = op.get("requestBody").map(|b| {
                let schema = &b["content"]["application/json"]["schema"];
                schema["$ref"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{what}: a request body by reference: {schema}"))
                    .trim_start_matches("#/components/schemas/")
                    .to_string()
            });
            ops.push(Operation {
                method: method.clone(),
                path: path.clone(),
                access,
                success,
                documented,
                body_schema,
            });
        }
    }
    ops
}

/// What a cell answered: status, problem title, `WWW-Authenticate`.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    title: Option<String>,
    challenge: Option<String>,
}

#[tokio::test]
async fn every_operation_answers_every_caller_as_its_access_declaration_says() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let public = seed(&server, "matrix-public", true).await;
        let private = seed(&server, "matrix-private", false).await;
        server
            .project_with_token("matrix-other", json!({"public": true}))
            .await;
        let other_write = server.token("matrix-other", "write").await;
        let (status, doc) = server.get("/api/v1/openapi.json").await;
        assert_eq!(status, 200);
        let ops = operations(&doc);
        let fresh = AtomicUsize::new(0);

        let mut cells = 0;
        let mut by_status: BTreeMap<u16, usize> = BTreeMap::new();
        let mut failures = Vec::new();
        for target in [Target::Public, Target::Private, Target::Missing] {
            let p = match target {
                Target::Public => Some(&public),
                Target::Private => Some(&private),
                Target::Missing => None,
            };
            // Caller by caller, so what one caller's successes make (a pin, an exclusion) its
            // own later operations remove again.
            for caller in CALLERS {
                let token = match caller {
                    Caller::Anonymous => None,
                    Caller::UnknownToken => Some(format!("bt_{}", "0".repeat(64))),
                    // A missing project has no tokens: the public project's stand in (they
                    // may read nothing that does not exist).
                    Caller::Read => Some(p.unwrap_or(&public).read.clone()),
                    Caller::Upload => Some(p.unwrap_or(&public).upload.clone()),
                    Caller::Write => Some(p.unwrap_or(&public).write.clone()),
                    Caller::OtherProject => Some(other_write.clone()),
                    Caller::Admin => Some(ADMIN_TOKEN.to_string()),
                };
                for op in &ops {
                    let url = address(&op, p);
                    let body = op
                        .body_schema
                        .as_deref()
                        .map(|s| body_for(s, p, fresh.fetch_add(1, Ordering::Relaxed)));
                    let mut request = server
                        .http
                        .request(op.method.to_uppercase().parse().unwrap(), server.url(&url));
                    if let Some(token) = &token {
                        request = request.bearer_auth(token);
                    }
                    if let Some(body) = &body {
                        request = request.json(body);
                    }
                    let response = request.send().await.unwrap();
                    let status = response.status().as_u16();
                    let want = expected(op.access, caller, target, op.success);
                    cells += 1;
                    *by_status.entry(status).or_default() += 1;
                    let what = format!(
                        "{} {} as {caller:?} on {target:?} ({url})",
                        op.method.to_uppercase(),
                        op.path
                    );
                    if status != want {
                        let text = response.text().await.unwrap_or_default();
                        failures.push(format!("{what}: {status}, expected {want}: {text}"));
                        continue;
                    }
                    if !op.documented.contains(&status) {
                        failures.push(format!(
                            "{what}: {status} is not among the documented {:?}",
                            op.documented
                        ));
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{name}: {} of {cells} cells wrong:\n{}",
            failures.len(),
            failures.join("\n")
        );
        // 3 targets × 7 callers × every operation; all statuses of the rules occur.
        assert_eq!(cells, 3 * CALLERS.len() * ops.len(), "{name}");
        for status in [200, 201, 204, 401, 403, 404] {
            assert!(
                by_status.contains_key(&status),
                "{name}: no {status} in {by_status:?}"
            );
        }
        eprintln!(
            "{name}: {cells} cells over {} operations: {by_status:?}",
            ops.len()
        );
    })
    .await;
}

/// The no-oracle rule across the matrix: for every operation that addresses a project's
/// thing, each caller who may not read the private project gets exactly the answer of a
/// missing one (status, problem title, `WWW-Authenticate`), read-only requests so the
/// comparison is of like with like.
#[tokio::test]
async fn a_private_projects_things_answer_the_callers_who_may_not_read_them_as_missing_ones() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let public = seed(&server, "oracle-public", true).await;
        let private = seed(&server, "oracle-private", false).await;
        let other_write = server.token("oracle-public", "write").await;
        let (_, doc) = server.get("/api/v1/openapi.json").await;
        let mut compared = 0;
        for op in operations(&doc) {
            if op.access.of == Of::None || op.access.needs == Needs::Nothing {
                continue;
            }
            for (caller, token) in [
                (Caller::Anonymous, None),
                (Caller::OtherProject, Some(other_write.as_str())),
            ] {
                let mut answers = Vec::new();
                for p in [Some(&private), None] {
                    let url = address(&op, p);
                    let body = op.body_schema.as_deref().map(|s| body_for(s, p, 0));
                    let mut request = server
                        .http
                        .request(op.method.to_uppercase().parse().unwrap(), server.url(&url));
                    if let Some(token) = token {
                        request = request.bearer_auth(token);
                    }
                    if let Some(body) = &body {
                        request = request.json(body);
                    }
                    let response = request.send().await.unwrap();
                    let status = response.status().as_u16();
                    let challenge = response
                        .headers()
                        .get("www-authenticate")
                        .map(|v| v.to_str().unwrap().to_string());
                    let problem: Value = response.json().await.unwrap_or(Value::Null);
                    answers.push(Answer {
                        status,
                        title: problem["title"].as_str().map(String::from),
                        challenge,
                    });
                }
                let what = format!("{} {} as {caller:?}", op.method.to_uppercase(), op.path);
                assert_eq!(answers[0], answers[1], "{name}: {what}: private vs missing");
                let want = expected(op.access, caller, Target::Private, op.success);
                assert_eq!(answers[0].status, want, "{name}: {what}");
                compared += 1;
            }
        }
        assert!(compared >= 40, "{name}: {compared} comparisons");
        let _ = public;
    })
    .await;
}

/// The expectation itself, on the cells the probe named: a private project answers
/// 404 where it used to answer 401/403, and scopes still decide once the project is readable.
#[test]
fn the_expected_statuses_follow_the_access_rules() {
    let write_project = Access {
        needs: Needs::Write,
        of: Of::Project,
    };
    let e = |caller, target| expected(write_project, caller, target, 200);
    assert_eq!(e(Caller::Anonymous, Target::Public), 401);
    assert_eq!(e(Caller::Anonymous, Target::Private), 404);
    assert_eq!(e(Caller::Anonymous, Target::Missing), 404);
    assert_eq!(e(Caller::UnknownToken, Target::Private), 401);
    assert_eq!(e(Caller::Read, Target::Public), 403);
    assert_eq!(e(Caller::Read, Target::Private), 403);
    assert_eq!(e(Caller::Upload, Target::Private), 403);
    assert_eq!(e(Caller::Write, Target::Private), 200);
    assert_eq!(e(Caller::OtherProject, Target::Public), 403);
    assert_eq!(e(Caller::OtherProject, Target::Private), 404);
    assert_eq!(e(Caller::Admin, Target::Missing), 404);
    let admin = Access {
        needs: Needs::Admin,
        of: Of::Project,
    };
    assert_eq!(expected(admin, Caller::Read, Target::Missing, 201), 403);
    assert_eq!(expected(admin, Caller::Admin, Target::Private, 201), 201);
    let read_run = Access {
        needs: Needs::Read,
        of: Of::Run,
    };
    assert_eq!(
        expected(read_run, Caller::Anonymous, Target::Public, 200),
        200
    );
    assert_eq!(
        expected(read_run, Caller::Anonymous, Target::Private, 200),
        404
    );
    assert_eq!(expected(read_run, Caller::Read, Target::Private, 200), 200);
    let open = Access {
        needs: Needs::Nothing,
        of: Of::None,
    };
    assert_eq!(
        expected(open, Caller::UnknownToken, Target::Missing, 200),
        200
    );
}
