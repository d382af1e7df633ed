//! The typed analysis model survives its stored form: every engine report serializes to JSON
//! and reads back equal (the server stores `RunAnalysis` this way and reads it for every
//! verdict).

use benchtrail_core::regression::synthetic::{fp8_kv_cache, Fp8Candidate};
use benchtrail_core::regression::{analyze, GroupReport, Settings};

#[test]
fn engine_reports_round_trip_through_json() {
    for candidate in [Fp8Candidate::Fp8, Fp8Candidate::BaselineLike] {
        for group in fp8_kv_cache(0x0066_7038_6b76, candidate) {
            let report = analyze(&group, &Settings::default());
            assert!(!report.series.is_empty());
            let json = serde_json::to_string(&report).unwrap();
            let back: GroupReport = serde_json::from_str(&json)
                .unwrap_or_else(|e| panic!("{e}: {}", &json[..json.len().min(3000)]));
            assert_eq!(back, report);
        }
    }
}

/// The verdict read from the stored basis ([`VerdictBasis`]) equals the verdict of the whole
/// analysis, whether the basis was stored (`VerdictBasis::of`) or decoded from the whole
/// analysis' JSON (rows stored before the basis existed), and the basis is a small part of it.
#[test]
fn the_verdict_of_the_basis_is_the_verdict_of_the_analysis() {
    use crate::common::{cell_analysis, main_analysis};
    use benchtrail_core::report::verdict::verdict_from_basis;
    use benchtrail_core::report::verdict_basis::VerdictBasis;
    use benchtrail_core::report::{verdict_of, VerdictLevel};
    use benchtrail_core::settings::DetectionSettings;
    let det = DetectionSettings::default();
    for (candidate, level, reasons) in [
        (Fp8Candidate::Fp8, VerdictLevel::Warn, 1),
        (Fp8Candidate::BaselineLike, VerdictLevel::Warn, 1),
    ] {
        let mut inputs = fp8_kv_cache(0x0066_7038_6b76, candidate);
        // A cell with two baseline commits: too few to test, a reason the verdict quotes.
        let mut short = inputs[0].clone();
        for s in &mut short.series {
            let keep = s.history.len() - 2;
            s.history.drain(..keep);
        }
        inputs.push(short);
        let groups = inputs
            .iter()
            .enumerate()
            .map(|(i, group)| {
                let cell = format!("max_concurrency={}", 1 << i);
                cell_analysis(&cell, analyze(group, &Settings::default()))
            })
            .collect();
        let analysis = main_analysis(groups);
        let whole = verdict_of(
            analysis.run_id,
            &analysis.commit,
            Some(&analysis),
            &[],
            &det,
        );
        assert_eq!(
            (whole.verdict, whole.reasons.len()),
            (level, reasons),
            "{whole:?}"
        );
        assert!(
            whole.reasons[0].message.starts_with("insufficient data: "),
            "{:?}",
            whole.reasons
        );
        let stored = VerdictBasis::of(&analysis);
        let stored_json = serde_json::to_vec(&stored).unwrap();
        let back: VerdictBasis = serde_json::from_slice(&stored_json).unwrap();
        assert_eq!(back, stored);
        let whole_json = serde_json::to_vec(&analysis).unwrap();
        let decoded: VerdictBasis = serde_json::from_slice(&whole_json).unwrap();
        for basis in [&back, &decoded] {
            let v = verdict_from_basis(analysis.run_id, &analysis.commit, Some(basis), &[], &det);
            assert_eq!(v, whole);
        }
        assert!(
            stored_json.len() * 5 < whole_json.len(),
            "basis {} B of {} B",
            stored_json.len(),
            whole_json.len()
        );
    }
}
