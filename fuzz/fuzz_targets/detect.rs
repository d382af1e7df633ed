//! One file, its format detected from its content.
//!
//! With `BENCHTRAIL_FUZZ_LIST_FORMATS=1` it prints the name of every format, one a line, and
//! exits: `.ci/fuzz` checks that each has a `format-<name>` target.
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: {
        if std::env::var_os("BENCHTRAIL_FUZZ_LIST_FORMATS").is_some() {
            print!("{}", benchtrail_fuzz::format_names());
            std::process::exit(0);
        }
    },
    |data: &[u8]| benchtrail_fuzz::detect(data)
);
