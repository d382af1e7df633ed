//! The guidellm adapter against real reports: v0.2 (guidellm's own test asset), 0.8.0.dev18
//! report v2 (llm-d fixture, constant rates) and 0.8.1 (generated, concurrent 1/4/16).

use crate::common;

use common::value;

use crate::mutate;
use mutate::{Subject, Syntax};

use benchtrail_core::adapters::{parse_file, read_files, AdapterError, FileSpec, FORMATS};
use benchtrail_core::{BenchResult, RequestRate};

fn read(path: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../testdata/guidellm/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn results(file: &str) -> Vec<BenchResult> {
    let text = read(file);
    let mut out = read_files(&[FileSpec {
        name: "result.json",
        format: None,
        text: &text,
    }])
    .unwrap();
    assert_eq!(out[0].format, "guidellm");
    out.remove(0).results
}

#[test]
fn one_result_per_benchmark_with_its_load_shape() {
    let rs = results("baseline_concurrent_1-4-16_isl512_osl128.json");
    assert_eq!(rs.len(), 3);
    let keys: Vec<String> = rs.iter().map(|r| r.cell.key()).collect();
    assert_eq!(
        keys,
        [
            "max_concurrency=1;request_rate=inf;input_len=512;output_len=128",
            "max_concurrency=4;request_rate=inf;input_len=512;output_len=128",
            "max_concurrency=16;request_rate=inf;input_len=512;output_len=128",
        ]
    );
    let r = &rs[0];
    // request_latency is in seconds: e2el in ms, every statistic.
    for (stat, s) in [
        ("mean", 1.3235198974609377),
        ("p50", 1.316391944885254),
        ("p0.1", 1.2562758922576904),
        ("p10", 1.286360740661621),
        ("p25", 1.3023664951324463),
        ("p75", 1.3389012813568115),
        ("p90", 1.3573529720306396),
        ("p95", 1.3866934776306152),
        ("p99", 1.4324040412902832),
        ("p99.9", 1.4324040412902832),
        ("std", 0.03667509296361014),
        ("min", 1.2562758922576904),
        ("max", 1.4324040412902832),
    ] {
        assert_eq!(
            value(r, "e2el", stat),
            (s * 1000.0, Some(20)),
            "e2el {stat}"
        );
    }
    // ITL is token-weighted tpot; v0.4+ TPOT includes TTFT.
    assert_eq!(
        value(r, "tpot_token_weighted", "mean"),
        (10.11767715919675, Some(2540))
    );
    assert_eq!(
        value(r, "tpot_incl_ttft_token_weighted", "mean"),
        (10.334065090864897, Some(2560))
    );
    assert!(!r
        .metrics
        .iter()
        .any(|m| m.name == "tpot" || m.name == "itl"));
    assert_eq!(
        value(r, "request_throughput", "value"),
        (0.7521930019629487, None)
    );
    assert_eq!(
        value(r, "output_throughput", "value"),
        (96.28070425125745, None)
    );
    assert_eq!(value(r, "completed", "value"), (20.0, None));
    assert_eq!(value(r, "failed", "value"), (0.0, None));
    assert_eq!(value(r, "duration", "value"), (26.58892059326172, None));
    let c = &r.configuration;
    assert_eq!(c.model.name.as_deref(), Some("mock-llm"));
    assert_eq!(c.model.tokenizer.as_deref(), Some("/models/mock-tokenizer"));
    assert_eq!(c.benchmark.name.as_deref(), Some("guidellm"));
    assert_eq!(c.benchmark.version.as_deref(), Some("0.8.1"));
    assert_eq!(r.facts["arrival"], "concurrent");
}

#[test]
fn constant_rate_report_v2() {
    let rs = results("llm-d-fixture-guidellm-0.8.0dev18-report-v2-mock-constant.json");
    assert_eq!(rs.len(), 2);
    assert_eq!(
        rs[0].cell.load.request_rate,
        Some(RequestRate::PerSecond(2.0))
    );
    assert_eq!(
        rs[1].cell.load.request_rate,
        Some(RequestRate::PerSecond(4.0))
    );
    assert_eq!(rs[0].cell.load.burstiness, None);
    assert_eq!(rs[0].facts["arrival"], "constant");
    assert_eq!(
        value(&rs[0], "e2el", "mean"),
        (0.01978909969329834 * 1000.0, Some(2))
    );
    assert!(rs[0]
        .metrics
        .iter()
        .any(|m| m.name == "time_to_first_output_token"));
    assert!(rs[0].warnings.iter().any(|w| w.code == "small_sample_tail"));
}

#[test]
fn v0_2_uses_median_and_its_own_tpot_definition() {
    let rs = results("guidellm-tests-benchmarks_stripped-v0.2-format-sweep.json");
    assert_eq!(rs.len(), 1);
    let r = &rs[0];
    assert_eq!(
        r.cell.key(),
        "max_concurrency=1;request_rate=inf;input_len=256;output_len=128"
    );
    // No p50 in v0.2 percentiles: the median is p50.
    assert_eq!(
        value(r, "e2el", "p50"),
        (0.6424565315246582 * 1000.0, Some(46))
    );
    assert!(r
        .metrics
        .iter()
        .any(|m| m.name == "decode_time_per_output_token_token_weighted"));
    assert!(!r
        .metrics
        .iter()
        .any(|m| m.name == "tpot_incl_ttft_token_weighted"));
    assert_eq!(value(r, "completed", "value"), (46.0, None));
    assert_eq!(r.facts["incomplete_requests"], 1.0);
    assert_eq!(r.configuration.model.name.as_deref(), Some("example_model"));
}

#[test]
fn never_panics_on_broken_or_mutated_files() {
    for (seed, f) in [
        (
            31,
            "guidellm-tests-benchmarks_stripped-v0.2-format-sweep.json",
        ),
        (
            32,
            "llm-d-fixture-guidellm-0.8.0dev18-report-v2-mock-constant.json",
        ),
    ] {
        Subject::in_upload(&[("result.json", "guidellm", read(f))], 0, Syntax::Json)
            .all_kinds(seed);
    }
    // The YAML path: the generated 0.8.1 report reduced as for the fuzzer (first benchmark,
    // lists cut to 2, written by PyYAML); the whole file takes too long to read this often.
    let yaml = common::read(
        "fuzz/seeds/format-guidellm/guidellm-0.8.1-first-benchmark-lists-cut-to-2-no-requests.yaml",
    );
    Subject::in_upload(&[("result.json", "guidellm", yaml)], 0, Syntax::Yaml).all_kinds(33);
}

const TWINS: [&str; 2] = [
    "baseline_concurrent_1-4-16_isl512_osl128",
    "candidate_concurrent_1-4-16_isl512_osl128",
];

#[test]
fn yaml_output_gives_the_results_of_its_json_twin() {
    for twin in TWINS {
        let json = results(&format!("{twin}.json"));
        // `results` names the file `result.json`: detection is by content.
        let yaml = results(&format!("{twin}.yaml"));
        assert_eq!(yaml.len(), 3, "{twin}");
        assert_eq!(yaml, json, "{twin}");
        // Named by its real name, or with the format asked for, or through parse_file.
        let text = read(&format!("{twin}.yaml"));
        for (name, format) in [
            ("guidellm/benchmarks.yaml", None),
            ("result.json", Some("guidellm")),
        ] {
            let out = read_files(&[FileSpec {
                name,
                format,
                text: &text,
            }])
            .unwrap();
            assert_eq!(out[0].format, "guidellm");
            assert_eq!(out[0].results, json, "{twin} as {name}");
        }
        let (format, rs) = parse_file(None, &text, 0).unwrap();
        assert_eq!((format, rs), ("guidellm", json));
    }
}

#[test]
fn yaml_output_exact_values() {
    let rs = results("candidate_concurrent_1-4-16_isl512_osl128.yaml");
    let keys: Vec<String> = rs.iter().map(|r| r.cell.key()).collect();
    assert_eq!(
        keys,
        [
            "max_concurrency=1;request_rate=inf;input_len=512;output_len=128",
            "max_concurrency=4;request_rate=inf;input_len=512;output_len=128",
            "max_concurrency=16;request_rate=inf;input_len=512;output_len=128",
        ]
    );
    for (r, e2el, n, ttft_p99, output_tps, duration) in [
        (
            &rs[0],
            0.9880467057228088,
            20,
            89.01333808898926,
            128.85985444744077,
            19.866544246673584,
        ),
        (
            &rs[1],
            1.0721078077952069,
            60,
            98.78945350646973,
            471.91506018012154,
            16.274115085601807,
        ),
        (
            &rs[2],
            1.4348845437169075,
            160,
            122.88522720336914,
            1404.8346849423256,
            14.578227758407593,
        ),
    ] {
        assert_eq!(value(r, "e2el", "mean"), (e2el * 1000.0, Some(n)));
        assert_eq!(value(r, "ttft", "p99"), (ttft_p99, Some(n)));
        assert_eq!(value(r, "output_throughput", "value"), (output_tps, None));
        assert_eq!(value(r, "completed", "value"), (n as f64, None));
        assert_eq!(value(r, "duration", "value"), (duration, None));
        assert_eq!(r.configuration.model.name.as_deref(), Some("mock-llm"));
        assert_eq!(r.configuration.benchmark.version.as_deref(), Some("0.8.1"));
        assert_eq!(r.configuration.sampling.ignore_eos, Some(true));
        assert_eq!(r.facts["arrival"], "concurrent");
    }
}

#[test]
fn yaml_non_finite_and_huge_numbers_read_as_in_json() {
    let json = read("baseline_concurrent_1-4-16_isl512_osl128.json");
    let yaml = read("baseline_concurrent_1-4-16_isl512_osl128.yaml");
    // Python writes inf/nan as bare `Infinity`/`NaN` in JSON and `.inf`/`.nan` in YAML; an
    // integer beyond u64 is read as the nearest f64 by both.
    for (in_json, in_yaml) in [
        ("Infinity", ".inf"),
        ("-Infinity", "-.inf"),
        ("NaN", ".nan"),
        ("18446744073709551616", "18446744073709551616"),
        ("-98765432109876543210", "-98765432109876543210"),
    ] {
        let j = json.replacen("26.58892059326172", in_json, 1);
        let y = yaml.replacen("26.58892059326172", in_yaml, 1);
        assert_ne!((&j, &y), (&json, &yaml));
        let (_, from_json) = parse_file(None, &j, 0).unwrap();
        let (_, from_yaml) = parse_file(None, &y, 0).unwrap();
        assert_eq!(from_yaml, from_json, "{in_yaml}");
        if in_json.parse::<f64>().is_ok_and(f64::is_finite) {
            assert_eq!(
                value(&from_yaml[0], "duration", "value").0,
                in_json.parse::<f64>().unwrap()
            );
        } else {
            assert!(from_yaml[0]
                .warnings
                .iter()
                .any(|w| w.code == "non_finite_value" && w.message.starts_with("`duration`")));
        }
    }
}

#[test]
fn yaml_that_is_not_guidellm_is_not_claimed() {
    let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    for (text, why) in [
        // Any text is YAML: only a top-level `benchmarks:` line makes it worth parsing.
        (
            "model: m\nthroughput: 3.5\n",
            "guidellm (neither JSON nor YAML with a top-level `benchmarks:` line)",
        ),
        (
            "benchmarks: 3\n",
            "guidellm (YAML, but no `benchmarks` list)",
        ),
        (
            "benchmarks: []\n",
            "guidellm (YAML, but an empty `benchmarks` list)",
        ),
        (
            "benchmarks:\n- name: x\n  value: 1\n",
            "guidellm (YAML, but no guidellm `generative_benchmark`)",
        ),
        ("benchmarks:\n- [1, 2\n", "guidellm (not valid YAML: "),
        (
            "benchmarks:\n- a: 1\n---\nb: 2\n",
            "guidellm (not valid YAML: ",
        ),
    ] {
        let err = parse_file(None, text, 0).unwrap_err();
        let AdapterError::Undetected { tried } = &err else {
            panic!("{text:?}: {err}");
        };
        let tried: Vec<&str> = tried.iter().map(|(f, _)| *f).collect();
        assert_eq!(tried, names, "{text:?}: every format is tried");
        let message = err.to_string();
        assert!(
            message.starts_with("could not detect the format; tried vllm-bench-serve ("),
            "{message}"
        );
        assert!(message.contains(why), "{text:?}: {message}");
    }
    // Broken JSON stays a JSON syntax error, even with a `benchmarks` key.
    let truncated = &read("baseline_concurrent_1-4-16_isl512_osl128.json")[..5000];
    assert!(matches!(
        parse_file(None, truncated, 0),
        Err(AdapterError::Syntax(_))
    ));
    // Asked for as guidellm, YAML of another structure is refused.
    let err = parse_file(Some("guidellm"), "benchmarks: 3\n", 0).unwrap_err();
    assert!(matches!(err, AdapterError::Syntax(_)), "{err}");
}

/// The error of a guidellm report read alone, asked for as guidellm or detected.
fn refusal(text: &str) -> String {
    for format in [None, Some("guidellm")] {
        let err = read_files(&[FileSpec {
            name: "benchmarks.yaml",
            format,
            text,
        }])
        .map(|_| ())
        .unwrap_err();
        assert_eq!(err.0, 0);
        let AdapterError::Field { error, .. } = &err.1 else {
            panic!("{format:?}: {}", err.1);
        };
        assert!(
            error.message.starts_with("the file looks truncated: `"),
            "{format:?}: {}",
            err.1
        );
        if format.is_some() {
            return format!("{} {}", error.field, error.message);
        }
    }
    unreachable!()
}

#[test]
fn truncated_yaml_is_refused_naming_what_is_missing() {
    // The trial's case: `head -c 20000` of the generated YAML is valid YAML (the last line
    // reads `percentile_cis: nu`), cut inside the first benchmark's metrics.
    let yaml = read("baseline_concurrent_1-4-16_isl512_osl128.yaml");
    let cut = refusal(&yaml[..20000]);
    assert!(
        cut.starts_with("/benchmarks/0/metrics/request_totals the file looks truncated: `/benchmarks/0/metrics/request_totals`"),
        "{cut}"
    );
    // Cut at line boundaries: inside each benchmark's metrics, its request samples, its
    // scheduler state, its warnings (the last key of a benchmark), after the benchmark list,
    // inside the top-level config, before `metadata.version` (the last line).
    let lines: Vec<&str> = yaml.split_inclusive('\n').collect();
    let line_of = |prefix: &str, nth: usize| {
        lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with(prefix))
            .nth(nth)
            .unwrap_or_else(|| panic!("{prefix} #{nth}"))
            .0
    };
    let cut_before = |line: usize| lines[..line].concat();
    for (prefix, nth, missing) in [
        ("  metrics:", 0, "/benchmarks/0/metrics"),
        ("  requests:", 0, "/benchmarks/0/type_"),
        ("  scheduler_state:", 0, "/benchmarks/0/start_time"),
        ("  type_:", 0, "/config"),
        ("  - code:", 0, "/config"),
        ("  metrics:", 1, "/benchmarks/1/metrics"),
        (
            "    request_totals:",
            2,
            "/benchmarks/2/metrics/request_totals/successful",
        ),
        ("  - code:", 2, "/config"),
        ("conclusions:", 0, "/config"),
        ("config:", 0, "/config/spec"),
        ("  spec:", 0, "/config/spec"),
        ("metadata:", 0, "/metadata/version"),
    ] {
        // `+ 1`: the section's own first line is kept.
        let at = line_of(prefix, nth) + 1;
        let text = cut_before(at);
        let why = refusal(&text);
        assert!(
            why.contains(&format!("`{missing}`")),
            "cut at line {at}: {why}"
        );
    }
    // Cut before the last line, `metadata.version`.
    let why = refusal(&cut_before(lines.len() - 1));
    assert!(why.starts_with("/metadata/version "), "{why}");
    // Cut after a benchmark's metrics section, the section complete: the benchmark's later
    // keys are missing.
    let why = refusal(&cut_before(line_of("  requests:", 0)));
    assert!(
        why.starts_with("/benchmarks/0/type_ the file looks truncated: `/benchmarks/0/type_`, `/benchmarks/0/start_time`"),
        "{why}"
    );
    // The whole file is still read.
    assert_eq!(
        results("baseline_concurrent_1-4-16_isl512_osl128.yaml").len(),
        3
    );
}

#[test]
fn json_lacking_a_section_is_refused_the_same_way() {
    use serde_json::Value;
    for (file, pointer) in [
        (
            "baseline_concurrent_1-4-16_isl512_osl128.json",
            "/benchmarks/1/metrics/request_totals",
        ),
        (
            "baseline_concurrent_1-4-16_isl512_osl128.json",
            "/benchmarks/2/metrics/request_latency",
        ),
        (
            "baseline_concurrent_1-4-16_isl512_osl128.json",
            "/benchmarks/0/duration",
        ),
        (
            "baseline_concurrent_1-4-16_isl512_osl128.json",
            "/metadata/version",
        ),
        (
            "llm-d-fixture-guidellm-0.8.0dev18-report-v2-mock-constant.json",
            "/benchmarks/0/metrics/request_totals/errored",
        ),
        (
            "guidellm-tests-benchmarks_stripped-v0.2-format-sweep.json",
            "/benchmarks/0/request_totals",
        ),
        (
            "guidellm-tests-benchmarks_stripped-v0.2-format-sweep.json",
            "/benchmarks/0/metrics",
        ),
    ] {
        let mut v: Value = serde_json::from_str(&read(file)).unwrap();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        v.pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap()
            .remove(key)
            .unwrap();
        let why = refusal(&v.to_string());
        // v0.2 keeps `request_totals` beside `metrics`: named where v0.4+ keeps it.
        let named = if pointer == "/benchmarks/0/request_totals" {
            "/benchmarks/0/metrics/request_totals"
        } else {
            pointer
        };
        assert!(
            why.starts_with(&format!("{named} the file looks truncated: `{named}`")),
            "{file} without {pointer}: {why}"
        );
    }
    // The cut YAML of the trial, as JSON: the same refusal.
    let yaml = read("baseline_concurrent_1-4-16_isl512_osl128.yaml");
    let value = benchtrail_core::lenient_yaml::parse_value(&yaml[..20000]).unwrap();
    assert_eq!(refusal(&value.to_string()), refusal(&yaml[..20000]));
}
