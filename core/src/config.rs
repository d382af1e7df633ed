//! The configuration of a result: everything needed to reproduce it.
//!
//! A configuration is stored once per distinct canonical form and named by its fingerprint.
//! It splits into the **series key** (what must stay equal for two results to be compared:
//! hardware model and count, model, engine name, quantization, parallelism, speculative decoding,
//! scheduler, sampling, benchmark tool) and **per-run facts** (engine version and commit, driver,
//! host CPU, tool version, command line, free metadata). The engine version is the x-axis of a
//! plot, so it must never split a series.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Accelerators and host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// Accelerator model as `nvidia-smi --query-gpu=name` prints it, e.g. `NVIDIA H100 80GB HBM3`. Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<String>,
    /// Number of accelerators used. Key.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub accelerator_count: Option<u64>,
    /// Memory per accelerator in MiB. Per-run fact.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub accelerator_memory_mib: Option<u64>,
    /// Driver version. Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    /// CUDA (or ROCm) version. Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    /// Host CPU model. Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<String>,
}

/// The model served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// Model name or path as given to the engine (`meta-llama/Llama-3.1-8B-Instruct`). Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Model revision (a Hugging Face commit or tag). Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Tokenizer name or path. Per-run fact: often a local path that differs between machines;
    /// a tokenizer change is flagged as a confound by the regression engine instead (tokens/s
    /// are not comparable across tokenizers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
}

/// The inference engine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Engine {
    /// `vllm`, `sglang`, `trt-llm`, ... Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Released version. Per-run fact (the x-axis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Source commit. Per-run fact (the x-axis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The command that launched the server, to reproduce it. Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_command: Option<String>,
    /// Other engine arguments, free-form. Per-run fact.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_args: BTreeMap<String, Value>,
}

/// Quantization of weights and KV cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Quantization {
    /// Weight quantization (`fp8`, `awq`, `none`). Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<String>,
    /// KV-cache dtype as vLLM's `--kv-cache-dtype` (`auto`, `fp8`, `fp8_e4m3`). Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_dtype: Option<String>,
}

/// Parallel sizes, named as vLLM's engine arguments. All key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Parallelism {
    /// `--tensor-parallel-size`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub tensor_parallel_size: Option<u64>,
    /// `--pipeline-parallel-size`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub pipeline_parallel_size: Option<u64>,
    /// `--data-parallel-size`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub data_parallel_size: Option<u64>,
    /// Expert parallel size (MoE models).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub expert_parallel_size: Option<u64>,
}

/// Speculative decoding settings. All key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeculativeDecoding {
    /// Method (`eagle`, `ngram`, `mtp`, `draft_model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Draft model, where one is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_model: Option<String>,
    /// Tokens proposed per step.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub num_speculative_tokens: Option<u64>,
}

/// Scheduler settings. All key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Scheduler {
    /// `--max-num-batched-tokens`: the token budget per batch.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub max_num_batched_tokens: Option<u64>,
    /// `--max-num-seqs`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub max_num_seqs: Option<u64>,
    /// `--enable-chunked-prefill`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunked_prefill: Option<bool>,
    /// `--enable-prefix-caching`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_caching: Option<bool>,
}

/// Sampling parameters of the benchmark requests. All key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Maximum output tokens per request.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub max_tokens: Option<u64>,
    /// Whether end-of-sequence was ignored so every output has its full length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_eos: Option<bool>,
}

/// The benchmark client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkTool {
    /// Tool name (`vllm-bench-serve`, `sglang-bench-serving`, ...). Key: tools define metrics differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Tool version. Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The full command line that produced the file. Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Client backend (vLLM's `--backend`, e.g. `openai`, `vllm`). Per-run fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
}

/// Everything needed to reproduce a result. Every field is optional so that a file and the
/// runner can each contribute what they know; missing knowledge is shown, not invented.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Configuration {
    /// Accelerators and host.
    #[serde(default)]
    pub hardware: Hardware,
    /// The model.
    #[serde(default)]
    pub model: Model,
    /// The engine.
    #[serde(default)]
    pub engine: Engine,
    /// Quantization.
    #[serde(default)]
    pub quantization: Quantization,
    /// Parallel sizes.
    #[serde(default)]
    pub parallelism: Parallelism,
    /// Speculative decoding, if used.
    #[serde(default)]
    pub speculative_decoding: SpeculativeDecoding,
    /// Scheduler settings.
    #[serde(default)]
    pub scheduler: Scheduler,
    /// Sampling parameters.
    #[serde(default)]
    pub sampling: Sampling,
    /// The benchmark client.
    #[serde(default)]
    pub benchmark: BenchmarkTool,
    /// Free `KEY=VALUE` metadata (vLLM `--metadata`). Per-run facts, except the keys a project
    /// declares as key fields.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

/// The dotted paths of the configuration that form the series key, in display order.
pub const SERIES_KEY_FIELDS: &[&str] = &[
    "hardware.accelerator",
    "hardware.accelerator_count",
    "model.name",
    "model.revision",
    "engine.name",
    "quantization.weights",
    "quantization.kv_cache_dtype",
    "parallelism.tensor_parallel_size",
    "parallelism.pipeline_parallel_size",
    "parallelism.data_parallel_size",
    "parallelism.expert_parallel_size",
    "speculative_decoding.method",
    "speculative_decoding.draft_model",
    "speculative_decoding.num_speculative_tokens",
    "scheduler.max_num_batched_tokens",
    "scheduler.max_num_seqs",
    "scheduler.chunked_prefill",
    "scheduler.prefix_caching",
    "sampling.temperature",
    "sampling.top_p",
    "sampling.max_tokens",
    "sampling.ignore_eos",
    "benchmark.name",
];

/// Metadata keys (vLLM `--metadata KEY=VALUE`, compared without case, `-` as `_`) that name
/// the hardware or the runner a result was measured on: always part of the series key
/// ([`Configuration::series_key`]), whether or not the project declares them key fields.
pub const HARDWARE_METADATA_KEYS: &[&str] = &[
    "hardware",
    "hardware_name",
    "hw",
    "gpu",
    "gpu_name",
    "gpu_type",
    "gpu_model",
    "accelerator",
    "accelerator_type",
    "device",
    "device_name",
    "runner",
    "runner_name",
    "machine",
    "machine_type",
    "instance_type",
    "node_type",
];

/// Whether a metadata key is one of [`HARDWARE_METADATA_KEYS`].
pub fn is_hardware_metadata_key(key: &str) -> bool {
    let k = key.trim().to_ascii_lowercase().replace('-', "_");
    HARDWARE_METADATA_KEYS.contains(&k.as_str())
}

impl Configuration {
    /// The canonical JSON text: keys sorted, no whitespace, unset fields omitted. Equal
    /// configurations have equal canonical text.
    pub fn canonical_json(&self) -> String {
        // serde_json's Map is a BTreeMap (the `preserve_order` feature is off), so going
        // through `Value` sorts every object's keys.
        let value = serde_json::to_value(self).expect("configuration serializes");
        serde_json::to_string(&value).expect("value serializes")
    }

    /// SHA-256 (lower-case hex) of [`Self::canonical_json`].
    pub fn fingerprint(&self) -> String {
        crate::sha256_hex(self.canonical_json().as_bytes())
    }

    /// The series key: a flat JSON object from dotted field name to value, holding the
    /// [`SERIES_KEY_FIELDS`] that are set, plus `metadata.<k>` for each `k` in
    /// `metadata_key_fields` (the project's declared key fields) and each hardware or runner
    /// key ([`HARDWARE_METADATA_KEYS`]) that is set.
    pub fn series_key(&self, metadata_key_fields: &[String]) -> Map<String, Value> {
        let full = serde_json::to_value(self).expect("configuration serializes");
        let mut key = Map::new();
        for path in SERIES_KEY_FIELDS {
            let pointer = format!("/{}", path.replace('.', "/"));
            if let Some(v) = full.pointer(&pointer) {
                key.insert((*path).to_string(), v.clone());
            }
        }
        for field in metadata_key_fields {
            if let Some(v) = self.metadata.get(field) {
                key.insert(format!("metadata.{field}"), Value::String(v.clone()));
            }
        }
        // Hardware and runner labels a tool's metadata carries (`--metadata
        // hardware=ci-runner-L40S`) are always key fields: a pair measured on other machines
        // is never compared.
        for (field, v) in &self.metadata {
            if is_hardware_metadata_key(field) && !v.trim().is_empty() {
                key.insert(format!("metadata.{field}"), Value::String(v.clone()));
            }
        }
        key
    }

    /// Overlays every field set in `over` onto `self` (fields of `over` win). Used to apply
    /// what the runner states (hardware, engine commit) over what a file says.
    pub fn overlay(&mut self, over: &Configuration) {
        let mut base = serde_json::to_value(&*self).expect("configuration serializes");
        let top = serde_json::to_value(over).expect("configuration serializes");
        merge(&mut base, top);
        *self = serde_json::from_value(base).expect("merge of two configurations is one");
    }
}

fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (_, Value::Null) => {}
        (b, o) => *b = o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Configuration {
        let mut c = Configuration::default();
        c.hardware.accelerator = Some("NVIDIA H100 80GB HBM3".into());
        c.hardware.accelerator_count = Some(4);
        c.hardware.driver_version = Some("550.54.15".into());
        c.engine.name = Some("vllm".into());
        c.engine.commit = Some("abc123".into());
        c.quantization.kv_cache_dtype = Some("fp8".into());
        c.parallelism.tensor_parallel_size = Some(4);
        c.metadata.insert("framework".into(), "sgl".into());
        c
    }

    #[test]
    fn canonical_json_is_sorted_and_stable() {
        let c = sample();
        assert_eq!(
            c.canonical_json(),
            r#"{"benchmark":{},"engine":{"commit":"abc123","name":"vllm"},"hardware":{"accelerator":"NVIDIA H100 80GB HBM3","accelerator_count":4,"driver_version":"550.54.15"},"metadata":{"framework":"sgl"},"model":{},"parallelism":{"tensor_parallel_size":4},"quantization":{"kv_cache_dtype":"fp8"},"sampling":{},"scheduler":{},"speculative_decoding":{}}"#
        );
        assert_eq!(
            c.fingerprint(),
            crate::sha256_hex(c.canonical_json().as_bytes())
        );
        assert_eq!(c.fingerprint().len(), 64);
    }

    #[test]
    fn engine_commit_and_driver_do_not_split_the_series() {
        let a = sample();
        let mut b = sample();
        b.engine.commit = Some("def456".into());
        b.hardware.driver_version = Some("560.0".into());
        b.metadata.insert("framework".into(), "vllm".into());
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.series_key(&[]), b.series_key(&[]));
        // Declared metadata key fields do split it.
        let fields = vec!["framework".to_string()];
        assert_ne!(a.series_key(&fields), b.series_key(&fields));
        assert_eq!(a.series_key(&fields)["metadata.framework"], "sgl");
    }

    #[test]
    fn overlay_keeps_file_fields_and_adds_runner_fields() {
        let mut from_file = Configuration::default();
        from_file.model.name = Some("mock-llm".into());
        let mut from_runner = Configuration::default();
        from_runner.hardware.accelerator = Some("NVIDIA L4".into());
        from_file.overlay(&from_runner);
        assert_eq!(from_file.model.name.as_deref(), Some("mock-llm"));
        assert_eq!(from_file.hardware.accelerator.as_deref(), Some("NVIDIA L4"));
    }
}
