//! Buildkite (`BUILDKITE=true`).
//!
//! * commit: `BUILDKITE_COMMIT` when it is a SHA (it may be a symbolic name such as `HEAD`,
//!   which is left to git).
//! * branch: `BUILDKITE_BRANCH`.
//! * pull request: `BUILDKITE_PULL_REQUEST` (`false` when the build is not for one).
//! * merge base: `git merge-base` of `origin/$BUILDKITE_PULL_REQUEST_BASE_BRANCH` (else the
//!   local branch of that name) and the commit, when the checkout has both; else none.
//! * job URL: `$BUILDKITE_BUILD_URL#$BUILDKITE_JOB_ID` (the build page scrolled to the job).

use super::{number, sha, CiContext, MergeBase, Provider, Vars};

/// Whether `vars` are Buildkite's.
pub fn detected(vars: Vars) -> bool {
    vars.is_true("BUILDKITE")
}

/// The context Buildkite gives (see the module documentation).
pub fn read(vars: Vars, merge_base: MergeBase) -> CiContext {
    let mut ctx = CiContext::new(Provider::Buildkite);
    ctx.commit = vars.get("BUILDKITE_COMMIT").and_then(sha);
    ctx.branch = vars.get("BUILDKITE_BRANCH").map(str::to_string);
    ctx.pr = vars.get("BUILDKITE_PULL_REQUEST").and_then(number);
    if let (Some(_), Some(base)) = (ctx.pr, vars.get("BUILDKITE_PULL_REQUEST_BASE_BRANCH")) {
        let head = ctx.commit.as_deref().unwrap_or("HEAD");
        ctx.merge_base =
            merge_base(&format!("origin/{base}"), head).or_else(|| merge_base(base, head));
    }
    ctx.job_url = vars
        .get("BUILDKITE_BUILD_URL")
        .map(|build| match vars.get("BUILDKITE_JOB_ID") {
            Some(job) => format!("{build}#{job}"),
            None => build.to_string(),
        });
    ctx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const BUILD: &str = "https://buildkite.com/acme/llm-bench/builds/1234";
    const JOB: &str = "0190b6b4-6c1e-4a3b-9c8d-7e6f5a4b3c2d";
    const COMMIT: &str = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
    const MERGE_BASE: &str = "ffffffffffffffffffffffffffffffffffffffff";

    #[test]
    fn a_pull_request_build() {
        let v = vars(&[
            ("BUILDKITE", "true"),
            ("BUILDKITE_COMMIT", COMMIT),
            ("BUILDKITE_BRANCH", "feature-z"),
            ("BUILDKITE_PULL_REQUEST", "99"),
            ("BUILDKITE_PULL_REQUEST_BASE_BRANCH", "main"),
            ("BUILDKITE_BUILD_URL", BUILD),
            ("BUILDKITE_JOB_ID", JOB),
        ]);
        let asked = std::cell::RefCell::new(Vec::new());
        let merge_base = |a: &str, b: &str| {
            asked.borrow_mut().push(format!("{a} {b}"));
            (a == "main").then(|| MERGE_BASE.to_string())
        };
        assert_eq!(
            read(Vars(&v), &merge_base),
            CiContext {
                provider: Provider::Buildkite,
                commit: Some(COMMIT.into()),
                branch: Some("feature-z".into()),
                pr: Some(99),
                merge_base: Some(MERGE_BASE.into()),
                job_url: Some(format!("{BUILD}#{JOB}")),
                notes: vec![],
            }
        );
        // The remote-tracking branch first, then a local one.
        assert_eq!(
            *asked.borrow(),
            [format!("origin/main {COMMIT}"), format!("main {COMMIT}")]
        );
    }

    #[test]
    fn a_branch_build_with_a_symbolic_commit() {
        let v = vars(&[
            ("BUILDKITE", "true"),
            ("BUILDKITE_COMMIT", "HEAD"),
            ("BUILDKITE_BRANCH", "main"),
            ("BUILDKITE_PULL_REQUEST", "false"),
            ("BUILDKITE_PULL_REQUEST_BASE_BRANCH", ""),
            ("BUILDKITE_BUILD_URL", BUILD),
        ]);
        let ctx = read(Vars(&v), &|_, _| panic!("not a pull request"));
        assert_eq!(ctx.commit, None);
        assert_eq!(ctx.branch.as_deref(), Some("main"));
        assert_eq!(ctx.pr, None);
        assert_eq!(ctx.job_url.as_deref(), Some(BUILD));
    }
}
