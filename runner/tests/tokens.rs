//! `benchtrail token create|list|revoke` against a real server (SQLite, loopback): a token
//! with a label and an expiry, the listing as a table and as JSON (never a secret), and a
//! revocation after which the token is refused while the others keep working.

use crate::common;

use common::real::{RealProject, ADMIN};
use common::*;
use serde_json::Value;

/// `benchtrail ARGS` against `p`'s server, the admin token in BENCHTRAIL_ADMIN_TOKEN (the
/// variable the admin commands read besides --token).
fn admin(p: &RealProject, dir: &TempDir, args: &[&str]) -> std::process::Output {
    benchtrail(
        dir.path(),
        args,
        &[
            ("BENCHTRAIL_URL", p.base.as_str()),
            ("BENCHTRAIL_ADMIN_TOKEN", ADMIN),
        ],
    )
}

/// The status of `GET /api/v1/projects/p/runs` with `token`.
fn status_with(p: &RealProject, token: &str) -> u16 {
    reqwest::blocking::Client::new()
        .get(format!("{}/api/v1/projects/p/runs", p.base))
        .bearer_auth(token)
        .send()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn create_list_and_revoke_tokens() {
    let p = RealProject::start("tokens");
    let dir = TempDir::new("tokens-cwd");
    let out = admin(
        &p,
        &dir,
        &[
            "token",
            "create",
            "--project",
            "p",
            "--scope",
            "read",
            "--label",
            "nightly CI",
            "--expires-in-days",
            "7",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = stdout(&out).lines().last().unwrap().to_string();
    assert_eq!(read.len(), 67, "{read}");
    let note = stderr(&out);
    assert!(
        note.starts_with("created read token for project p, expires 20")
            && note.ends_with("Z (shown once; store it as a secret)\n"),
        "{note}"
    );

    let out = admin(&p, &dir, &["token", "list", "--project", "p", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{page}");
    assert_eq!(
        (&items[0]["scope"], &items[1]["scope"]),
        (&Value::from("upload"), &Value::from("read"))
    );
    assert_eq!(items[1]["label"], "nightly CI");
    assert_eq!(items[1]["prefix"], read[..11]);
    assert!(items[1]["expires_at"].is_string(), "{page}");
    assert!(!stdout(&out).contains(&read[11..]), "a secret is listed");
    let (upload_id, read_id) = (items[0]["id"].to_string(), items[1]["id"].to_string());

    let out = admin(&p, &dir, &["token", "list", "--project", "p"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = stdout(&out);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    let columns = |line: &str| {
        line.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        columns(lines[0]),
        ["ID", "SCOPE", "PREFIX", "CREATED", "EXPIRES", "LAST", "USED", "LABEL"]
    );
    let row = columns(lines[2]);
    assert_eq!(row.len(), 8, "{table}");
    assert_eq!(
        (row[0].as_str(), row[1].as_str(), row[2].as_str()),
        (read_id.as_str(), "read", &read[..11])
    );
    assert_eq!(
        (row[5].as_str(), row[6].as_str(), row[7].as_str()),
        ("never", "nightly", "CI")
    );
    assert!(row[4].ends_with('Z') && row[4].len() == 20, "{table}");
    assert_eq!(
        columns(lines[1])[4],
        "never",
        "the upload token never expires"
    );
    // The columns line up: each starts where its header does.
    let at = |line: &str, n: usize| line.match_indices(&columns(line)[n]).next().unwrap().0;
    assert_eq!(at(lines[0], 3), at(lines[2], 3), "{table}");

    assert_eq!(status_with(&p, &read), 200);
    let out = admin(&p, &dir, &["token", "revoke", "--project", "p", &read_id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        format!("revoked token {read_id} of project p: it is refused from now on\n")
    );
    assert_eq!(status_with(&p, &read), 401, "revoked");
    assert_eq!(
        status_with(&p, &p.token),
        200,
        "the upload token still works"
    );

    let out = admin(&p, &dir, &["token", "revoke", "--project", "p", &read_id]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(
        text.starts_with(&format!(
            "error: cannot revoke token {read_id} of project `p`: "
        )) && text.contains("404")
            && text.contains(&format!("no token `{read_id}` in project `p`")),
        "{text}"
    );
    let out = admin(&p, &dir, &["token", "list", "--project", "p", "--json"]);
    let page: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["items"][0]["id"].to_string(), upload_id);
}

#[test]
fn token_commands_need_the_admin_token_and_valid_arguments() {
    let p = RealProject::start("tokens-refused");
    let dir = TempDir::new("tokens-refused-cwd");
    // A project token is not the admin token: 403, and with --json the error as JSON.
    let out = benchtrail(
        dir.path(),
        &["token", "list", "--project", "p", "--json"],
        &[
            ("BENCHTRAIL_URL", p.base.as_str()),
            ("BENCHTRAIL_TOKEN", p.token.as_str()),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let error: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(error["error"]["kind"], "problem", "{error}");
    assert_eq!(error["error"]["status"], 403, "{error}");
    assert_eq!(
        error["problem"]["detail"],
        "this needs the admin token, not a project token"
    );
    for days in ["0", "3651", "x"] {
        let out = admin(
            &p,
            &dir,
            &[
                "token",
                "create",
                "--project",
                "p",
                "--expires-in-days",
                days,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{days}");
        assert!(
            stderr(&out).contains("invalid value") && stderr(&out).contains("--expires-in-days"),
            "{days}: {}",
            stderr(&out)
        );
    }
    let out = admin(&p, &dir, &["token", "revoke", "--project", "p", "abc"]);
    assert_eq!(out.status.code(), Some(2));
    // A label the server refuses: its problem, naming the field.
    let long = "x".repeat(101);
    let out = admin(
        &p,
        &dir,
        &["token", "create", "--project", "p", "--label", &long],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a label is at most 100 characters")
            && stderr(&out).contains("at /label"),
        "{}",
        stderr(&out)
    );
}
