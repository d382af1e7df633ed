//! The rules every API operation follows, applied to the OpenAPI document in one place.
//!
//! Each operation declares who may call it, as the extension
//! `x-benchtrail-access: {"needs": ..., "of": ...}` of its `#[utoipa::path]` ([`Access`]).
//! [`complete`] turns that declaration into the operation's security requirement and the
//! statuses the shared extractors answer for it (an unknown token's 401, a short scope's 403,
//! the 404 of a missing or unreadable project, run or alert, a malformed parameter's or body's
//! 400, 413, 415, and the 503 with `Retry-After` of an unavailable database), so a handler
//! lists only what is its own. The authorization matrix test reads the same declaration back
//! from the served document to know what every caller must get.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The name of the access extension on every operation.
pub const ACCESS_EXTENSION: &str = "x-benchtrail-access";

/// What a caller needs to call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Needs {
    /// Nothing: the token is not even looked at (health, readiness, the vocabulary, this
    /// document and the JSON Schemas); no database behind it but for `/readyz`.
    Nothing,
    /// Read access: anyone for a public project, a token of the project (any scope) or the
    /// admin token for a private one. A token is optional, but an unknown one is a 401.
    Read,
    /// A token of the project with scope `upload` or `write`, or the admin token.
    Upload,
    /// A token of the project with scope `write`, or the admin token.
    Write,
    /// The admin token.
    Admin,
}

/// What the path addresses, whose project decides access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Of {
    /// Nothing of one project (a list filtered to what the caller may read, or a creation).
    None,
    /// `{project}`.
    Project,
    /// The run `{id}`.
    Run,
    /// The alert `{id}`.
    Alert,
    /// The configuration `{fingerprint}`: readable by whoever may read a project using it.
    Config,
    /// The runs named by the `base` and `head` query parameters (a comparison): both must be
    /// readable, and of one project.
    Runs,
}

/// An operation's access declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Access {
    /// What the caller needs.
    pub needs: Needs,
    /// What the path addresses.
    pub of: Of,
}

impl Access {
    /// The declaration of `operation` (a path operation of the document, as JSON).
    pub fn of_operation(operation: &Value) -> Result<Access, String> {
        let declared = operation.get(ACCESS_EXTENSION).ok_or_else(|| {
            format!(
                "no `{ACCESS_EXTENSION}` extension: add \
                 extensions((\"{ACCESS_EXTENSION}\" = json!({{\"needs\": ..., \"of\": ...}}))) \
                 to its #[utoipa::path]"
            )
        })?;
        let access: Access = serde_json::from_value(declared.clone())
            .map_err(|e| format!("`{ACCESS_EXTENSION}` is not an access declaration: {e}"))?;
        if access.needs == Needs::Nothing && access.of != Of::None {
            return Err(format!(
                "`{ACCESS_EXTENSION}`: an operation that needs nothing addresses nothing"
            ));
        }
        Ok(access)
    }
}

/// The document with every operation's security and shared statuses derived from its
/// [`Access`], and flattened settings-like schemas closed. Panics, naming the operation, when
/// one lacks its declaration: the router is built from the same list (`super::api`), so a
/// route added without one stops the server's start and every test.
pub fn complete(doc: utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(doc).expect("the OpenAPI document serializes");
    close_flattened_schemas(&mut doc);
    let paths = doc["paths"]
        .as_object_mut()
        .expect("the document has paths");
    for (path, item) in paths.iter_mut() {
        for (method, operation) in item.as_object_mut().expect("a path item").iter_mut() {
            let access = Access::of_operation(operation)
                .unwrap_or_else(|e| panic!("{} {path}: {e}", method.to_uppercase()));
            complete_operation(operation, access, path.starts_with("/api/"));
        }
    }
    doc
}

/// Adds security and the shared statuses to one operation (a status it lists itself keeps
/// its own, more specific, description). `api`: the path is under `/api/`, where a request
/// with a token may be throttled (429, [`crate::auth::throttle`]).
fn complete_operation(operation: &mut Value, access: Access, api: bool) {
    let op = operation.as_object_mut().expect("an operation");
    match access.needs {
        Needs::Nothing => {
            op.remove("security");
        }
        // `{}` first: no token is as good as one; an unknown one still fails.
        Needs::Read => {
            op.insert("security".into(), json!([{}, {"bearer": []}]));
        }
        Needs::Upload | Needs::Write | Needs::Admin => {
            op.insert("security".into(), json!([{"bearer": []}]));
        }
    }
    let has_query = op
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
    let has_typed_path = op
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|ps| {
            ps.iter()
                .any(|p| p["in"] == "path" && p["schema"]["type"] == "integer")
        });
    let has_body = op.contains_key("requestBody");
    let responses = op
        .entry("responses")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("responses");
    let mut add = |status: &str, response: Value| {
        responses.entry(status.to_string()).or_insert(response);
    };
    let what = match access.of {
        Of::None => "",
        Of::Project => "project",
        Of::Run | Of::Runs => "run",
        Of::Alert => "alert",
        Of::Config => "configuration",
    };
    match access.needs {
        Needs::Nothing => {}
        Needs::Read => add(
            "401",
            unauthorized("A malformed or unknown token (a token is optional here)"),
        ),
        Needs::Upload | Needs::Write => {
            let scope = if access.needs == Needs::Upload {
                "upload"
            } else {
                "write"
            };
            add(
                "401",
                unauthorized(&format!(
                    "No token, or an unknown one: this needs a token of the project with `{scope}`"
                )),
            );
            add(
                "403",
                problem(&format!(
                    "The token lacks `{scope}`, or belongs to another project"
                )),
            );
        }
        Needs::Admin => {
            add(
                "401",
                unauthorized("No token, or an unknown one: this needs the admin token"),
            );
            add(
                "403",
                problem("A project token: this needs the admin token"),
            );
        }
    }
    if access.of != Of::None {
        add(
            "404",
            problem(&format!(
                "No such {what}, or one of a private project the caller may not read (answered alike)"
            )),
        );
    }
    if has_query || has_typed_path {
        add(
            "400",
            problem("A query or path parameter that does not parse or is out of its bounds; `parameter` names it"),
        );
    }
    if has_body {
        add(
            "400",
            problem("Malformed body (not JSON, or a wrong type); `pointer` names the field. Also a `Content-Encoding: gzip` body that is not valid gzip"),
        );
        add(
            "413",
            problem("Body over the route's limit (decompressed, for a gzip body)"),
        );
        add("415", problem("A `Content-Encoding` other than `gzip`"));
    }
    if api {
        let mut throttled = problem(
            "Too many failed authentications from this address: a request with a token is refused without the token being checked (sent only when one is)",
        );
        throttled["headers"] = json!({"Retry-After": {
            "description": "Seconds to wait before the next request with a token",
            "schema": {"type": "integer", "minimum": 1}
        }});
        add("429", throttled);
    }
    if access.needs != Needs::Nothing {
        let mut unavailable = problem(
            "The database is unavailable (a restart, a full disk), the analysis queue is full (uploads), or the request ran out of time; nothing was stored. Retry after the `Retry-After` seconds",
        );
        unavailable["headers"] = json!({"Retry-After": {
            "description": "Seconds to wait before retrying",
            "schema": {"type": "integer", "minimum": 0}
        }});
        add("503", unavailable);
    }
}

/// A problem-document response.
fn problem(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    })
}

/// A 401 problem with its `WWW-Authenticate` challenge.
fn unauthorized(description: &str) -> Value {
    let mut response = problem(description);
    response["headers"] = json!({"WWW-Authenticate": {
        "description": "`Bearer`",
        "schema": {"type": "string"}
    }});
    response
}

/// A component that is `allOf` a closed object (`additionalProperties: false`, as a
/// `deny_unknown_fields` type is) and more properties (a `#[serde(flatten)]` of it, like
/// `StoredSettings`) forbids the very properties it adds, so no answer can match it: it is
/// rewritten as the one closed object it is on the wire.
fn close_flattened_schemas(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    for (name, schema) in &schemas {
        let Some(parts) = schema.get("allOf").and_then(Value::as_array) else {
            continue;
        };
        let resolved: Vec<&Value> = parts
            .iter()
            .map(|part| match part.get("$ref").and_then(Value::as_str) {
                Some(r) => r
                    .strip_prefix("#/components/schemas/")
                    .and_then(|n| schemas.get(n))
                    .unwrap_or(part),
                None => part,
            })
            .collect();
        let closed = resolved
            .iter()
            .any(|p| p.get("additionalProperties") == Some(&Value::Bool(false)));
        let all_objects = resolved
            .iter()
            .all(|p| p.get("type") == Some(&json!("object")) && p.get("allOf").is_none());
        if !closed || !all_objects {
            continue;
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        for part in &resolved {
            if let Some(ps) = part.get("properties").and_then(Value::as_object) {
                properties.extend(ps.clone());
            }
            if let Some(rs) = part.get("required").and_then(Value::as_array) {
                required.extend(rs.iter().cloned());
            }
        }
        let mut merged = json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        });
        if let Some(description) = schema.get("description") {
            merged["description"] = description.clone();
        }
        doc["components"]["schemas"][name] = merged;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_without_its_access_declaration_is_refused() {
        let err = Access::of_operation(&json!({"responses": {}})).unwrap_err();
        assert!(
            err.starts_with("no `x-benchtrail-access` extension"),
            "{err}"
        );
        let err = Access::of_operation(
            &json!({ACCESS_EXTENSION: {"needs": "read", "of": "project", "scope": "x"}}),
        )
        .unwrap_err();
        assert!(err.contains("unknown field `scope`"), "{err}");
        let err =
            Access::of_operation(&json!({ACCESS_EXTENSION: {"needs": "nothing", "of": "run"}}))
                .unwrap_err();
        assert!(err.contains("addresses nothing"), "{err}");
        assert_eq!(
            Access::of_operation(&json!({ACCESS_EXTENSION: {"needs": "write", "of": "alert"}})),
            Ok(Access {
                needs: Needs::Write,
                of: Of::Alert
            })
        );
    }

    #[test]
    fn every_routed_operation_declares_its_access() {
        // Builds the document from the router's list; panics name the operation at fault.
        let doc = super::super::build_document();
        let mut n = 0;
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                Access::of_operation(op).unwrap();
                n += 1;
            }
        }
        assert!(n >= 30, "{n} operations");
    }

    #[test]
    fn a_flattened_closed_schema_is_one_closed_object() {
        let mut doc = json!({"components": {"schemas": {
            "Inner": {"type": "object", "additionalProperties": false, "required": ["a"], "properties": {"a": {"type": "string"}}},
            "Outer": {"description": "d", "allOf": [{"$ref": "#/components/schemas/Inner"}, {"type": "object", "required": ["v"], "properties": {"v": {"type": "integer"}}}]},
        }}});
        close_flattened_schemas(&mut doc);
        assert_eq!(
            doc["components"]["schemas"]["Outer"],
            json!({"type": "object", "description": "d", "additionalProperties": false,
                "required": ["a", "v"], "properties": {"a": {"type": "string"}, "v": {"type": "integer"}}})
        );
    }
}
