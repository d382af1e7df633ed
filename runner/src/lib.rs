//! benchtrail-runner: the `benchtrail` CLI that uploads benchmark results from CI.
//!
//! The binary (`main.rs`) only parses the command line and maps errors to exit status 2;
//! everything else lives here so tests (and an end-to-end test against a real server) can
//! call it: [`commands::run`] with an [`document::Environment`] and output writers.

pub mod cell_arg;
pub mod check;
pub mod ci;
pub mod cli;
pub mod client;
pub mod commands;
pub mod compare;
pub mod document;
pub mod errors;
pub mod forge;
pub mod git;
pub mod gpu;
pub mod inputs;
pub mod report;
pub mod retry;
pub mod run_cmd;
pub mod token_cmd;

/// Exit status when the command succeeded (for `upload`: the data is stored).
pub const EXIT_OK: u8 = 0;
/// Exit status on any error, including command-line usage errors.
pub const EXIT_ERROR: u8 = 2;
