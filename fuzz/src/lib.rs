//! What the fuzz targets do with their input. Every input must give `Ok` or `Err` from the
//! adapters, never a panic (a panic is the crash libFuzzer reports).

use benchtrail_core::adapters::{read_files, FileSpec, FORMATS};

/// Per-request formats, which are read only with their summary: `(format, its file name, the
/// summary's format, a real summary file of that format, its file name)`.
pub const COMPANIONS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "aiperf-records",
        "run/profile_export.jsonl",
        "aiperf",
        include_str!("../../testdata/aiperf/baseline_completions_c1_isl512_osl128/profile_export_aiperf.json"),
        "run/profile_export_aiperf.json",
    ),
    (
        "aiperf-server-metrics",
        "run/server_metrics_export.json",
        "aiperf",
        include_str!("../../testdata/aiperf/baseline_completions_c1_isl512_osl128/profile_export_aiperf.json"),
        "run/profile_export_aiperf.json",
    ),
    (
        "genai-perf-records",
        "run/profile_export.json",
        "genai-perf",
        include_str!("../../testdata/genai-perf/baseline_completions_c1_isl512_osl64/mock-llm-openai-completions-concurrency1/profile_export_genai_perf.json"),
        "run/profile_export_genai_perf.json",
    ),
    (
        "llmperf-responses",
        "run/x_individual_responses.json",
        "llmperf",
        include_str!("../../testdata/llmperf/llmperf-leaderboard-groq-llama2-70b-summary.json"),
        "run/x_summary.json",
    ),
];

/// Reads `data` (UTF-8, lossily) as a file of format `name`: on its own, or, for a per-request
/// format of [`COMPANIONS`], next to a real summary file in the same folder (so that its own
/// parser runs). Panics if `name` is not a format any more, so a renamed format fails the fuzz
/// run instead of fuzzing nothing.
pub fn one_file(name: &str, data: &[u8]) {
    known(name);
    match COMPANIONS.iter().find(|c| c.0 == name) {
        Some(&(_, file, summary_format, summary, summary_file)) => {
            known(summary_format);
            read(&[
                (summary_file, Some(summary_format), summary.as_bytes()),
                (file, Some(name), data),
            ])
        }
        None => read(&[("result.json", Some(name), data)]),
    }
}

fn known(name: &str) {
    assert!(
        FORMATS.iter().any(|f| f.name == name),
        "fuzz target for `{name}`, which is not in benchtrail_core::adapters::FORMATS"
    );
}

/// Reads `data` as one file whose format is detected.
pub fn detect(data: &[u8]) {
    read(&[("result.json", None, data)]);
}

/// Summary and per-request file pairs, as `(summary name, its format, companion name, its format)`.
pub const PAIRS: &[(&str, &str, &str, &str)] = &[
    (
        "run/profile_export_aiperf.json",
        "aiperf",
        "run/profile_export.jsonl",
        "aiperf-records",
    ),
    (
        "run/profile_export_aiperf.json",
        "aiperf",
        "run/server_metrics_export.json",
        "aiperf-server-metrics",
    ),
    (
        "run/profile_export_genai_perf.json",
        "genai-perf",
        "run/profile_export.json",
        "genai-perf-records",
    ),
    (
        "run/x_summary.json",
        "llmperf",
        "run/x_individual_responses.json",
        "llmperf-responses",
    ),
];

/// Reads two files as one upload. The first byte picks the pair of [`PAIRS`] (low two bits),
/// whether the formats are named (bit 4; else detected) and whether the companion sits in
/// another folder (bit 5); the rest is the summary, a 0 byte, then the companion.
pub fn pair(data: &[u8]) {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let (summary, companion) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let (summary_name, summary_format, companion_name, companion_format) =
        PAIRS[usize::from(control) % PAIRS.len()];
    let named = control & 0x10 != 0;
    if named {
        known(summary_format);
        known(companion_format);
    }
    let companion_name = if control & 0x20 != 0 {
        companion_name.replacen("run/", "other/", 1)
    } else {
        companion_name.to_string()
    };
    read(&[
        (summary_name, named.then_some(summary_format), summary),
        (
            &companion_name,
            named.then_some(companion_format),
            companion,
        ),
    ]);
}

fn read(files: &[(&str, Option<&str>, &[u8])]) {
    let texts: Vec<String> = files
        .iter()
        .map(|(_, _, data)| String::from_utf8_lossy(data).into_owned())
        .collect();
    let specs: Vec<FileSpec> = files
        .iter()
        .zip(&texts)
        .map(|((name, format, _), text)| FileSpec {
            name,
            format: *format,
            text,
        })
        .collect();
    let _ = read_files(&specs);
}

/// The names of every format, one a line (for `.ci/fuzz` to check each has a target).
pub fn format_names() -> String {
    FORMATS.iter().map(|f| format!("{}\n", f.name)).collect()
}

/// An upload's `files[].content` as the server reads it (`json_string::deserialize_unescaped`,
/// in place) and as serde_json reads a `String`: `data` as a JSON document `{"content": ...}`
/// must give the same text from both, or an error from both. Panics when they differ.
pub fn file_content(data: &[u8]) {
    #[derive(serde::Deserialize)]
    struct InPlace {
        #[serde(deserialize_with = "benchtrail_core::json_string::deserialize_unescaped")]
        content: String,
    }
    #[derive(serde::Deserialize)]
    struct Plain {
        content: String,
    }
    let in_place = serde_json::from_slice::<InPlace>(data).map(|d| d.content);
    let plain = serde_json::from_slice::<Plain>(data).map(|d| d.content);
    match (in_place, plain) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the two readings differ"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("one reading failed: in place {a:?}, serde_json {b:?}"),
    }
}
