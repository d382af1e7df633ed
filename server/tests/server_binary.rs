//! The `benchtrail-server` binary: where the admin token may come from (the environment or a
//! file, at least 32 characters, never the command line), and the SQLite files it creates
//! (folder 0700, database, `-wal` and `-shm` 0600).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

const BINARY: &str = env!("CARGO_BIN_EXE_benchtrail-server");

/// A 32-character admin token: the shortest accepted.
const TOKEN_32: &str = "bt_0123456789abcdef0123456789abc";

/// The binary with a clean environment for the settings it reads, a SQLite database under
/// `dir/data/` and an ephemeral loopback port.
fn server(dir: &Path) -> Command {
    let mut command = Command::new(BINARY);
    for var in [
        "BENCHTRAIL_ADMIN_TOKEN",
        "BENCHTRAIL_ADMIN_TOKEN_FILE",
        "BENCHTRAIL_PUBLIC_URL",
        "BENCHTRAIL_AUTH_FAILURES_PER_MINUTE",
    ] {
        command.env_remove(var);
    }
    command
        .env(
            "DATABASE_URL",
            format!("sqlite://{}/data/bt.db", dir.display()),
        )
        .env("BENCHTRAIL_BIND", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    command
}

/// Runs a start that must fail: its output. One still running after 20 s has started
/// serving: it is stopped, and that is a failure.
fn refused(command: &mut Command) -> Output {
    let mut child = command
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("the server started: {}", stderr(&out));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        !out.status.success(),
        "the server exited 0: {}",
        stderr(&out)
    );
    out
}

/// A server that started: the child and its base URL, read from its `listening on` line.
fn started(command: &mut Command) -> (Child, String) {
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        if let Some(at) = line.find("listening on http://") {
            let url = line[at + "listening on ".len()..].trim().to_string();
            return (child, url);
        }
        seen.push(line);
    }
    let _ = child.kill();
    panic!("the server exited without listening: {seen:#?}");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_31_character_admin_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let short = &TOKEN_32[..31];
    let out = refused(server(dir.path()).env("BENCHTRAIL_ADMIN_TOKEN", short));
    let text = stderr(&out);
    assert!(
        text.contains("the admin token must be at least 32 characters long, not 31"),
        "{text}"
    );
    assert!(!text.contains(short), "the token is printed: {text}");
    // Refused before the database is touched.
    assert!(!dir.path().join("data").exists());

    let file = dir.path().join("token");
    std::fs::write(&file, format!("{short}\n")).unwrap();
    let out = refused(server(dir.path()).arg("--admin-token-file").arg(&file));
    assert!(
        stderr(&out).contains("at least 32 characters long, not 31"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_admin_token_flag_is_refused_with_a_pointer_to_the_env_var_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["--admin-token", TOKEN_32],
        vec![&format!("--admin-token={TOKEN_32}")],
    ] {
        let out = refused(server(dir.path()).args(&args));
        let text = stderr(&out);
        assert!(
            text.contains(
                "--admin-token is not accepted: a command line is visible to every user of the \
                 machine (ps). Set the environment variable BENCHTRAIL_ADMIN_TOKEN, or write \
                 the token to a file only you can read and pass --admin-token-file PATH"
            ),
            "{args:?}: {text}"
        );
        assert!(!text.contains(TOKEN_32), "the token is printed: {text}");
    }
    // --help does not offer it.
    let help = Command::new(BINARY).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--admin-token-file <PATH>"), "{help}");
    assert!(!help.contains("--admin-token <"), "{help}");
}

#[test]
fn the_environment_and_the_file_together_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, TOKEN_32).unwrap();
    let out = refused(
        server(dir.path())
            .env("BENCHTRAIL_ADMIN_TOKEN", TOKEN_32)
            .arg("--admin-token-file")
            .arg(&file),
    );
    assert!(
        stderr(&out)
            .contains("both BENCHTRAIL_ADMIN_TOKEN and --admin-token-file give an admin token"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[tokio::test]
async fn the_token_file_first_line_is_the_admin_token_and_the_sqlite_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("  {TOKEN_32}  \nnot the token\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (mut child, base) = started(server(dir.path()).arg("--admin-token-file").arg(&file));

    let http = reqwest::Client::new();
    let create = |token: &'static str| {
        let request = http
            .post(format!("{base}/api/v1/projects"))
            .bearer_auth(token)
            .json(&serde_json::json!({"slug": "p"}));
        async move { request.send().await.unwrap().status().as_u16() }
    };
    let answers = (create("not the token").await, create(TOKEN_32).await);
    let mode = |name: &str| {
        std::fs::metadata(dir.path().join(name))
            .map(|m| m.permissions().mode() & 0o777)
            .map_err(|e| format!("{name}: {e}"))
    };
    let modes = [
        mode("data"),
        mode("data/bt.db"),
        mode("data/bt.db-wal"),
        mode("data/bt.db-shm"),
    ];
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(answers, (401, 201));
    assert_eq!(modes, [Ok(0o700), Ok(0o600), Ok(0o600), Ok(0o600)]);
}

#[test]
fn a_set_but_blank_admin_token_is_refused_not_treated_as_unset() {
    for blank in ["", "    "] {
        let dir = tempfile::tempdir().unwrap();
        let out = refused(server(dir.path()).env("BENCHTRAIL_ADMIN_TOKEN", blank));
        let text = stderr(&out);
        assert!(
            text.contains(
                "BENCHTRAIL_ADMIN_TOKEN is set but empty: give the token, or unset the variable"
            ),
            "{blank:?}: {text}"
        );
        assert!(
            !dir.path().join("data").exists(),
            "refused before the database is touched"
        );
    }
}
