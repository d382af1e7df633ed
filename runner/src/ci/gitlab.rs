//! GitLab CI (`GITLAB_CI=true`).
//!
//! * commit: `CI_MERGE_REQUEST_SOURCE_BRANCH_SHA` (the merge request's head; set only in
//!   merged-results pipelines, whose `CI_COMMIT_SHA` is the merge result), else `CI_COMMIT_SHA`.
//! * branch: `CI_MERGE_REQUEST_SOURCE_BRANCH_NAME`, else `CI_COMMIT_BRANCH` (unset for tags).
//! * merge request: `CI_MERGE_REQUEST_IID` (the number in the project's MR URLs).
//! * merge base: `CI_MERGE_REQUEST_DIFF_BASE_SHA` (GitLab computes it: the base of the MR's diff).
//! * job URL: `CI_JOB_URL`.

use super::{number, sha, CiContext, Provider, Vars};

/// Whether `vars` are GitLab CI's.
pub fn detected(vars: Vars) -> bool {
    vars.is_true("GITLAB_CI")
}

/// The context GitLab CI gives (see the module documentation).
pub fn read(vars: Vars) -> CiContext {
    let mut ctx = CiContext::new(Provider::GitLabCi);
    ctx.commit = vars
        .get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")
        .and_then(sha)
        .or_else(|| vars.get("CI_COMMIT_SHA").and_then(sha));
    ctx.branch = vars
        .get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME")
        .or_else(|| vars.get("CI_COMMIT_BRANCH"))
        .map(str::to_string);
    ctx.pr = vars.get("CI_MERGE_REQUEST_IID").and_then(number);
    ctx.merge_base = ctx
        .pr
        .and(vars.get("CI_MERGE_REQUEST_DIFF_BASE_SHA"))
        .and_then(sha);
    ctx.job_url = vars.get("CI_JOB_URL").map(str::to_string);
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

    const JOB: &str = "https://gitlab.example.com/acme/llm/-/jobs/4242";

    #[test]
    fn a_branch_pipeline() {
        let v = vars(&[
            ("GITLAB_CI", "true"),
            ("CI_COMMIT_SHA", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
            ("CI_COMMIT_BRANCH", "main"),
            ("CI_JOB_URL", JOB),
            // Empty, as GitLab exports it outside merged-results pipelines.
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", ""),
        ]);
        assert_eq!(
            read(Vars(&v)),
            CiContext {
                provider: Provider::GitLabCi,
                commit: Some("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into()),
                branch: Some("main".into()),
                pr: None,
                merge_base: None,
                job_url: Some(JOB.into()),
                notes: vec![],
            }
        );
    }

    #[test]
    fn a_merged_results_pipeline_records_the_source_head() {
        let v = vars(&[
            ("GITLAB_CI", "true"),
            ("CI_COMMIT_SHA", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
            (
                "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA",
                "cccccccccccccccccccccccccccccccccccccccc",
            ),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feature-y"),
            ("CI_MERGE_REQUEST_IID", "17"),
            (
                "CI_MERGE_REQUEST_DIFF_BASE_SHA",
                "dddddddddddddddddddddddddddddddddddddddd",
            ),
            ("CI_JOB_URL", JOB),
        ]);
        let ctx = read(Vars(&v));
        assert_eq!(
            ctx.commit.as_deref(),
            Some("cccccccccccccccccccccccccccccccccccccccc")
        );
        assert_eq!(ctx.branch.as_deref(), Some("feature-y"));
        assert_eq!(ctx.pr, Some(17));
        assert_eq!(
            ctx.merge_base.as_deref(),
            Some("dddddddddddddddddddddddddddddddddddddddd")
        );
        assert_eq!(ctx.job_url.as_deref(), Some(JOB));
    }
}
