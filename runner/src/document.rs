//! Builds the [`UploadDocument`] of `benchtrail upload` from its arguments, the files, git,
//! the hardware and the CI environment.
//!
//! Precedence: explicit flags win; then the CI system's variables ([`crate::ci`]: GitHub
//! Actions, GitLab CI, Buildkite); then git. For the configuration, `--config` fields win over
//! `--hardware` (auto or FILE) fields.

use crate::cell_arg::parse_cells;
use crate::cli::UploadArgs;
use crate::{git, gpu, inputs};
use anyhow::{bail, Context, Result};
use benchtrail_core::config::Hardware;
use benchtrail_core::run::{PullRequest, RunMeta};
use benchtrail_core::{Configuration, UploadDocument};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Where the CLI runs: the directory (git and relative paths) and the environment variables
/// it reads (the CI system's, [`crate::ci`]), as a map so tests set them without touching the
/// process environment. `PATH` is used as the process has it.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// Current directory.
    pub cwd: PathBuf,
    /// Environment variables.
    pub vars: HashMap<String, String>,
}

impl Environment {
    /// This process's directory and environment.
    ///
    /// # Errors
    /// The current directory cannot be read.
    pub fn current() -> Result<Environment> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        Ok(Environment {
            cwd,
            vars: std::env::vars().collect(),
        })
    }

    /// A variable's value, `None` when unset or empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// An upload document and the notes gathered while building it (for stderr).
#[derive(Debug, Clone)]
pub struct Built {
    /// The document.
    pub document: UploadDocument,
    /// Notes, e.g. "nvidia-smi not found".
    pub notes: Vec<String>,
    /// Files chosen from folders, `(name, format)`.
    pub chosen: Vec<(String, String)>,
    /// Files skipped in folders, `(name, reason)`.
    pub skipped: Vec<(String, String)>,
}

/// Builds the upload document; `-` among the files is read from standard input (see
/// [`inputs::gather`] for files, folders and `-`, and the progress it writes to `progress`).
///
/// # Errors
/// A file that cannot be read as UTF-8 text, a folder without a result file, a bad `--cell`,
/// `--tag`, `--config` or `--hardware` file, a failing `nvidia-smi`, or no commit (not a git
/// checkout and no `--commit`). Messages name the file or flag at fault.
pub fn build_document(
    args: &UploadArgs,
    env: &Environment,
    progress: &mut dyn std::io::Write,
) -> Result<Built> {
    build_document_with_stdin(args, env, &mut std::io::stdin(), progress)
}

/// [`build_document`] reading `-` from `stdin`.
///
/// # Errors
/// As [`build_document`].
pub fn build_document_with_stdin(
    args: &UploadArgs,
    env: &Environment,
    stdin: &mut dyn std::io::Read,
    progress: &mut dyn std::io::Write,
) -> Result<Built> {
    let mut notes = Vec::new();
    let gathered = inputs::gather(
        &args.files,
        args.format.as_deref(),
        args.stdin_name.as_deref(),
        &env.cwd,
        stdin,
        progress,
    )?;
    let cell = parse_cells(&args.cell)?;
    let configuration = configuration(args, env, &mut notes)?;
    let run = run_meta(args, env, &mut notes)?;
    let quality = match &args.quality {
        None => Vec::new(),
        Some(file) => {
            let path = env.cwd.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| anyhow::anyhow!("--quality: cannot read `{}`: {e}", path.display()))?;
            benchtrail_core::adapters::lm_eval::read_quality_file(&text)
                .map_err(|e| anyhow::anyhow!("--quality `{}`: {e}", path.display()))?
        }
    };
    Ok(Built {
        document: UploadDocument {
            run,
            configuration,
            cell,
            files: gathered.files,
            results: Vec::new(),
            quality,
        },
        notes,
        chosen: gathered.chosen,
        skipped: gathered.skipped,
    })
}

/// `--hardware` then `--config` over it.
fn configuration(
    args: &UploadArgs,
    env: &Environment,
    notes: &mut Vec<String>,
) -> Result<Configuration> {
    let hardware = match args.hardware.as_deref() {
        None => Hardware::default(),
        Some("auto") => {
            let detected = gpu::detect().map_err(|e| anyhow::anyhow!("--hardware auto: {e}"))?;
            notes.extend(detected.notes);
            detected.hardware
        }
        Some(file) => {
            read_json::<Hardware>(&env.cwd.join(file), "--hardware", "a hardware object")?
        }
    };
    let mut configuration = Configuration {
        hardware,
        ..Configuration::default()
    };
    if let Some(file) = &args.config {
        let from_file =
            read_json::<Configuration>(&env.cwd.join(file), "--config", "a configuration")?;
        configuration.overlay(&from_file);
    }
    Ok(configuration)
}

/// Reads `path` as JSON of type `T`; errors name the flag, the file and serde's message.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path, flag: &str, what: &str) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{flag}: cannot read `{}`", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{flag}: `{}` is not {what}: {e}", path.display()))
}

/// Run metadata from flags, the CI system ([`crate::ci::detect`]) and git; the CI's notes are
/// added to `notes`. Each field: the flag, else the CI's value, else git's (commit, and the
/// branch when no commit was given by flag or CI). The CI's merge base is used only with the CI's
/// pull request (no `--pr`, or the same number).
fn run_meta(args: &UploadArgs, env: &Environment, notes: &mut Vec<String>) -> Result<RunMeta> {
    let ci = crate::ci::detect(&env.vars, &|a, b| git::merge_base(&env.cwd, a, b));
    if let Some(ci) = &ci {
        // The CI's notes concern the values it gives; a flag that overrides them silences them.
        if args.commit.is_none() {
            notes.extend(ci.notes.iter().cloned());
        }
    }
    let ci_commit = ci.as_ref().and_then(|c| c.commit.clone());
    let commit_given = args.commit.clone().or(ci_commit);
    let mut commit =
        git::commit_info(&env.cwd, commit_given.as_deref()).map_err(anyhow::Error::msg)?;
    if !args.parents.is_empty() {
        // The full SHA where the checkout has that commit; a full SHA as given. An abbreviated
        // one the checkout cannot expand is refused: the server matches parents to stored
        // commits exactly, so it would silently break the history order.
        commit.parents = args
            .parents
            .iter()
            .map(|p| match git::resolve(&env.cwd, p) {
                Some(full) => Ok(full),
                None if matches!(p.len(), 40 | 64) => Ok(p.clone()),
                None => Err(anyhow::anyhow!(
                    "--parents {p}: an abbreviated SHA this checkout cannot expand; pass the \
                     full 40-digit SHA (the server matches parents to commits exactly)"
                )),
            })
            .collect::<Result<_>>()?;
    }
    if let Some(time) = args.commit_time {
        commit.time = Some(time);
    }
    if let Some(subject) = &args.commit_subject {
        commit.subject = Some(subject.clone());
    }
    let branch = args
        .branch
        .clone()
        .or_else(|| ci.as_ref().and_then(|c| c.branch.clone()))
        .or_else(|| {
            if commit_given.is_none() {
                git::current_branch(&env.cwd)
            } else {
                None
            }
        });
    let ci_pr = ci.as_ref().and_then(|c| c.pr);
    let pull_request = args.pr.or(ci_pr).map(|number| PullRequest {
        number,
        merge_base: args.merge_base.clone().or_else(|| {
            ci.as_ref()
                .filter(|_| ci_pr == Some(number))
                .and_then(|c| c.merge_base.clone())
        }),
    });
    let ci_job_url = args
        .ci_job_url
        .clone()
        .or_else(|| ci.as_ref().and_then(|c| c.job_url.clone()));
    let mut tags = BTreeMap::new();
    for tag in &args.tags {
        let Some((key, value)) = tag.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
            bail!("--tag `{tag}`: expected KEY=VALUE");
        };
        if tags
            .insert(key.trim().to_string(), value.to_string())
            .is_some()
        {
            bail!("--tag: `{}` given more than once", key.trim());
        }
    }
    Ok(RunMeta {
        id: args.run_id,
        commit,
        branch,
        pull_request,
        run_at: None,
        ci_job_url,
        repeat_index: args.repeat_index.unwrap_or(0),
        repeats_expected: args.repeats,
        tags,
    })
}
