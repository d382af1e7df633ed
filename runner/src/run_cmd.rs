//! `benchtrail run [UPLOAD OPTIONS] -- COMMAND...`: runs a benchmark command with its output
//! streamed, finds the result files it wrote, uploads them with the command line recorded as
//! the benchmark command, waits for the analysis (`--wait`) and prints the report
//! ([`crate::check::report`]), exiting with the verdict.
//!
//! # Where the results are
//! From the command's own flags (both `--flag value` and `--flag=value`):
//! * `vllm bench serve`: `--result-dir D` and `--result-filename F` (D/F; F alone is in the
//!   working directory; D alone: the folder);
//! * SGLang `bench_serving`: `--output-file F`;
//! * AIPerf, GenAI-Perf: `--artifact-dir D`;
//! * guidellm: `--output-path P`, `--output-dir D`, `--output kind=json,path=P` (0.8);
//! * LLMPerf: `--results-dir D`;
//!
//! plus every `--result PATH` and every result file given as to `upload`. A named path the
//! command did not write is an error; finding none at all is one too (pass `--result`).
//! A benchmark that exits non-zero uploads nothing and exits 2. Before the benchmark starts, the
//! run checks what it can: a result path is named, the project and token are given and the
//! server answers (`GET /healthz`); after it, that each named result was written by it (a
//! file, or a file in a folder, modified since the command started), so a result left in a
//! reused workspace by an earlier job is never uploaded as this commit's.

use crate::cli::RunArgs;
use crate::commands::{upload_with, Connection};
use crate::document::Environment;
use crate::errors::{BenchmarkFailed, InputError, UsageError};
use anyhow::{anyhow, Context, Result};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The flags that name a result file or folder, per the module documentation.
const FILE_FLAGS: [&str; 2] = ["--output-file", "--output-path"];
const DIR_FLAGS: [&str; 4] = [
    "--artifact-dir",
    "--output-dir",
    "--results-dir",
    "--result-dir",
];

/// The value of `flag` in `argv` (`--flag v` or `--flag=v`), last one wins.
fn flag_value<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let mut found = None;
    for (i, a) in argv.iter().enumerate() {
        if a == flag {
            found = argv.get(i + 1).map(String::as_str);
        } else if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(v);
        }
    }
    found
}

/// The result paths `argv` names (see the module documentation), relative to the working
/// directory.
pub fn result_paths(argv: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dir = flag_value(argv, "--result-dir");
    match (dir, flag_value(argv, "--result-filename")) {
        (Some(d), Some(f)) => out.push(PathBuf::from(d).join(f)),
        (None, Some(f)) => out.push(PathBuf::from(f)),
        (Some(d), None) => out.push(PathBuf::from(d)),
        (None, None) => {}
    }
    for flag in FILE_FLAGS {
        out.extend(flag_value(argv, flag).map(PathBuf::from));
    }
    // guidellm ≥ 0.8: `--output kind=json,path=out/r.json` (repeatable); its JSON and YAML
    // reports are results, its CSV and HTML are not.
    for (i, a) in argv.iter().enumerate() {
        let value = if a == "--output" {
            argv.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix("--output=")
        };
        let Some(v) = value else { continue };
        let field = |k: &str| v.split(',').find_map(|kv| kv.strip_prefix(k));
        let result_kind = field("kind=").is_none_or(|k| matches!(k, "json" | "yaml"));
        if let Some(path) = field("path=").filter(|_| result_kind) {
            out.push(PathBuf::from(path));
        }
    }
    for flag in DIR_FLAGS.iter().filter(|f| **f != "--result-dir") {
        out.extend(flag_value(argv, flag).map(PathBuf::from));
    }
    out.dedup();
    out
}

/// Whether `path` (a file, or any file under a folder) was modified at or after `since`, less
/// a second of file-system timestamp granularity.
fn written_since(path: &std::path::Path, since: SystemTime) -> bool {
    let since = since - Duration::from_secs(1);
    let modified = |p: &std::path::Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since)
    };
    if !path.is_dir() {
        return modified(path);
    }
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if modified(&p) {
                return true;
            }
        }
    }
    false
}

/// The command line as one shell-readable string (arguments with spaces or quotes quoted).
fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `benchtrail run` (see the module documentation).
///
/// # Errors
/// [`BenchmarkFailed`] when the command exits non-zero; the command not starting, no result
/// file ([`InputError`]), any upload error; [`crate::report::ExitWith`] for a failing verdict.
pub fn run(
    args: &RunArgs,
    connection: &Connection,
    env: &Environment,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<()> {
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| UsageError("no benchmark command after --".into()))?;
    let named: Vec<PathBuf> = result_paths(&args.command)
        .into_iter()
        .chain(args.results.iter().cloned())
        .collect();
    let mut upload = args.upload.clone();
    // Everything that can be known before the benchmark is checked before it: a GPU job
    // should not run for an hour to learn that the token is missing.
    if named.is_empty() && upload.files.is_empty() {
        return Err(InputError::wrap(anyhow!(
            "found no result file: the command's flags name none; pass --result PATH (a file or folder it writes)"
        )));
    }
    if !upload.dry_run {
        if upload.project.is_none() {
            return Err(UsageError("--project is required (or --dry-run)".into()).into());
        }
        let client = connection.client("the project's upload token")?;
        client
            .get_json_retrying::<serde_json::Value>("/healthz", err)
            .context("the benchmark was not started: the server does not answer")?;
    }
    let started = SystemTime::now();
    let status = std::process::Command::new(program)
        .args(rest)
        .current_dir(&env.cwd)
        .status()
        .with_context(|| format!("cannot start the benchmark command `{program}`"))?;
    if !status.success() {
        return Err(BenchmarkFailed(status.to_string()).into());
    }
    for p in &named {
        let path = env.cwd.join(p);
        if !path.exists() {
            return Err(InputError::wrap(anyhow!(
                "the benchmark command did not write `{}` (named by its flags or --result)",
                p.display()
            )));
        }
        if !written_since(&path, started) {
            return Err(InputError::wrap(anyhow!(
                "`{}` was not written by this benchmark run (nothing in it is newer than the command's start): a result left by an earlier job is not uploaded; remove it or write to a fresh path",
                p.display()
            )));
        }
    }
    upload.files.extend(named);
    // stdout is the report alone (one Markdown or JSON document a CI step can pipe); what the
    // upload says (the run's address) goes to stderr, except a --dry-run's normalized run.
    let mut said = Vec::new();
    let receipt = upload_with(
        &upload,
        Some(&shell_join(&args.command)),
        connection,
        env,
        &mut said,
        err,
    )?;
    let Some(receipt) = receipt else {
        out.write_all(&said)?;
        return Ok(()); // --dry-run: printed, nothing stored
    };
    err.write_all(&said)?;
    let client = connection.reader()?;
    let how = crate::report::Delivery {
        format: args.output,
        no_fail: args.no_fail,
        comment: &args.comment,
        pr: args.upload.pr,
        env,
    };
    crate::check::report(
        &client,
        &receipt.run_id.to_string(),
        args.wait,
        &how,
        out,
        err,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn result_paths_from_each_tools_flags() {
        assert_eq!(
            result_paths(&argv(
                "vllm bench serve --save-result --result-dir out --result-filename r.json"
            )),
            [PathBuf::from("out/r.json")]
        );
        assert_eq!(
            result_paths(&argv(
                "vllm bench serve --save-result --result-filename=r.json"
            )),
            [PathBuf::from("r.json")]
        );
        assert_eq!(
            result_paths(&argv(
                "python -m sglang.bench_serving --output-file s.jsonl"
            )),
            [PathBuf::from("s.jsonl")]
        );
        assert_eq!(
            result_paths(&argv("aiperf profile --artifact-dir art")),
            [PathBuf::from("art")]
        );
        assert_eq!(
            result_paths(&argv(
                "guidellm run --output kind=json,path=out/g.json --output kind=csv,path=out/g.csv"
            )),
            [PathBuf::from("out/g.json")]
        );
        assert_eq!(result_paths(&argv("echo hi")), Vec::<PathBuf>::new());
    }

    #[test]
    fn the_recorded_command_quotes_what_a_shell_would_split() {
        assert_eq!(
            shell_join(
                &argv("vllm bench serve --goodput ttft:60")
                    .into_iter()
                    .chain(["a b".to_string(), "it's".to_string()])
                    .collect::<Vec<_>>()
            ),
            "vllm bench serve --goodput ttft:60 'a b' 'it'\\''s'"
        );
    }
}
