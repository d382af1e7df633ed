//! `GET /api/v1/compare/report` on both stores: the generated AIPerf baseline and candidate at
//! concurrency 1, 4 and 16 uploaded as two runs (each one upload of three folders, summary and
//! per-request `profile_export.jsonl`), under the SLO profile `chat` (TTFT ≤ 120 ms, TPOT ≤
//! 12 ms). Every figure is checked against a value computed here from the files directly (the
//! per-request records and the summaries as AIPerf wrote them), never through benchtrail.

use crate::common;

use common::aiperf::{run_dir, seed, upload_of, LOADS};
use common::db::for_each_store;
use common::server::{repo_file, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};

/// One profiled request as AIPerf recorded it, ms.
struct Record {
    ok: bool,
    ttft: f64,
    tpot: f64,
    e2el: f64,
}

fn records(side: &str, c: u64) -> Vec<Record> {
    repo_file(&format!("{}/profile_export.jsonl", run_dir(side, c)))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["metadata"]["benchmark_phase"] != "warmup")
        .map(|r| {
            let ms = |tag: &str| r["metrics"][tag]["value"].as_f64().unwrap();
            Record {
                ok: r.get("error").is_none_or(Value::is_null),
                ttft: ms("time_to_first_token"),
                tpot: ms("inter_token_latency"),
                e2el: ms("request_latency"),
            }
        })
        .collect()
}

fn summary_file(side: &str, c: u64) -> Value {
    serde_json::from_str(&repo_file(&format!(
        "{}/profile_export_aiperf.json",
        run_dir(side, c)
    )))
    .unwrap()
}

/// (attainment under chat, completed requests per second) of one run, by a direct loop.
fn direct(side: &str, c: u64) -> (f64, f64) {
    let recs = records(side, c);
    let met = recs
        .iter()
        .filter(|r| r.ok && r.ttft <= 120.0 && r.tpot <= 12.0)
        .count();
    let completed = recs.iter().filter(|r| r.ok).count();
    let duration = summary_file(side, c)["benchmark_duration"]["avg"]
        .as_f64()
        .unwrap();
    (met as f64 / recs.len() as f64, completed as f64 / duration)
}

/// (capacity load, throughput at capacity req/s): the crossing of 95 % between 4 and 16.
fn expected_capacity(side: &str) -> (f64, f64) {
    let ((a4, x4), (a16, x16)) = (direct(side, 4), direct(side, 16));
    let f = (a4 - 0.95) / (a4 - a16);
    (4.0 + f * 12.0, x4 + f * (x16 - x4))
}

/// numpy's `linear` percentile.
fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * p / 100.0;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (h - h.floor())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Whole with thousands separators, as the report writes counts.
fn thousands(v: f64) -> String {
    let d = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A latency as the report writes it: whole ms from 10 ms, one decimal below.
fn ms(v: f64) -> String {
    if v >= 10.0 {
        format!("{} ms", thousands(v))
    } else {
        format!("{v:.1} ms")
    }
}

async fn get_text(server: &TestServer, path: &str, token: Option<&str>) -> (u16, String) {
    let mut r = server.http.get(server.url(path));
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let r = r.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

async fn get_json(server: &TestServer, path: &str, token: Option<&str>) -> (u16, Value) {
    let (status, text) = get_text(server, path, token).await;
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Creates `slug` with the `chat` profile and uploads both sides; returns (upload token, base
/// run id, head run id).
#[tokio::test]
async fn the_capacity_report_of_the_aiperf_sweeps_matches_the_records() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let (_, base, head) = seed(&server, "capacity", true).await;
        let path = format!("/api/v1/compare/report?base={base}&head={head}");
        let (status, doc) = get_json(&server, &path, None).await;
        assert_eq!(status, 200, "{name}: {doc}");
        assert_eq!(doc["project"], "capacity");
        assert_eq!((doc["base"].as_str(), doc["head"].as_str()), (Some(base.as_str()), Some(head.as_str())));
        let report = &doc["report"];
        assert_eq!(report["target"], 0.95);
        assert_eq!(report["unmatched"], json!([]), "{name}");
        assert_eq!(report["refused"], json!([]), "{name}");
        let sweeps = report["sweeps"].as_array().unwrap();
        assert_eq!(sweeps.len(), 1, "{name}: {report}");
        let s = &sweeps[0];
        assert_eq!(s["baseline_shape"], "concurrency");
        assert_eq!(s["baseline_loads"], json!([1.0, 4.0, 16.0]));
        assert_eq!(s["candidate_loads"], json!([1.0, 4.0, 16.0]));

        // Failed requests: counted in the records.
        for (side, key) in [("baseline", "baseline_failed"), ("candidate", "candidate_failed")] {
            let recs: Vec<Record> = LOADS.iter().flat_map(|c| records(side, *c)).collect();
            assert_eq!(
                s[key],
                json!({"attempted": recs.len(), "failed": recs.iter().filter(|r| !r.ok).count()}),
                "{name}: {side}"
            );
        }
        assert_eq!(s["baseline_failed"]["attempted"], 240);

        // Capacities: baseline 4.6, candidate 10 concurrent requests, between 4 and 16.
        let p = &s["profiles"][0];
        assert_eq!(p["profile"], "chat");
        let (b_load, b_x) = expected_capacity("baseline");
        let (c_load, c_x) = expected_capacity("candidate");
        assert!(close(b_load, 4.6) && close(c_load, 10.0), "{b_load} {c_load}");
        for (curve, load, x) in [(&p["baseline"], b_load, b_x), (&p["candidate"], c_load, c_x)] {
            let cap = &curve["capacity"];
            assert_eq!(cap["kind"], "within", "{name}: {cap}");
            assert!(close(cap["load"].as_f64().unwrap(), load), "{name}: {cap} vs {load}");
            assert!(close(cap["throughput_rps"].as_f64().unwrap(), x), "{name}: {cap} vs {x}");
            assert_eq!(cap["interpolated"], true);
            assert_eq!(cap["between"], json!([4.0, 16.0]));
            assert_eq!(curve["load_unit"], "requests");
        }
        let attainments = |curve: &Value| -> Vec<f64> {
            curve["points"].as_array().unwrap().iter().map(|p| p["attainment"].as_f64().unwrap()).collect()
        };
        assert_eq!(attainments(&p["baseline"]), LOADS.map(|c| direct("baseline", c).0).to_vec());
        assert_eq!(attainments(&p["candidate"]), LOADS.map(|c| direct("candidate", c).0).to_vec());
        assert_eq!(attainments(&p["baseline"]), vec![1.0, 1.0, 0.0]);
        assert_eq!(attainments(&p["candidate"]), vec![0.95, 1.0, 0.9]);

        // The change in requests per hour: +15,731 (10,747 → 26,478).
        assert_eq!(p["change"]["status"], "compared", "{name}: {p}");
        let change = &p["change"]["change"];
        assert_eq!(change["bound"], "estimate");
        let f = |k: &str| change[k].as_f64().unwrap();
        assert!(close(f("baseline_requests_per_hour"), b_x * 3600.0));
        assert!(close(f("candidate_requests_per_hour"), c_x * 3600.0));
        assert!(close(f("change_requests_per_hour"), (c_x - b_x) * 3600.0));
        assert_eq!(
            [f("baseline_requests_per_hour").round(), f("candidate_requests_per_hour").round(), f("change_requests_per_hour").round()],
            [10747.0, 26478.0, 15731.0]
        );
        let pct = 100.0 * (c_x - b_x) / b_x;
        assert!(close(f("change_pct"), pct));

        // Typical load: the heaviest measured on both sides within the baseline's 4.6: 4.
        assert_eq!(p["typical_load"], json!({"load": 4.0, "basis": "baseline_capacity"}));
        assert_eq!(p["wait"]["status"], "compared");
        let wait = &p["wait"]["wait"];
        let tails = |side: &str| -> [f64; 4] {
            let ok: Vec<Record> = records(side, 4).into_iter().filter(|r| r.ok).collect();
            let ttft: Vec<f64> = ok.iter().map(|r| r.ttft).collect();
            let e2el: Vec<f64> = ok.iter().map(|r| r.e2el).collect();
            [percentile(&ttft, 95.0), percentile(&ttft, 99.0), percentile(&e2el, 95.0), percentile(&e2el, 99.0)]
        };
        let (bt, ct) = (tails("baseline"), tails("candidate"));
        for (side, t) in [("baseline", bt), ("candidate", ct)] {
            let w = &wait[side];
            assert_eq!(w["basis"], json!({"kind": "measured", "load": 4.0}));
            for (k, key) in ["ttft_p95", "ttft_p99", "e2el_p95", "e2el_p99"].iter().enumerate() {
                let v = w[key]["value_ms"].as_f64().unwrap();
                assert!(close(v, t[k]), "{name}: {side} {key}: {v} vs {}", t[k]);
                let iv = &w[key]["interval"];
                assert!(iv["low"].as_f64().unwrap() <= v && v <= iv["high"].as_f64().unwrap(), "{iv}");
            }
        }

        // The crossover at every load, from the summaries' medians.
        let crossovers = s["crossovers"].as_array().unwrap();
        assert_eq!(crossovers.len(), 3, "{name}: {s}");
        let mut sentences = Vec::new();
        for (x, c) in crossovers.iter().zip(LOADS) {
            let med = |side: &str| {
                let v = summary_file(side, c);
                (v["time_to_first_token"]["p50"].as_f64().unwrap(), v["inter_token_latency"]["p50"].as_f64().unwrap())
            };
            let ((b_ttft, b_tpot), (c_ttft, c_tpot)) = (med("baseline"), med("candidate"));
            let n_star = 1.0 + (c_ttft - b_ttft) / (b_tpot - c_tpot);
            assert_eq!(x["load"].as_f64().unwrap(), c as f64);
            assert_eq!(x["crossover"]["n_star"].as_f64().unwrap(), n_star, "{name}: c{c}");
            let k = n_star.ceil() as u64;
            assert_eq!(x["crossover"]["longer_than_tokens"], k);
            let later = c_ttft - b_ttft;
            let later = if later >= 10.0 { format!("{later:.0}") } else { format!("{later:.1}") };
            let unit = if c == 1 { "request" } else { "requests" };
            sentences.push(format!(
                "at {c} concurrent {unit}: starts {later} ms later, finishes sooner for answers longer than {k} tokens"
            ));
        }

        // The summary, in words, from the same numbers.
        let summary = doc["summary"].as_str().unwrap();
        let expected_summary = format!(
            "Under `chat` (TTFT ≤ 120 ms, TPOT ≤ 12 ms, met by 95 % of requests), the candidate completes 15,731 more requests per hour than the baseline at SLO capacity (26,478 instead of 10,747 per hour, at 10 instead of 4.6 concurrent requests). \
             At the typical load of 4 concurrent requests, the heaviest load measured on both sides within the baseline's capacity, the slowest 1 % of users wait {} for their first token (baseline {}) and {} for the whole answer (baseline {}).",
            ms(ct[1]), ms(bt[1]), ms(ct[3]), ms(bt[3])
        );
        assert!(summary.starts_with(&expected_summary), "{name}:\n{summary}\n{expected_summary}");
        for sentence in &sentences {
            let mut upper = sentence.clone();
            upper.replace_range(0..1, "A");
            let at = upper.replacen(": starts", " the candidate starts", 1);
            assert!(summary.contains(&format!("{at}.")), "{name}: {summary} lacks {at}");
        }
        assert!(summary.ends_with("No request failed (240 baseline and 240 candidate requests)."), "{summary}");

        // Warnings: every load with fewer than 100 completed requests (p99) or 20 (p95), counted
        // in the records; nothing failed, no quality result, no matrix label.
        let mut small = Vec::new();
        for side in ["baseline", "candidate"] {
            for c in LOADS {
                let completed = records(side, c).iter().filter(|r| r.ok).count() as u64;
                let unsupported: Vec<&str> = [("p95", 20), ("p99", 100)]
                    .into_iter()
                    .filter(|(_, needs)| completed < *needs)
                    .map(|(p, _)| p)
                    .collect();
                if !unsupported.is_empty() {
                    small.push(json!({"code": "small_sample", "side": side, "sweep": s["key"], "shape": "concurrency",
                                      "load": c as f64, "completed": completed, "unsupported": unsupported}));
                }
            }
        }
        assert_eq!(small.len(), 4, "{name}: c1 (20) and c4 (60) on each side: {small:?}");
        assert_eq!(report["warnings"], json!(small), "{name}");
        assert_eq!(s["key"]["cell"], "input_len=512;output_len=128");
        assert_eq!(doc["warnings"][1], "Small sample: the baseline completed 60 requests at 4 concurrent requests on `input_len=512;output_len=128`, too few for a trustworthy p99: 1 % of them is 0.6 requests beyond it, it needs 100.", "{name}: {}", doc["warnings"]);
        assert_eq!(report["quality"], json!({"rows": [], "missing": [], "quantization": [], "covered": false}));
        assert_eq!(report["answer"], json!({"level": "warn", "compared": 1, "fewer_requests": [],
            "caveats": ["small_sample", "small_sample", "small_sample", "small_sample"]}));
        assert_eq!(doc["answer"], "Answer: warn: approved only with caveats (4 small samples); read the warnings before approving.");
        // No price set: no cost.
        assert_eq!(s["profiles"][0]["cost"], Value::Null);

        // Markdown: the same numbers in the table.
        let (status, md) = get_text(&server, &format!("{path}&format=markdown"), None).await;
        assert_eq!(status, 200, "{md}");
        assert!(md.starts_with(&format!("## Capacity at SLO\n\n**{}**\n\n", doc["answer"].as_str().unwrap())), "{md}");
        assert!(md.contains(&format!("### Warnings\n\n- {}\n", doc["warnings"][0].as_str().unwrap())), "{md}");
        assert!(md.contains("Small samples: the p-th percentile of n requests has n·(1 − p/100) requests beyond it"), "{md}");
        assert!(md.contains(summary), "{md}");
        let row = format!(
            "| chat | TTFT ≤ 120 ms, TPOT ≤ 12 ms | 4.6 → 10 | 10,747 → 26,478 | +15,731 (+{pct:.1} %) | 4 | {} → {} | {} → {} | {} → {} | {} → {} |",
            ms(bt[0]), ms(ct[0]), ms(bt[1]), ms(ct[1]), ms(bt[2]), ms(ct[2]), ms(bt[3]), ms(ct[3])
        );
        assert!(md.contains(&format!("\n{row}\n")), "{name}: no row\n{row}\nin\n{md}");
        assert!(md.contains("| Profile | Thresholds | Capacity (concurrent requests) | Requests/hour | Change/hour | Typical load | p95 TTFT | p99 TTFT | p95 E2E | p99 E2E |"), "{md}");
        for sentence in &sentences {
            assert!(md.contains(&format!("\n- {sentence}\n")), "{md} lacks {sentence}");
        }
        assert!(md.contains("\nFailed requests: baseline 0 of 240, candidate 0 of 240.\n"), "{md}");
        eprintln!("{name}:\n{md}");

        // A typical load given: 8, a third of the way from 4 to 16, interpolated.
        let (status, doc8) = get_json(&server, &format!("{path}&typical_load=8&profile=chat"), None).await;
        assert_eq!(status, 200, "{doc8}");
        let p8 = &doc8["report"]["sweeps"][0]["profiles"][0];
        assert_eq!(p8["typical_load"], json!({"load": 8.0, "basis": "given"}));
        let w = &p8["wait"]["wait"]["baseline"];
        assert_eq!(w["basis"], json!({"kind": "interpolated", "between": [4.0, 16.0]}));
        let ok16: Vec<f64> = records("baseline", 16).iter().filter(|r| r.ok).map(|r| r.ttft).collect();
        let p16 = percentile(&ok16, 99.0);
        assert!(close(w["ttft_p99"]["value_ms"].as_f64().unwrap(), bt[1] + (p16 - bt[1]) / 3.0));
        // Beyond the measured loads: refused, never extrapolated.
        let (_, doc32) = get_json(&server, &format!("{path}&typical_load=32"), None).await;
        assert_eq!(
            doc32["report"]["sweeps"][0]["profiles"][0]["wait"],
            json!({"status": "refused", "refusal": {"code": "outside_measured", "lowest": 1.0, "highest": 16.0}})
        );
        // A looser target (0.9): the candidate meets it at every load (0.95, 1, 0.9): at least 16.
        let (_, doc90) = get_json(&server, &format!("{path}&target=0.9"), None).await;
        let p90 = &doc90["report"]["sweeps"][0]["profiles"][0];
        assert_eq!(p90["candidate"]["capacity"]["kind"], "at_least", "{p90}");
        assert_eq!(p90["change"]["change"]["bound"], "at_least");
    })
    .await;
}

#[tokio::test]
async fn parameters_runs_and_access_are_checked() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let (_, base, head) = seed(&server, "private-capacity", false).await;
        let read = server.token("private-capacity", "read").await;
        // Another (public) project's run.
        let other = server.project_with_token("other", json!({"public": true})).await;
        let (status, receipt) = server.upload("other", &other, &upload_of("candidate", 'c')).await;
        assert_eq!(status, 201, "{receipt}");
        let foreign = receipt["run_id"].as_str().unwrap().to_string();
        let path = format!("/api/v1/compare/report?base={base}&head={head}");

        // Private: a token of the project (or the admin) reads it; no token, another project's
        // token: the 404 of a missing run; an unknown token: 401.
        assert_eq!(get_json(&server, &path, Some(&read)).await.0, 200, "{name}");
        assert_eq!(get_json(&server, &path, Some(ADMIN_TOKEN)).await.0, 200);
        let (status, anon) = get_json(&server, &path, None).await;
        assert_eq!(status, 404, "{anon}");
        let (status, other_token) = get_json(&server, &path, Some(&other)).await;
        assert_eq!(status, 404);
        assert_eq!(anon["title"], other_token["title"]);
        assert_eq!(anon["detail"], format!("no run `{base}`"));
        let unknown = format!("bt_{}", "0".repeat(64));
        assert_eq!(get_json(&server, &path, Some(&unknown)).await.0, 401);

        // An unknown run: 404, whichever side.
        let missing = "00000000-0000-4000-8000-000000000000";
        let (status, p) = get_json(&server, &format!("/api/v1/compare/report?base={base}&head={missing}"), Some(&read)).await;
        assert_eq!((status, p["detail"].as_str()), (404, Some(format!("no run `{missing}`").as_str())));
        let (status, _) = get_json(&server, &format!("/api/v1/compare/report?base=not-a-uuid&head={head}"), Some(&read)).await;
        assert_eq!(status, 404);

        // A run of another project: 422 naming `head` (the caller may read both).
        let (status, p) = get_json(&server, &format!("/api/v1/compare/report?base={base}&head={foreign}"), Some(ADMIN_TOKEN)).await;
        assert_eq!(status, 422, "{p}");
        assert_eq!(p["parameter"], "head");
        assert_eq!(p["title"], "Unprocessable query parameter");
        // A profile the project does not have: 422 naming `profile`.
        let (status, p) = get_json(&server, &format!("{path}&profile=batch"), Some(&read)).await;
        assert_eq!((status, p["parameter"].as_str()), (422, Some("profile")), "{p}");
        assert_eq!(p["detail"], "`profile`: `batch` is not an SLO profile of project `private-capacity` (its profiles: `chat`)");

        // Malformed parameters: 400 naming each.
        for (query, parameter) in [
            (format!("{path}&target=1.5"), "target"),
            (format!("{path}&target=0"), "target"),
            (format!("{path}&target=abc"), "target"),
            (format!("{path}&typical_load=-4"), "typical_load"),
            (format!("{path}&format=pdf"), "format"),
            (format!("/api/v1/compare/report?head={head}"), "base"),
            (format!("/api/v1/compare/report?base={base}"), "head"),
        ] {
            let (status, p) = get_json(&server, &query, Some(&read)).await;
            assert_eq!((status, p["parameter"].as_str()), (400, Some(parameter)), "{name}: {query}: {p}");
        }
    })
    .await;
}

/// The upload of one side with a configuration (`tensor_parallel_size` 2, a KV-cache dtype)
/// and quality results.
fn configured_upload(side: &str, sha: char, kv: Option<&str>, quality: Value) -> Value {
    let mut doc = upload_of(side, sha);
    let mut configuration = json!({"parallelism": {"tensor_parallel_size": 2}});
    if let Some(kv) = kv {
        configuration["quantization"] = json!({"kv_cache_dtype": kv});
    }
    doc["configuration"] = configuration;
    doc["quality"] = quality;
    doc
}

/// An FP8 KV cache on the candidate: the runs pair cell by cell; without the candidate's
/// quality result for the baseline's task the report warns (`quantization_without_quality`)
/// and its answer is at least `warn`; with it, the quality table gives both values. With a
/// price per accelerator-hour, the cost at SLO capacity from the summaries; `format=html` is
/// the same report as a document.
#[tokio::test]
async fn quality_cost_and_html_of_a_kv_cache_change() {
    for_each_store(|name, store| async move {
        let server = TestServer::start(store).await;
        let token = server.project_with_token("fp8-capacity", json!({"public": true})).await;
        let settings = json!({"slo_profiles": [{"name": "chat", "ttft_ms": 120, "tpot_ms": 12}],
                              "cost": {"accelerator_hour_usd": 2.5}});
        let (status, body) = server.send("PUT", "/api/v1/projects/fp8-capacity/settings", ADMIN_TOKEN, &settings).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["cost"], json!({"accelerator_hour_usd": 2.5}), "{body}");
        let gsm8k = |v: f64, se: f64| json!({"task": "gsm8k", "metric": "exact_match", "value": v, "stderr": se, "samples": 1319});
        let mut ids = Vec::new();
        for doc in [
            configured_upload("baseline", 'a', None, json!([gsm8k(0.7566, 0.0118)])),
            configured_upload("candidate", 'b', Some("fp8"), json!([])),
            configured_upload("candidate", 'c', Some("fp8"), json!([gsm8k(0.7491, 0.0119)])),
        ] {
            let (status, receipt) = server.upload("fp8-capacity", &token, &doc).await;
            assert_eq!(status, 201, "{name}: {receipt}");
            ids.push(receipt["run_id"].as_str().unwrap().to_string());
        }
        let path = |head: &str| format!("/api/v1/compare/report?base={}&head={head}", ids[0]);

        // Without the candidate's quality result.
        let (status, doc) = get_json(&server, &path(&ids[1]), None).await;
        assert_eq!(status, 200, "{name}: {doc}");
        let report = &doc["report"];
        assert_eq!(report["sweeps"].as_array().unwrap().len(), 1, "{name}: paired cell by cell: {report}");
        let fp8_diff = json!([{"field": "quantization.kv_cache_dtype", "baseline": null, "candidate": "fp8"}]);
        assert_eq!(report["quality"], json!({"rows": [], "quantization": fp8_diff, "covered": false,
            "missing": [{"missing_on": "candidate", "task": "gsm8k", "metric": "exact_match"}]}), "{name}");
        assert_eq!(report["warnings"][0], json!({"code": "quantization_without_quality", "differences": fp8_diff, "missing_tasks": ["gsm8k"]}));
        assert_eq!(report["answer"]["level"], "warn");
        assert_eq!(report["answer"]["caveats"][0], "quantization_without_quality");
        assert_eq!(doc["warnings"][0], "Quantization changed (`quantization.kv_cache_dtype`: unset → fp8) and the candidate has no quality result for the baseline's tasks (`gsm8k`): speed does not prove correctness (attach one with `benchtrail upload --quality FILE`).");

        // Cost at SLO: 2.5 USD × 2 accelerators (tensor_parallel_size 2, pipeline unset) at
        // each side's capacity, from the records and the summaries' output_token_throughput.
        let cost = &report["sweeps"][0]["profiles"][0]["cost"];
        assert_eq!(cost["accelerator_hour_usd"], 2.5);
        for (side, key) in [("baseline", "baseline"), ("candidate", "candidate")] {
            let (load, x) = expected_capacity(side);
            let f = (load - 4.0) / 12.0;
            let otps = |c: u64| summary_file(side, c)["output_token_throughput"]["avg"].as_f64().unwrap();
            let t = otps(4) + f * (otps(16) - otps(4));
            let c = &cost[key];
            assert_eq!(c["status"], "priced", "{name}: {c}");
            let c = &c["cost"];
            assert_eq!(c["accelerators"], json!({"accelerators": 2, "configured": false}));
            assert_eq!(c["instance_hour_usd"], 5.0);
            assert_eq!(c["bound"], "estimate");
            assert!(close(c["requests_per_hour"].as_f64().unwrap(), x * 3600.0), "{c}");
            assert!(close(c["usd_per_1k_requests"].as_f64().unwrap(), 5000.0 / (x * 3600.0)), "{c}");
            assert!(close(c["output_tokens_per_s"].as_f64().unwrap(), t), "{c} vs {t}");
            assert!(close(c["usd_per_million_output_tokens"].as_f64().unwrap(), 5e6 / (3600.0 * t)), "{c}");
        }
        let usd = |v: f64| if v >= 1.0 { format!("${v:.2}") } else { format!("${v:.4}") };
        let per_1k = |side: &str| usd(5000.0 / (expected_capacity(side).1 * 3600.0));
        // 10,747 and 26,478 requests per hour: $0.4652 → $0.1888 per 1,000 requests.
        assert_eq!((per_1k("baseline"), per_1k("candidate")), ("$0.4652".to_string(), "$0.1888".to_string()));

        // Markdown and HTML: the same sections.
        let (_, md) = get_text(&server, &format!("{}&format=markdown", path(&ids[1])), None).await;
        assert!(md.contains(&format!("| chat | {} → {} |", per_1k("baseline"), per_1k("candidate"))), "{name}: {md}");
        assert!(md.contains("### Quality\n\nQuantization changed (`quantization.kv_cache_dtype`: unset → fp8) and the candidate has no quality result"), "{md}");
        let r = server.http.get(server.url(&format!("{}&format=html", path(&ids[1])))).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
        let html = r.text().await.unwrap();
        assert!(html.starts_with("<!doctype html>"), "{html}");
        assert!(html.contains("<section id=\"validation\" data-answer=\"warn\">"), "{name}: {html}");
        assert!(html.contains("<li class=\"warning report-warning\" data-code=\"quantization_without_quality\">⚠ Quantization changed (<code>quantization.kv_cache_dtype</code>: unset → fp8)"), "{html}");
        assert!(html.contains(&format!("<td>{} → {}</td>", per_1k("baseline"), per_1k("candidate"))), "{html}");
        assert!(html.contains("<p id=\"capacity-summary\">Under <code>chat</code>"), "{html}");

        // With the candidate's result for gsm8k: no quantization warning, both values compared.
        let (_, doc) = get_json(&server, &path(&ids[2]), None).await;
        let q = &doc["report"]["quality"];
        assert_eq!(q["covered"], true);
        assert_eq!(q["missing"], json!([]));
        let row = &q["rows"][0];
        assert_eq!((row["baseline"].as_f64(), row["candidate"].as_f64()), (Some(0.7566), Some(0.7491)));
        assert_eq!(row["delta"].as_f64().unwrap(), 0.7491 - 0.7566);
        assert_eq!(row["delta_stderr"].as_f64().unwrap(), (0.0118f64.powi(2) + 0.0119f64.powi(2)).sqrt());
        assert_eq!((row["baseline_samples"].as_u64(), row["candidate_samples"].as_u64()), (Some(1319), Some(1319)));
        let codes: Vec<&str> = doc["report"]["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap()).collect();
        assert!(!codes.contains(&"quantization_without_quality"), "{name}: {codes:?}");
        let (_, md) = get_text(&server, &format!("{}&format=markdown", path(&ids[2])), None).await;
        assert!(md.contains("| gsm8k | exact_match | 0.7566 ± 0.0118 → 0.7491 ± 0.0119 | -0.0075 ± 0.0168 | 1,319 → 1,319 |\n"), "{md}");

        // A candidate labelled as one cell of the standard matrix (short-chat, fresh prefixes,
        // typical load): the 17 others are missing; its sweep (another scenario) pairs with
        // none of the baseline's, so nothing is compared: incomplete.
        let mut labelled = upload_of("candidate", 'd');
        labelled["cell"] = json!({"scenario": "short-chat", "prefix_mode": "fresh", "load_level": "typical"});
        let (status, receipt) = server.upload("fp8-capacity", &token, &labelled).await;
        assert_eq!(status, 201, "{name}: {receipt}");
        let (_, doc) = get_json(&server, &path(receipt["run_id"].as_str().unwrap()), None).await;
        let mut expected = Vec::new();
        for scenario in ["short-chat", "long-doc-qa", "long-output"] {
            for prefix in ["fresh", "reusable"] {
                for level in ["low", "typical", "near-capacity"] {
                    if (scenario, prefix, level) != ("short-chat", "fresh", "typical") {
                        expected.push(json!({"scenario": scenario, "prefix_mode": prefix, "load_level": level}));
                    }
                }
            }
        }
        assert_eq!(expected.len(), 17);
        let warnings = doc["report"]["warnings"].as_array().unwrap();
        assert_eq!(
            warnings.last().unwrap(),
            &json!({"code": "missing_matrix_cells", "side": "candidate", "missing": expected}),
            "{name}"
        );
        assert_eq!(doc["report"]["answer"]["level"], "incomplete", "{name}");
        assert!(doc["warnings"].as_array().unwrap().last().unwrap().as_str().unwrap()
            .starts_with("The candidate's cells carry the validation matrix's labels but miss 17 of its 18 standard cells (scenario / prefix mode / load level): short-chat/fresh/low, short-chat/fresh/near-capacity, short-chat/reusable/low,"), "{}", doc["warnings"]);

        // A price that is not a positive number of USD up to 1000: 422 naming the field.
        for bad in [json!(0), json!(1e6), json!("2.5")] {
            let settings = json!({"slo_profiles": [{"name": "chat", "ttft_ms": 120}], "cost": {"accelerator_hour_usd": bad}});
            let (status, p) = server.send("PUT", "/api/v1/projects/fp8-capacity/settings", ADMIN_TOKEN, &settings).await;
            assert_eq!((status, p["pointer"].as_str()), (422, Some("/cost/accelerator_hour_usd")), "{name}: {p}");
        }
    })
    .await;
}
