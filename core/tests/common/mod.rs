//! Helpers shared by the adapter tests: reading a repository file and looking a metric up.
#![allow(dead_code)]

use benchtrail_core::{BenchResult, Stat};

/// The text of a file of the repository (`testdata/...`, `examples/...`).
pub fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Value and sample count of statistic `stat` of metric `name` in `r`; panics when absent.
pub fn value(r: &BenchResult, name: &str, stat: &str) -> (f64, Option<u64>) {
    let stat: Stat = stat.parse().unwrap();
    let m = r
        .metrics
        .iter()
        .find(|m| m.name == name && m.stat == stat)
        .unwrap_or_else(|| panic!("no {name} {stat}"));
    (m.value, m.n)
}
