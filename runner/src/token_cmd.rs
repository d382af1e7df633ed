//! `benchtrail token create|list|revoke`: a project's API tokens, with the admin token
//! (`--token`, `BENCHTRAIL_TOKEN` or `BENCHTRAIL_ADMIN_TOKEN`). None of them is retried: a
//! retried create could make two tokens, and a revoke is answered at once.

use crate::cli::{TokenCreateArgs, TokenListArgs, TokenRevokeArgs};
use crate::client::path_segment;
use crate::commands::Connection;
use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::Write;

/// What the admin token is called in the error when none is given.
const ADMIN_TOKEN_KIND: &str = "the admin token, or BENCHTRAIL_ADMIN_TOKEN";

/// The answer to `POST /api/v1/projects/{slug}/tokens`.
#[derive(Debug, Clone, Deserialize)]
struct Created {
    token: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    expires_at: Option<String>,
}

/// One token of `GET /api/v1/projects/{slug}/tokens`.
#[derive(Debug, Clone, Deserialize)]
struct Listed {
    id: i64,
    scope: String,
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    label: Option<String>,
    created_at: String,
    #[serde(default)]
    expires_at: Option<String>,
    #[serde(default)]
    last_used_at: Option<String>,
}

fn tokens_path(project: &str) -> String {
    format!("/api/v1/projects/{}/tokens", path_segment(project))
}

/// `benchtrail token create`: prints the new token alone on the last line of stdout, and on
/// stderr what it may do and when it expires.
///
/// # Errors
/// No server or admin token; the request fails (404 for an unknown project, 422 for an
/// invalid label).
pub fn create(
    args: &TokenCreateArgs,
    connection: &Connection,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let client = connection.client(ADMIN_TOKEN_KIND)?;
    let mut body = json!({"scope": args.scope.as_str()});
    if let Some(days) = args.expires_in_days {
        body["expires_in_days"] = json!(days);
    }
    if let Some(label) = &args.label {
        body["label"] = json!(label);
    }
    let (_, created): (u16, Created) = client
        .post_json(&tokens_path(&args.project), &body)
        .with_context(|| format!("cannot create a token for project `{}`", args.project))?;
    let expiry = created
        .expires_at
        .as_deref()
        .map_or_else(String::new, |at| format!(", expires {}", seconds(at)));
    writeln!(
        err,
        "created {} token for project {}{expiry} (shown once; store it as a secret)",
        created.scope.as_deref().unwrap_or(args.scope.as_str()),
        created.project.as_deref().unwrap_or(&args.project)
    )?;
    writeln!(out, "{}", created.token)?;
    Ok(())
}

/// `benchtrail token list`: a table on stdout (one header line, one line per token; times in
/// UTC to the second, `never` for none), or with `--json` the server's answer.
///
/// # Errors
/// No server or admin token; the request fails (404 for an unknown project).
pub fn list(
    args: &TokenListArgs,
    connection: &Connection,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let client = connection.client(ADMIN_TOKEN_KIND)?;
    let (_, page): (u16, Value) = client
        .get_json(&tokens_path(&args.project))
        .with_context(|| format!("cannot list the tokens of project `{}`", args.project))?;
    if args.json {
        writeln!(out, "{page}")?;
        return Ok(());
    }
    let items: Vec<Listed> = serde_json::from_value(page["items"].clone())
        .with_context(|| format!("the server's token list of `{}`", args.project))?;
    if items.is_empty() {
        writeln!(err, "project {} has no tokens", args.project)?;
        return Ok(());
    }
    let never = || "never".to_string();
    let rows: Vec<[String; 7]> = items
        .iter()
        .map(|t| {
            [
                t.id.to_string(),
                t.scope.clone(),
                t.prefix.clone().unwrap_or_else(|| "-".into()),
                seconds(&t.created_at),
                t.expires_at.as_deref().map_or_else(never, seconds),
                t.last_used_at.as_deref().map_or_else(never, seconds),
                t.label.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let header = [
        "ID",
        "SCOPE",
        "PREFIX",
        "CREATED",
        "EXPIRES",
        "LAST USED",
        "LABEL",
    ]
    .map(str::to_string);
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

/// `benchtrail token revoke`: one line on stderr once the server has revoked it.
///
/// # Errors
/// No server or admin token; the request fails (404 when the project has no such token).
pub fn revoke(
    args: &TokenRevokeArgs,
    connection: &Connection,
    _out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let client = connection.client(ADMIN_TOKEN_KIND)?;
    client
        .delete(&format!("{}/{}", tokens_path(&args.project), args.id))
        .with_context(|| {
            format!(
                "cannot revoke token {} of project `{}`",
                args.id, args.project
            )
        })?;
    writeln!(
        err,
        "revoked token {} of project {}: it is refused from now on",
        args.id, args.project
    )?;
    Ok(())
}

/// An RFC 3339 time as `YYYY-MM-DDTHH:MM:SSZ` in UTC (the text as given when it is none).
fn seconds(text: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(text).map_or_else(
        |_| text.to_string(),
        |t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        },
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_shown_in_utc_to_the_second() {
        assert_eq!(
            super::seconds("2026-11-02T09:00:00.123456Z"),
            "2026-11-02T09:00:00Z"
        );
        assert_eq!(
            super::seconds("2026-11-02T10:00:00+01:00"),
            "2026-11-02T09:00:00Z"
        );
        assert_eq!(super::seconds("soon"), "soon");
    }
}
