//! Every integration test of benchtrail-core in one binary (one link instead of one per file).
//! `cargo test -p benchtrail-core --test integration regression_engine::` runs one file's
//! tests.

mod common;
mod mutate;

mod aiperf;
mod capacity_properties;
mod capacity_sweeps;
mod compare;
mod compare_table;
mod detection_rates;
mod genai_perf;
mod guidellm;
mod llmperf;
mod pytorch_benchmark_v3;
mod readme_settings;
mod regression_engine;
mod regression_otava;
mod regression_rates;
mod report_budget;
mod report_model;
mod serving_console;
mod settings_validation;
mod sglang_bench_serving;
mod summaries;
mod upload_duplicates;
mod vllm_bench_offline;
mod vllm_serve;
mod workload_identity;
