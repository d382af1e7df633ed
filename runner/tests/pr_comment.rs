//! `--github-comment` and `--gitlab-comment` against a fake GitHub and GitLab on loopback
//! (real HTTP servers: tests/common/forge.rs) and a real benchtrail server (SQLite): the exact
//! requests of a first report (one comment created, found again across > 100 comments by a
//! fresh process), a rerun (no edit), a second suite (a section of the same comment), a clean
//! push ("no regressions at <sha>"), a passing first report (nothing posted unless
//! `--comment-always`), and the forge's faults: 403, 404, 422 (a warning, the verdict's exit
//! status kept), 5xx and rate limits (retried).

use crate::common;

use common::forge::{FakeForge, Seen};
use common::real::RealProject;
use common::*;
use serde_json::Value;
use std::path::Path;

const MAIN: [&str; 3] = [
    "goodput_baseline_s11_c4.json",
    "goodput_baseline_s12_c4.json",
    "goodput_baseline_s13_c4.json",
];

fn sha(i: u32) -> String {
    format!("{:040x}", 0xc0ffee00 + i)
}

fn upload(p: &RealProject, dir: &Path, args: &[&str], file: &str) -> String {
    let path = example(file);
    let mut all = vec!["upload", "--project", "p", "--json"];
    all.extend_from_slice(args);
    all.push(path.to_str().unwrap());
    let out = benchtrail(
        dir,
        &all,
        &[("BENCHTRAIL_URL", &p.base), ("BENCHTRAIL_TOKEN", &p.token)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let receipt: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    receipt["run_id"].as_str().unwrap().to_string()
}

/// A main-branch history of three commits, and two pushes of PR 7 on `feature` (merge base:
/// the last main commit): the first trades TTFT for throughput (fail), the second measures
/// what main does (pass). Returns (failing run, passing run).
fn history(p: &RealProject, dir: &Path) -> (String, String) {
    let mut parent: Option<String> = None;
    for (i, f) in MAIN.iter().enumerate() {
        let s = sha(i as u32);
        let mut args = vec!["--commit", &s, "--branch", "main"];
        if let Some(par) = &parent {
            args.extend(["--parents", par]);
        }
        upload(p, dir, &args, f);
        parent = Some(s);
    }
    let base = sha(2);
    let pr = |commit: &str, parent: &str, file: &str| {
        upload(
            p,
            dir,
            &[
                "--commit",
                commit,
                "--parents",
                parent,
                "--branch",
                "feature",
                "--pr",
                "7",
                "--merge-base",
                &base,
            ],
            file,
        )
    };
    let failing = pr(&sha(10), &base, "goodput_candidate_s21_c4.json");
    let passing = pr(&sha(11), &sha(10), "goodput_baseline_s12_c4.json");
    (failing, passing)
}

fn github_env<'a>(p: &'a RealProject, forge: &'a FakeForge) -> Vec<(&'a str, &'a str)> {
    vec![
        ("BENCHTRAIL_URL", p.base.as_str()),
        ("GITHUB_TOKEN", "ghs_test"),
        ("GITHUB_REPOSITORY", "acme/engine"),
        ("GITHUB_API_URL", forge.base.as_str()),
    ]
}

fn calls(seen: &[Seen]) -> Vec<String> {
    seen.iter()
        .map(|s| format!("{} {}", s.method, s.uri))
        .collect()
}

const LIST_1: &str = "GET /repos/acme/engine/issues/7/comments?per_page=100";
const LIST_2: &str = "GET /repos/acme/engine/issues/7/comments?per_page=100&page=2";
const POST: &str = "POST /repos/acme/engine/issues/7/comments";

#[test]
fn one_sticky_github_comment_created_found_again_sectioned_and_cleared() {
    let p = RealProject::start("gh-comment");
    let dir = TempDir::new("gh-comment-cwd");
    let (failing, passing) = history(&p, dir.path());
    let forge = FakeForge::start();
    forge.seed(7, 150, 0);
    let env = github_env(&p, &forge);
    let check = |run: &str, extra: &[&str]| {
        let mut args = vec!["check", "--run", run, "--github-comment"];
        args.extend_from_slice(extra);
        benchtrail(dir.path(), &args, &env)
    };

    // First report: both pages listed, one comment created; the exit status is the verdict's.
    let out = check(&failing, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let seen = forge.take_seen();
    assert_eq!(calls(&seen), [LIST_1, LIST_2, POST]);
    assert!(seen
        .iter()
        .all(|s| s.auth.as_deref() == Some("Bearer ghs_test")));
    let ours = forge.ours(7);
    assert_eq!(ours.len(), 1);
    let (id, body) = ours[0].clone();
    assert!(
        body.starts_with(
            "<!-- benchtrail:comment project=p -->\n<!-- benchtrail:suite benchmarks -->\n\
         ### benchtrail: ❌ **FAIL** at `"
        ),
        "{body}"
    );
    assert!(body.contains(&format!("at `{}`", &sha(10)[..12])), "{body}");
    assert!(
        body.contains("#### Regressions and trade-offs\n\n- ❌ trade-off"),
        "{body}"
    );
    assert!(
        body.contains(&format!("[run]({}/runs/{failing})", p.base)),
        "{body}"
    );
    assert!(
        stderr(&out).ends_with(&format!("GitHub: comment {id} created\n")),
        "{}",
        stderr(&out)
    );

    // A fresh process finds it on page 2 and, the report unchanged, edits nothing.
    let out = check(&failing, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(calls(&forge.take_seen()), [LIST_1, LIST_2]);
    assert!(stderr(&out).ends_with(&format!("GitHub: comment {id} already says this\n")));

    // Another suite of the project: a section of the same comment, sorted by suite name.
    let out = check(&failing, &["--suite", "a-long-context"]);
    assert_eq!(out.status.code(), Some(1));
    let seen = forge.take_seen();
    assert_eq!(
        calls(&seen),
        [
            LIST_1,
            LIST_2,
            &format!("PATCH /repos/acme/engine/issues/comments/{id}")
        ]
    );
    let body = seen[2].body.clone().unwrap();
    let a = body
        .find("<!-- benchtrail:suite a-long-context -->")
        .unwrap();
    let b = body.find("<!-- benchtrail:suite benchmarks -->").unwrap();
    assert!(
        body.starts_with("<!-- benchtrail:comment project=p -->\n") && a < b,
        "{body}"
    );
    assert_eq!(forge.ours(7).len(), 1);

    // A clean push: the same comment now says so, naming the new head.
    let out = check(&passing, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = forge.take_seen();
    assert_eq!(seen.len(), 3, "{seen:?}");
    let body = seen[2].body.clone().unwrap();
    assert!(body.contains(&format!(
        "<!-- benchtrail:suite benchmarks -->\n### benchtrail: ✅ **PASS** — no regressions at `{}`",
        &sha(11)[..12]
    )), "{body}");
    assert!(body.contains("<!-- benchtrail:suite a-long-context -->\n### benchtrail: ❌ **FAIL**"));

    // A passing report on a PR with no comment of ours: nothing posted unless asked.
    let out = check(&passing, &["--pr", "8"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        calls(&forge.take_seen()),
        ["GET /repos/acme/engine/issues/8/comments?per_page=100"]
    );
    assert!(stderr(&out).ends_with(
        "GitHub: no comment: the verdict passes and none exists yet (--comment-always posts one)\n"
    ));
    let out = check(&passing, &["--pr", "8", "--comment-always"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        calls(&forge.take_seen()),
        [
            "GET /repos/acme/engine/issues/8/comments?per_page=100",
            "POST /repos/acme/engine/issues/8/comments"
        ]
    );
}

#[test]
fn github_faults_are_retried_or_warned_about_and_never_change_the_exit_status() {
    let p = RealProject::start("gh-faults");
    let dir = TempDir::new("gh-faults-cwd");
    let (failing, _) = history(&p, dir.path());
    let forge = FakeForge::start();
    let env = github_env(&p, &forge);
    let check = || {
        benchtrail(
            dir.path(),
            &["check", "--run", &failing, "--github-comment", "--pr", "9"],
            &env,
        )
    };
    let list = "GET /repos/acme/engine/issues/9/comments?per_page=100";
    let post = "POST /repos/acme/engine/issues/9/comments";

    // A 502, then a secondary rate limit (403 with Retry-After), then a 429: each retried
    // (the fourth try lists), then the POST.
    forge.fail_next(502, &[]);
    forge.fail_next(403, &[("retry-after", "1")]);
    forge.fail_next(429, &[("retry-after", "1")]);
    let out = check();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(calls(&forge.take_seen()), [list, list, list, list, post]);
    let err = stderr(&out);
    assert!(
        err.contains("GET pull-request comments: HTTP 502, retrying in 1 s (attempt 2 of 4)"),
        "{err}"
    );
    assert!(
        err.contains("GET pull-request comments: HTTP 403, retrying in 1 s (attempt 3 of 4)"),
        "{err}"
    );
    assert!(
        err.contains("GET pull-request comments: HTTP 429, retrying in 1 s (attempt 4 of 4)"),
        "{err}"
    );
    assert_eq!(forge.ours(9).len(), 1);

    // The primary rate limit: 403 with no requests left, until x-ratelimit-reset.
    let reset = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 1)
    .to_string();
    forge.fail_next(
        403,
        &[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", &reset),
        ],
    );
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(calls(&forge.take_seen()), [list, list]);

    // A permission 403 (a fork's read-only token), a 404 and a 422: not retried, a warning,
    // the verdict's exit status.
    for (status, what) in [
        (403, "the token may not do this"),
        (404, "no such repository"),
        (422, "fake fault 422"),
    ] {
        forge.fail_next(status, &[]);
        let out = check();
        assert_eq!(out.status.code(), Some(1), "{status}: {}", stderr(&out));
        assert_eq!(calls(&forge.take_seen()), [list], "{status}");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("warning: the PR comment was not written: HTTP {status} from GET pull-request comments")),
            "{err}"
        );
        assert!(err.contains(what), "{err}");
    }

    // 5xx every time: four tries, then a warning.
    for _ in 0..4 {
        forge.fail_next(503, &[]);
    }
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(calls(&forge.take_seen()), [list, list, list, list]);
    assert!(stderr(&out).contains(
        "warning: the PR comment was not written: HTTP 503 from GET pull-request comments"
    ));

    // No token: a warning naming it, no request.
    let bare: Vec<(&str, &str)> = env
        .iter()
        .copied()
        .filter(|(k, _)| *k != "GITHUB_TOKEN")
        .collect();
    let out = benchtrail(
        dir.path(),
        &["check", "--run", &failing, "--github-comment"],
        &bare,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(forge.take_seen().is_empty());
    assert!(stderr(&out)
        .contains("warning: the PR comment was not written: --github-comment needs GITHUB_TOKEN"));
}

#[test]
fn one_sticky_gitlab_note_across_pages_and_pushes() {
    let p = RealProject::start("gl-comment");
    let dir = TempDir::new("gl-comment-cwd");
    let (failing, passing) = history(&p, dir.path());
    let forge = FakeForge::start();
    forge.seed(7, 120, 5);
    let api = format!("{}/api/v4", forge.base);
    let env = [
        ("BENCHTRAIL_URL", p.base.as_str()),
        ("GITLAB_TOKEN", "glpat-test"),
        ("CI_PROJECT_ID", "42"),
        ("CI_API_V4_URL", api.as_str()),
        ("CI_MERGE_REQUEST_IID", "7"),
    ];
    let notes = "/api/v4/projects/42/merge_requests/7/notes";
    let page = |n: u32| format!("GET {notes}?per_page=100&sort=asc&order_by=created_at&page={n}");
    let out = benchtrail(
        dir.path(),
        &["check", "--run", &failing, "--gitlab-comment"],
        &env,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let seen = forge.take_seen();
    assert_eq!(calls(&seen), [page(1), page(2), format!("POST {notes}")]);
    assert!(seen.iter().all(|s| s.auth.as_deref() == Some("glpat-test")));
    let (id, _) = forge.ours(7)[0].clone();
    let out = benchtrail(
        dir.path(),
        &["check", "--run", &passing, "--gitlab-comment"],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = forge.take_seen();
    assert_eq!(
        calls(&seen),
        [page(1), page(2), format!("PUT {notes}/{id}")]
    );
    assert!(seen[2]
        .body
        .as_deref()
        .unwrap()
        .contains("✅ **PASS** — no regressions at"));
    assert_eq!(forge.ours(7).len(), 1);
}

#[test]
fn the_job_summary_gets_the_markdown_report() {
    let p = RealProject::start("summary");
    let dir = TempDir::new("summary-cwd");
    let (failing, _) = history(&p, dir.path());
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = benchtrail(
        dir.path(),
        &["check", "--run", &failing],
        &[
            ("BENCHTRAIL_URL", p.base.as_str()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n### benchtrail: ❌ **FAIL** at `"),
        "{text}"
    );
    // The same Markdown the server serves for the run.
    let served = reqwest::blocking::get(format!(
        "{}/api/v1/runs/{failing}/report?format=markdown",
        p.base
    ))
    .unwrap()
    .text()
    .unwrap();
    assert_eq!(&text["earlier step\n".len()..], served);
}
