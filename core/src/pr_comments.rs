//! `pr_comments` of the project settings: the server posts (and updates) the one sticky PR or
//! MR comment itself after analysing an upload that names a pull request, the same comment
//! `benchtrail check --github-comment` writes ([`crate::report::comment`]).
//!
//! ```json
//! {"pr_comments": {"provider": "github", "repository": "acme/engine",
//!                  "token_env": "BENCHTRAIL_FORGE_GITHUB_TOKEN"}}
//! ```
//! The token is never in the settings (anyone who may read the project reads them): they name
//! an environment variable of the server that holds it. Only variables whose names start with
//! [`TOKEN_ENV_PREFIX`] may be named, so a setting can never send another of the server's
//! secrets (its database URL, its admin token) to the forge address it names.

use crate::settings::SettingsError;
use serde::{Deserialize, Serialize};

/// Names of token variables start with this.
pub const TOKEN_ENV_PREFIX: &str = "BENCHTRAIL_FORGE_";

/// The forge of a project's pull requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// GitHub (issue comments API).
    Github,
    /// GitLab (merge-request notes API).
    Gitlab,
}

impl Provider {
    /// `github` or `gitlab`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Github => "github",
            Provider::Gitlab => "gitlab",
        }
    }

    /// The public API root of the provider.
    pub fn default_api_url(self) -> &'static str {
        match self {
            Provider::Github => "https://api.github.com",
            Provider::Gitlab => "https://gitlab.com/api/v4",
        }
    }
}

/// Where and how the server comments on a project's pull requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PrCommentSettings {
    /// `github` or `gitlab`.
    pub provider: Provider,
    /// GitHub: `owner/name`; GitLab: the project's numeric id or its path (`group/name`).
    pub repository: String,
    /// The API root (GitHub Enterprise, a GitLab instance): an `http(s)://` URL. Default: the
    /// provider's public API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// The server's environment variable holding the token (GitHub: `pull-requests: write`;
    /// GitLab: `api` scope). Starts with [`TOKEN_ENV_PREFIX`], then `A-Z`, `0-9`, `_`.
    pub token_env: String,
    /// The comment section this server's reports fill (a CLI with `--suite` fills others).
    #[serde(default = "default_suite")]
    pub suite: String,
    /// Post even when the verdict passes and no comment exists yet.
    #[serde(default)]
    pub always: bool,
}

fn default_suite() -> String {
    "benchmarks".into()
}

impl PrCommentSettings {
    /// The API root to use.
    pub fn api(&self) -> &str {
        self.api_url
            .as_deref()
            .unwrap_or(self.provider.default_api_url())
            .trim_end_matches('/')
    }

    /// The first field out of bounds, its pointer relative to `pr_comments`.
    pub fn check(&self) -> Result<(), SettingsError> {
        let fault = |pointer: &str, message: String| SettingsError {
            pointer: pointer.into(),
            message,
        };
        let name_ok = self
            .token_env
            .strip_prefix(TOKEN_ENV_PREFIX)
            .is_some_and(|rest| {
                !rest.is_empty()
                    && rest
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            });
        if !name_ok {
            return Err(fault(
                "/token_env",
                format!(
                    "`{}` is not a token variable: name one that starts with {TOKEN_ENV_PREFIX} \
                     (A-Z, 0-9, _), e.g. {TOKEN_ENV_PREFIX}GITHUB_TOKEN; the token itself never \
                     goes in the settings",
                    self.token_env
                ),
            ));
        }
        let repo_ok = match self.provider {
            Provider::Github => self
                .repository
                .split_once('/')
                .is_some_and(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/')),
            Provider::Gitlab => !self.repository.is_empty(),
        };
        if !repo_ok || self.repository.chars().any(|c| c.is_whitespace()) {
            return Err(fault(
                "/repository",
                format!(
                    "`{}` is not a repository: GitHub `owner/name`, GitLab an id or `group/name`",
                    self.repository
                ),
            ));
        }
        if let Some(url) = &self.api_url {
            let ok = (url.starts_with("https://") || url.starts_with("http://"))
                && url.len() > "https://".len();
            if !ok {
                return Err(fault("/api_url", format!("`{url}` is not an http(s) URL")));
            }
        }
        let suite_ok = !self.suite.is_empty()
            && self.suite.len() <= 64
            && self
                .suite
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !suite_ok {
            return Err(fault(
                "/suite",
                "a suite is 1 to 64 characters of a-z, A-Z, 0-9, `-`, `_`, `.`".into(),
            ));
        }
        Ok(())
    }
}
