//! The OpenAPI document (`GET /api/v1/openapi.json`) and the JSON Schemas of benchtrail's own
//! formats and of the stored analysis (`GET /api/v1/schemas/{upload,result,analysis}.json`),
//! generated from the same Rust types the server deserializes and from the router's own list of
//! handlers (`super::api`), so they cannot drift from the code.

use axum::Json;
use serde_json::{json, Value};
use std::sync::OnceLock;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The document's frame: info, the components no operation names, the security scheme and
/// the tags. The operations come from the router (`super::api`), so every route is in it.
#[derive(OpenApi)]
#[openapi(
    info(title = "benchtrail", description = "History of LLM-inference serving benchmarks, and the regressions in it."),
    components(schemas(benchtrail_core::UploadDocument, benchtrail_core::BenchResult, benchtrail_core::report::RunAnalysis, crate::error::Problem)),
    modifiers(&BearerAuth),
    tags(
        (name = "projects", description = "Projects and their tokens"),
        (name = "runs", description = "Upload and read runs"),
        (name = "series", description = "Metrics across commits"),
        (name = "configs", description = "Reproducible configurations"),
        (name = "alerts", description = "Regressions, trade-offs and verdicts"),
        (name = "service", description = "Health, readiness, the metric vocabulary and this document"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A project token (scope `read`, `upload` or `write`) or the admin token. \
                         Operations that require only this scheme need one and answer 401 without \
                         it and 403 for a token whose scope or project does not allow them. \
                         Operations that also accept no security (`{}`) are open to anyone for \
                         public projects; a token there is optional (it reads private projects), \
                         but an unknown one is still a 401. A private project, or its run or \
                         alert, that the token may not read answers the 404 of a missing one, on \
                         every operation. Each operation's `x-benchtrail-access` says what it needs \
                         (`needs`) of what (`of`).",
                    ))
                    .build(),
            ),
        );
    }
}

/// The OpenAPI document, as `GET /api/v1/openapi.json` serves it (built once).
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(super::build_document)
}

/// `GET /api/v1/openapi.json`.
#[utoipa::path(get, path = "/api/v1/openapi.json", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "This document (OpenAPI 3.1)", body = Object)))]
pub(super) async fn openapi_json() -> Json<&'static Value> {
    Json(document())
}

/// The JSON Schema (2020-12) of one component of the OpenAPI document, with every component it
/// refers to under `$defs`.
pub fn json_schema(root: &str) -> Option<Value> {
    let schemas = document().pointer("/components/schemas")?.as_object()?;
    let root_schema = schemas.get(root)?.clone();
    let text = serde_json::to_string(&json!({"root": root_schema, "defs": schemas}))
        .expect("schemas serialize")
        .replace("#/components/schemas/", "#/$defs/");
    let rewritten: Value = serde_json::from_str(&text).expect("rewritten schemas parse");
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("/api/v1/schemas/{root}.json"),
        "$defs": rewritten["defs"],
    });
    for (k, v) in rewritten["root"].as_object()? {
        schema[k] = v.clone();
    }
    Some(schema)
}

/// `GET /api/v1/schemas/upload.json`: the upload document.
#[utoipa::path(get, path = "/api/v1/schemas/upload.json", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "The JSON Schema (2020-12) of the upload document", body = Object)))]
pub(super) async fn upload_schema() -> Json<Value> {
    Json(json_schema("UploadDocument").expect("UploadDocument is a component"))
}

/// `GET /api/v1/schemas/analysis.json`: the analysis of one run
/// (`benchtrail_core::report::RunAnalysis`), as stored and as `GET /api/v1/runs/{id}/analysis`
/// returns it under `analysis`.
#[utoipa::path(get, path = "/api/v1/schemas/analysis.json", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "The JSON Schema (2020-12) of a run's stored analysis", body = Object)))]
pub(super) async fn analysis_schema() -> Json<Value> {
    Json(json_schema("RunAnalysis").expect("RunAnalysis is a component"))
}

/// `GET /api/v1/schemas/result.json`: one result in benchtrail's own format.
#[utoipa::path(get, path = "/api/v1/schemas/result.json", tag = "service",
    extensions(("x-benchtrail-access" = json!({"needs": "nothing", "of": "none"}))),
    responses((status = 200, description = "The JSON Schema (2020-12) of one result in benchtrail's own format", body = Object)))]
pub(super) async fn result_schema() -> Json<Value> {
    Json(json_schema("BenchResult").expect("BenchResult is a component"))
}
