//! Every integration test of benchtrail-server in one binary: one link of the server, sqlx and
//! axum instead of one per file (BENCHMARKS.md "CI time"). Each module is
//! one file of this folder, as before; `cargo test -p benchtrail-server --test integration
//! alerts::` runs one of them.

mod common;

mod alerts;
mod analysis_schema;
mod api;
mod auth_throttle;
mod authorization_matrix;
mod backup;
mod baselines;
mod browser;
mod cached_history;
mod capacity_report;
mod commit_graph;
mod compare_page;
mod compare_parity;
mod complete_verdicts;
mod compressed_analyses;
mod cross_tool;
mod detection_rules;
mod durable_analysis;
mod early_refusal;
mod goodput;
mod history_window;
mod idempotent_upload;
mod migration_backfill;
mod migration_gap;
mod migration_values_by_seq;
mod migration_values_by_series_seq;
mod no_oracle;
mod pages;
mod pr_bot;
mod quality_results;
mod samples_itl_apart;
mod schema_document;
mod security_headers;
mod server_binary;
mod settings;
mod sign_in;
mod storage;
mod stored_files;
mod timeouts;
mod token_migration;
mod tokens;
mod truncated_uploads;
mod two_servers;
mod typed_timestamps;
mod upload_bounds;
mod verdict_basis;
mod workload_checks;
mod workload_identity;
mod write_limits;
