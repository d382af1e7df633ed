//! `benchtrail check --run ID` against a real server (SQLite, loopback HTTP): the real goodput
//! history of examples/history uploaded commit by commit with `--repeats` announcing three
//! runs for the last commit; check waits while it is provisional and reports the verdict the
//! server's `/verdict` gives, with its exit status.

use crate::common;

use common::real::RealProject;
use common::*;
use serde_json::Value;
use std::path::Path;

fn upload(
    p: &RealProject,
    dir: &Path,
    sha: &str,
    parent: Option<&str>,
    file: &str,
    extra: &[&str],
) -> Value {
    let path = example(file);
    let mut args = vec!["upload", "--project", "p", "--json", "--commit", sha];
    if let Some(parent) = parent {
        args.extend(["--parents", parent]);
    }
    args.extend_from_slice(extra);
    args.push(path.to_str().unwrap());
    let out = benchtrail(
        dir,
        &args,
        &[("BENCHTRAIL_URL", &p.base), ("BENCHTRAIL_TOKEN", &p.token)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(stdout(&out).trim()).unwrap()
}

#[test]
fn check_reports_the_servers_verdict_and_exits_with_it() {
    let p = RealProject::start("check");
    let dir = TempDir::new("check-cwd");
    let sha = |i: u8| format!("{:040x}", 0xabc0 + u32::from(i));
    let history = [
        "goodput_baseline_s11_c4.json",
        "goodput_baseline_s12_c4.json",
        "goodput_baseline_s13_c4.json",
    ];
    let mut parent: Option<String> = None;
    for (i, f) in history.iter().enumerate() {
        upload(&p, dir.path(), &sha(i as u8), parent.as_deref(), f, &[]);
        parent = Some(sha(i as u8));
    }
    // The candidate commit announces 3 repeats; one is in: provisional, at most warn.
    let receipt = upload(
        &p,
        dir.path(),
        &sha(9),
        parent.as_deref(),
        "goodput_candidate_s21_c4.json",
        &["--repeats", "3"],
    );
    let run = receipt["run_id"].as_str().unwrap();
    let env = [("BENCHTRAIL_URL", p.base.as_str())];
    let out = benchtrail(dir.path(), &["check", "--run", run, "--wait", "1"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "waiting: the verdict is provisional (repeats pending)\nstill provisional after 1 s (--wait): reporting it as it is\n"
    );
    let text = stdout(&out);
    assert_eq!(
        text.lines().next().unwrap(),
        format!(
            "benchtrail verdict: WARN (provisional: 1 of 3 repeats in) at commit {}",
            &sha(9)[..12]
        )
    );
    // The report is the server's verdict, rendered: every reason of /verdict that is not a
    // finding is a line; the findings are listed across their cells.
    let served = p.get(&format!("/api/v1/runs/{run}/verdict"));
    for r in served["reasons"].as_array().unwrap() {
        let finding = ["tradeoff", "regression", "improvement", "missing"]
            .contains(&r["code"].as_str().unwrap());
        assert_eq!(
            text.contains(r["message"].as_str().unwrap()),
            !finding,
            "{r}\n{text}"
        );
    }
    assert!(text.contains(
        "regressions and trade-offs:\n  warn trade-off in 1 of 1 cells (max_concurrency=4;request_rate=inf;num_prompts=60): \
         output throughput +33.9 % but request goodput (tool SLOs) -100.0 %; median E2E latency -25.3 %\n"
    ), "{text}");
    // JSON: the typed model as the server serves it.
    let out = benchtrail(
        dir.path(),
        &["check", "--run", run, "--format", "json"],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["verdict"], served);
    assert_eq!(doc["analysis"]["run_id"], run);
    // The other two repeats arrive (the same file again, as CI reruns would): final, and the
    // trade-off fails, exit 1.
    for r in ["1", "2"] {
        upload(
            &p,
            dir.path(),
            &sha(9),
            parent.as_deref(),
            "goodput_candidate_s21_c4.json",
            &["--repeats", "3", "--repeat-index", r],
        );
    }
    let out = benchtrail(dir.path(), &["check", "--run", run], &env);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().next().unwrap(),
        format!("benchtrail verdict: FAIL at commit {}", &sha(9)[..12])
    );
    let out = benchtrail(dir.path(), &["check", "--run", run, "--no-fail"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // By commit: the worst verdict over its three runs, each listed on stderr.
    let out = benchtrail(
        dir.path(),
        &["check", "--commit", &sha(9), "--project", "p"],
        &env,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let listed: Vec<String> = stderr(&out).lines().map(str::to_string).collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert!(
        listed
            .iter()
            .all(|l| l.starts_with("run ") && l.ends_with(": fail")),
        "{listed:?}"
    );
    assert!(stdout(&out).starts_with("benchtrail verdict: FAIL"));
    let out = benchtrail(
        dir.path(),
        &["check", "--commit", &sha(7), "--project", "p"],
        &env,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: commit {} has no run in project `p` on its default branch (pass --branch B \
             for another branch's runs, e.g. a pull request's)\n",
            sha(7)
        )
    );
    // An unknown run: the server's 404, exit 2.
    let out = benchtrail(
        dir.path(),
        &["check", "--run", "00000000-0000-0000-0000-000000000000"],
        &env,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(&format!(
            "error: the server answered HTTP 404 to GET {}/api/v1/runs/00000000-0000-0000-0000-000000000000/verdict",
            p.base
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_exits_2_when_the_analysis_is_still_pending_after_the_wait() {
    // No worker and no inline analysis: the upload is stored and its analysis stays queued.
    let p = RealProject::start_with(
        "check-pending",
        benchtrail_server::analysis::jobs::AnalyzerOptions {
            workers: 0,
            inline: 0,
            ..Default::default()
        },
    );
    let dir = TempDir::new("check-pending-cwd");
    let receipt = upload(
        &p,
        dir.path(),
        &format!("{:040x}", 0xfeed),
        None,
        "goodput_baseline_s11_c4.json",
        &[],
    );
    assert_eq!(receipt["verdict"], "pending", "{receipt}");
    let run = receipt["run_id"].as_str().unwrap();
    let env = [("BENCHTRAIL_URL", p.base.as_str())];
    let out = benchtrail(dir.path(), &["check", "--run", run, "--wait", "1"], &env);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "waiting: not analyzed yet\nstill not analyzed after 1 s (--wait): reporting it as it is\n"
    );
    assert!(
        stdout(&out)
            .starts_with("benchtrail verdict: PENDING — not analyzed yet at commit 000000000000"),
        "{}",
        stdout(&out)
    );
}
