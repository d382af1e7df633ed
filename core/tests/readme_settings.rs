//! The settings document README.md shows under "Regression detection" is valid and is exactly
//! what a new project starts with, so the README cannot drift from the defaults.

use benchtrail_core::settings::ProjectSettings;

#[test]
fn the_readme_settings_example_is_the_default_settings() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = &readme[readme
        .find("## Regression detection")
        .expect("a Regression detection section")..];
    let start = section.find("```json\n").expect("a json block") + "```json\n".len();
    let block = &section[start..start + section[start..].find("```").expect("closed block")];
    let doc: serde_json::Value = serde_json::from_str(block).expect("valid JSON");
    let settings = ProjectSettings::from_json(&doc).expect("valid settings");
    assert_eq!(settings, ProjectSettings::default());
}
