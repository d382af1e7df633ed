//! One measurement counts once: files of one upload with identical content, or whose results
//! are the same measurement (AIPerf's `phases/profiling/profile_export_aiperf.json` beside the
//! run folder's `profile_export_aiperf.json`), give one set of results (real files:
//! testdata/README.md).

use crate::common;

use benchtrail_core::upload::{DuplicateFile, UploadDocument};
use common::read;
use serde_json::json;

const RUN: &str = "testdata/aiperf/baseline_completions_c1_isl512_osl128";

fn doc(files: &[(&str, &str)]) -> UploadDocument {
    let files: Vec<_> = files
        .iter()
        .map(|(name, path)| json!({"name": name, "content": read(path)}))
        .collect();
    serde_json::from_value(json!({"run": {"commit": {"sha": "abcdef1"}}, "files": files})).unwrap()
}

fn summary() -> String {
    format!("{RUN}/profile_export_aiperf.json")
}

#[test]
fn the_same_file_twice_counts_once_under_its_first_name() {
    let alone = doc(&[("run/profile_export_aiperf.json", &summary())])
        .read()
        .unwrap();
    let twice = doc(&[
        ("run/profile_export_aiperf.json", &summary()),
        ("copy/profile_export_aiperf.json", &summary()),
    ])
    .read()
    .unwrap();
    assert_eq!(twice.results.len(), 1);
    assert_eq!(twice.file_formats, ["aiperf", "aiperf"]);
    assert_eq!(
        twice.duplicates,
        [DuplicateFile {
            index: 1,
            same_as: 0,
            identical: true
        }]
    );
    let r = &twice.results[0];
    assert_eq!(r.source.as_ref().unwrap().file, 0);
    assert_eq!(r.metrics, alone.results[0].metrics);
    let w = r
        .warnings
        .iter()
        .find(|w| w.code == "duplicate_file")
        .unwrap();
    assert_eq!(
        w.message,
        "`/files/1` (\"copy/profile_export_aiperf.json\") has the same content as `/files/0` \
         (\"run/profile_export_aiperf.json\"): one measurement, counted once, as \
         \"run/profile_export_aiperf.json\"."
    );
}

#[test]
fn aiperf_profiling_phase_copy_counts_once() {
    // The generated AIPerf folders hold no byte-identical copy of the summary: the run
    // folder's file adds `warmup_metrics` to the profiling phase's export. Same results.
    let profiling = format!("{RUN}/phases/profiling/profile_export_aiperf.json");
    assert_ne!(read(&summary()), read(&profiling));
    let both = doc(&[
        ("run/profile_export_aiperf.json", &summary()),
        (
            "run/profile_export.jsonl",
            &format!("{RUN}/profile_export.jsonl"),
        ),
        (
            "run/phases/profiling/profile_export_aiperf.json",
            &profiling,
        ),
    ])
    .read()
    .unwrap();
    assert_eq!(both.results.len(), 1);
    assert!(
        both.results[0].samples.is_some(),
        "the run folder's result, with its samples"
    );
    assert_eq!(
        both.duplicates,
        [DuplicateFile {
            index: 2,
            same_as: 0,
            identical: false
        }]
    );
    assert!(both.results[0]
        .warnings
        .iter()
        .any(|w| w.code == "duplicate_file" && w.message.contains("has the same results as")));
    // The other way round (sorted paths put `phases/` first): the run folder's result, with
    // its samples, is still the one kept.
    let reversed = doc(&[
        (
            "run/phases/profiling/profile_export_aiperf.json",
            &profiling,
        ),
        ("run/profile_export_aiperf.json", &summary()),
        (
            "run/profile_export.jsonl",
            &format!("{RUN}/profile_export.jsonl"),
        ),
    ])
    .read()
    .unwrap();
    assert_eq!(reversed.results.len(), 1);
    assert!(reversed.results[0].samples.is_some());
    assert_eq!(reversed.results[0].source.as_ref().unwrap().file, 1);
    assert_eq!(
        reversed.duplicates,
        [DuplicateFile {
            index: 0,
            same_as: 1,
            identical: false
        }]
    );
    // Either one alone is one result.
    for path in [summary(), profiling] {
        assert_eq!(doc(&[("p.json", &path)]).read().unwrap().results.len(), 1);
    }
}

#[test]
fn a_per_request_file_twice_is_paired_once() {
    let records = format!("{RUN}/profile_export.jsonl");
    let once = doc(&[
        ("run/profile_export_aiperf.json", &summary()),
        ("run/profile_export.jsonl", &records),
    ])
    .read()
    .unwrap();
    let twice = doc(&[
        ("run/profile_export_aiperf.json", &summary()),
        ("run/profile_export.jsonl", &records),
        ("run/copy_of_profile_export.jsonl", &records),
    ])
    .read()
    .unwrap();
    assert_eq!(twice.results.len(), 1);
    assert_eq!(twice.results[0].samples, once.results[0].samples);
    assert_eq!(twice.results[0].metrics, once.results[0].metrics);
    assert!(twice.results[0]
        .warnings
        .iter()
        .any(|w| w.code == "duplicate_file" && w.message.starts_with("`/files/2`")));
}

#[test]
fn different_measurements_are_all_kept() {
    let both = doc(&[
        ("a/profile_export_aiperf.json", &summary()),
        (
            "b/profile_export_aiperf.json",
            "testdata/aiperf/baseline_completions_c4_isl512_osl128/profile_export_aiperf.json",
        ),
    ])
    .read()
    .unwrap();
    assert_eq!(both.results.len(), 2);
    assert!(both.duplicates.is_empty());
    assert_eq!(both.results[1].source.as_ref().unwrap().file, 1);
}
