//! `benchtrail upload --parents`: the parents sent instead of git's (a shallow clone records
//! none), stored as given, checked as hex SHAs by the command line; without it, `--commit`
//! keeps git's parents when the checkout has that commit and sends none when it does not.
//! The built binary against a real server (loopback HTTP).

use crate::common;

use common::real::RealProject;
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// `benchtrail upload --json` of the fixture from `dir` with `extra` flags: the stored run.
fn upload(p: &RealProject, dir: &Path, extra: &[&str]) -> Value {
    let file = fixture(FIXTURE);
    let mut args = vec!["upload", "--project", "p", "--json"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    let out = benchtrail(
        dir,
        &args,
        &[("BENCHTRAIL_URL", &p.base), ("BENCHTRAIL_TOKEN", &p.token)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let receipt: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    p.get(&format!(
        "/api/v1/runs/{}",
        receipt["run_id"].as_str().unwrap()
    ))
}

/// A `--depth 1` clone of `repo`: its HEAD has no parents recorded.
fn shallow_clone(repo: &Path) -> TempDir {
    let dir = TempDir::new("shallow");
    let url = format!("file://{}", repo.display());
    git(
        dir.path(),
        &["clone", "-q", "--depth", "1", &url, "."],
        "2026-01-03T00:00:00Z",
    );
    dir
}

#[test]
fn parents_given_on_the_command_line_are_the_stored_commits_parents() {
    let (repo, first, second) = git_repo();
    let shallow = shallow_clone(repo.path());
    let p = RealProject::start("parents");

    // The shallow clone: git knows HEAD but not its parent.
    let run = upload(&p, shallow.path(), &["--branch", "shallow"]);
    assert_eq!(run["commit_sha"], second);
    assert_eq!(run["parent_shas"], json!([]));

    // --parents fills them in, on another branch (another run of the same commit).
    let run = upload(
        &p,
        shallow.path(),
        &["--branch", "given", "--parents", &first],
    );
    assert_eq!(run["commit_sha"], second);
    assert_eq!(run["parent_shas"], json!([first]));

    // A merge commit that is not in the checkout, its two parents in order (comma-separated
    // or repeated); an abbreviation the checkout knows is sent in full, full SHAs as given.
    let merge = "c0ffee0000000000000000000000000000000001";
    let run = upload(
        &p,
        shallow.path(),
        &[
            "--branch",
            "merge",
            "--commit",
            merge,
            "--parents",
            "abcdef0123456789abcdef0123456789abcdef01,1234567000000000000000000000000000000000",
            "--parents",
            &second[..12],
        ],
    );
    assert_eq!(run["commit_sha"], merge);
    assert_eq!(
        run["parent_shas"],
        json!([
            "abcdef0123456789abcdef0123456789abcdef01",
            "1234567000000000000000000000000000000000",
            second
        ])
    );
}

#[test]
fn an_abbreviated_parent_the_checkout_cannot_expand_is_refused() {
    let (repo, _, _) = git_repo();
    let p = RealProject::start("short-parent");
    let file = fixture(FIXTURE);
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--project",
            "p",
            "--parents",
            "1234567",
            file.to_str().unwrap(),
        ],
        &[("BENCHTRAIL_URL", &p.base), ("BENCHTRAIL_TOKEN", &p.token)],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: --parents 1234567: an abbreviated SHA this checkout cannot expand; pass the \
         full 40-digit SHA (the server matches parents to commits exactly)\n"
    );
}

#[test]
fn commit_without_parents_keeps_what_git_knows() {
    let (repo, first, second) = git_repo();
    let p = RealProject::start("commit-only");
    // In the checkout: its parents from git.
    let run = upload(
        &p,
        repo.path(),
        &["--commit", &second[..10], "--branch", "a"],
    );
    assert_eq!(
        (&run["commit_sha"], &run["parent_shas"]),
        (&json!(second), &json!([first]))
    );
    // Not in the checkout: none.
    let other = "0123456789abcdef0123456789abcdef01234567";
    let run = upload(&p, repo.path(), &["--commit", other, "--branch", "b"]);
    assert_eq!(
        (&run["commit_sha"], &run["parent_shas"]),
        (&json!(other), &json!([]))
    );
}

#[test]
fn a_parent_that_is_not_a_hex_sha_is_a_usage_error() {
    let (repo, _, _) = git_repo();
    let file = fixture(FIXTURE);
    for (value, bad) in [
        ("abc123", "abc123"),
        ("abcdef1,HEAD~1", "HEAD~1"),
        ("abcdef1,", ""),
    ] {
        let out = benchtrail(
            repo.path(),
            &[
                "upload",
                "--dry-run",
                "--parents",
                value,
                file.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "{value}");
        assert_eq!(
            stderr(&out),
            format!(
                "error: invalid value '{bad}' for '--parents <SHA[,SHA...]>': `{bad}` is not a \
                 commit SHA: expected 7 to 64 hex digits (0-9, a-f)\n\nFor more information, \
                 try '--help'.\n"
            ),
            "{value}"
        );
        assert_eq!(stdout(&out), "");
    }
    // --dry-run shows what would be sent: hex in any case, sent lowercase as git writes it.
    let out = benchtrail(
        repo.path(),
        &[
            "upload",
            "--dry-run",
            "--parents",
            "ABCDEF0123456789ABCDEF0123456789ABCDEF01",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        doc["run"]["commit"]["parents"],
        json!(["abcdef0123456789abcdef0123456789abcdef01"])
    );
}
