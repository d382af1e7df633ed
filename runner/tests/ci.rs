//! CI metadata through the built binary: `upload --dry-run` in a real git repository with
//! GitHub Actions' variables and event payload of a `pull_request` event set on the child
//! process (the merge commit as `GITHUB_SHA`, the PR's head and base in the payload), and the
//! flags that win over them.

use crate::common;

use common::*;
use serde_json::{json, Value};

const DATE: &str = "2026-01-03T10:00:00Z";

/// A repository where `main` moved on after `feature-x` branched off:
/// `base` ← `head` (feature-x) and `base` ← `tip` (main); returns the directory and the
/// three SHAs. HEAD is left on a merge of the two, as `actions/checkout` leaves a PR's merge
/// commit checked out.
fn pr_repo() -> (TempDir, String, String, String, String) {
    let (dir, _, base) = git_repo(); // on feature-x
    let p = dir.path();
    git(p, &["branch", "main"], DATE);
    std::fs::write(p.join("b.txt"), "feature\n").unwrap();
    git(p, &["add", "b.txt"], DATE);
    git(p, &["commit", "-q", "-m", "Speed up decode"], DATE);
    let head = git(p, &["rev-parse", "HEAD"], DATE);
    git(p, &["checkout", "-q", "main"], DATE);
    std::fs::write(p.join("c.txt"), "main\n").unwrap();
    git(p, &["add", "c.txt"], DATE);
    git(p, &["commit", "-q", "-m", "Bump deps"], DATE);
    let tip = git(p, &["rev-parse", "HEAD"], DATE);
    git(p, &["checkout", "-q", "--detach", &tip], DATE);
    git(p, &["merge", "-q", "--no-ff", "-m", "Merge", &head], DATE);
    let merge = git(p, &["rev-parse", "HEAD"], DATE);
    (dir, base, head, tip, merge)
}

fn dry_run(dir: &TempDir, extra: &[&str], vars: &[(&str, &str)]) -> (Value, String) {
    let file = fixture(FIXTURE);
    let mut args = vec!["upload", "--dry-run", "--cell", "scenario=chat"];
    args.extend_from_slice(extra);
    args.push(file.to_str().unwrap());
    let out = benchtrail(dir.path(), &args, vars);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (serde_json::from_str(&stdout(&out)).unwrap(), stderr(&out))
}

#[test]
fn a_github_pull_request_event_fills_commit_branch_pr_merge_base_and_job_url() {
    let (repo, base, head, tip, merge) = pr_repo();
    let event = TempDir::new("gh-event");
    let event_path = event.path().join("event.json");
    std::fs::write(
        &event_path,
        json!({"action": "synchronize", "number": 42, "pull_request": {
            "number": 42,
            "head": {"sha": head, "ref": "feature-x"},
            "base": {"sha": tip, "ref": "main"}}})
        .to_string(),
    )
    .unwrap();
    let event_path = event_path.display().to_string();
    let vars = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_EVENT_PATH", event_path.as_str()),
        ("GITHUB_SHA", merge.as_str()),
        ("GITHUB_REF", "refs/pull/42/merge"),
        ("GITHUB_REF_NAME", "42/merge"),
        ("GITHUB_REF_TYPE", "branch"),
        ("GITHUB_HEAD_REF", "feature-x"),
        ("GITHUB_BASE_REF", "main"),
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_REPOSITORY", "acme/llm"),
        ("GITHUB_RUN_ID", "987654"),
    ];
    let (doc, err) = dry_run(&repo, &[], &vars);
    assert_eq!(
        doc["run"],
        json!({
            // The PR's head, not the merge commit GITHUB_SHA names; detailed from the checkout.
            "commit": {"sha": head, "parents": [base], "time": DATE, "subject": "Speed up decode"},
            "branch": "feature-x",
            // git merge-base of the base branch's tip and the head.
            "pull_request": {"number": 42, "merge_base": base},
            "ci_job_url": "https://github.com/acme/llm/actions/runs/987654",
            "repeat_index": 0,
        })
    );
    assert!(
        err.contains(&format!(
            "note: GitHub Actions: recording the pull request's head {} as the commit (GITHUB_SHA {} \
             is the merge commit GitHub made); --commit overrides",
            &head[..12],
            &merge[..12]
        )),
        "{err}"
    );

    // Flags win over each value; the CI's merge base belongs to the CI's PR only.
    let (doc, err) = dry_run(
        &repo,
        &[
            "--commit",
            &tip,
            "--branch",
            "main",
            "--pr",
            "7",
            "--ci-job-url",
            "https://ci.example/1",
        ],
        &vars,
    );
    assert_eq!(doc["run"]["commit"]["sha"], tip.as_str());
    assert_eq!(doc["run"]["branch"], "main");
    assert_eq!(doc["run"]["pull_request"], json!({"number": 7}));
    assert_eq!(doc["run"]["ci_job_url"], "https://ci.example/1");
    assert!(!err.contains("GitHub Actions"), "{err}");

    // The same variables outside Actions (no GITHUB_ACTIONS=true) are ignored: git decides.
    let outside: Vec<_> = vars[1..].to_vec();
    let (doc, _) = dry_run(&repo, &[], &outside);
    assert_eq!(doc["run"]["commit"]["sha"], merge.as_str());
    assert_eq!(doc["run"].get("pull_request"), None);
    assert_eq!(doc["run"].get("ci_job_url"), None);
}

#[test]
fn a_gitlab_merge_request_pipeline() {
    let (repo, base, head, _, _) = pr_repo();
    let vars = [
        ("GITLAB_CI", "true"),
        ("CI_COMMIT_SHA", head.as_str()),
        ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feature-x"),
        ("CI_MERGE_REQUEST_IID", "17"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base.as_str()),
        (
            "CI_JOB_URL",
            "https://gitlab.example.com/acme/llm/-/jobs/4242",
        ),
    ];
    let (doc, _) = dry_run(&repo, &[], &vars);
    assert_eq!(doc["run"]["commit"]["sha"], head.as_str());
    assert_eq!(doc["run"]["branch"], "feature-x");
    assert_eq!(
        doc["run"]["pull_request"],
        json!({"number": 17, "merge_base": base})
    );
    assert_eq!(
        doc["run"]["ci_job_url"],
        "https://gitlab.example.com/acme/llm/-/jobs/4242"
    );
}
