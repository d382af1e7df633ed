//! The metric vocabulary: one table naming every metric benchtrail stores, with its unit,
//! its direction and the source of its definition.
//!
//! Names follow vLLM's `vllm bench serve` (`ttft`, `tpot`, `itl`, `e2el`, `request_goodput`, ...)
//! because it is the most widely used serving benchmark. A metric whose definition differs from
//! vLLM's gets the name of what it really is (AIPerf's per-request `inter_token_latency` is stored
//! as `tpot`) or a name of its own. Later work extends this table; it never renames an entry.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The unit a stored value is expressed in. Adapters convert once, at the edge, so that every
/// latency is in milliseconds and every rate is per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Unit {
    /// Milliseconds.
    #[serde(rename = "ms")]
    Ms,
    /// Seconds (only for whole-run durations).
    #[serde(rename = "s")]
    S,
    /// Requests per second.
    #[serde(rename = "req/s")]
    ReqPerS,
    /// Tokens per second.
    #[serde(rename = "tok/s")]
    TokPerS,
    /// Percent, 0–100.
    #[serde(rename = "%")]
    Percent,
    /// A count of requests.
    #[serde(rename = "requests")]
    Requests,
    /// A count of tokens.
    #[serde(rename = "tokens")]
    Tokens,
    /// A dimensionless number (a ratio, a mean acceptance length).
    #[serde(rename = "1")]
    Dimensionless,
}

impl Unit {
    /// The unit as written in JSON and on pages (`ms`, `req/s`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::ReqPerS => "req/s",
            Unit::TokPerS => "tok/s",
            Unit::Percent => "%",
            Unit::Requests => "requests",
            Unit::Tokens => "tokens",
            Unit::Dimensionless => "1",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way is better. It comes from the metric's definition, never from a name pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Smaller is better (latencies, failures).
    LowerIsBetter,
    /// Larger is better (throughput, goodput, attainment).
    HigherIsBetter,
    /// Neither: a descriptive quantity (token counts, duration).
    Neutral,
}

impl Direction {
    /// `lower_is_better`, `higher_is_better` or `neutral`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower_is_better",
            Direction::HigherIsBetter => "higher_is_better",
            Direction::Neutral => "neutral",
        }
    }
}

/// Whether a metric is a distribution over requests (reported with mean/std/percentiles) or one
/// aggregate number for the whole run (stored with the statistic [`Stat::Value`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Per-request (or per-chunk) samples summarized by statistics.
    Distribution,
    /// One number for the run.
    Aggregate,
}

/// One entry of the vocabulary (`GET /api/v1/metrics`).
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct MetricDef {
    /// Stable name, e.g. `ttft`.
    pub name: &'static str,
    /// Human label for pages, e.g. `Time to first token`.
    pub label: &'static str,
    /// Unit every stored value of this metric is in.
    pub unit: Unit,
    /// Which way is better.
    pub direction: Direction,
    /// Distribution or aggregate.
    pub kind: Kind,
    /// The definition, with the tool (and file) that defines it this way.
    pub definition: &'static str,
}

/// The vocabulary. Order is the display order on pages.
pub const VOCABULARY: &[MetricDef] = &[
    MetricDef {
        name: "ttft",
        label: "Time to first token",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, time from sending the request to the first streamed chunk that carries choices, measured at the client (includes queueing, network and prefill). Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "tpot",
        label: "Time per output token (excl. 1st)",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, (e2el − ttft) / (output tokens − 1), only for requests with more than one output token. Source: vLLM `vllm bench serve`; AIPerf and GenAI-Perf call it inter_token_latency.",
    },
    MetricDef {
        name: "itl",
        label: "Inter-token latency",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Gaps between consecutive streamed chunks, pooled over all requests (a chunk may hold several tokens). Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "e2el",
        label: "End-to-end latency",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, time from sending the request to the last content chunk. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "client_queue_time",
        label: "Client-side queue time",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, time a request waited in the benchmark client for a free concurrency slot (only with max_concurrency). Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "e2el_including_client_queue",
        label: "End-to-end latency incl. client queue",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, client queue time plus e2el: the latency a user arriving at the scheduled time sees. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "request_throughput",
        label: "Request throughput",
        unit: Unit::ReqPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Completed requests divided by benchmark duration. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "request_goodput",
        label: "Request goodput",
        unit: Unit::ReqPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Completed requests that meet every SLO at once (value ≤ threshold for each of ttft, tpot, e2el given), divided by benchmark duration. Source: vLLM `vllm bench serve --goodput`; DistServe (Zhong et al., OSDI 2024).",
    },
    MetricDef {
        name: "slo_attainment",
        label: "SLO attainment",
        unit: Unit::Percent,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Share of requests, in percent, that meet every SLO of a profile at once. Source: DistServe (Zhong et al., OSDI 2024).",
    },
    MetricDef {
        name: "output_throughput",
        label: "Output token throughput",
        unit: Unit::TokPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Output tokens of completed requests divided by benchmark duration. Not comparable across tokenizers. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "total_token_throughput",
        label: "Total token throughput",
        unit: Unit::TokPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Input plus output tokens of completed requests divided by benchmark duration; rises with longer inputs alone. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "max_output_tokens_per_s",
        label: "Peak output token throughput",
        unit: Unit::TokPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Largest number of output tokens in any one-second bucket, token times rebuilt from start + ttft + itl. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "max_concurrent_requests",
        label: "Peak concurrent requests",
        unit: Unit::Requests,
        direction: Direction::Neutral,
        kind: Kind::Aggregate,
        definition: "Largest number of requests in flight at once (overlap of [start, start + latency)). Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "completed",
        label: "Completed requests",
        unit: Unit::Requests,
        direction: Direction::Neutral,
        kind: Kind::Aggregate,
        definition: "Requests that finished successfully. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "failed",
        label: "Failed requests",
        unit: Unit::Requests,
        direction: Direction::LowerIsBetter,
        kind: Kind::Aggregate,
        definition: "Requests that ended in an error. Source: vLLM `vllm bench serve` (absent before 2026 versions).",
    },
    MetricDef {
        name: "duration",
        label: "Benchmark duration",
        unit: Unit::S,
        direction: Direction::Neutral,
        kind: Kind::Aggregate,
        definition: "Wall time from the first request sent to the last response received. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "total_input_tokens",
        label: "Total input tokens",
        unit: Unit::Tokens,
        direction: Direction::Neutral,
        kind: Kind::Aggregate,
        definition: "Prompt tokens over completed requests. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "total_output_tokens",
        label: "Total output tokens",
        unit: Unit::Tokens,
        direction: Direction::Neutral,
        kind: Kind::Aggregate,
        definition: "Generated tokens over completed requests. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "spec_decode_acceptance_rate",
        label: "Speculative decoding acceptance rate",
        unit: Unit::Percent,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "Accepted draft tokens divided by proposed draft tokens, from the server's /metrics. Source: vLLM `vllm bench serve`.",
    },
    MetricDef {
        name: "spec_decode_acceptance_length",
        label: "Speculative decoding mean acceptance length",
        unit: Unit::Dimensionless,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "1 + accepted tokens per draft, from the server's /metrics. Source: vLLM `vllm bench serve`.",
    },
    // sglang/console/latency adapters
    MetricDef {
        name: "batch_latency",
        label: "Batch latency (offline)",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "End-to-end time of one batch in `vllm bench latency` (offline, no server): one sample per iteration. Source: vLLM `vllm/benchmarks/latency.py`.",
    },
    // aiperf/genai-perf/guidellm/llmperf adapters
    MetricDef {
        name: "inter_chunk_latency",
        label: "Inter-chunk latency",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Gaps between consecutive responses (chunks) of streamed requests, pooled over all requests. Kept apart from vLLM's `itl` (same idea, but AIPerf counts every response, with its own first-chunk and usage handling). Source: AIPerf `inter_chunk_latency` in profile_export_aiperf.json.",
    },
    MetricDef {
        name: "time_to_first_output_token",
        label: "Time to first output token",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, time from sending the request to the first non-reasoning output (text or tool-call) token; equals ttft for models that do not reason. Source: AIPerf `time_to_first_output_token` (profile_export_aiperf.json); guidellm v0.7+ `time_to_first_output_token_ms` (benchmarks.json).",
    },
    MetricDef {
        name: "time_to_second_token",
        label: "Time to second token",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, time from the first response to the second response. Source: AIPerf and GenAI-Perf `time_to_second_token` (profile_export_aiperf.json, profile_export_genai_perf.json).",
    },
    MetricDef {
        name: "output_token_throughput_per_user",
        label: "Output token throughput per user",
        unit: Unit::TokPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, 1 / (AIPerf inter_token_latency in s) = 1000 / tpot (ms): the decode speed one user sees, TTFT excluded. Source: AIPerf and GenAI-Perf `output_token_throughput_per_user`.",
    },
    MetricDef {
        name: "e2e_output_token_throughput",
        label: "Output tokens per second per request, incl. TTFT",
        unit: Unit::TokPerS,
        direction: Direction::HigherIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, output tokens / end-to-end latency (TTFT included). Source: AIPerf `e2e_output_token_throughput` (profile_export_aiperf.json); LLMPerf `request_output_throughput_token_per_s` (*_summary.json).",
    },
    MetricDef {
        name: "tpot_token_weighted",
        label: "Time per output token (excl. 1st), token-weighted",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request (last token − first token) / (output tokens − 1), i.e. vLLM's tpot, but each request counted once per token after the first, so long outputs weigh more; n is the number of weighted samples. Source: guidellm `inter_token_latency_ms` (benchmarks.json, all versions).",
    },
    MetricDef {
        name: "tpot_incl_ttft_token_weighted",
        label: "Time per output token incl. TTFT, token-weighted",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request (last token − request start) / output tokens, so TTFT is included; statistics weighted by output tokens (n is the number of weighted samples). Source: guidellm v0.4+ `time_per_output_token_ms` (benchmarks.json).",
    },
    MetricDef {
        name: "decode_time_per_output_token_token_weighted",
        label: "Decode time per output token (all tokens), token-weighted",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request (last token − first token) / output tokens (divided by all output tokens, not output tokens − 1); statistics weighted by output tokens. Source: guidellm v0.2–v0.3 `time_per_output_token_ms` (benchmarks.json).",
    },
    MetricDef {
        name: "tpot_incl_ttft",
        label: "Time per output token incl. TTFT",
        unit: Unit::Ms,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Per request, the sum of all gaps including TTFT divided by the output tokens, ≈ end-to-end latency / output tokens; unweighted over requests. Source: LLMPerf `inter_token_latency_s` (*_summary.json, token_benchmark_ray.py; std is the sample std).",
    },
    MetricDef {
        name: "server_num_requests_running",
        label: "Server: running requests",
        unit: Unit::Requests,
        direction: Direction::Neutral,
        kind: Kind::Distribution,
        definition: "Requests in the engine's running batch, sampled at each /metrics scrape over the profiling phase. Source: vLLM gauge `vllm:num_requests_running` via AIPerf server_metrics_export.json.",
    },
    MetricDef {
        name: "server_num_requests_waiting",
        label: "Server: waiting requests",
        unit: Unit::Requests,
        direction: Direction::LowerIsBetter,
        kind: Kind::Distribution,
        definition: "Requests queued in the engine waiting for a batch slot, sampled at each /metrics scrape over the profiling phase. Source: vLLM gauge `vllm:num_requests_waiting` via AIPerf server_metrics_export.json.",
    },
    MetricDef {
        name: "server_preemptions",
        label: "Server: preemptions",
        unit: Unit::Requests,
        direction: Direction::LowerIsBetter,
        kind: Kind::Aggregate,
        definition: "Increase of the engine's preemption counter over the profiling phase (summed over series). Source: vLLM counter `vllm:num_preemptions` via AIPerf server_metrics_export.json.",
    },
    MetricDef {
        name: "server_prefix_cache_hit_rate",
        label: "Server: prefix cache hit rate",
        unit: Unit::Percent,
        direction: Direction::HigherIsBetter,
        kind: Kind::Aggregate,
        definition: "100 · increase of prefix-cache hits / increase of prefix-cache queries (tokens) over the profiling phase. Source: vLLM counters `vllm:prefix_cache_hits` and `vllm:prefix_cache_queries` via AIPerf server_metrics_export.json.",
    },
];

/// Looks a metric up by its stable name.
pub fn lookup(name: &str) -> Option<&'static MetricDef> {
    VOCABULARY.iter().find(|m| m.name == name)
}

/// A summary statistic of a distribution, or [`Stat::Value`] for an aggregate.
///
/// Written as vLLM writes it: `mean`, `std`, `min`, `max`, `p50`, `p99`, `p99.9`. A tool's
/// `median` is stored as `p50`. Percentiles keep the tool's own label (`p99.9`, never `p99.90`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stat {
    /// The arithmetic mean over samples.
    Mean,
    /// The standard deviation over samples (population std for numpy-based tools).
    Std,
    /// The smallest sample.
    Min,
    /// The largest sample.
    Max,
    /// A percentile; the string is the number as vLLM labels it (`50`, `99`, `99.9`).
    Percentile(String),
    /// The one number of an aggregate metric (throughput, counts).
    Value,
}

/// Position of a metric in [`VOCABULARY`] (the display order); names outside it sort last.
pub fn vocabulary_rank(name: &str) -> usize {
    VOCABULARY
        .iter()
        .position(|m| m.name == name)
        .unwrap_or(usize::MAX)
}

/// Display order of statistics: `mean`, percentiles ascending, `std`, `min`, `max`, `value`.
pub fn stat_rank(stat: &Stat) -> (u8, u64) {
    match stat {
        Stat::Mean => (0, 0),
        // Percentiles in thousandths, so p99.9 sorts between p99 and p100.
        Stat::Percentile(_) => (1, (stat.percentile().unwrap_or(0.0) * 1000.0) as u64),
        Stat::Std => (2, 0),
        Stat::Min => (3, 0),
        Stat::Max => (4, 0),
        Stat::Value => (5, 0),
    }
}

/// The display order of a (metric, statistic) pair: [`vocabulary_rank`], then [`stat_rank`].
pub fn display_order(name: &str, stat: &Stat) -> (usize, (u8, u64)) {
    (vocabulary_rank(name), stat_rank(stat))
}

/// A statistic string that is not `mean`, `std`, `min`, `max`, `value` or `pP` with 0 ≤ P ≤ 100.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown statistic `{0}`: expected mean, std, min, max, value, median or pP (e.g. p99, p99.9)"
)]
pub struct StatParseError(pub String);

impl Stat {
    /// The percentile as a number, for percentiles.
    pub fn percentile(&self) -> Option<f64> {
        match self {
            Stat::Percentile(p) => p.parse().ok(),
            _ => None,
        }
    }

    /// The label vLLM uses for percentile `p`: `str(int(p))` when whole, else `str(p)`.
    pub fn from_percentile(p: f64) -> Stat {
        if p.fract() == 0.0 {
            Stat::Percentile(format!("{}", p as i64))
        } else {
            Stat::Percentile(format!("{p}"))
        }
    }
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stat::Mean => f.write_str("mean"),
            Stat::Std => f.write_str("std"),
            Stat::Min => f.write_str("min"),
            Stat::Max => f.write_str("max"),
            Stat::Value => f.write_str("value"),
            Stat::Percentile(p) => write!(f, "p{p}"),
        }
    }
}

impl FromStr for Stat {
    type Err = StatParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mean" | "avg" => Ok(Stat::Mean),
            "std" => Ok(Stat::Std),
            "min" => Ok(Stat::Min),
            "max" => Ok(Stat::Max),
            "value" => Ok(Stat::Value),
            "median" => Ok(Stat::Percentile("50".into())),
            _ => {
                let p = s
                    .strip_prefix('p')
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| StatParseError(s.to_string()))?;
                match p.parse::<f64>() {
                    Ok(v) if (0.0..=100.0).contains(&v) => Ok(Stat::from_percentile(v)),
                    _ => Err(StatParseError(s.to_string())),
                }
            }
        }
    }
}

impl Serialize for Stat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Stat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One stored number: `{name, stat, unit, value, n}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MetricValue {
    /// A vocabulary name (see [`VOCABULARY`]).
    pub name: String,
    /// Which statistic of the metric this is.
    pub stat: Stat,
    /// The unit `value` is in; always the vocabulary's unit for the metric.
    pub unit: Unit,
    /// The value, exactly as the tool wrote it after unit conversion (finite).
    pub value: f64,
    /// Number of samples behind the statistic (requests, or chunks for `itl`), when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option"
    )]
    pub n: Option<u64>,
    /// For SLO metrics (`request_goodput`, `slo_attainment`): the SLO profile the value was
    /// computed for (`interactive`, or `tool` for the tool's own thresholds). Part of the
    /// series identity: goodput under different thresholds is a different quantity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_profile: Option<String>,
    /// A confidence interval of the statistic, where benchtrail computed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<Interval>,
}

impl MetricValue {
    /// A value of vocabulary metric `name` in its vocabulary unit, with no SLO profile and
    /// no interval.
    ///
    /// # Panics
    /// If `name` is not in [`VOCABULARY`]: adapters only produce vocabulary names.
    pub fn new(name: &str, stat: Stat, value: f64, n: Option<u64>) -> MetricValue {
        let def = lookup(name).unwrap_or_else(|| panic!("`{name}` is not in the vocabulary"));
        MetricValue {
            name: name.to_string(),
            stat,
            unit: def.unit,
            value,
            n,
            slo_profile: None,
            ci: None,
        }
    }
}

/// A confidence interval `[low, high]` at `level`, in the unit of its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Confidence level, e.g. 0.95.
    pub level: f64,
    /// How it was computed, e.g. `bootstrap-percentile, 2000 resamples, seed 0x62656e6368`.
    pub method: String,
}

impl utoipa::PartialSchema for Stat {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^(mean|std|min|max|value|p[0-9]+(\.[0-9]+)?)$"))
            .description(Some(
                "A statistic: `mean`, `std`, `min`, `max`, `value` (an aggregate's one number) or a \
                 percentile `pP` written as vLLM writes it (`p50`, `p99`, `p99.9`). `median` is accepted \
                 on input and stored as `p50`.",
            ))
            .examples(["p99"])
            .into()
    }
}

impl utoipa::ToSchema for Stat {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_labels_follow_vllm() {
        assert_eq!("median".parse::<Stat>().unwrap().to_string(), "p50");
        assert_eq!("p99.9".parse::<Stat>().unwrap().to_string(), "p99.9");
        assert_eq!("p99.0".parse::<Stat>().unwrap().to_string(), "p99");
        assert_eq!(Stat::from_percentile(99.9).to_string(), "p99.9");
        assert!("p101".parse::<Stat>().is_err());
        assert!("p".parse::<Stat>().is_err());
        assert!("mode".parse::<Stat>().is_err());
    }

    #[test]
    fn stats_display_in_meaningful_order() {
        let mut stats: Vec<Stat> = [
            "value", "max", "p99.9", "std", "p50", "min", "p99", "mean", "p9",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        stats.sort_by_key(stat_rank);
        let sorted: Vec<String> = stats.iter().map(Stat::to_string).collect();
        assert_eq!(
            sorted,
            ["mean", "p9", "p50", "p99", "p99.9", "std", "min", "max", "value"]
        );
    }

    #[test]
    fn vocabulary_names_are_unique() {
        let mut names: Vec<_> = VOCABULARY.iter().map(|m| m.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), VOCABULARY.len());
    }
}
