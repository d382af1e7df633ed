//! Format `sglang-bench-serving` (named, not detected).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| benchtrail_fuzz::one_file("sglang-bench-serving", data));
