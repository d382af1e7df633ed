//! A summary and its per-request file read as one upload (see `benchtrail_fuzz::pair` for how
//! the input is split).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| benchtrail_fuzz::pair(data));
