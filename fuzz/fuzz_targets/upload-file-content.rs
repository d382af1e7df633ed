//! An upload's file text read in place, against serde_json's own reading of the same JSON
//! (see `benchtrail_fuzz::file_content`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| benchtrail_fuzz::file_content(data));
