//! Run metadata from the CI system the CLI runs in: GitHub Actions ([`github`]), GitLab CI
//! ([`gitlab`]) and Buildkite ([`buildkite`]), each detected by its marker variable
//! (`GITHUB_ACTIONS=true`, `GITLAB_CI=true`, `BUILDKITE=true`; checked in that order).
//!
//! Every provider reads the environment through a [`Vars`] map (never `std::env` directly), so
//! tests are deterministic and run in parallel; a merge base that must be computed asks
//! [`MergeBase`] (in the CLI, `git merge-base` in the checkout). What a flag gives always wins
//! over what is read here (see [`crate::document`]).

pub mod buildkite;
pub mod github;
pub mod gitlab;

use std::collections::HashMap;

/// The environment variables a provider reads: a value is `None` when unset or empty (CI
/// systems export many variables empty).
#[derive(Debug, Clone, Copy)]
pub struct Vars<'a>(pub &'a HashMap<String, String>);

impl<'a> Vars<'a> {
    /// The trimmed value of `name`; `None` when unset or blank.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    /// Whether `name` is `true` (the providers' marker variables).
    pub fn is_true(&self, name: &str) -> bool {
        self.get(name) == Some("true")
    }
}

/// The merge base of two revisions (SHAs or refs), `None` when it cannot be computed (a
/// revision missing from a shallow checkout, no git).
pub type MergeBase<'a> = &'a dyn Fn(&str, &str) -> Option<String>;

/// The CI system detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// GitHub Actions (`GITHUB_ACTIONS=true`).
    GitHubActions,
    /// GitLab CI (`GITLAB_CI=true`).
    GitLabCi,
    /// Buildkite (`BUILDKITE=true`).
    Buildkite,
}

impl Provider {
    /// The provider's name, for notes: `GitHub Actions`, `GitLab CI`, `Buildkite`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::GitHubActions => "GitHub Actions",
            Provider::GitLabCi => "GitLab CI",
            Provider::Buildkite => "Buildkite",
        }
    }
}

/// What the CI environment says about the run; each field `None` when the provider does not
/// say (then git or nothing fills it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiContext {
    /// The provider.
    pub provider: Provider,
    /// The commit measured (hex SHA): for a pull/merge request, the head of its source branch,
    /// not the merge commit the CI may have checked out (see each provider).
    pub commit: Option<String>,
    /// The branch (a pull/merge request's source branch).
    pub branch: Option<String>,
    /// The pull-request (GitHub, Buildkite) or merge-request (GitLab, its IID) number.
    pub pr: Option<u64>,
    /// The merge base of the pull request's head with its base branch (full SHA).
    pub merge_base: Option<String>,
    /// The link to the CI job.
    pub job_url: Option<String>,
    /// What the provider noticed, for stderr (e.g. an unreadable event payload, or that the
    /// commit is the pull request's head rather than `GITHUB_SHA`).
    pub notes: Vec<String>,
}

impl CiContext {
    /// An empty context of `provider`.
    pub fn new(provider: Provider) -> CiContext {
        CiContext {
            provider,
            commit: None,
            branch: None,
            pr: None,
            merge_base: None,
            job_url: None,
            notes: Vec::new(),
        }
    }
}

/// The context of the CI system `vars` describe; `None` outside CI (no marker variable set).
pub fn detect(vars: &HashMap<String, String>, merge_base: MergeBase) -> Option<CiContext> {
    let vars = Vars(vars);
    if github::detected(vars) {
        Some(github::read(vars, merge_base))
    } else if gitlab::detected(vars) {
        Some(gitlab::read(vars))
    } else if buildkite::detected(vars) {
        Some(buildkite::read(vars, merge_base))
    } else {
        None
    }
}

/// `s` when it is a commit SHA (7 to 64 hex digits), lowercased as git writes it; CI variables
/// sometimes hold a symbolic name (Buildkite's `HEAD`) that must not be recorded as a commit.
pub(crate) fn sha(s: &str) -> Option<String> {
    ((7..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| s.to_ascii_lowercase())
}

/// A positive pull/merge-request number; `None` for `false` (Buildkite's "not a PR") or junk.
pub(crate) fn number(s: &str) -> Option<u64> {
    s.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn no_marker_no_context_and_markers_pick_the_provider() {
        let none: MergeBase = &|_, _| None;
        // GitHub variables without GITHUB_ACTIONS=true (a developer's shell) are not CI.
        assert_eq!(detect(&vars(&[("GITHUB_SHA", "abcdef1")]), none), None);
        assert_eq!(detect(&vars(&[("GITLAB_CI", "false")]), none), None);
        let provider = |pairs: &[(&str, &str)]| detect(&vars(pairs), none).map(|c| c.provider);
        assert_eq!(
            provider(&[("GITHUB_ACTIONS", "true")]),
            Some(Provider::GitHubActions)
        );
        assert_eq!(provider(&[("GITLAB_CI", "true")]), Some(Provider::GitLabCi));
        assert_eq!(
            provider(&[("BUILDKITE", "true")]),
            Some(Provider::Buildkite)
        );
    }

    #[test]
    fn blank_values_are_unset_and_shas_are_checked() {
        let map = vars(&[("A", "  "), ("B", " x ")]);
        assert_eq!(Vars(&map).get("A"), None);
        assert_eq!(Vars(&map).get("B"), Some("x"));
        assert_eq!(sha("HEAD"), None);
        assert_eq!(sha("ABCDEF1").as_deref(), Some("abcdef1"));
        assert_eq!(number("false"), None);
        assert_eq!(number("0"), None);
        assert_eq!(number("17"), Some(17));
    }
}
