//! Sweeps: the results of one series key and workload at several offered loads of one shape.
//!
//! # Grouping
//! Results share a sweep when they have the same series key
//! ([`crate::config::Configuration::series_key`]) and the same cell apart from its load
//! ([`sweep_cell`]). Left out of the sweep's cell, because they change with the load point of
//! one sweep: `max_concurrency` and `request_rate` (the load itself), `load_level` (its label:
//! `low`, `typical`, `near-capacity`) and `num_prompts` (sweeps scale the request count with the
//! load: the generated AIPerf runs send 20, 60 and 160 requests at concurrency 1, 4 and 16).
//! Kept: `scenario`, `prefix_mode`, `input_len`, `output_len`, `dataset` (the work per request)
//! and `burstiness` (how arrivals are spread at a rate: Poisson and evenly spaced are different
//! sweeps).
//!
//! Repeats at one load share a [`SweepPoint`]. A group whose results are on both shapes is
//! refused as a whole ([`SweepRefusal::MixedShapes`]), never split silently; a result on neither
//! shape is refused on its own ([`SweepRefusal::Load`]).

use super::shape::{classify, LoadRefusal, SweepShape};
use crate::cell::WorkloadCell;
use crate::result::BenchResult;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What the results of one sweep share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SweepKey {
    /// The series key (configuration fields that identify a series).
    #[schema(value_type = Object)]
    pub series_key: Map<String, Value>,
    /// The key ([`WorkloadCell::key`]) of the cell without its load fields ([`sweep_cell`]),
    /// e.g. `input_len=512;output_len=128`.
    pub cell: String,
}

/// One offered load of a sweep and the results measured there (repeats: several).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint<'a> {
    /// Offered load in the sweep shape's unit ([`SweepShape::load_unit`]).
    pub load: f64,
    /// The results at this load, in input order; at least one.
    pub results: Vec<&'a BenchResult>,
}

/// Results of one [`SweepKey`] along one shape, by ascending load.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep<'a> {
    /// What the results share.
    pub key: SweepKey,
    /// The load varied.
    pub shape: SweepShape,
    /// The measured loads, strictly ascending.
    pub points: Vec<SweepPoint<'a>>,
}

/// Why results were left out of every sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum SweepRefusal {
    /// One result's load is on neither shape.
    Load {
        /// Index of the result in the input.
        result: usize,
        /// Why.
        refusal: LoadRefusal,
    },
    /// The group holds results at fixed concurrency and at fixed request rate: the two press
    /// the server differently, so they make no single sweep.
    MixedShapes {
        /// The concurrencies measured (concurrent requests), ascending.
        concurrency: Vec<f64>,
        /// The request rates measured (req/s), ascending.
        request_rate: Vec<f64>,
    },
}

impl SweepRefusal {
    /// One sentence for people.
    pub fn explanation(&self) -> &'static str {
        match self {
            SweepRefusal::Load { refusal, .. } => refusal.explanation(),
            SweepRefusal::MixedShapes { .. } => "The results mix fixed-concurrency and fixed-request-rate runs: under fixed concurrency a slow server lowers its own load, under a fixed rate requests queue, so one capacity cannot be read across both.",
        }
    }
}

/// A refusal and the sweep key it concerns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Refused {
    /// The group.
    pub key: SweepKey,
    /// Why.
    pub reason: SweepRefusal,
}

/// The sweeps of a set of results, and what was refused.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepSet<'a> {
    /// By series key JSON, then sweep cell key.
    pub sweeps: Vec<Sweep<'a>>,
    /// Refused results and groups, in the same order.
    pub refused: Vec<Refused>,
}

/// `cell` without the fields that vary along a sweep (see the module documentation).
pub fn sweep_cell(cell: &WorkloadCell) -> WorkloadCell {
    let mut c = cell.clone();
    c.load.max_concurrency = None;
    c.load.request_rate = None;
    c.load_level = None;
    c.num_prompts = None;
    c
}

/// The sweeps of `results`; `key_fields` are the project's `--metadata` keys that are part of
/// the series key.
pub fn build_sweeps<'a>(results: &'a [BenchResult], key_fields: &[String]) -> SweepSet<'a> {
    type Group<'a> = (SweepKey, Vec<(usize, &'a BenchResult)>);
    let mut groups: BTreeMap<(String, String), Group<'a>> = BTreeMap::new();
    for (i, r) in results.iter().enumerate() {
        let series_key = r.configuration.series_key(key_fields);
        let cell = sweep_cell(&r.cell).key();
        let id = (Value::Object(series_key.clone()).to_string(), cell.clone());
        groups
            .entry(id)
            .or_insert_with(|| (SweepKey { series_key, cell }, Vec::new()))
            .1
            .push((i, r));
    }
    let mut set = SweepSet::default();
    for (_, (key, members)) in groups {
        let mut by_shape: BTreeMap<bool, Vec<(f64, &'a BenchResult)>> = BTreeMap::new();
        for (i, r) in members {
            match classify(&r.cell.load) {
                Ok(o) => by_shape
                    .entry(o.shape == SweepShape::Concurrency)
                    .or_default()
                    .push((o.load, r)),
                Err(refusal) => set.refused.push(Refused {
                    key: key.clone(),
                    reason: SweepRefusal::Load { result: i, refusal },
                }),
            }
        }
        let loads = |v: Option<&Vec<(f64, &BenchResult)>>| -> Vec<f64> {
            let mut l: Vec<f64> = v.into_iter().flatten().map(|(x, _)| *x).collect();
            l.sort_by(f64::total_cmp);
            l.dedup();
            l
        };
        match (by_shape.get(&true), by_shape.get(&false)) {
            (Some(_), Some(_)) => set.refused.push(Refused {
                key,
                reason: SweepRefusal::MixedShapes {
                    concurrency: loads(by_shape.get(&true)),
                    request_rate: loads(by_shape.get(&false)),
                },
            }),
            (Some(members), None) | (None, Some(members)) => {
                let shape = if by_shape.contains_key(&true) {
                    SweepShape::Concurrency
                } else {
                    SweepShape::RequestRate
                };
                set.sweeps.push(Sweep {
                    key,
                    shape,
                    points: points_of(members),
                });
            }
            (None, None) => {}
        }
    }
    set
}

/// Members grouped by equal load, ascending.
fn points_of<'a>(members: &[(f64, &'a BenchResult)]) -> Vec<SweepPoint<'a>> {
    let mut sorted = members.to_vec();
    // Stable: repeats keep their input order.
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut points: Vec<SweepPoint<'a>> = Vec::new();
    for (load, r) in sorted {
        match points.last_mut() {
            Some(p) if p.load == load => p.results.push(r),
            _ => points.push(SweepPoint {
                load,
                results: vec![r],
            }),
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::RequestRate;

    fn result(c: Option<u64>, r: Option<RequestRate>, prompts: u64) -> BenchResult {
        let mut b = BenchResult::default();
        b.cell.load.max_concurrency = c;
        b.cell.load.request_rate = r;
        b.cell.num_prompts = Some(prompts);
        b.cell.input_len = Some(512);
        b
    }

    #[test]
    fn loads_group_across_request_counts_and_repeats_share_a_point() {
        let rs = vec![
            result(Some(16), Some(RequestRate::Infinite), 160),
            result(Some(1), Some(RequestRate::Infinite), 20),
            result(Some(4), Some(RequestRate::Infinite), 60),
            result(Some(4), Some(RequestRate::Infinite), 60),
        ];
        let set = build_sweeps(&rs, &[]);
        assert_eq!(set.refused, vec![]);
        assert_eq!(set.sweeps.len(), 1);
        let s = &set.sweeps[0];
        assert_eq!(s.shape, SweepShape::Concurrency);
        assert_eq!(s.key.cell, "input_len=512");
        let loads: Vec<(f64, usize)> = s.points.iter().map(|p| (p.load, p.results.len())).collect();
        assert_eq!(loads, vec![(1.0, 1), (4.0, 2), (16.0, 1)]);
    }

    #[test]
    fn mixed_shapes_are_refused_with_their_loads() {
        let rs = vec![
            result(Some(4), Some(RequestRate::Infinite), 60),
            result(None, Some(RequestRate::PerSecond(2.0)), 60),
            result(None, Some(RequestRate::Infinite), 60),
        ];
        let set = build_sweeps(&rs, &[]);
        assert_eq!(set.sweeps, vec![]);
        let reasons: Vec<&SweepRefusal> = set.refused.iter().map(|r| &r.reason).collect();
        assert_eq!(
            reasons,
            vec![
                &SweepRefusal::Load {
                    result: 2,
                    refusal: LoadRefusal::Unbounded
                },
                &SweepRefusal::MixedShapes {
                    concurrency: vec![4.0],
                    request_rate: vec![2.0]
                }
            ]
        );
        assert_eq!(
            serde_json::to_value(reasons[1]).unwrap(),
            serde_json::json!({"code": "mixed_shapes", "concurrency": [4.0], "request_rate": [2.0]})
        );
    }
}
