//! Progress on stderr for long work: reading many files is announced before it starts.

use crate::common;

use common::*;

#[test]
fn a_folder_of_many_files_and_many_named_files_are_announced() {
    let dir = TempDir::new("progress");
    let art = dir.path().join("art");
    std::fs::create_dir_all(art.join("logs")).unwrap();
    std::fs::copy(fixture(FIXTURE), art.join("result.json")).unwrap();
    for i in 0..11 {
        std::fs::write(art.join("logs").join(format!("{i:02}.log")), "log\n").unwrap();
    }
    let out = benchtrail(
        dir.path(),
        &["upload", "--dry-run", "--commit", "abcdef1", "art"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.lines().next(),
        Some("reading 12 files in `art`..."),
        "{err}"
    );

    // Fewer than 10: no announcement.
    let out = benchtrail(
        dir.path(),
        &[
            "upload",
            "--dry-run",
            "--commit",
            "abcdef1",
            "art/result.json",
        ],
        &[],
    );
    assert!(!stderr(&out).contains("reading"), "{}", stderr(&out));

    // Ten named files (copies of one result: the dry run may refuse them as duplicates of one
    // cell, after the announcement).
    let named: Vec<String> = (0..10)
        .map(|i| {
            let p = dir.path().join(format!("r{i}.json"));
            std::fs::copy(fixture(FIXTURE), &p).unwrap();
            p.display().to_string()
        })
        .collect();
    let mut args = vec!["upload", "--dry-run", "--commit", "abcdef1"];
    args.extend(named.iter().map(String::as_str));
    let out = benchtrail(dir.path(), &args, &[]);
    assert_eq!(
        stderr(&out).lines().next(),
        Some("reading 10 files..."),
        "{}",
        stderr(&out)
    );
}
