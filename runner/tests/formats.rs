//! `benchtrail formats` lists every format the adapters read, and the README documents each
//! of them with the command line that produces it (the README is checked, so it cannot drift).

use crate::common;

use common::*;

#[test]
fn formats_are_listed_and_documented_in_the_readme() {
    let dir = TempDir::new("formats");
    let out = benchtrail(dir.path(), &["formats"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout(&out);
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    for format in benchtrail_core::adapters::FORMATS {
        assert!(
            listing.contains(&format!("{}\n    {}\n", format.name, format.description)),
            "{}",
            format.name
        );
        assert!(
            readme.contains(&format!("| `{}` |", format.name)),
            "README lacks format `{}`",
            format.name
        );
        assert!(
            readme.contains(&format!("`{}`", format.produced_by)),
            "README lacks the command for `{}`: {}",
            format.name,
            format.produced_by
        );
    }
}
