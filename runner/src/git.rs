//! Commit and branch of the checkout being measured, read with the `git` command.
//!
//! Shallow clones (CI's `fetch-depth: 1`) have no parents recorded: `parents` is then empty,
//! unless `benchtrail upload --parents` gives them.

use benchtrail_core::run::CommitInfo;
use std::path::Path;
use std::process::Command;

/// Runs `git ARGS` in `dir`; `Ok(stdout without trailing whitespace)` on success.
///
/// # Errors
/// git could not be started, or exited non-zero: the message holds git's stderr.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("could not run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The commit to record.
///
/// - `given = None`: `HEAD` of the checkout at `dir`, with parents, committer time and subject.
/// - `given = Some(sha)`: when `sha` is hex and names a commit in the checkout, its full SHA and
///   details; otherwise `sha` as given with no details (the server checks its form).
///
/// # Errors
/// `given = None` and `dir` is not a git checkout with a commit (or git is missing).
pub fn commit_info(dir: &Path, given: Option<&str>) -> Result<CommitInfo, String> {
    let sha = match given {
        None => git(dir, &["rev-parse", "--verify", "HEAD^{commit}"])
            .map_err(|e| format!("cannot tell which commit was measured: {e}; run inside a git checkout or pass --commit SHA"))?,
        Some(sha) => match resolve(dir, sha) {
            Some(full) => full,
            None => return Ok(CommitInfo { sha: sha.to_string(), ..CommitInfo::default() }),
        },
    };
    let details = git(dir, &["show", "-s", "--format=%P%n%cI%n%s", &sha])?;
    let mut lines = details.lines();
    let parents = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let time = lines
        .next()
        .and_then(|t| serde_json::from_value(serde_json::Value::String(t.to_string())).ok());
    let subject = lines.next().filter(|s| !s.is_empty()).map(str::to_string);
    Ok(CommitInfo {
        sha,
        parents,
        time,
        subject,
    })
}

/// The full SHA of `sha` (hex, possibly abbreviated) when it names a commit in the checkout at
/// `dir`; `None` otherwise (not hex, not there, not a checkout).
pub fn resolve(dir: &Path, sha: &str) -> Option<String> {
    (!sha.is_empty() && sha.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| {
            git(
                dir,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{sha}^{{commit}}"),
                ],
            )
            .ok()
        })
        .flatten()
}

/// The branch checked out at `dir`; `None` when HEAD is detached or `dir` is not a checkout.
pub fn current_branch(dir: &Path) -> Option<String> {
    git(dir, &["rev-parse", "--abbrev-ref", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty() && b != "HEAD")
}

/// `git merge-base A B` in the checkout at `dir`: the best common ancestor's full SHA; `None`
/// when either revision is missing (a shallow clone) or `dir` is not a checkout.
pub fn merge_base(dir: &Path, a: &str, b: &str) -> Option<String> {
    // `--` is not accepted by merge-base; a revision starting with `-` would be an option.
    if a.starts_with('-') || b.starts_with('-') {
        return None;
    }
    git(dir, &["merge-base", a, b])
        .ok()
        .filter(|s| !s.is_empty())
}
