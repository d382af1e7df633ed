//! GitHub pull-request comments (the issues comments API): `GET
//! /repos/{repo}/issues/{pr}/comments?per_page=100` page by page (the `Link: rel="next"`
//! header; pull requests with more than 100 comments exist), `POST` to create, `PATCH
//! /repos/{repo}/issues/comments/{id}` to update. Token: `GITHUB_TOKEN`; repository:
//! `GITHUB_REPOSITORY` (`owner/name`); API: `GITHUB_API_URL` (GitHub Enterprise; default
//! `https://api.github.com`), all as GitHub Actions sets them.

use super::http::Http;
use super::{json, status_error, Forge, ForgeError};
use crate::document::Environment;
use benchtrail_core::report::comment::{next_link, ExistingComment, GITHUB_BODY_LIMIT};
use serde::Deserialize;
use std::io::Write;

/// One pull request's comments on GitHub.
pub struct GitHub {
    http: Http,
    api: String,
    repository: String,
    pr: u64,
    token: String,
}

#[derive(Deserialize)]
struct Comment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
}

impl GitHub {
    /// The comments of pull request `pr` of the repository the environment names.
    ///
    /// # Errors
    /// [`ForgeError::Setup`] naming what is missing: `GITHUB_TOKEN`, `GITHUB_REPOSITORY`, or the
    /// PR number (`pr` is `None`).
    pub fn from_env(env: &Environment, pr: Option<u64>) -> Result<GitHub, ForgeError> {
        let need = |name: &str, why: &str| {
            env.var(name)
                .map(str::to_string)
                .ok_or_else(|| ForgeError::Setup(format!("--github-comment needs {name} ({why})")))
        };
        let token = need(
            "GITHUB_TOKEN",
            "a token that may write pull-request comments",
        )?;
        let repository = need("GITHUB_REPOSITORY", "owner/name, as GitHub Actions sets it")?;
        let pr = pr.ok_or_else(|| {
            ForgeError::Setup(
                "--github-comment needs the pull request: pass --pr N (upload it with the run)"
                    .into(),
            )
        })?;
        let api = env
            .var("GITHUB_API_URL")
            .unwrap_or("https://api.github.com")
            .trim_end_matches('/')
            .to_string();
        Ok(GitHub {
            http: Http::new()?,
            api,
            repository,
            pr,
            token,
        })
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::blocking::RequestBuilder {
        self.http
            .client()
            .request(method, url)
            .bearer_auth(&self.token)
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
    }
}

impl Forge for GitHub {
    fn name(&self) -> &'static str {
        "GitHub"
    }

    fn limit(&self) -> usize {
        GITHUB_BODY_LIMIT
    }

    fn list(&self, err: &mut dyn Write) -> Result<Vec<ExistingComment>, ForgeError> {
        let mut url = Some(format!(
            "{}/repos/{}/issues/{}/comments?per_page=100",
            self.api, self.repository, self.pr
        ));
        let mut out = Vec::new();
        while let Some(u) = url.take() {
            let what = "GET pull-request comments";
            let r = self
                .http
                .send(what, &|| self.request(reqwest::Method::GET, &u), err)?;
            url = r
                .headers()
                .get("link")
                .and_then(|v| v.to_str().ok())
                .and_then(next_link);
            let page: Vec<Comment> = json(what, r)?;
            out.extend(page.into_iter().map(|c| ExistingComment {
                id: c.id.to_string(),
                body: c.body.unwrap_or_default(),
            }));
        }
        Ok(out)
    }

    fn create(&self, body: &str, err: &mut dyn Write) -> Result<String, ForgeError> {
        let url = format!(
            "{}/repos/{}/issues/{}/comments",
            self.api, self.repository, self.pr
        );
        let what = "POST pull-request comment";
        let payload = serde_json::json!({ "body": body });
        let r = self.http.send(
            what,
            &|| self.request(reqwest::Method::POST, &url).json(&payload),
            err,
        )?;
        Ok(json::<Comment>(what, r)?.id.to_string())
    }

    fn update(&self, id: &str, body: &str, err: &mut dyn Write) -> Result<(), ForgeError> {
        let url = format!(
            "{}/repos/{}/issues/comments/{id}",
            self.api, self.repository
        );
        let what = "PATCH pull-request comment";
        let payload = serde_json::json!({ "body": body });
        let r = self.http.send(
            what,
            &|| self.request(reqwest::Method::PATCH, &url).json(&payload),
            err,
        )?;
        if r.status().is_success() {
            Ok(())
        } else {
            Err(status_error(what, r))
        }
    }
}
