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
//! * guidellm: `--output-path P`, `--output-dir D`;
//! * LLMPerf: `--results-dir D`;
//!
//! plus every `--result PATH` and every result file given as to `upload`. A named path the
//! command did not write is an error; finding none at all is one too (pass `--result`).
//! A benchmark that exits non-zero uploads nothing and exits 2.

use crate::cli::RunArgs;
use crate::commands::{upload_with, Connection};
use crate::document::Environment;
use crate::errors::{BenchmarkFailed, InputError, UsageError};
use anyhow::{anyhow, Context, Result};
use std::io::Write;
use std::path::PathBuf;

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
    for flag in DIR_FLAGS.iter().filter(|f| **f != "--result-dir") {
        out.extend(flag_value(argv, flag).map(PathBuf::from));
    }
    out.dedup();
    out
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
    let status = std::process::Command::new(program)
        .args(rest)
        .current_dir(&env.cwd)
        .status()
        .with_context(|| format!("cannot start the benchmark command `{program}`"))?;
    if !status.success() {
        return Err(BenchmarkFailed(status.to_string()).into());
    }
    let mut upload = args.upload.clone();
    let named: Vec<PathBuf> = result_paths(&args.command)
        .into_iter()
        .chain(args.results.iter().cloned())
        .collect();
    for p in &named {
        if !env.cwd.join(p).exists() {
            return Err(InputError::wrap(anyhow!(
                "the benchmark command did not write `{}` (named by its flags or --result)",
                p.display()
            )));
        }
    }
    upload.files.extend(named);
    if upload.files.is_empty() {
        return Err(InputError::wrap(anyhow!(
            "found no result file: the command's flags name none; pass --result PATH (a file or folder it writes)"
        )));
    }
    let receipt = upload_with(
        &upload,
        Some(&shell_join(&args.command)),
        connection,
        env,
        out,
        err,
    )?;
    let Some(receipt) = receipt else {
        return Ok(()); // --dry-run: printed, nothing stored
    };
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
