//! Format `vllm-bench-throughput` (named, not detected).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| benchtrail_fuzz::one_file("vllm-bench-throughput", data));
