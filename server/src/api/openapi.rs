//! The OpenAPI document (`GET /api/v1/openapi.json`) and the JSON Schemas of benchtrail's own
//! formats and of the stored analysis (`GET /api/v1/schemas/{upload,result,analysis}.json`), generated from the same Rust types the
//! server deserializes, so they cannot drift from the code.

use super::{alerts, baselines, configs, projects, report, runs, series, settings};
use axum::Json;
use serde_json::{json, Value};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The API description.
#[derive(OpenApi)]
#[openapi(
    info(title = "benchtrail", description = "History of LLM-inference serving benchmarks, and the regressions in it."),
    paths(
        projects::list, projects::get_one, projects::create, projects::create_token,
        settings::get, settings::put,
        runs::upload, runs::list, runs::get_one, runs::file,
        configs::get_one, series::list, series::points,
        alerts::list, alerts::get_one, alerts::patch, alerts::verdict, alerts::analysis, report::report,
        alerts::run_alerts, alerts::series_alerts, baselines::pin, baselines::exclude,
        baselines::list, baselines::unpin, baselines::unexclude,
    ),
    components(schemas(benchtrail_core::UploadDocument, benchtrail_core::BenchResult, benchtrail_core::report::RunAnalysis, crate::error::Problem)),
    modifiers(&BearerAuth),
    tags(
        (name = "projects", description = "Projects and their tokens"),
        (name = "runs", description = "Upload and read runs"),
        (name = "series", description = "Metrics across commits"),
        (name = "configs", description = "Reproducible configurations"),
        (name = "alerts", description = "Regressions, trade-offs and verdicts"),
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
                         Operations that list this scheme need one and answer 401 without it \
                         and 403 for a token whose scope or project does not allow them. The \
                         others are open to anyone for public projects; a token there is \
                         optional (it reads private projects), but an unknown one is still a 401. \
                         A private project, or its run or alert, that the token may not read \
                         answers the 404 of a missing one, on every operation.",
                    ))
                    .build(),
            ),
        );
    }
}

/// `GET /api/v1/openapi.json`.
pub(super) async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// The JSON Schema (2020-12) of one component of the OpenAPI document, with every component it
/// refers to under `$defs`.
pub fn json_schema(root: &str) -> Option<Value> {
    let doc = serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI document serializes");
    let schemas = doc.pointer("/components/schemas")?.as_object()?;
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
pub(super) async fn upload_schema() -> Json<Value> {
    Json(json_schema("UploadDocument").expect("UploadDocument is a component"))
}

/// `GET /api/v1/schemas/analysis.json`: the analysis of one run
/// (`benchtrail_core::report::RunAnalysis`), as stored and as `GET /api/v1/runs/{id}/analysis`
/// returns it under `analysis`.
pub(super) async fn analysis_schema() -> Json<Value> {
    Json(json_schema("RunAnalysis").expect("RunAnalysis is a component"))
}

/// `GET /api/v1/schemas/result.json`: one result in benchtrail's own format.
pub(super) async fn result_schema() -> Json<Value> {
    Json(json_schema("BenchResult").expect("BenchResult is a component"))
}
