//! GitHub Actions (`GITHUB_ACTIONS=true`).
//!
//! * commit: on an event with a pull request (`pull_request`, `pull_request_target`, ...), the
//!   PR's head, `pull_request.head.sha` of the event payload (`$GITHUB_EVENT_PATH`):
//!   `GITHUB_SHA` is then the merge commit GitHub made of the head and the base branch (for
//!   `pull_request_target`, the base branch's tip), which is no commit of the PR's history.
//!   Otherwise `GITHUB_SHA`. (`actions/checkout` checks out that merge commit by default; check
//!   out `${{ github.event.pull_request.head.sha }}` to measure exactly the head.)
//! * branch: `GITHUB_HEAD_REF` (the PR's source branch), else the payload's
//!   `pull_request.head.ref`, else `GITHUB_REF_NAME` when `GITHUB_REF_TYPE` is `branch`.
//! * pull request: the payload's `pull_request.number`, else `N` of `GITHUB_REF=refs/pull/N/merge`.
//! * merge base: `git merge-base` of the payload's `pull_request.base.sha` (the base branch's
//!   tip when the event fired, not the merge base) and the head, when the checkout has both
//!   (`fetch-depth: 0`); else none.
//! * job URL: `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`.

use super::{number, sha, CiContext, MergeBase, Provider, Vars};
use serde_json::Value;

/// Whether `vars` are GitHub Actions'.
pub fn detected(vars: Vars) -> bool {
    vars.is_true("GITHUB_ACTIONS")
}

/// The context GitHub Actions gives (see the module documentation); an event payload that
/// cannot be read or parsed is a note, and the variables alone are used.
pub fn read(vars: Vars, merge_base: MergeBase) -> CiContext {
    let mut ctx = CiContext::new(Provider::GitHubActions);
    let payload = vars.get("GITHUB_EVENT_PATH").and_then(|path| {
        match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
        {
            Ok(v) => Some(v),
            Err(e) => {
                ctx.notes.push(format!(
                    "GitHub Actions: cannot read the event payload `{path}` ({e}); using the \
                     GITHUB_* variables only"
                ));
                None
            }
        }
    });
    let pr = payload
        .as_ref()
        .map(|p| &p["pull_request"])
        .filter(|pr| pr.is_object());
    let head = pr.and_then(|pr| text(&pr["head"]["sha"])).and_then(sha);
    let github_sha = vars.get("GITHUB_SHA").and_then(sha);
    ctx.commit = head.clone().or_else(|| github_sha.clone());
    if let (Some(head), Some(merge)) = (&head, &github_sha) {
        if head != merge {
            ctx.notes.push(format!(
                "GitHub Actions: recording the pull request's head {} as the commit \
                 (GITHUB_SHA {} is the merge commit GitHub made); --commit overrides",
                short(head),
                short(merge)
            ));
        }
    }
    ctx.branch = vars
        .get("GITHUB_HEAD_REF")
        .or_else(|| pr.and_then(|pr| text(&pr["head"]["ref"])))
        .or_else(|| {
            (vars.get("GITHUB_REF_TYPE") == Some("branch"))
                .then(|| vars.get("GITHUB_REF_NAME"))
                .flatten()
        })
        .map(str::to_string);
    ctx.pr = pr.and_then(|pr| pr["number"].as_u64()).or_else(|| {
        vars.get("GITHUB_REF")?
            .strip_prefix("refs/pull/")?
            .split('/')
            .next()
            .and_then(number)
    });
    let base = pr.and_then(|pr| text(&pr["base"]["sha"])).and_then(sha);
    if let (Some(base), Some(head)) = (base, &head) {
        ctx.merge_base = merge_base(&base, head);
    }
    ctx.job_url = (|| {
        Some(format!(
            "{}/{}/actions/runs/{}",
            vars.get("GITHUB_SERVER_URL")?.trim_end_matches('/'),
            vars.get("GITHUB_REPOSITORY")?,
            vars.get("GITHUB_RUN_ID")?
        ))
    })();
    ctx
}

/// A non-blank string of the payload, trimmed.
fn text(v: &Value) -> Option<&str> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// The first 12 digits of a SHA, as notes print commits.
fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const HEAD: &str = "1111111111111111111111111111111111111111";
    const MERGE: &str = "2222222222222222222222222222222222222222";
    const BASE_TIP: &str = "3333333333333333333333333333333333333333";
    const MERGE_BASE: &str = "4444444444444444444444444444444444444444";

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn common() -> Vec<(&'static str, &'static str)> {
        vec![
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/llm"),
            ("GITHUB_RUN_ID", "987654"),
        ]
    }

    /// A temporary event payload, removed on drop.
    struct Payload(std::path::PathBuf);

    impl Payload {
        fn write(tag: &str, json: &Value) -> Payload {
            let path = std::env::temp_dir().join(format!(
                "benchtrail-gh-event-{tag}-{}.json",
                std::process::id()
            ));
            std::fs::write(&path, json.to_string()).unwrap();
            Payload(path)
        }
    }

    impl Drop for Payload {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn a_push_reads_the_variables() {
        let mut pairs = common();
        pairs.extend([
            ("GITHUB_EVENT_NAME", "push"),
            ("GITHUB_SHA", "ABCDEF0123456789ABCDEF0123456789ABCDEF01"),
            ("GITHUB_REF", "refs/heads/main"),
            ("GITHUB_REF_NAME", "main"),
            ("GITHUB_REF_TYPE", "branch"),
        ]);
        let ctx = read(Vars(&vars(&pairs)), &|_, _| panic!("no PR, no merge base"));
        assert_eq!(
            ctx,
            CiContext {
                provider: Provider::GitHubActions,
                commit: Some("abcdef0123456789abcdef0123456789abcdef01".into()),
                branch: Some("main".into()),
                pr: None,
                merge_base: None,
                job_url: Some("https://github.com/acme/llm/actions/runs/987654".into()),
                notes: vec![],
            }
        );
    }

    #[test]
    fn a_tag_push_has_no_branch() {
        let mut pairs = common();
        pairs.extend([("GITHUB_REF_NAME", "v1.0"), ("GITHUB_REF_TYPE", "tag")]);
        assert_eq!(read(Vars(&vars(&pairs)), &|_, _| None).branch, None);
    }

    #[test]
    fn a_pull_request_event_records_the_head_and_computes_the_merge_base() {
        let payload = Payload::write(
            "pr",
            &serde_json::json!({
                "action": "synchronize",
                "number": 42,
                "pull_request": {
                    "number": 42,
                    "head": {"sha": HEAD, "ref": "feature-x"},
                    "base": {"sha": BASE_TIP, "ref": "main"},
                }
            }),
        );
        let path = payload.0.display().to_string();
        let mut pairs = common();
        pairs.extend([
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_EVENT_PATH", path.as_str()),
            ("GITHUB_SHA", MERGE),
            ("GITHUB_REF", "refs/pull/42/merge"),
            ("GITHUB_REF_NAME", "42/merge"),
            ("GITHUB_REF_TYPE", "branch"),
            ("GITHUB_HEAD_REF", "feature-x"),
            ("GITHUB_BASE_REF", "main"),
        ]);
        let asked = std::cell::RefCell::new(Vec::new());
        let merge_base = |a: &str, b: &str| {
            asked.borrow_mut().push((a.to_string(), b.to_string()));
            Some(MERGE_BASE.to_string())
        };
        let ctx = read(Vars(&vars(&pairs)), &merge_base);
        assert_eq!(ctx.commit.as_deref(), Some(HEAD));
        assert_eq!(ctx.branch.as_deref(), Some("feature-x"));
        assert_eq!(ctx.pr, Some(42));
        assert_eq!(ctx.merge_base.as_deref(), Some(MERGE_BASE));
        assert_eq!(
            ctx.job_url.as_deref(),
            Some("https://github.com/acme/llm/actions/runs/987654")
        );
        // The merge base is asked of the base branch's tip and the head.
        assert_eq!(*asked.borrow(), [(BASE_TIP.to_string(), HEAD.to_string())]);
        assert_eq!(
            ctx.notes,
            [
                "GitHub Actions: recording the pull request's head 111111111111 as the commit \
              (GITHUB_SHA 222222222222 is the merge commit GitHub made); --commit overrides"
            ]
        );

        // A shallow checkout that lacks the base: no merge base, the rest unchanged.
        let ctx = read(Vars(&vars(&pairs)), &|_, _| None);
        assert_eq!((ctx.merge_base, ctx.pr), (None, Some(42)));
    }

    #[test]
    fn without_a_readable_payload_the_ref_gives_the_pr_number() {
        let mut pairs = common();
        pairs.extend([
            ("GITHUB_EVENT_PATH", "/nonexistent/event.json"),
            ("GITHUB_SHA", MERGE),
            ("GITHUB_REF", "refs/pull/7/merge"),
            ("GITHUB_HEAD_REF", "fix"),
        ]);
        let ctx = read(Vars(&vars(&pairs)), &|_, _| None);
        assert_eq!(ctx.commit.as_deref(), Some(MERGE));
        assert_eq!(ctx.pr, Some(7));
        assert_eq!(ctx.branch.as_deref(), Some("fix"));
        assert_eq!(ctx.merge_base, None);
        assert_eq!(ctx.notes.len(), 1);
        assert!(
            ctx.notes[0].starts_with(
                "GitHub Actions: cannot read the event payload `/nonexistent/event.json` ("
            ),
            "{:?}",
            ctx.notes
        );
    }
}
