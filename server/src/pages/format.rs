//! Small text helpers shared by the page views: number display, time display, URL escaping
//! and series-key rendering.

use chrono::{DateTime, Utc};
use serde_json::Value;

/// A value with a sensible number of digits for reading; pages also carry the exact value
/// (see [`exact`]) in a `data-value` attribute and a tooltip, so nothing is lost.
///
/// Whole numbers print without decimals; otherwise 2 decimals from 100 up, 3 from 1 up and
/// 4 significant digits below 1 (sub-millisecond latencies and ratios).
pub fn display_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        // 4 significant digits: the number of decimals grows with the leading zeros.
        let decimals = (3 - a.log10().floor() as i32).clamp(1, 12) as usize;
        format!("{v:.decimals$}")
    }
}

/// Appends `x` with one decimal, the very text of `write!(out, "{x:.1}")` (the exact value
/// rounded half to even), for the dashboard's sparklines: 13,000 coordinates a render, and
/// the standard formatting's exact-decimal path (`dragon`, big-number arithmetic) was a
/// tenth of the page's CPU (BENCHMARKS.md "Session 44").
///
/// For a finite, positive `x` below 10¹⁴ whose tenths `t = x × 10` (rounded to a double) are
/// not halfway between two integers, the integer nearest `t` is the one nearest the exact
/// x·10: rounding to a double is monotone and every `k + 0.5` there is a double, so `t` lands
/// on the same side of each midpoint as the exact product, or on the midpoint itself. Such `x`
/// is printed from that integer; every other `x` (negative or `-0.0`, a midpoint, NaN,
/// infinite, huge) by the standard formatting.
pub fn push_one_decimal(out: &mut String, x: f64) {
    use std::fmt::Write;
    let tenths = x * 10.0;
    if x.is_sign_positive() && tenths < 1e15 && tenths - tenths.floor() != 0.5 {
        let t = tenths.round() as u64;
        write!(out, "{}.{}", t / 10, t % 10)
    } else {
        write!(out, "{x:.1}")
    }
    .expect("writing to a String");
}

/// Appends `x` as `write!(out, "{x}")` does: the shortest decimal that reads back to the same
/// `f64`, never in exponent form. The digits come from `ryu` (shortest, and the closest of the
/// shortest, as the standard formatting's), which is several times faster than the standard
/// formatting's exact search: the compare page writes 57,600 such numbers for its cumulative
/// distributions (BENCHMARKS.md "Session 44"). `ryu` writes `1.0` for one and an exponent
/// beyond its range of plain notation; the first loses its `.0`, the second goes to the
/// standard formatting.
///
/// Where two shortest texts are equally close the two formatters break the tie differently
/// (`1027173609929207.25` is `…207.2` to `ryu`, `…207.3` to the standard one). A tie needs the
/// exact decimal expansion of `x` to end one digit after the shortest text's 17 or fewer, so
/// within 18 significant digits, so `x` a multiple of 2⁻¹⁸ (a number with `k` binary
/// fraction digits has exactly `k` decimal ones). Those (integers, halves, every `x` from 2³⁵
/// on) go to the standard formatting too.
pub fn push_exact(out: &mut String, x: f64) {
    if x.is_finite() && (x * 262_144.0).fract() != 0.0 {
        let mut buffer = ryu::Buffer::new();
        let text = buffer.format_finite(x);
        if !text.contains(['e', 'E']) {
            out.push_str(text.strip_suffix(".0").unwrap_or(text));
            return;
        }
    }
    use std::fmt::Write;
    write!(out, "{x}").expect("writing to a String");
}

/// The exact value as the shortest text that reads back to the same `f64` (what JSON has).
pub fn exact(v: f64) -> String {
    let mut out = String::new();
    push_exact(&mut out, v);
    out
}

/// `2026-01-02 03:04 UTC`: minutes are enough to read; `<time datetime>` carries the rest.
pub fn display_time(t: &DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A time in its own zone, for reading: `2026-01-02 03:04 +01:00` (a commit time as the
/// committer's clock showed it; `+00:00` when the offset is zero or was not known).
pub fn display_zoned_time(t: &DateTime<chrono::FixedOffset>) -> String {
    t.format("%Y-%m-%d %H:%M %:z").to_string()
}

/// RFC 3339 with seconds and the time's own offset, for `datetime` attributes.
pub fn machine_zoned_time(t: &DateTime<chrono::FixedOffset>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// RFC 3339 with seconds, for `datetime` attributes.
pub fn machine_time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The first 10 hex digits of a commit, as shown on axes and in tables.
pub fn short_sha(sha: &str) -> String {
    sha.chars().take(10).collect()
}

/// A URL that may safely go into an `href`: only `http(s)` URLs. Anything else (for example a
/// `javascript:` CI job URL sent by an uploader) is shown as text, never made a link.
pub fn safe_link(url: &str) -> Option<String> {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| url.trim().to_string())
}

/// The page that shows a commit: `{repository_url}/commit/{sha}` (GitHub, GitLab and Gitea
/// all answer this path), when the project has a linkable repository URL.
pub fn commit_url(repository_url: Option<&str>, sha: &str) -> Option<String> {
    let base = safe_link(repository_url?)?;
    Some(format!("{}/commit/{}", base.trim_end_matches('/'), sha))
}

/// A JSON value as text for a table cell: strings without quotes, everything else as JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The series key's fields as `(dotted name, value)` pairs in the configuration's display
/// order ([`benchtrail_core::config::SERIES_KEY_FIELDS`]), then any others (project metadata
/// key fields) by name.
pub fn key_pairs(series_key: &Value) -> Vec<(String, String)> {
    let Some(obj) = series_key.as_object() else {
        return Vec::new();
    };
    let order = benchtrail_core::config::SERIES_KEY_FIELDS;
    let mut pairs: Vec<(usize, String, String)> = obj
        .iter()
        .map(|(k, v)| {
            (
                order.iter().position(|f| f == k).unwrap_or(order.len()),
                k.clone(),
                value_text(v),
            )
        })
        .collect();
    pairs.sort();
    pairs.into_iter().map(|(_, k, v)| (k, v)).collect()
}

/// A one-line title for a configuration: model, accelerator × count, engine, quantization,
/// tensor parallel size and the benchmark tool (or format) that measured it, as far as
/// recorded: `mock-llm · benchmark aiperf`. Configurations that differ elsewhere are told
/// apart on the project page by [`distinguishing_parts`].
pub fn key_title(series_key: &Value) -> String {
    let get = |k: &str| series_key.get(k).map(value_text);
    let mut parts = Vec::new();
    if let Some(m) = get("model.name") {
        parts.push(m);
    }
    match (
        get("hardware.accelerator"),
        get("hardware.accelerator_count"),
    ) {
        (Some(a), Some(c)) => parts.push(format!("{c} × {a}")),
        (Some(a), None) => parts.push(a),
        (None, Some(c)) => parts.push(format!("{c} accelerators")),
        (None, None) => {}
    }
    if let Some(e) = get("engine.name") {
        parts.push(e);
    }
    if let Some(q) = get("quantization.weights") {
        parts.push(format!("weights {q}"));
    }
    if let Some(tp) = get("parallelism.tensor_parallel_size") {
        parts.push(format!("TP {tp}"));
    }
    if let Some(b) = get("benchmark.name") {
        parts.push(format!("benchmark {b}"));
    }
    if parts.is_empty() {
        "Unspecified configuration".to_string()
    } else {
        parts.join(" · ")
    }
}

/// For configurations whose [`key_title`]s are equal, the series-key fields that tell each
/// apart from the others, as `field value` texts in [`key_pairs`] order (one list per key, in
/// the order given): every field whose value differs between the keys (or that some of them
/// lack), as far as the key records it. Distinct keys get distinct lists.
pub fn distinguishing_parts(keys: &[&Value]) -> Vec<Vec<String>> {
    let pairs: Vec<Vec<(String, String)>> = keys.iter().map(|k| key_pairs(k)).collect();
    let value_of = |i: usize, field: &str| {
        pairs[i]
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, v)| v.as_str())
    };
    pairs
        .iter()
        .map(|own| {
            own.iter()
                .filter(|(field, value)| {
                    (0..keys.len()).any(|j| value_of(j, field) != Some(value.as_str()))
                })
                .map(|(field, value)| format!("{field} {value}"))
                .collect()
        })
        .collect()
}

/// Sort key of a statistic label for display ([`benchtrail_core::metric::stat_rank`]);
/// labels that are not statistics go last.
pub fn stat_order(stat: &str) -> (u8, u64) {
    stat.parse::<benchtrail_core::Stat>()
        .map_or((u8::MAX, 0), |s| benchtrail_core::metric::stat_rank(&s))
}

/// The human label of a metric, or its name when it is not in the vocabulary.
pub fn metric_label(name: &str) -> String {
    benchtrail_core::metric::lookup(name).map_or_else(|| name.to_string(), |m| m.label.to_string())
}

/// How the direction reads on a page.
pub fn direction_text(d: benchtrail_core::Direction) -> &'static str {
    match d {
        benchtrail_core::Direction::LowerIsBetter => "lower is better",
        benchtrail_core::Direction::HigherIsBetter => "higher is better",
        benchtrail_core::Direction::Neutral => "neither higher nor lower is better",
    }
}

/// The unit as shown after a value (`ms`, `req/s`); dimensionless values get none.
pub fn unit_text(u: benchtrail_core::Unit) -> &'static str {
    match u {
        benchtrail_core::Unit::Dimensionless => "",
        other => other.as_str(),
    }
}

/// A confidence level as a percentage: `0.95` → `95 %`, `0.995` → `99.5 %`, `0.9995` →
/// `99.95 %` (three decimals at most, so a strict level never reads as `100 %`).
pub fn level_text(level: f64) -> String {
    let pct = (level * 100_000.0).round() / 1000.0;
    format!("{} %", exact(pct))
}

/// A confidence interval as shown after its value: `[34.912, 36.401] 95 %` (bounds with the
/// same precision rule as values, [`display_number`]).
pub fn interval_text(ci: &benchtrail_core::metric::Interval) -> String {
    format!(
        "[{}, {}] {}",
        display_number(ci.low),
        display_number(ci.high),
        level_text(ci.level)
    )
}

/// SLO thresholds in milliseconds as text, exactly as set: `ttft ≤ 60 ms · tpot ≤ 10.6 ms`.
pub fn thresholds_text(thresholds: &[(String, f64)]) -> String {
    thresholds
        .iter()
        .map(|(metric, ms)| format!("{metric} ≤ {} ms", exact(*ms)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Sort key of an SLO profile: the default `interactive` first, the tool's own (`tool`) last,
/// a project's own by name between them; none (metrics without a profile) before all.
pub fn profile_order(profile: Option<&str>) -> (u8, String) {
    match profile {
        None => (0, String::new()),
        Some("interactive") => (1, String::new()),
        Some(benchtrail_core::slo::TOOL_PROFILE) => (3, String::new()),
        Some(p) => (2, p.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_decimal_and_shortest_texts_are_the_standard_formatting() {
        // Midpoints in decimal that are not in binary (0.15 is 0.1499…, 0.25 is exact: half
        // to even), signs, zeros, the limits of the fast path, and a million pseudo-random
        // coordinates of every magnitude the sparklines meet and beyond.
        let mut cases = vec![
            0.0,
            -0.0,
            0.05,
            0.15,
            0.25,
            0.35,
            0.45,
            1.25,
            2.5,
            2.25,
            9.95,
            99.95,
            117.95,
            -0.04,
            -1.25,
            1e14,
            1e15,
            1e16,
            123456789.05,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.049999999999999996,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for i in 0..1_000_000 {
            // xorshift64*: reproducible without a dependency.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
            cases.push(match i % 6 {
                0 => unit * 120.0,
                1 => (unit * 1200.0).round() / 10.0 + 0.05,
                2 => unit * 10f64.powi((r % 30) as i32 - 10),
                // Short binary fractions at every magnitude: where shortest texts tie.
                3 => (r >> 20) as f64 / f64::powi(2.0, (r % 40) as i32),
                4 => (r % 201) as f64 / 200.0,
                _ => f64::from_bits(r),
            });
        }
        for x in cases {
            let mut fast = String::new();
            push_one_decimal(&mut fast, x);
            assert_eq!(fast, format!("{x:.1}"), "{x:e} ({:#x})", x.to_bits());
            let mut shortest = String::new();
            push_exact(&mut shortest, x);
            assert_eq!(shortest, format!("{x}"), "{x:e} ({:#x})", x.to_bits());
        }
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(display_number(12.0), "12");
        assert_eq!(display_number(1234.5678), "1234.57");
        assert_eq!(display_number(12.34567), "12.346");
        assert_eq!(display_number(0.012345678), "0.01235");
        assert_eq!(display_number(0.5), "0.5000");
        assert_eq!(exact(12.345678901), "12.345678901");
    }

    #[test]
    fn intervals_and_levels_read_well() {
        assert_eq!(level_text(0.95), "95 %");
        assert_eq!(level_text(0.995), "99.5 %");
        assert_eq!(level_text(0.9995), "99.95 %");
        assert_eq!(level_text(0.999), "99.9 %");
        let ci = benchtrail_core::metric::Interval {
            low: 34.9123,
            high: 36.4,
            level: 0.95,
            method: "bootstrap".into(),
        };
        assert_eq!(interval_text(&ci), "[34.912, 36.400] 95 %");
        assert_eq!(
            thresholds_text(&[("ttft".into(), 60.0), ("tpot".into(), 10.6)]),
            "ttft ≤ 60 ms · tpot ≤ 10.6 ms"
        );
    }

    #[test]
    fn only_http_links() {
        assert_eq!(safe_link("javascript:alert(1)"), None);
        assert_eq!(safe_link("https://ci/x").as_deref(), Some("https://ci/x"));
        assert_eq!(
            commit_url(Some("https://g/o/r/"), "abc").as_deref(),
            Some("https://g/o/r/commit/abc")
        );
        assert_eq!(commit_url(None, "abc"), None);
    }

    #[test]
    fn equal_titles_are_told_apart_by_the_fields_that_differ() {
        let vllm =
            serde_json::json!({"model.name": "mock-llm", "benchmark.name": "vllm-bench-serve"});
        let seqs = serde_json::json!({"model.name": "mock-llm", "benchmark.name": "vllm-bench-serve", "scheduler.max_num_seqs": 64});
        let tp = serde_json::json!({"model.name": "mock-llm", "benchmark.name": "vllm-bench-serve", "scheduler.max_num_seqs": 128, "sampling.temperature": 0.0});
        assert_eq!(key_title(&vllm), "mock-llm · benchmark vllm-bench-serve");
        assert_eq!(key_title(&vllm), key_title(&tp));
        assert_eq!(
            distinguishing_parts(&[&vllm, &seqs, &tp]),
            [
                vec![],
                vec!["scheduler.max_num_seqs 64".to_string()],
                vec![
                    "scheduler.max_num_seqs 128".to_string(),
                    "sampling.temperature 0.0".to_string()
                ],
            ]
        );
    }

    #[test]
    fn stats_sort_by_meaning() {
        let mut s = vec!["max", "p99.9", "p50", "mean", "p99", "std", "p90"];
        s.sort_by_key(|s| stat_order(s));
        assert_eq!(s, ["mean", "p50", "p90", "p99", "p99.9", "std", "max"]);
    }
}
