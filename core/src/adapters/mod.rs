//! Format adapters: each reads one benchmark tool's output into [`BenchResult`]s in the
//! benchtrail vocabulary, converting units once, here at the edge.
//!
//! A file is named by its `format` or detected from its content (never from its name).
//! Detection tries every adapter in [`FORMATS`] order and, when none matches, the error lists
//! each format tried and why it did not match. Files are read together, as one upload: a tool
//! that writes its per-request data to a second file (AIPerf's `profile_export.jsonl`,
//! LLMPerf's individual responses) has that file handed to the adapter of its summary when
//! both come from the same folder (the part of the file name before the last `/`).

mod aiperf;
mod console;
mod fields;
mod genai_perf;
mod guidellm;
mod llmperf;
pub mod lm_eval;
mod native;
mod pytorch_v3;
mod sglang_serving;
mod tool_common;
mod vllm_offline;
mod vllm_serve;

use crate::deferred_arrays::DeferredArrays;
use crate::lenient_json::{self, JsonSyntaxError};
use crate::result::{BenchResult, Source};
use serde_json::Value;

/// A file's content, read once.
#[derive(Debug, Clone, PartialEq)]
pub enum Content<'a> {
    /// One or more JSON values: a document, JSON Lines, or concatenated values (Python's
    /// `NaN`/`Infinity` accepted; see [`lenient_json`]). Empty for an empty file.
    Json(Records<'a>),
    /// Text that is not JSON (a console summary, guidellm's YAML), with the reason it is not JSON.
    Text {
        /// The text.
        text: &'a str,
        /// Why it does not parse as JSON (reported when no text format matches either).
        not_json: JsonSyntaxError,
    },
}

impl<'a> Content<'a> {
    /// Reads `text` as JSON records, or keeps it as text. Each record's per-request arrays
    /// ([`crate::deferred_arrays::DEFERRED`]) stay text until [`Records::restore`] builds them in, or
    /// the one adapter that reads them typed ([`Parser::PerRecordDeferred`]) reads them.
    pub fn read(text: &'a str) -> Content<'a> {
        match lenient_json::parse_records(text) {
            Ok(records) => {
                let (values, arrays) = records.into_iter().map(|r| (r.value, r.arrays)).unzip();
                Content::Json(Records { values, arrays })
            }
            Err(not_json) => Content::Text { text, not_json },
        }
    }

    /// The JSON records, if the content is JSON.
    pub fn records(&self) -> Option<&[Value]> {
        match self {
            Content::Json(records) => Some(records.as_slice()),
            Content::Text { .. } => None,
        }
    }
}

/// The top-level JSON values of a file (a slice of `Value`s through `Deref`), each with the
/// per-request arrays that were kept as text ([`DeferredArrays`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Records<'a> {
    values: Vec<Value>,
    /// `arrays[i]` belongs to `values[i]`.
    arrays: Vec<DeferredArrays<'a>>,
}

impl<'a> Records<'a> {
    /// The values (without their deferred arrays until [`Records::restore`]).
    pub fn as_slice(&self) -> &[Value] {
        &self.values
    }

    /// The deferred arrays of record `index` (empty when it had none or they were restored).
    pub fn arrays(&self, index: usize) -> &DeferredArrays<'a> {
        &self.arrays[index]
    }

    /// Builds every deferred array back into its record, for adapters that read the tree.
    ///
    /// # Errors
    /// A value too deeply nested for `serde_json` to build, positioned in `text` (the file
    /// the records were read from).
    pub fn restore(&mut self, text: &str) -> Result<(), JsonSyntaxError> {
        for (value, arrays) in self.values.iter_mut().zip(&mut self.arrays) {
            let arrays = std::mem::take(arrays);
            if let Value::Object(map) = value {
                arrays
                    .restore_into(map)
                    .map_err(|e| lenient_json::error_inside(text, e.raw.get(), &e.error))?;
            }
        }
        Ok(())
    }
}

impl std::ops::Deref for Records<'_> {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.values
    }
}

/// One file of an upload, as adapters see it.
#[derive(Debug, Clone)]
pub struct InputFile<'a> {
    /// Position in the upload (`files[index]`).
    pub index: usize,
    /// Name as sent, possibly with folders (`run1/profile_export.jsonl`).
    pub name: &'a str,
    /// The text as sent.
    pub text: &'a str,
    /// The content.
    pub content: Content<'a>,
}

impl InputFile<'_> {
    /// The folder part of the name (empty for a bare file name).
    pub fn folder(&self) -> &str {
        self.name.rsplit_once('/').map_or("", |(folder, _)| folder)
    }
}

/// How a format's files become results.
pub enum Parser {
    /// Each JSON record (each line of JSON Lines) on its own.
    PerRecord(fn(&Value) -> Result<Vec<BenchResult>, FieldError>),
    /// As [`Parser::PerRecord`], with the record's per-request arrays still text, for the
    /// adapter to read straight into numbers (see [`crate::deferred_arrays`]).
    PerRecordDeferred(fn(&Value, &DeferredArrays) -> Result<Vec<BenchResult>, FieldError>),
    /// The whole file at once, with the companion files of its folder (the files whose format
    /// is a [`Parser::Companion`] of this one).
    WholeFile(fn(&InputFile, &[&InputFile]) -> Result<Vec<BenchResult>, AdapterError>),
    /// Per-request data that belongs to the summary format named here, read by that format's
    /// adapter; uploaded without its summary it is an error.
    Companion {
        /// The summary format's name.
        summary: &'static str,
    },
}

/// One supported format.
pub struct Format {
    /// The name used in uploads and on the CLI, e.g. `vllm-bench-serve`.
    pub name: &'static str,
    /// What the format is, for `--help`, errors and the README.
    pub description: &'static str,
    /// An exact command line that produces it.
    pub produced_by: &'static str,
    /// `Ok(())` when a file looks like this format, else why not.
    detect: fn(&InputFile) -> Result<(), String>,
    /// How it is read.
    parser: Parser,
}

/// Every format benchtrail reads, in detection order.
pub const FORMATS: &[Format] = &[
    Format {
        name: vllm_serve::FORMAT,
        description: "`vllm bench serve --save-result` JSON (and benchmarks/benchmark_serving.py), with or without --save-detailed; JSON Lines from --append-result",
        produced_by: "vllm bench serve --model M --dataset-name random --num-prompts 200 --max-concurrency 8 --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 --save-result --save-detailed --result-filename result.json",
        detect: |f| each_record(f, vllm_serve::detect),
        parser: Parser::PerRecordDeferred(vllm_serve::parse),
    },
    Format {
        name: sglang_serving::FORMAT,
        description: "`python -m sglang.bench_serving --output-file` JSON Lines (one object per run; `Infinity` literals; with or without --output-details arrays and server_info). SGLang's own metric definitions (TTFT to the first non-empty chunk, E2E incl. [DONE])",
        produced_by: "python -m sglang.bench_serving --backend sglang --model M --dataset-name random --random-input-len 512 --random-output-len 128 --num-prompts 200 --max-concurrency 8 --request-rate inf --output-file result.jsonl --output-details",
        detect: |f| each_record(f, sglang_serving::detect),
        parser: Parser::PerRecord(sglang_serving::parse),
    },
    Format {
        name: console::VLLM_FORMAT,
        description: "The \"Serving Benchmark Result\" block that `vllm bench serve` prints (pasted text; values rounded to 2 decimals); several blocks give several results",
        produced_by: "vllm bench serve --model M --dataset-name random --num-prompts 200 --max-concurrency 8 --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,95,99 > console.txt",
        detect: console::detect_vllm,
        parser: Parser::WholeFile(console::parse_vllm),
    },
    Format {
        name: console::SGLANG_FORMAT,
        description: "The \"Serving Benchmark Result\" block that `python -m sglang.bench_serving` prints (pasted text; values rounded to 2 decimals); several blocks give several results",
        produced_by: "python -m sglang.bench_serving --backend sglang --model M --dataset-name random --num-prompts 200 --max-concurrency 8 --request-rate inf > console.txt",
        detect: console::detect_sglang,
        parser: Parser::WholeFile(console::parse_sglang),
    },
    Format {
        name: vllm_offline::LATENCY_FORMAT,
        description: "`vllm bench latency --output-json` (offline batch latency: avg, std, per-iteration latencies and percentiles, in s)",
        produced_by: "vllm bench latency --model M --input-len 512 --output-len 128 --batch-size 8 --num-iters-warmup 5 --num-iters 30 --output-json latency.json",
        detect: |f| each_record(f, vllm_offline::detect_latency),
        parser: Parser::PerRecord(vllm_offline::parse_latency),
    },
    Format {
        name: vllm_offline::THROUGHPUT_FORMAT,
        description: "`vllm bench throughput --output-json` (offline: elapsed time, requests/s and total tokens/s; output tokens/s is not written)",
        produced_by: "vllm bench throughput --model M --dataset-name random --input-len 512 --output-len 128 --num-prompts 1000 --output-json throughput.json",
        detect: |f| each_record(f, vllm_offline::detect_throughput),
        parser: Parser::PerRecord(vllm_offline::parse_throughput),
    },
    Format {
        name: pytorch_v3::FORMAT,
        description: "PyTorch OSS benchmark v3 records (`*.pytorch.json`, one record per metric) that vLLM's serve/latency/throughput benchmarks write with SAVE_TO_PYTORCH_BENCHMARK_FORMAT=1; grouped into one result per run",
        produced_by: "SAVE_TO_PYTORCH_BENCHMARK_FORMAT=1 vllm bench serve --model M --dataset-name random --num-prompts 200 --max-concurrency 8 --save-result --result-filename result.json  # writes result.pytorch.json",
        detect: pytorch_v3::detect,
        parser: Parser::WholeFile(pytorch_v3::parse),
    },
    Format {
        name: aiperf::FORMAT,
        description: "NVIDIA AIPerf `profile_export_aiperf.json` (0.8 and 0.13 layouts); its per-request `profile_export.jsonl` and `server_metrics_export.json` are read when uploaded from the same folder. Warm-up exports, inputs.json and phase_manifest.json are rejected",
        produced_by: "aiperf profile --model mock-llm --url http://127.0.0.1:8001 --endpoint-type completions --streaming --tokenizer /models/mock-tokenizer --concurrency 4 --request-count 60 --prompt-input-tokens-mean 512 --prompt-input-tokens-stddev 0 --prompt-output-tokens-mean 128 --prompt-output-tokens-stddev 0 --extra-inputs ignore_eos:true --random-seed 42 --warmup-request-count 2 --no-gpu-telemetry --ui-type none --artifact-dir $OUT/aiperf/baseline_completions_c4_isl512_osl128",
        detect: aiperf::detect,
        parser: Parser::WholeFile(aiperf::parse),
    },
    Format {
        name: aiperf::RECORDS,
        description: "AIPerf's per-request `profile_export.jsonl` (warm-up records skipped); upload it with its `profile_export_aiperf.json`",
        produced_by: "aiperf profile --model mock-llm --url http://127.0.0.1:8001 --endpoint-type completions --streaming --tokenizer /models/mock-tokenizer --concurrency 4 --request-count 60 --prompt-input-tokens-mean 512 --prompt-input-tokens-stddev 0 --prompt-output-tokens-mean 128 --prompt-output-tokens-stddev 0 --extra-inputs ignore_eos:true --random-seed 42 --warmup-request-count 2 --no-gpu-telemetry --ui-type none --artifact-dir $OUT/aiperf/baseline_completions_c4_isl512_osl128",
        detect: aiperf::detect_records,
        parser: Parser::Companion { summary: aiperf::FORMAT },
    },
    Format {
        name: aiperf::SERVER_METRICS,
        description: "AIPerf's `server_metrics_export.json` (the server's Prometheus metrics over the profiling phase); upload it with its `profile_export_aiperf.json`",
        produced_by: "aiperf profile --model mock-llm --url http://127.0.0.1:8001 --endpoint-type completions --streaming --tokenizer /models/mock-tokenizer --concurrency 4 --request-count 60 --prompt-input-tokens-mean 512 --prompt-input-tokens-stddev 0 --prompt-output-tokens-mean 128 --prompt-output-tokens-stddev 0 --extra-inputs ignore_eos:true --random-seed 42 --warmup-request-count 2 --no-gpu-telemetry --ui-type none --artifact-dir $OUT/aiperf/baseline_completions_c4_isl512_osl128",
        detect: aiperf::detect_server_metrics,
        parser: Parser::Companion { summary: aiperf::FORMAT },
    },
    Format {
        name: genai_perf::FORMAT,
        description: "NVIDIA GenAI-Perf `profile_export_genai_perf.json`; perf_analyzer's per-request `profile_export.json` is read when uploaded from the same folder",
        produced_by: "genai-perf profile -m mock-llm --endpoint-type completions --streaming -u 127.0.0.1:8001 --tokenizer /models/mock-tokenizer --synthetic-input-tokens-mean 512 --synthetic-input-tokens-stddev 0 --output-tokens-mean 64 --output-tokens-stddev 0 --extra-inputs ignore_eos:true --concurrency 1 --request-count 20 --num-dataset-entries 20 --random-seed 42 --artifact-dir $OUT/genai-perf/baseline_completions_c1_isl512_osl64",
        detect: genai_perf::detect,
        parser: Parser::WholeFile(genai_perf::parse),
    },
    Format {
        name: genai_perf::RECORDS,
        description: "perf_analyzer's per-request `profile_export.json` written by GenAI-Perf (ns timestamps); upload it with its `profile_export_genai_perf.json`",
        produced_by: "genai-perf profile -m mock-llm --endpoint-type completions --streaming -u 127.0.0.1:8001 --tokenizer /models/mock-tokenizer --synthetic-input-tokens-mean 512 --synthetic-input-tokens-stddev 0 --output-tokens-mean 64 --output-tokens-stddev 0 --extra-inputs ignore_eos:true --concurrency 1 --request-count 20 --num-dataset-entries 20 --random-seed 42 --artifact-dir $OUT/genai-perf/baseline_completions_c1_isl512_osl64",
        detect: genai_perf::detect_records,
        parser: Parser::Companion { summary: genai_perf::FORMAT },
    },
    Format {
        name: guidellm::FORMAT,
        description: "guidellm `benchmarks.json` or `benchmarks.yaml` (v0.2–v0.3 and v0.4+ reports, incl. report version 2): one result per benchmark, the strategy as the load shape. The YAML output gives the same results as its JSON twin",
        produced_by: "guidellm run --backend kind=openai_http,target=http://127.0.0.1:8001,model=mock-llm,request_format=/v1/completions,extras.body.ignore_eos=true --tokenizer kind=huggingface_auto,model=/models/mock-tokenizer --profile 'kind=concurrent,streams[0]=1,streams[1]=4,streams[2]=16' --constraint 'kind=max_requests,count[0]=20,count[1]=60,count[2]=160' --constraint kind=max_duration,seconds=90 --data kind=synthetic_text,prompt_tokens=512,output_tokens=128 --metrics kind=generative,sample_size=8 --seed kind=static,value=42 --output kind=json,path=$OUT/guidellm/baseline_concurrent_1-4-16_isl512_osl128.json --output kind=csv,path=$OUT/guidellm/baseline_concurrent_1-4-16_isl512_osl128.csv --output kind=yaml,path=$OUT/guidellm/baseline_concurrent_1-4-16_isl512_osl128.yaml --output kind=html,path=$OUT/guidellm/baseline_concurrent_1-4-16_isl512_osl128.html --disable-console-interactive",
        detect: guidellm::detect,
        parser: Parser::WholeFile(guidellm::parse),
    },
    Format {
        name: llmperf::FORMAT,
        description: "ray-project LLMPerf `*_summary.json` (flattened results_*, seconds); `*_individual_responses.json` is read when uploaded from the same folder",
        produced_by: "python token_benchmark_ray.py --model M --mean-input-tokens 550 --stddev-input-tokens 0 --mean-output-tokens 150 --stddev-output-tokens 0 --num-concurrent-requests 5 --max-num-completed-requests 150 --llm-api openai --results-dir result_outputs  # writes <name>_summary.json and <name>_individual_responses.json",
        detect: llmperf::detect,
        parser: Parser::WholeFile(llmperf::parse),
    },
    Format {
        name: llmperf::RESPONSES,
        description: "LLMPerf's `*_individual_responses.json` (a list of per-request dicts); upload it with its `*_summary.json`",
        produced_by: "python token_benchmark_ray.py --model M --mean-input-tokens 550 --stddev-input-tokens 0 --mean-output-tokens 150 --stddev-output-tokens 0 --num-concurrent-requests 5 --max-num-completed-requests 150 --llm-api openai --results-dir result_outputs  # writes <name>_summary.json and <name>_individual_responses.json",
        detect: llmperf::detect_responses,
        parser: Parser::Companion { summary: llmperf::FORMAT },
    },
    Format {
        name: native::FORMAT,
        description: "benchtrail's own result JSON: one result, a list of results, or JSON Lines (schema: /api/v1/schemas/result.json)",
        produced_by: "benchtrail upload --dry-run (its `results`), or any program following the schema",
        detect: |f| each_record(f, native::detect),
        parser: Parser::PerRecord(native::parse),
    },
];

pub use native::validate as validate_native;

/// Looks a format up by name.
pub fn format(name: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| f.name == name)
}

/// A fault at one field of one record: `field` is a JSON pointer within the record (`/completed`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// JSON pointer within the record, e.g. `/completed` or `/ttfts/3`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdapterError {
    /// The text is not JSON (or JSON Lines), even allowing Python's NaN/Infinity.
    #[error("not valid JSON: {0}")]
    Syntax(#[from] JsonSyntaxError),
    /// The file holds no record.
    #[error("the file is empty")]
    Empty,
    /// `format` names no adapter.
    #[error("unknown format `{0}`; known formats: {known}", known = known_formats())]
    UnknownFormat(String),
    /// No adapter recognised the content; one reason per format tried.
    #[error("could not detect the format; tried {}", .tried.iter().map(|(f, why)| format!("{f} ({why})")).collect::<Vec<_>>().join("; "))]
    Undetected {
        /// `(format, why it did not match)` for every format tried.
        tried: Vec<(&'static str, String)>,
    },
    /// A per-request file came without its summary.
    #[error("this is per-request data of a `{summary}` result; upload it together with its summary file from the same folder")]
    Orphan {
        /// The summary format it belongs to.
        summary: &'static str,
    },
    /// A record was recognised but a field is wrong.
    #[error("record {record} (line {line}): {}", at_field(.error))]
    Field {
        /// 0-based index of the record (the JSON Lines line, counting only non-empty lines).
        record: usize,
        /// 1-based line where the record starts.
        line: usize,
        /// The field at fault.
        error: FieldError,
    },
}

/// A field error as its message says it: `field `/completed`: …`, or the message alone when
/// the fault is the record's as a whole (an empty pointer).
fn at_field(error: &FieldError) -> String {
    if error.field.is_empty() {
        error.message.clone()
    } else {
        format!("field `{}`: {}", error.field, error.message)
    }
}

fn known_formats() -> String {
    FORMATS
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A file to read: its name, the format asked for (`None`: detect), and its text.
#[derive(Debug, Clone, Copy)]
pub struct FileSpec<'a> {
    /// Name as sent (folders pair a per-request file with its summary).
    pub name: &'a str,
    /// Format asked for, or `None` to detect it.
    pub format: Option<&'a str>,
    /// The file's text.
    pub text: &'a str,
}

/// What one file gave.
#[derive(Debug, Clone, PartialEq)]
pub struct FileResults {
    /// The format it was read as.
    pub format: &'static str,
    /// Its results (none for a per-request companion file: they are in its summary's).
    pub results: Vec<BenchResult>,
}

/// Reads the files of one upload. Results carry their [`Source`] (file index, record).
///
/// # Errors
/// The first file's index and [`AdapterError`]; nothing is returned partially.
pub fn read_files(files: &[FileSpec]) -> Result<Vec<FileResults>, (usize, AdapterError)> {
    let mut inputs: Vec<InputFile> = files
        .iter()
        .enumerate()
        .map(|(index, f)| InputFile {
            index,
            name: f.name,
            text: f.text,
            content: Content::read(f.text),
        })
        .collect();
    let formats = inputs
        .iter_mut()
        .zip(files)
        .map(|(input, spec)| resolve_with_arrays(input, spec.format).map_err(|e| (input.index, e)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(inputs.len());
    for (input, format) in inputs.iter().zip(&formats) {
        let results = match &format.parser {
            Parser::PerRecord(parse) => per_record(input, |value, _| parse(value)),
            Parser::PerRecordDeferred(parse) => per_record(input, *parse),
            Parser::WholeFile(parse) => {
                let companions: Vec<&InputFile> = inputs
                    .iter()
                    .zip(&formats)
                    .filter(|(other, f)| {
                        other.index != input.index
                            && other.folder() == input.folder()
                            && matches!(f.parser, Parser::Companion { summary } if summary == format.name)
                    })
                    .map(|(other, _)| other)
                    .collect();
                parse(input, &companions)
            }
            Parser::Companion { summary } => {
                let has_summary = inputs
                    .iter()
                    .zip(&formats)
                    .any(|(other, f)| other.folder() == input.folder() && f.name == *summary);
                if has_summary {
                    Ok(Vec::new())
                } else {
                    Err(AdapterError::Orphan { summary })
                }
            }
        }
        .map_err(|e| (input.index, e))?;
        let results = results
            .into_iter()
            .enumerate()
            .map(|(i, mut r)| {
                let record = r.source.as_ref().map_or(i, |s| s.record);
                r.source = Some(Source {
                    format: format.name.to_string(),
                    file: input.index,
                    record,
                });
                r
            })
            .collect();
        out.push(FileResults {
            format: format.name,
            results,
        });
    }
    Ok(out)
}

/// Reads one file on its own (no companions): a convenience over [`read_files`].
///
/// # Errors
/// As [`read_files`].
pub fn parse_file(
    format_name: Option<&str>,
    content: &str,
    file_index: usize,
) -> Result<(&'static str, Vec<BenchResult>), AdapterError> {
    let spec = FileSpec {
        name: "",
        format: format_name,
        text: content,
    };
    let mut out = read_files(&[spec]).map_err(|(_, e)| e)?;
    let file = out.pop().expect("one file in, one out");
    let results = file
        .results
        .into_iter()
        .map(|mut r| {
            if let Some(s) = r.source.as_mut() {
                s.file = file_index;
            }
            r
        })
        .collect();
    Ok((file.format, results))
}

/// Resolves the file's format and leaves its per-request arrays deferred only for a format
/// that reads them so ([`Parser::PerRecordDeferred`]); for any other the arrays are built
/// into the tree first and the format resolved again on it, so every other detector and
/// adapter sees the whole file. (A deferring format must be detectable without its arrays
/// and come before every format whose detector looks at them, as `vllm-bench-serve` does:
/// detection takes the first format that matches.)
fn resolve_with_arrays(
    input: &mut InputFile,
    asked: Option<&str>,
) -> Result<&'static Format, AdapterError> {
    let Content::Json(records) = &mut input.content else {
        return resolve_format(input, asked);
    };
    if records.arrays.iter().all(DeferredArrays::is_empty) {
        return resolve_format(input, asked);
    }
    if let Ok(format) = resolve_format(input, asked) {
        if matches!(format.parser, Parser::PerRecordDeferred(_)) {
            return Ok(format);
        }
    }
    if let Content::Json(records) = &mut input.content {
        records.restore(input.text).map_err(AdapterError::Syntax)?;
    }
    resolve_format(input, asked)
}

fn resolve_format(input: &InputFile, asked: Option<&str>) -> Result<&'static Format, AdapterError> {
    if matches!(&input.content, Content::Json(values) if values.is_empty()) {
        return Err(AdapterError::Empty);
    }
    match asked {
        Some(name) => {
            let format =
                format(name).ok_or_else(|| AdapterError::UnknownFormat(name.to_string()))?;
            // A JSON format asked for on text that is not JSON: the syntax error is the answer.
            if let Content::Text { not_json, .. } = &input.content {
                if (format.detect)(input).is_err() {
                    return Err(AdapterError::Syntax(not_json.clone()));
                }
            }
            Ok(format)
        }
        None => detect(input),
    }
}

fn detect(input: &InputFile) -> Result<&'static Format, AdapterError> {
    let mut tried = Vec::new();
    for f in FORMATS {
        match (f.detect)(input) {
            Ok(()) => return Ok(f),
            Err(why) => tried.push((f.name, why)),
        }
    }
    // Text that starts like JSON is broken JSON, not an unknown console format.
    if let Content::Text { text, not_json } = &input.content {
        if text.trim_start().starts_with(['{', '[']) {
            return Err(AdapterError::Syntax(not_json.clone()));
        }
    }
    Err(AdapterError::Undetected { tried })
}

/// Runs a per-record detector on the first record of a JSON file.
fn each_record(input: &InputFile, detect: fn(&Value) -> Result<(), String>) -> Result<(), String> {
    match &input.content {
        Content::Json(values) => values.first().map_or(Err("an empty file".into()), detect),
        Content::Text { .. } => Err("not JSON".into()),
    }
}

fn per_record(
    input: &InputFile,
    parse: impl Fn(&Value, &DeferredArrays) -> Result<Vec<BenchResult>, FieldError>,
) -> Result<Vec<BenchResult>, AdapterError> {
    let Content::Json(records) = &input.content else {
        unreachable!("per-record formats detect JSON only")
    };
    let lines = record_start_lines(input.text);
    let mut results = Vec::new();
    for (record, value) in records.iter().enumerate() {
        let line = lines.get(record).copied().unwrap_or(1);
        let parsed = parse(value, records.arrays(record)).map_err(|error| AdapterError::Field {
            record,
            line,
            error,
        })?;
        for mut r in parsed {
            r.source = Some(Source {
                format: String::new(),
                file: input.index,
                record,
            });
            results.push(r);
        }
    }
    Ok(results)
}

/// 1-based line on which each top-level value starts (best effort: a value starts on a line
/// whose first non-blank character opens an object or array at depth 0).
fn record_start_lines(content: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    let mut line = 1;
    for c in content.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            if c == '\n' {
                line += 1;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                if depth == 0 {
                    lines.push(line);
                }
                depth += 1;
            }
            '}' | ']' => depth -= 1,
            '\n' => line += 1,
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undetected_lists_each_format_and_why() {
        let err = parse_file(None, r#"{"hello": 1}"#, 0).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("could not detect the format; tried vllm-bench-serve ("),
            "{text}"
        );
        assert!(text.contains("benchtrail ("), "{text}");
    }

    #[test]
    fn unknown_format_lists_known_ones() {
        let err = parse_file(Some("nope"), "{}", 0).unwrap_err();
        // Every format, in FORMATS order: vLLM's first, benchtrail's own last.
        let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        assert_eq!(names.first(), Some(&"vllm-bench-serve"));
        assert_eq!(names.last(), Some(&"benchtrail"));
        assert_eq!(
            err.to_string(),
            format!("unknown format `nope`; known formats: {}", names.join(", "))
        );
    }

    #[test]
    fn record_lines() {
        assert_eq!(
            record_start_lines("{\"a\": \"{\\\"\"}\n\n{\n}\n{}"),
            vec![1, 3, 5]
        );
    }
}
