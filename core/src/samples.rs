//! Per-request samples: what a tool measured for each request, kept so that summaries,
//! goodput under any SLO profile and confidence intervals can be computed by benchtrail itself.
//!
//! Columnar: one vector per quantity, one entry per request in the order the tool listed them.
//! Units are the vocabulary's (ms for latencies, tokens for lengths), converted at the edge by
//! the adapter. A column a tool does not report is `None`; a value missing for one request is
//! `None` inside the column.

use serde::{Deserialize, Serialize};

/// Per-request measurements of one result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestSamples {
    /// Whether each request succeeded; its length is the number of requests.
    pub success: Vec<bool>,
    /// Time to first token per request, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Vec<Option<f64>>>,
    /// End-to-end latency per request, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2el_ms: Option<Vec<Option<f64>>>,
    /// Time per output token (excluding the first) per request, ms, as the tool computed it;
    /// `None` for requests with at most one output token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Vec<Option<f64>>>,
    /// Gaps between consecutive streamed chunks of each request, ms (vLLM's and SGLang's `itl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<Vec<Vec<f64>>>,
    /// Prompt tokens per request.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option_vec_option"
    )]
    pub input_tokens: Option<Vec<Option<u64>>>,
    /// Output tokens per request.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::serde_int::option_vec_option"
    )]
    pub output_tokens: Option<Vec<Option<u64>>>,
    /// Benchmark duration in s: the denominator of request rates such as goodput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
}

impl RequestSamples {
    /// Number of requests.
    pub fn len(&self) -> usize {
        self.success.len()
    }

    /// True when there is no request.
    pub fn is_empty(&self) -> bool {
        self.success.is_empty()
    }
}
