//! Properties of the capacity logic (`benchtrail_core::capacity`): attainment never rises when
//! requests get slower or fail; a capacity stays inside the measured loads and is
//! `at_least`/`below_lowest` exactly at the ends.

use benchtrail_core::capacity::{
    capacity, point_attainment, AttainmentSource, Capacity, LoadAttainment, SweepPoint,
};
use benchtrail_core::samples::RequestSamples;
use benchtrail_core::slo::SloProfile;
use benchtrail_core::BenchResult;
use proptest::prelude::*;

/// One request: success, ttft, tpot, e2el (ms).
type Request = (bool, f64, f64, f64);

fn result_of(requests: &[Request]) -> BenchResult {
    // No output lengths: slo::evaluate then judges the stored tpot column itself, so a slower
    // tpot is a slower tpot (with lengths it would be derived from e2el and ttft).
    BenchResult {
        samples: Some(RequestSamples {
            success: requests.iter().map(|r| r.0).collect(),
            ttft_ms: Some(requests.iter().map(|r| Some(r.1)).collect()),
            tpot_ms: Some(requests.iter().map(|r| Some(r.2)).collect()),
            e2el_ms: Some(requests.iter().map(|r| Some(r.3)).collect()),
            duration_s: Some(10.0),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn attainment(requests: &[Request], profile: &SloProfile) -> LoadAttainment {
    let r = result_of(requests);
    let p = SweepPoint {
        load: 1.0,
        results: vec![&r],
    };
    point_attainment(&p, profile).expect("samples with every column")
}

fn profile() -> impl Strategy<Value = SloProfile> {
    (
        prop::option::of(1.0..300.0f64),
        prop::option::of(1.0..30.0f64),
        prop::option::of(100.0..3000.0f64),
    )
        .prop_filter("at least one threshold", |(a, b, c)| {
            a.is_some() || b.is_some() || c.is_some()
        })
        .prop_map(|(ttft_ms, tpot_ms, e2el_ms)| SloProfile {
            name: "p".into(),
            ttft_ms,
            tpot_ms,
            e2el_ms,
        })
}

/// Requests and, for each, a slowdown (ttft, tpot, e2el deltas ≥ 0) and whether it fails.
fn requests_and_slowdowns() -> impl Strategy<Value = Vec<(Request, (f64, f64, f64, bool))>> {
    prop::collection::vec(
        (
            (
                prop::bool::weighted(0.9),
                0.0..300.0f64,
                0.0..30.0f64,
                0.0..3000.0f64,
            ),
            (
                prop_oneof![Just(0.0), 0.0..200.0f64],
                prop_oneof![Just(0.0), 0.0..20.0f64],
                prop_oneof![Just(0.0), 0.0..2000.0f64],
                prop::bool::weighted(0.1),
            ),
        ),
        1..40,
    )
}

/// Ascending distinct loads with an attainment and a throughput each.
fn curve() -> impl Strategy<Value = Vec<LoadAttainment>> {
    prop::collection::vec((0.1..100.0f64, 0.0..=1.0f64, 0.0..50.0f64), 1..8).prop_map(|mut v| {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v.dedup_by(|a, b| a.0 == b.0);
        v.into_iter()
            .map(|(load, attainment, throughput_rps)| LoadAttainment {
                load,
                attempted: 100,
                met: (attainment * 100.0).round() as u64,
                failed: 0,
                attainment,
                goodput_rps: 0.0,
                throughput_rps,
                source: AttainmentSource::Samples,
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn attainment_never_rises_when_requests_get_slower(
        requests in requests_and_slowdowns(),
        profile in profile(),
    ) {
        let before: Vec<Request> = requests.iter().map(|(r, _)| *r).collect();
        let after: Vec<Request> = requests
            .iter()
            .map(|((ok, ttft, tpot, e2el), (dt, dp, de, fails))| {
                (*ok && !fails, ttft + dt, tpot + dp, e2el + de)
            })
            .collect();
        let (b, a) = (attainment(&before, &profile), attainment(&after, &profile));
        prop_assert!(a.met <= b.met, "met {} → {}", b.met, a.met);
        prop_assert!(a.attainment <= b.attainment);
        prop_assert_eq!(a.attempted, b.attempted);
        prop_assert!(a.failed >= b.failed);
    }

    #[test]
    fn capacity_stays_inside_the_measured_range(points in curve(), target in 0.5..=1.0f64) {
        let c = capacity(&points, target).unwrap();
        let (lowest, highest) = (points[0].load, points[points.len() - 1].load);
        prop_assert!(lowest <= c.load() && c.load() <= highest, "{c:?}");
        if let Capacity::Within { load, throughput_rps, between, .. } = c {
            let i = points.iter().position(|p| p.load == between[0]).unwrap();
            let (lo, hi) = (&points[i], &points[i + 1]);
            prop_assert_eq!(hi.load, between[1]);
            prop_assert!(lo.attainment >= target && hi.attainment < target);
            prop_assert!(points[..i].iter().all(|p| p.attainment >= target));
            prop_assert!(lo.load <= load && load <= hi.load);
            let (t0, t1) = (lo.throughput_rps.min(hi.throughput_rps), lo.throughput_rps.max(hi.throughput_rps));
            prop_assert!(t0 <= throughput_rps && throughput_rps <= t1);
        }
    }

    #[test]
    fn at_least_and_below_lowest_exactly_at_the_ends(points in curve(), target in 0.5..=1.0f64) {
        let c = capacity(&points, target).unwrap();
        let (first, last) = (&points[0], &points[points.len() - 1]);
        let all_meet = points.iter().all(|p| p.attainment >= target);
        prop_assert_eq!(
            matches!(c, Capacity::AtLeast { .. }),
            all_meet
        );
        prop_assert_eq!(
            matches!(c, Capacity::BelowLowest { .. }),
            first.attainment < target
        );
        match c {
            Capacity::AtLeast { load, throughput_rps } => {
                prop_assert_eq!((load, throughput_rps), (last.load, last.throughput_rps));
            }
            Capacity::BelowLowest { load, throughput_rps } => {
                prop_assert_eq!((load, throughput_rps), (first.load, first.throughput_rps));
            }
            Capacity::Within { .. } => {}
        }
    }
}
