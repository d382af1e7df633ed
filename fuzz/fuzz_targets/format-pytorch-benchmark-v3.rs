//! Format `pytorch-benchmark-v3` (named, not detected).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| benchtrail_fuzz::one_file("pytorch-benchmark-v3", data));
