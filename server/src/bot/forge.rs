//! The server's forge client: list, create and update PR/MR comments on GitHub (issue comments
//! API, `Link: rel="next"` pages) and GitLab (merge-request notes API, `x-next-page` pages),
//! retrying 5xx and rate limits as [`retry_wait`] says (at most [`ATTEMPTS`] tries, no wait
//! above [`MAX_WAIT_SECS`]). The same requests as the CLI's `runner::forge`, asynchronous.

use benchtrail_core::pr_comments::{PrCommentSettings, Provider};
use benchtrail_core::report::comment::{
    forge_message, next_link, retry_wait, ExistingComment, RetryHeaders,
};
use reqwest::{Method, RequestBuilder, Response};
use serde::Deserialize;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Tries per request.
pub const ATTEMPTS: u32 = 4;
/// The longest wait before a retry, seconds.
pub const MAX_WAIT_SECS: u64 = 60;

/// Why a forge request failed.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// No answer after the retries.
    #[error("no answer from {0}")]
    Transport(String),
    /// A final non-success status.
    #[error("HTTP {status} from {what}: {message}")]
    Status {
        /// The request.
        what: &'static str,
        /// The status.
        status: u16,
        /// The forge's message.
        message: String,
    },
}

/// One pull/merge request's comments.
pub struct Forge {
    http: reqwest::Client,
    settings: PrCommentSettings,
    token: String,
    pr: u64,
}

#[derive(Deserialize)]
struct Comment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    system: bool,
}

impl Forge {
    /// The comments of PR `pr` as `settings` address them, with `token`.
    pub fn new(
        http: reqwest::Client,
        settings: PrCommentSettings,
        token: String,
        pr: u64,
    ) -> Forge {
        Forge {
            http,
            settings,
            token,
            pr,
        }
    }

    /// The forge's body limit ([`body_limit`]).
    pub fn limit(&self) -> usize {
        body_limit(self.settings.provider)
    }

    fn thread_url(&self) -> String {
        let api = self.settings.api();
        match self.settings.provider {
            Provider::Github => format!(
                "{api}/repos/{}/issues/{}/comments",
                self.settings.repository, self.pr
            ),
            Provider::Gitlab => format!(
                "{api}/projects/{}/merge_requests/{}/notes",
                urlencode(&self.settings.repository),
                self.pr
            ),
        }
    }

    fn request(&self, method: Method, url: &str) -> RequestBuilder {
        let r = self.http.request(method, url);
        match self.settings.provider {
            Provider::Github => r
                .bearer_auth(&self.token)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28"),
            Provider::Gitlab => r.header("PRIVATE-TOKEN", &self.token),
        }
    }

    async fn send(
        &self,
        what: &'static str,
        make: impl Fn() -> RequestBuilder,
    ) -> Result<Response, ForgeError> {
        let mut attempt = 1;
        loop {
            let wait = match make().send().await {
                Ok(r) => {
                    let h = |n: &str| r.headers().get(n).and_then(|v| v.to_str().ok());
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs());
                    let headers = RetryHeaders {
                        retry_after: h("retry-after"),
                        remaining: h("x-ratelimit-remaining"),
                        reset: h("x-ratelimit-reset"),
                    };
                    match retry_wait(r.status().as_u16(), headers, attempt, now) {
                        Some(w) if attempt < ATTEMPTS && w <= MAX_WAIT_SECS => w,
                        _ => return Ok(r),
                    }
                }
                Err(_) if attempt < ATTEMPTS => 1 << (attempt - 1),
                Err(e) => return Err(ForgeError::Transport(format!("{what}: {e}"))),
            };
            tracing::info!(what, attempt, wait, "forge request retried");
            tokio::time::sleep(Duration::from_secs(wait)).await;
            attempt += 1;
        }
    }

    /// Every comment of the thread, oldest first (GitLab's system notes left out).
    ///
    /// # Errors
    /// See [`ForgeError`].
    pub async fn list(&self) -> Result<Vec<ExistingComment>, ForgeError> {
        let what = "GET comments";
        let first = match self.settings.provider {
            Provider::Github => format!("{}?per_page=100", self.thread_url()),
            Provider::Gitlab => format!(
                "{}?per_page=100&sort=asc&order_by=created_at&page=1",
                self.thread_url()
            ),
        };
        let mut url = Some(first);
        let mut out = Vec::new();
        while let Some(u) = url.take() {
            let r = self.send(what, || self.request(Method::GET, &u)).await?;
            let header = |n: &str| {
                r.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            url = match self.settings.provider {
                Provider::Github => header("link").and_then(|l: String| next_link(&l)),
                Provider::Gitlab => {
                    header("x-next-page")
                        .filter(|p| !p.trim().is_empty())
                        .map(|p| {
                            format!(
                                "{}?per_page=100&sort=asc&order_by=created_at&page={p}",
                                self.thread_url()
                            )
                        })
                }
            };
            let page: Vec<Comment> = decode(what, r).await?;
            out.extend(
                page.into_iter()
                    .filter(|c| !c.system)
                    .map(|c| ExistingComment {
                        id: c.id.to_string(),
                        body: c.body.unwrap_or_default(),
                    }),
            );
        }
        Ok(out)
    }

    /// Posts a comment; its id.
    ///
    /// # Errors
    /// See [`ForgeError`].
    pub async fn create(&self, body: &str) -> Result<String, ForgeError> {
        let url = self.thread_url();
        let payload = serde_json::json!({ "body": body });
        let r = self
            .send("POST comment", || {
                self.request(Method::POST, &url).json(&payload)
            })
            .await?;
        Ok(decode::<Comment>("POST comment", r).await?.id.to_string())
    }

    /// Replaces comment `id`'s body.
    ///
    /// # Errors
    /// See [`ForgeError`].
    pub async fn update(&self, id: &str, body: &str) -> Result<(), ForgeError> {
        let (method, url) = match self.settings.provider {
            Provider::Github => (
                Method::PATCH,
                format!(
                    "{}/repos/{}/issues/comments/{id}",
                    self.settings.api(),
                    self.settings.repository
                ),
            ),
            Provider::Gitlab => (Method::PUT, format!("{}/{id}", self.thread_url())),
        };
        let payload = serde_json::json!({ "body": body });
        let r = self
            .send("update comment", || {
                self.request(method.clone(), &url).json(&payload)
            })
            .await?;
        decode::<serde_json::Value>("update comment", r)
            .await
            .map(|_| ())
    }
}

/// The longest comment body `provider` takes, characters.
pub fn body_limit(provider: Provider) -> usize {
    match provider {
        Provider::Github => benchtrail_core::report::comment::GITHUB_BODY_LIMIT,
        Provider::Gitlab => benchtrail_core::report::comment::GITLAB_BODY_LIMIT,
    }
}

async fn decode<T: serde::de::DeserializeOwned>(
    what: &'static str,
    r: Response,
) -> Result<T, ForgeError> {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        let message = forge_message(&text);
        return Err(ForgeError::Status {
            what,
            status,
            message,
        });
    }
    serde_json::from_str(&text).map_err(|e| ForgeError::Status {
        what,
        status,
        message: format!("unexpected answer: {e}"),
    })
}

/// A GitLab project path as one URL segment (`group/name` → `group%2Fname`).
fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
