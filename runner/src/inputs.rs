//! The files of `benchtrail upload`: explicit files (read as given, strictly), `-` (standard
//! input), and folders (walked, keeping only the files whose content is a result format).
//!
//! A folder is walked recursively in byte order of the relative paths (deterministic). Each
//! file is named by the folder as given joined with its relative path, `/`-separated, so files
//! of one tool run share a folder and the server pairs a per-request file with its summary
//! (AIPerf's `profile_export.jsonl`, GenAI-Perf's `profile_export.json`) exactly as when the
//! same files are named by hand. Skipped, each with its reason: warm-up phases (a folder
//! named `warmup`), `inputs.json`, `phase_manifest.json`, logs, files that are not UTF-8 or
//! whose format is not detected, AIPerf's per-phase copies (`phases/profiling/`) when the run
//! folder holds the summary, and per-request files without their summary. A file detected as a
//! format but invalid is kept, so the upload reports its error rather than dropping it.

use anyhow::{bail, Context, Result};
use benchtrail_core::adapters::{read_files, AdapterError, FileSpec};
use benchtrail_core::UploadFile;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// From this many files on (named, or in one folder), reading them is announced on stderr:
/// large artifact folders take a while, and a CI log should show what the CLI is doing.
pub const ANNOUNCE_FILES: usize = 10;

/// What a folder gave: the files chosen and the files skipped, in walk order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gathered {
    /// The files to upload, in argument order (a folder's in walk order).
    pub files: Vec<UploadFile>,
    /// Files chosen from folders, `(name, format)`, for stderr.
    pub chosen: Vec<(String, String)>,
    /// Files skipped in folders, `(name, reason)`, for stderr.
    pub skipped: Vec<(String, String)>,
}

/// Reads the FILE arguments: `-` is standard input (read by `stdin`, named `stdin_name`), a
/// folder is walked, anything else is read as a text file. Writes `reading N files...` (the
/// named files) and `reading N files in FOLDER...` to `progress` from [`ANNOUNCE_FILES`] on.
///
/// # Errors
/// A file that cannot be read as UTF-8, `-` given twice, a folder that cannot be walked or
/// that holds no result file (the error lists what it found).
pub fn gather(
    paths: &[PathBuf],
    format: Option<&str>,
    stdin_name: Option<&str>,
    cwd: &Path,
    stdin: &mut dyn Read,
    progress: &mut dyn Write,
) -> Result<Gathered> {
    let mut gathered = Gathered::default();
    let named = paths
        .iter()
        .filter(|p| p.as_os_str() != "-" && !cwd.join(p).is_dir())
        .count();
    if named >= ANNOUNCE_FILES {
        writeln!(progress, "reading {named} files...")?;
    }
    let stdin_count = paths.iter().filter(|p| p.as_os_str() == "-").count();
    if stdin_count > 1 {
        bail!("`-` (standard input) given {stdin_count} times; it can be read once");
    }
    if stdin_count == 0 && stdin_name.is_some() {
        bail!("--stdin-name names standard input, but `-` is not among the files");
    }
    for path in paths {
        if path.as_os_str() == "-" {
            let mut bytes = Vec::new();
            stdin
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            let content = String::from_utf8(bytes)
                .map_err(|e| anyhow::anyhow!("standard input is not UTF-8 text: {e}"))?;
            gathered.files.push(UploadFile {
                name: stdin_name.unwrap_or("stdin").to_string(),
                format: format.map(str::to_string),
                content,
            });
            continue;
        }
        let full = cwd.join(path);
        if full.is_dir() {
            gather_folder(path, &full, format, &mut gathered, progress)?;
            continue;
        }
        let content = std::fs::read_to_string(&full)
            .with_context(|| format!("cannot read result file `{}`", path.display()))?;
        gathered.files.push(UploadFile {
            name: path.display().to_string(),
            format: format.map(str::to_string),
            content,
        });
    }
    Ok(gathered)
}

/// One file found in a folder, before pairing.
struct Found {
    /// Path relative to the folder, `/`-separated.
    rel: String,
    /// Name sent: the folder as given, then `rel`.
    name: String,
    what: Kind,
}

enum Kind {
    /// A result file (or a detected one that fails to read: kept so the upload says why).
    Result { format: String, content: String },
    /// Per-request data of the summary format named.
    Companion {
        format: String,
        summary: &'static str,
        content: String,
    },
    /// Not uploaded, and why.
    Skipped(String),
}

fn gather_folder(
    given: &Path,
    full: &Path,
    format: Option<&str>,
    gathered: &mut Gathered,
    progress: &mut dyn Write,
) -> Result<()> {
    let mut rels = Vec::new();
    walk(full, "", &mut rels)
        .with_context(|| format!("cannot read folder `{}`", given.display()))?;
    if rels.len() >= ANNOUNCE_FILES {
        writeln!(
            progress,
            "reading {} files in `{}`...",
            rels.len(),
            given.display()
        )?;
    }
    rels.sort_by(|a, b| a.0.cmp(&b.0));
    let prefix = given.display().to_string();
    let prefix = prefix.trim_end_matches('/');
    let mut found: Vec<Found> = rels
        .into_iter()
        .map(|(rel, link_to_folder)| {
            let name = if prefix.is_empty() || prefix == "." {
                rel.clone()
            } else {
                format!("{prefix}/{rel}")
            };
            let what = if link_to_folder {
                Kind::Skipped("a symbolic link to a folder (not followed)".into())
            } else {
                classify(&rel, &name, &full.join(&rel), format)
            };
            Found { rel, name, what }
        })
        .collect();

    // AIPerf also writes each phase under `phases/<phase>/`; the run folder's summary is the
    // profiling phase with its per-request data, so the per-phase copies would duplicate it.
    let aiperf_runs: Vec<String> = found
        .iter()
        .filter(|f| matches!(&f.what, Kind::Result { format, .. } if format == "aiperf"))
        .map(|f| folder(&f.rel).to_string())
        .collect();
    for f in &mut found {
        if matches!(f.what, Kind::Skipped(_)) {
            continue;
        }
        let segments: Vec<&str> = folder(&f.rel).split('/').collect();
        if let Some(i) = segments.iter().position(|s| *s == "phases") {
            let run = segments[..i].join("/");
            if segments.len() > i + 1 && aiperf_runs.contains(&run) {
                let summary = if run.is_empty() {
                    "profile_export_aiperf.json".to_string()
                } else {
                    format!("{run}/profile_export_aiperf.json")
                };
                f.what = Kind::Skipped(format!(
                    "AIPerf's per-phase copy; the run folder's `{summary}` holds the profiling phase"
                ));
            }
        }
    }
    // A per-request file whose summary is not uploaded from its folder would fail the upload.
    let summaries: Vec<(String, String)> = found
        .iter()
        .filter_map(|f| match &f.what {
            Kind::Result { format, .. } => Some((folder(&f.rel).to_string(), format.clone())),
            _ => None,
        })
        .collect();
    for f in &mut found {
        if let Kind::Companion { summary, .. } = &f.what {
            let paired = summaries
                .iter()
                .any(|(dir, fmt)| dir == folder(&f.rel) && fmt == summary);
            if !paired {
                f.what = Kind::Skipped(format!(
                    "per-request data of `{summary}` without its summary file in the same folder"
                ));
            }
        }
    }

    if !found.iter().any(|f| matches!(f.what, Kind::Result { .. })) {
        let listing = if found.is_empty() {
            "it is empty".to_string()
        } else {
            let items: Vec<String> = found
                .iter()
                .map(|f| match &f.what {
                    Kind::Skipped(why) => format!("{} ({why})", f.rel),
                    Kind::Companion { format, .. } | Kind::Result { format, .. } => {
                        format!("{} ({format})", f.rel)
                    }
                })
                .collect();
            format!("found {} file(s): {}", items.len(), items.join("; "))
        };
        bail!(
            "folder `{}` holds no result file in a known format; {listing}",
            given.display()
        );
    }
    // The formats as the upload reads them (a companion's own name), when the files read.
    let kept: Vec<(&str, &str)> = found
        .iter()
        .filter_map(|f| match &f.what {
            Kind::Result { content, .. } | Kind::Companion { content, .. } => {
                Some((f.name.as_str(), content.as_str()))
            }
            Kind::Skipped(_) => None,
        })
        .collect();
    let specs: Vec<FileSpec> = kept
        .iter()
        .map(|(name, text)| FileSpec { name, format, text })
        .collect();
    let mut read_as = read_files(&specs)
        .map(|read| read.into_iter().map(|r| r.format.to_string()).collect())
        .unwrap_or_else(|_| Vec::new())
        .into_iter();
    for f in found {
        match f.what {
            Kind::Result {
                format: fmt,
                content,
            }
            | Kind::Companion {
                format: fmt,
                content,
                ..
            } => {
                let fmt = read_as.next().unwrap_or(fmt);
                gathered.chosen.push((f.name.clone(), fmt));
                gathered.files.push(UploadFile {
                    name: f.name,
                    format: format.map(str::to_string),
                    content,
                });
            }
            Kind::Skipped(why) => gathered.skipped.push((f.name, why)),
        }
    }
    Ok(())
}

/// The folder part of a `/`-separated relative path (empty at the top).
fn folder(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Every file under `dir` as `(relative path, is a symbolic link to a folder)`; symbolic links
/// to folders are listed, not followed (no loops).
fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, bool)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), &child, out)?;
        } else if kind.is_symlink() && entry.path().is_dir() {
            out.push((child, true));
        } else {
            out.push((child, false));
        }
    }
    Ok(())
}

/// What a file found in a folder is: by its place and name for the files tools write besides
/// results, else by its content (core's detection, the file read on its own).
fn classify(rel: &str, name: &str, path: &Path, format: Option<&str>) -> Kind {
    let base = rel.rsplit('/').next().unwrap_or(rel);
    let lower = base.to_ascii_lowercase();
    if folder(rel).split('/').any(|s| s == "warmup") {
        return Kind::Skipped("warm-up phase (never a result)".into());
    }
    if lower == "inputs.json" {
        return Kind::Skipped("the benchmark's inputs (the prompts sent), not results".into());
    }
    if lower == "phase_manifest.json" {
        return Kind::Skipped("AIPerf's list of phase files, not results".into());
    }
    if lower.ends_with(".log") || folder(rel).split('/').any(|s| s == "logs") {
        return Kind::Skipped("a log".into());
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => return Kind::Skipped(format!("cannot be read: {e}")),
    };
    let Ok(content) = String::from_utf8(bytes) else {
        return Kind::Skipped("not UTF-8 text".into());
    };
    let spec = FileSpec {
        name,
        format,
        text: &content,
    };
    match read_files(&[spec]) {
        Ok(mut read) => {
            let format = read.pop().map_or("", |r| r.format).to_string();
            Kind::Result { format, content }
        }
        Err((_, AdapterError::Orphan { summary })) => Kind::Companion {
            format: format.map_or_else(
                || format!("per-request data of `{summary}`"),
                str::to_string,
            ),
            summary,
            content,
        },
        Err((_, AdapterError::Empty)) => Kind::Skipped("empty".into()),
        Err((_, AdapterError::Undetected { .. })) => {
            Kind::Skipped("not a known result format".into())
        }
        Err((_, AdapterError::Syntax(e))) => Kind::Skipped(format!("not valid JSON: {e}")),
        Err((_, e)) if format.is_some() => Kind::Skipped(format!(
            "not readable as `{}`: {e}",
            format.unwrap_or_default()
        )),
        // Detected, but invalid: kept, so that the upload says what is wrong with it.
        Err((_, e)) => Kind::Result {
            format: format!("unreadable: {e}"),
            content,
        },
    }
}
