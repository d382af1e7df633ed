//! `benchtrail upload --json` against a real server (SQLite, loopback HTTP): a dropped cell
//! gives `incomplete` naming it and an added one is listed as new; with `--repeats 3` the first
//! two repeats of a commit with a real step do not fail (provisional), the third does.

use crate::common;

use benchtrail_core::metric::{MetricValue, Stat};
use common::real::start_server;
use common::*;
use serde_json::{json, Value};

const ADMIN: &str = "bt_verdicts_admin";

fn cell_key(c: u32) -> String {
    format!("max_concurrency={c};input_len=512;output_len=128;num_prompts=100")
}

/// One result (benchtrail's own format) of cell `max_concurrency = c`.
fn result(c: u32, ttft_p50: f64, throughput: f64) -> Value {
    let m = |name: &str, stat: Stat, v: f64| {
        serde_json::to_value(MetricValue::new(name, stat, v, None)).unwrap()
    };
    json!({
        "cell": {"load": {"max_concurrency": c}, "input_len": 512, "output_len": 128, "num_prompts": 100},
        "configuration": {"engine": {"name": "vllm"}, "model": {"name": "mock-llm"}},
        "metrics": [
            m("ttft", Stat::Percentile("50".into()), ttft_p50),
            m("output_throughput", Stat::Value, throughput),
        ],
    })
}

struct Project {
    dir: TempDir,
    base: String,
    token: String,
    _data: TempDir,
}

impl Project {
    fn new(tag: &str) -> Project {
        let data = TempDir::new(&format!("{tag}-data"));
        let base = start_server(&data, ADMIN);
        let dir = TempDir::new(tag);
        let env = [("BENCHTRAIL_URL", base.as_str())];
        let out = benchtrail(
            dir.path(),
            &["project", "create", "p", "--token", ADMIN],
            &env,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let out = benchtrail(
            dir.path(),
            &["token", "create", "--project", "p", "--token", ADMIN],
            &env,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let token = stdout(&out).lines().last().unwrap().to_string();
        Project {
            dir,
            base,
            token,
            _data: data,
        }
    }

    /// `benchtrail upload --json` of `results` as commit `i` (with `extra` flags); the printed
    /// JSON and stderr.
    fn upload(&self, i: usize, results: Vec<Value>, extra: &[&str]) -> (Value, String) {
        let file = self
            .dir
            .path()
            .join(format!("result-{i}-{}.json", extra.join("")));
        std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
        let sha = format!("{i:040x}");
        let time = format!("2026-11-01T10:{i:02}:00Z");
        let mut args = vec![
            "upload",
            "--project",
            "p",
            "--token",
            &self.token,
            "--commit",
            &sha,
            "--commit-time",
            &time,
            "--branch",
            "main",
            "--json",
        ];
        args.extend_from_slice(extra);
        args.push(file.to_str().unwrap());
        let out = benchtrail(
            self.dir.path(),
            &args,
            &[("BENCHTRAIL_URL", self.base.as_str())],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        (
            serde_json::from_str(stdout(&out).trim()).unwrap(),
            stderr(&out),
        )
    }
}

const TTFT: [f64; 5] = [100.0, 101.0, 99.0, 100.5, 99.5];

#[test]
fn upload_json_names_a_missing_cell_incomplete_and_a_new_one() {
    let p = Project::new("verdict-cells");
    for (i, ttft) in TTFT.into_iter().enumerate() {
        let t = 1000.0 + i as f64;
        let (out, _) = p.upload(i, vec![result(4, ttft, t), result(16, 2.0 * ttft, t)], &[]);
        assert_eq!(out["status"], 201, "{out}");
    }
    let (out, err) = p.upload(
        5,
        vec![result(4, 100.0, 1003.0), result(64, 300.0, 900.0)],
        &[],
    );
    assert_eq!(out["verdict"], "incomplete", "{out}");
    assert_eq!(out["provisional"], false);
    let missing = format!(
        "cell `{}` is missing: baseline commit {} has it, this commit has no result for it",
        cell_key(16),
        &format!("{:040x}", 4)[..12]
    );
    assert_eq!(out["missing_cells"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["missing_cells"][0]["cell"], cell_key(16));
    assert_eq!(out["missing_cells"][0]["message"], missing);
    assert_eq!(out["new_cells"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["new_cells"][0]["cell"], cell_key(64));
    assert_eq!(
        out["new_cells"][0]["message"],
        format!("cell `{}` is new, no baseline yet", cell_key(64))
    );
    assert_eq!(out["reasons"][0]["code"], "missing_cell");
    assert_eq!(out["reasons"][0]["level"], "incomplete");
    assert!(err.contains("verdict: incomplete (details: "), "{err}");
    assert!(
        err.contains(&format!("  missing cell: {missing}\n")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "  new cell: cell `{}` is new, no baseline yet\n",
            cell_key(64)
        )),
        "{err}"
    );
}

#[test]
fn with_repeats_3_the_first_two_repeats_do_not_fail_and_the_third_does() {
    let p = Project::new("verdict-repeats");
    for (i, ttft) in TTFT.into_iter().enumerate() {
        let (out, _) = p.upload(i, vec![result(4, ttft, 1000.0 + i as f64)], &[]);
        assert_eq!(out["status"], 201, "{out}");
    }
    // A real step: median TTFT +20 % in every repeat of commit 5.
    for (k, ttft) in [120.0, 121.0, 119.0].into_iter().enumerate() {
        let index = k.to_string();
        let flags = ["--repeats", "3", "--repeat-index", index.as_str()];
        let (out, err) = p.upload(5, vec![result(4, ttft, 1003.0)], &flags);
        assert_eq!(out["status"], 201, "{out}");
        assert_eq!(
            out["repeats"],
            json!({"expected": 3, "received": k + 1, "source": "run"}),
            "{out}"
        );
        if k < 2 {
            assert_eq!(out["verdict"], "warn", "repeat {k}: {out}");
            assert_eq!(out["provisional"], true);
            let codes: Vec<&str> = out["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["code"].as_str().unwrap())
                .collect();
            assert_eq!(codes, ["regression", "pending_repeats"], "{out}");
            assert!(
                err.contains("verdict: warn (provisional: waiting for more repeats)"),
                "{err}"
            );
        } else {
            assert_eq!(out["verdict"], "fail", "repeat {k}: {out}");
            assert_eq!(out["provisional"], false);
            // stderr names the failing finding with the server's sentence.
            let reason = &out["reasons"][0];
            assert_eq!(reason["code"], "regression", "{out}");
            assert!(
                err.contains(&format!(
                    "\n  fail regression: {}\n",
                    reason["message"].as_str().unwrap()
                )),
                "{err}"
            );
        }
    }
}
