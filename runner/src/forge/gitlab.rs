//! GitLab merge-request comments (the notes API): `GET
//! /projects/{id}/merge_requests/{iid}/notes?per_page=100&sort=asc` page by page (the
//! `x-next-page` header), `POST` to create, `PUT .../notes/{note_id}` to update. Token:
//! `GITLAB_TOKEN` (a project or personal access token with `api` scope, sent as
//! `PRIVATE-TOKEN`: the CI job token cannot write notes); project: `CI_PROJECT_ID`; merge
//! request: `--pr`, else `CI_MERGE_REQUEST_IID`; API: `CI_API_V4_URL` (default
//! `https://gitlab.com/api/v4`), as GitLab CI sets them.

use super::http::Http;
use super::{json, status_error, Forge, ForgeError};
use crate::document::Environment;
use benchtrail_core::report::comment::{ExistingComment, GITLAB_BODY_LIMIT};
use serde::Deserialize;
use std::io::Write;

/// One merge request's notes on GitLab.
pub struct GitLab {
    http: Http,
    api: String,
    project: String,
    iid: u64,
    token: String,
}

#[derive(Deserialize)]
struct Note {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    system: bool,
}

impl GitLab {
    /// The notes of merge request `iid` (else `CI_MERGE_REQUEST_IID`) of the project the
    /// environment names.
    ///
    /// # Errors
    /// [`ForgeError::Setup`] naming what is missing.
    pub fn from_env(env: &Environment, iid: Option<u64>) -> Result<GitLab, ForgeError> {
        let need = |name: &str, why: &str| {
            env.var(name)
                .map(str::to_string)
                .ok_or_else(|| ForgeError::Setup(format!("--gitlab-comment needs {name} ({why})")))
        };
        let token = need("GITLAB_TOKEN", "an access token with api scope")?;
        let project = need("CI_PROJECT_ID", "the project's id, as GitLab CI sets it")?;
        let iid = iid
            .or_else(|| env.var("CI_MERGE_REQUEST_IID").and_then(|v| v.parse().ok()))
            .ok_or_else(|| {
                ForgeError::Setup(
                    "--gitlab-comment needs the merge request: pass --pr N or run in a merge-request pipeline (CI_MERGE_REQUEST_IID)".into(),
                )
            })?;
        let api = env
            .var("CI_API_V4_URL")
            .unwrap_or("https://gitlab.com/api/v4")
            .trim_end_matches('/')
            .to_string();
        Ok(GitLab {
            http: Http::new()?,
            api,
            project,
            iid,
            token,
        })
    }

    fn notes_url(&self) -> String {
        format!(
            "{}/projects/{}/merge_requests/{}/notes",
            self.api,
            crate::client::path_segment(&self.project),
            self.iid
        )
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::blocking::RequestBuilder {
        self.http
            .client()
            .request(method, url)
            .header("PRIVATE-TOKEN", &self.token)
    }
}

impl Forge for GitLab {
    fn name(&self) -> &'static str {
        "GitLab"
    }

    fn limit(&self) -> usize {
        GITLAB_BODY_LIMIT
    }

    fn list(&self, err: &mut dyn Write) -> Result<Vec<ExistingComment>, ForgeError> {
        let mut page = Some("1".to_string());
        let mut out = Vec::new();
        while let Some(p) = page.take() {
            let url = format!(
                "{}?per_page=100&sort=asc&order_by=created_at&page={p}",
                self.notes_url()
            );
            let what = "GET merge-request notes";
            let r = self
                .http
                .send(what, &|| self.request(reqwest::Method::GET, &url), err)?;
            page = r
                .headers()
                .get("x-next-page")
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.trim().is_empty())
                .map(str::to_string);
            let notes: Vec<Note> = json(what, r)?;
            // System notes ("added 1 commit") are GitLab's own, never ours.
            out.extend(
                notes
                    .into_iter()
                    .filter(|n| !n.system)
                    .map(|n| ExistingComment {
                        id: n.id.to_string(),
                        body: n.body.unwrap_or_default(),
                    }),
            );
        }
        Ok(out)
    }

    fn create(&self, body: &str, err: &mut dyn Write) -> Result<String, ForgeError> {
        let url = self.notes_url();
        let what = "POST merge-request note";
        let payload = serde_json::json!({ "body": body });
        let r = self.http.send(
            what,
            &|| self.request(reqwest::Method::POST, &url).json(&payload),
            err,
        )?;
        Ok(json::<Note>(what, r)?.id.to_string())
    }

    fn update(&self, id: &str, body: &str, err: &mut dyn Write) -> Result<(), ForgeError> {
        let url = format!("{}/{id}", self.notes_url());
        let what = "PUT merge-request note";
        let payload = serde_json::json!({ "body": body });
        let r = self.http.send(
            what,
            &|| self.request(reqwest::Method::PUT, &url).json(&payload),
            err,
        )?;
        if r.status().is_success() {
            Ok(())
        } else {
            Err(status_error(what, r))
        }
    }
}
