//! Rebuild when a migration is added: `sqlx::migrate!` embeds the folder's files but only
//! tracks the ones that existed at the last build.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
