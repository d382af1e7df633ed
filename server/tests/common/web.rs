//! Fixture and HTML helpers for the page tests (`pages.rs`) and the browser test
//! (`browser.rs`).
//!
//! [`Fixture::start`] builds a real SQLite store in a temporary folder, creates a public
//! project `demo` (with a repository URL) and a private project `secret`, stores runs with
//! hand-chosen exact values through the real ingest path (`ingest::prepare` →
//! `Store::insert_run`), and serves the whole app on 127.0.0.1:0. The HTML helpers read
//! stable markup (ids and `data-*` attributes) without an HTML parser dependency.

use super::server::TestServer;
use benchtrail_core::UploadDocument;
use benchtrail_server::storage::{NewProject, NewRun, Project, Store};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::collections::HashMap;
use uuid::Uuid;

/// The engine launch command recorded in configuration A (shell quoting and HTML-special
/// characters on purpose: the page must show it exactly).
pub const LAUNCH_COMMAND: &str =
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 64 --override-generation-config '{\"temperature\": 0}' 2>&1 | tee <log> && echo done";
/// The benchmark command recorded in configuration A.
pub const BENCH_COMMAND: &str = "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B-Instruct --max-concurrency 4 --num-prompts 60 --request-rate inf --metadata note='a<b & c'";
/// Repository URL of the public project.
pub const REPO_URL: &str = "https://github.com/example/demo";

/// A commit SHA of 40 hex digits made from one repeated hex digit.
pub fn sha(digit: char) -> String {
    std::iter::repeat_n(digit, 40).collect()
}

/// Configuration A: everything recorded, including both commands.
pub fn config_a() -> Value {
    json!({
        "hardware": {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": 1, "driver_version": "570.86.15"},
        "model": {"name": "meta-llama/Llama-3.1-8B-Instruct"},
        "engine": {"name": "vllm", "version": "0.11.0", "launch_command": LAUNCH_COMMAND},
        "quantization": {"weights": "none", "kv_cache_dtype": "auto"},
        "sampling": {"temperature": 0.0, "max_tokens": 128},
        "benchmark": {"name": "vllm-bench-serve", "command": BENCH_COMMAND, "backend": "vllm"},
        "metadata": {"note": "a<b & c"}
    })
}

/// Configuration B: no commands recorded.
pub fn config_b() -> Value {
    json!({"hardware": {"accelerator": "NVIDIA L4"}, "model": {"name": "Qwen/Qwen3-0.6B"}})
}

/// The workload cell of every fixture result.
pub fn cell() -> Value {
    json!({"scenario": "short-chat", "load": {"max_concurrency": 4, "request_rate": "inf"}, "num_prompts": 60})
}

/// One stored point of the `ttft p50` series of configuration A.
#[derive(Debug, Clone)]
pub struct Point {
    /// Commit.
    pub sha: String,
    /// Commit subject.
    pub subject: String,
    /// The run.
    pub run_id: Uuid,
    /// Repeat index.
    pub repeat: u32,
    /// The exact stored value (ms).
    pub value: f64,
}

/// The fixture: a running server over a store with known data.
pub struct Fixture {
    /// The server (dropping it stops it).
    pub server: TestServer,
    /// The public project `demo`.
    pub demo: Project,
    /// The private project `secret`.
    pub secret: Project,
    /// The `ttft p50` series of configuration A in `demo`.
    pub ttft_p50: String,
    /// The `ttft p99` series of configuration A in `demo`.
    pub ttft_p99: String,
    /// The `ttft mean` series of configuration A in `demo`.
    pub ttft_mean: String,
    /// The points of `ttft_p50` on `main`, in commit order.
    pub main_points: Vec<Point>,
    /// The run on branch `feature/x` (PR 42), ttft p50 = 99.5.
    pub feature_run: Uuid,
    /// The run of commit 3 holding a warning and a configuration-B result.
    pub warned_run: Uuid,
    /// The run in the private project.
    pub secret_run: Uuid,
    /// A series of the private project.
    pub secret_series: String,
    /// Fingerprint of configuration A (as stored).
    pub fingerprint_a: String,
    /// Fingerprint of configuration B (as stored).
    pub fingerprint_b: String,
    /// Canonical JSON of configuration A (as stored).
    pub canonical_a: String,
    _dir: tempfile::TempDir,
}

/// A result in benchtrail's own format with ttft p50/p99/mean and request throughput.
fn result(config: Value, p50: f64, warnings: Value) -> Value {
    json!({
        "cell": cell(),
        "configuration": config,
        "metrics": [
            {"name": "ttft", "stat": "p50", "unit": "ms", "value": p50, "n": 60},
            {"name": "ttft", "stat": "p99", "unit": "ms", "value": p50 * 3.0 + 0.125, "n": 60},
            {"name": "ttft", "stat": "mean", "unit": "ms", "value": p50 + 0.5, "n": 60},
            {"name": "request_throughput", "stat": "value", "unit": "req/s", "value": 5.25}
        ],
        "warnings": warnings,
    })
}

/// Stores one run through the real ingest path and returns what was stored.
async fn store_run(store: &Store, project: &Project, run: Value, results: Vec<Value>) -> NewRun {
    let doc: UploadDocument = serde_json::from_value(json!({
        "run": run,
        "files": [{"name": "results.json", "content": serde_json::to_string(&results).unwrap()}],
    }))
    .expect("fixture upload document");
    let now: DateTime<Utc> = "2026-02-01T00:00:00Z".parse().unwrap();
    let new_run =
        benchtrail_server::ingest::prepare(project, &doc, now).expect("fixture upload is valid");
    store
        .insert_run(&new_run)
        .await
        .expect("storing fixture run");
    new_run
}

impl Fixture {
    /// Builds the store and starts the server.
    pub async fn start() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}/t.db?mode=rwc", dir.path().display()))
            .await
            .unwrap();
        let demo = store
            .create_project(&NewProject {
                slug: "demo".into(),
                name: "Demo <Serving>".into(),
                repository_url: Some(REPO_URL.into()),
                default_branch: "main".into(),
                public: true,
                key_fields: vec![],
            })
            .await
            .unwrap();
        let secret = store
            .create_project(&NewProject {
                slug: "secret".into(),
                name: "Secret project".into(),
                repository_url: None,
                default_branch: "main".into(),
                public: false,
                key_fields: vec![],
            })
            .await
            .unwrap();

        let mut main_points = Vec::new();
        let commits = [
            (
                '1',
                "2026-01-01T00:00:00Z",
                "Add paged attention",
                vec![12.345678901],
            ),
            (
                '2',
                "2026-01-02T00:00:00Z",
                "Tune scheduler <fast> & safe",
                vec![13.5, 13.25],
            ),
            ('3', "2026-01-03T00:00:00Z", "Fuse kernels", vec![11.0625]),
        ];
        let mut first: Option<NewRun> = None;
        let mut warned_run = Uuid::nil();
        let mut fingerprint_b = String::new();
        let mut hour = 0;
        for (digit, time, subject, values) in commits {
            for (repeat, value) in values.into_iter().enumerate() {
                hour += 1;
                let id = Uuid::new_v4();
                let mut results = vec![result(config_a(), value, json!([]))];
                if digit == '3' {
                    results[0]["warnings"] = json!([{"code": "small_sample_tail", "message": "p99 of 60 requests rests on 1 sample."}]);
                    results.push(result(config_b(), 7.0, json!([])));
                    warned_run = id;
                }
                let run = store_run(
                    &store,
                    &demo,
                    json!({
                        "id": id,
                        "commit": {"sha": sha(digit), "time": time, "subject": subject, "parents": [sha('0')]},
                        "branch": "main",
                        "run_at": format!("2026-01-10T{hour:02}:00:00Z"),
                        "repeat_index": repeat,
                        "ci_job_url": "https://ci.example/jobs/1",
                    }),
                    results,
                )
                .await;
                if digit == '3' {
                    fingerprint_b = run.results[1].config_fingerprint.clone();
                }
                main_points.push(Point {
                    sha: sha(digit),
                    subject: subject.into(),
                    run_id: id,
                    repeat: repeat as u32,
                    value,
                });
                first.get_or_insert(run);
            }
        }
        let feature_run = Uuid::new_v4();
        store_run(
            &store,
            &demo,
            json!({
                "id": feature_run,
                "commit": {"sha": sha('4'), "time": "2026-01-04T00:00:00Z", "subject": "Try speculative decoding"},
                "branch": "feature/x",
                "pull_request": {"number": 42, "merge_base": sha('3')},
                "run_at": "2026-01-11T00:00:00Z",
                "ci_job_url": "https://ci.example/jobs/7",
                "tags": {"runner": "gpu-1"},
            }),
            vec![result(config_a(), 99.5, json!([]))],
        )
        .await;
        let secret_run = Uuid::new_v4();
        let secret_stored = store_run(
            &store,
            &secret,
            json!({"id": secret_run, "commit": {"sha": sha('5')}, "branch": "main"}),
            vec![result(config_b(), 1.5, json!([]))],
        )
        .await;

        let first = first.unwrap();
        let series_of = |stat: &str| {
            first.results[0]
                .metrics
                .iter()
                .find(|m| m.series.metric == "ttft" && m.series.stat.to_string() == stat)
                .unwrap()
                .series
                .series_id
                .clone()
        };
        Fixture {
            ttft_p50: series_of("p50"),
            ttft_p99: series_of("p99"),
            ttft_mean: series_of("mean"),
            fingerprint_a: first.results[0].config_fingerprint.clone(),
            canonical_a: first.results[0].config_json.clone(),
            fingerprint_b,
            secret_series: secret_stored.results[0].metrics[0].series.series_id.clone(),
            // No analysis worker: the runs were inserted through the store (each with its
            // analysis job) and the tests write alerts and analyses by hand; a worker would
            // analyze the runs behind their backs.
            server: TestServer::start_with_analyzer(
                store,
                benchtrail_server::analysis::jobs::AnalyzerOptions {
                    workers: 0,
                    ..Default::default()
                },
            )
            .await,
            demo,
            secret,
            main_points,
            feature_run,
            warned_run,
            secret_run,
            _dir: dir,
        }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// GETs a page: status, `Content-Type` and body.
    pub async fn page(&self, path: &str) -> (u16, String, String) {
        let r = self.server.http.get(self.url(path)).send().await.unwrap();
        let status = r.status().as_u16();
        let ct = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        (status, ct, r.text().await.unwrap())
    }

    /// GETs a page that must answer 200 with HTML, and returns the body.
    pub async fn ok_page(&self, path: &str) -> String {
        let (status, ct, body) = self.page(path).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        assert_eq!(ct, "text/html; charset=utf-8", "GET {path}");
        body
    }
}

/// Reverses HTML escaping: the numeric forms askama writes (`&#60;` ...) and the named ones.
pub fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&#60;", "<")
        .replace("&gt;", ">")
        .replace("&#62;", ">")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
        .replace("&#38;", "&")
}

/// `s` escaped the way askama escapes text and attribute values.
pub fn escaped(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// The text of the element with `id` up to its first child tag or closing tag, unescaped
/// (meant for leaf elements: `<pre id="x">text</pre>`).
pub fn text_of(html: &str, id: &str) -> Option<String> {
    let at = html.find(&format!("id=\"{id}\""))?;
    let start = at + html[at..].find('>')? + 1;
    let end = start + html[start..].find('<')?;
    Some(unescape(&html[start..end]))
}

/// The attributes (unescaped) of every opening tag that starts with `prefix`
/// (e.g. `<tr data-x=`), in document order.
pub fn tags(html: &str, prefix: &str) -> Vec<HashMap<String, String>> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(prefix) {
        let tag = &rest[at..];
        let end = tag.find('>').expect("tag closes");
        out.push(attributes(&tag[..end]));
        rest = &tag[end..];
    }
    out
}

/// The `name="value"` attributes of one opening tag's text.
fn attributes(tag: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq]
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_string();
        let value_start = eq + 2;
        let value_end = value_start + rest[value_start..].find('"').expect("attribute closes");
        map.insert(name, unescape(&rest[value_start..value_end]));
        rest = &rest[value_end + 1..];
    }
    map
}

/// The `--goodput` flags the `examples/history/goodput_*` files were made with.
pub const GOODPUT_FLAGS: &str = "--goodput ttft:60 tpot:12 e2el:1800";

/// A server over a fresh SQLite store with a public project `demo` (created through the admin
/// API), for tests that seed data through the real upload API (so goodput, intervals and the
/// analysis run as in production).
pub struct UploadFixture {
    /// The server.
    pub server: TestServer,
    /// An upload token of `demo`.
    pub token: String,
    _dir: Option<tempfile::TempDir>,
}

impl UploadFixture {
    /// Starts the server and creates `demo`.
    pub async fn start() -> UploadFixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}/t.db?mode=rwc", dir.path().display()))
            .await
            .unwrap();
        let mut f = UploadFixture::start_on(store).await;
        f._dir = Some(dir);
        f
    }

    /// Starts the server over `store` (e.g. one of `db::for_each_store`'s) and creates `demo`.
    pub async fn start_on(store: Store) -> UploadFixture {
        let server = TestServer::start(store).await;
        let token = server
            .project_with_token(
                "demo",
                json!({"name": "Demo", "public": true, "repository_url": REPO_URL}),
            )
            .await;
        UploadFixture {
            server,
            token,
            _dir: None,
        }
    }

    /// Uploads repository file `path` as the run of commit number `i` (SHA `i` in hex, commit
    /// time `i` hours after 2026-11-01) on `main`, recording a `vllm bench serve` command with
    /// `flags`; returns the run id.
    pub async fn upload(&self, i: usize, path: &str, flags: &str) -> String {
        self.upload_with(i, path, flags, |_| {}).await
    }

    /// [`UploadFixture::upload`] with the upload document changed by `edit` first (another
    /// branch, a pull request's merge base, parents).
    pub async fn upload_with(
        &self,
        i: usize,
        path: &str,
        flags: &str,
        edit: impl FnOnce(&mut Value),
    ) -> String {
        let time = format!("2026-11-01T{i:02}:00:00Z");
        let mut doc = super::server::upload_doc(&format!("{i:040x}"), &time, &[path]);
        doc["configuration"] = json!({"benchmark": {"command": format!("vllm bench serve --model mock-llm {flags} --save-detailed")}});
        edit(&mut doc);
        let (status, receipt) = self.server.upload("demo", &self.token, &doc).await;
        assert_eq!(status, 201, "{path}: {receipt}");
        receipt["run_id"].as_str().unwrap().to_string()
    }

    /// GETs a page that must answer 200 with HTML.
    pub async fn ok_page(&self, path: &str) -> String {
        let r = self
            .server
            .http
            .get(self.server.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "GET {path}");
        r.text().await.unwrap()
    }
}
