//! benchtrail-core: the domain model of LLM-serving benchmark results, the adapters that read
//! each benchmark tool's output into it, and the statistics over it.
//!
//! This crate is pure: no I/O, no async, no HTTP or SQL types. The server and the CLI both
//! depend on it, so an upload normalized by `benchtrail upload --dry-run` is byte-for-byte
//! what the server stores.

pub mod access;
pub mod adapters;
pub mod bootstrap;
pub mod capacity;
pub mod cell;
pub mod checks;
pub mod config;
pub mod deferred_arrays;
pub mod derived;
pub mod history;
pub mod json_string;
pub mod lenient_json;
pub mod lenient_yaml;
pub mod metric;
pub mod pr_comments;
pub mod quality;
pub mod regression;
pub mod report;
pub mod result;
pub mod run;
pub mod samples;
pub mod serde_int;
pub mod series;
pub mod settings;
pub mod slo;
pub mod stats;
pub mod summary;
pub mod upload;
pub mod upload_limits;
pub mod wire;

pub use cell::{LoadShape, PrefixMode, RequestRate, WorkloadCell};
pub use config::Configuration;
pub use metric::{Direction, MetricDef, MetricValue, Stat, Unit};
pub use result::{BenchResult, Warning};
pub use run::RunMeta;
pub use upload::{UploadDocument, UploadFile};

/// Lower-case hex SHA-256 of `bytes`: the fingerprint function used for configurations,
/// series ids and API tokens.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}
