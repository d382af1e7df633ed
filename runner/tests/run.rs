//! `benchtrail run [UPLOAD OPTIONS] -- COMMAND...` through the built binary against a real
//! server (SQLite, loopback HTTP): the command runs (here a stand-in that writes the real vLLM
//! fixture where its flags say), its result is found from its own flags or `--result`,
//! uploaded with the command line recorded, and the report printed; a failing command uploads
//! nothing and exits 2.

use crate::common;

use common::real::RealProject;
use common::*;
use serde_json::Value;

#[test]
fn run_finds_the_result_its_command_names_uploads_it_and_reports() {
    let p = RealProject::start("run");
    let (repo, _, head) = git_repo();
    let src = fixture(FIXTURE);
    let env = [
        ("BENCHTRAIL_URL", p.base.as_str()),
        ("BENCHTRAIL_TOKEN", p.token.as_str()),
    ];
    // vLLM's flags name the file: `--result-dir out --result-filename r.json`.
    let script = format!(
        "/bin/mkdir -p out && /bin/cp '{}' out/r.json",
        src.display()
    );
    let out = benchtrail(
        repo.path(),
        &[
            "run",
            "--project",
            "p",
            "--",
            "/bin/sh",
            "-c",
            &script,
            "vllm",
            "--save-result",
            "--result-dir",
            "out",
            "--result-filename",
            "r.json",
        ],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // stdout is the report alone; the run's address is on stderr.
    let text = stdout(&out);
    assert_eq!(
        text.lines().next().unwrap(),
        format!("benchtrail verdict: WARN at commit {}", &head[..12])
    );
    let said = stderr(&out);
    let address = said
        .lines()
        .find(|l| l.starts_with(&format!("{}/runs/", p.base)))
        .unwrap_or_else(|| panic!("{said}"));
    let run_id = address.rsplit('/').next().unwrap();
    let run: Value = p.get(&format!("/api/v1/runs/{run_id}"));
    assert_eq!(run["commit_sha"], head.as_str());
    let fingerprint = run["results"][0]["config_fingerprint"].as_str().unwrap();
    let config: Value = p.get(&format!("/api/v1/configs/{fingerprint}"));
    assert_eq!(
        config["configuration"]["benchmark"]["command"],
        // Quoted as a shell reads it back.
        format!(
            "/bin/sh -c '{}' vllm --save-result --result-dir out --result-filename r.json",
            script.replace('\'', "'\\''")
        ),
        "{config}"
    );

    // A command that fails: nothing uploaded, exit 2.
    let out = benchtrail(
        repo.path(),
        &[
            "run",
            "--project",
            "p",
            "--result",
            "out/r.json",
            "--",
            "/bin/false",
        ],
        &env,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: the benchmark command failed (exit status: 1): nothing uploaded\n"
    );
    let runs = p.get("/api/v1/projects/p/runs");
    assert_eq!(runs["items"].as_array().unwrap().len(), 1, "{runs}");

    // A command whose flags name nothing and no --result: a clear error, exit 2.
    let out = benchtrail(
        repo.path(),
        &["run", "--project", "p", "--", "/bin/true"],
        &env,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: found no result file: the command's flags name none; pass --result PATH (a file or folder it writes)\n"
    );

    // A command that writes nothing where a stale result of an earlier job lies: refused,
    // nothing uploaded (out/r.json is the one the first run wrote, older than this command).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let before = p.get("/api/v1/projects/p/runs")["items"]
        .as_array()
        .unwrap()
        .len();
    let out = benchtrail(
        repo.path(),
        &[
            "run",
            "--project",
            "p",
            "--result",
            "out/r.json",
            "--",
            "/bin/sleep",
            "1.2",
        ],
        &env,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: `out/r.json` was not written by this benchmark run (nothing in it is newer than \
         the command's start): a result left by an earlier job is not uploaded; remove it or \
         write to a fresh path\n"
    );
    assert_eq!(
        p.get("/api/v1/projects/p/runs")["items"]
            .as_array()
            .unwrap()
            .len(),
        before
    );

    // What can be checked before the benchmark is: no token, or a server that does not answer,
    // and the command never runs.
    for (vars, expected) in [
        (
            vec![("BENCHTRAIL_URL", p.base.as_str())],
            "error: no token: pass --token (the project's upload token) or set BENCHTRAIL_TOKEN\n",
        ),
        (
            vec![
                ("BENCHTRAIL_URL", "http://127.0.0.1:9"),
                ("BENCHTRAIL_TOKEN", p.token.as_str()),
                ("BENCHTRAIL_RETRIES", "0"),
            ],
            "error: the benchmark was not started: the server does not answer: could not reach",
        ),
    ] {
        let out = benchtrail(
            repo.path(),
            &[
                "run",
                "--project",
                "p",
                "--result",
                "marker",
                "--",
                "/bin/sh",
                "-c",
                "echo ran > marker",
            ],
            &vars,
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).starts_with(expected), "{}", stderr(&out));
        assert!(!repo.path().join("marker").exists(), "the benchmark ran");
    }
}
