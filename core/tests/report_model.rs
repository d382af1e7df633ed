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
