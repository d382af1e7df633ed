//! Every integration test of the `benchtrail` CLI in one binary: one link of the runner and the
//! server it talks to instead of one per file. `cargo test -p benchtrail-runner --test
//! integration e2e::` runs one file's tests.

mod common;

mod ambiguous_results;
mod check;
mod ci;
mod compare;
mod dry_run;
mod e2e;
mod folders;
mod formats;
mod http;
mod json_errors;
mod parents;
mod pr_comment;
mod progress;
mod retries;
mod run;
mod tokens;
mod verdicts;
