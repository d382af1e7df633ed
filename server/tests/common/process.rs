//! The real `benchtrail-server` binary as a child process, for tests that kill it, restart it
//! or limit its resources (what an in-process server cannot undergo).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The admin token of spawned servers (given through the environment, as operators do).
pub const PROCESS_ADMIN_TOKEN: &str = "bt_test_process_admin_token_0123456789abcdef";

/// A running server process; killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The last lines of its log, for failure messages.
    log: Arc<Mutex<Vec<String>>>,
    /// Every line of its log containing [`Spawn::keep`].
    kept: Arc<Mutex<Vec<String>>>,
    /// The thread reading its log (joined once it died, so the log is complete).
    reader: Option<std::thread::JoinHandle<()>>,
}

/// Extra set-up of a spawned server.
#[derive(Default, Clone)]
pub struct Spawn {
    /// Arguments after `--database-url URL --bind 127.0.0.1:0`.
    pub args: Vec<String>,
    /// Ignore `SIGXFSZ` in the child, so a file-size limit set on it later
    /// ([`ServerProcess::limit_file_size`]) fails its writes (`EFBIG`, as a full disk fails
    /// them) instead of killing it.
    pub survive_file_limit: bool,
    /// Keep every log line containing this text, not only the last ones
    /// ([`ServerProcess::kept`]): what a test counts.
    pub keep: Option<&'static str>,
    /// Extra environment variables of the process.
    pub env: Vec<(&'static str, String)>,
}

impl ServerProcess {
    /// Starts the server on `database_url` and waits (up to 60 s) until it listens.
    pub fn spawn(database_url: &str, how: &Spawn) -> ServerProcess {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_benchtrail-server"));
        cmd.args(["--database-url", database_url, "--bind", "127.0.0.1:0"])
            .args(&how.args)
            .env("BENCHTRAIL_ADMIN_TOKEN", PROCESS_ADMIN_TOKEN)
            .env("RUST_LOG", "info,sqlx=warn")
            .envs(how.env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if how.survive_file_limit {
            use std::os::unix::process::CommandExt;
            // SAFETY: `signal` is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn().expect("spawning benchtrail-server");
        let stderr = child.stderr.take().expect("piped stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let last = log.clone();
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (all, keep) = (kept.clone(), how.keep);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on http://") {
                    let _ = tx.send(line[at + "listening on ".len()..].trim().to_string());
                }
                if keep.is_some_and(|k| line.contains(k)) {
                    all.lock().unwrap().push(line.clone());
                }
                let mut last = last.lock().unwrap();
                last.push(line);
                if last.len() > 200 {
                    last.remove(0);
                }
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the server did not listen: {:?}", log.lock().unwrap()));
        ServerProcess {
            child,
            base,
            log,
            kept,
            reader: Some(reader),
        }
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// `SIGKILL`, and waits for the process to end and its log to be read to the end.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }

    /// Sets the process's largest file size (`RLIMIT_FSIZE`) to `bytes` (`None`: unlimited).
    pub fn limit_file_size(&self, bytes: Option<u64>) {
        let limit = libc::rlimit {
            rlim_cur: bytes.unwrap_or(libc::RLIM_INFINITY),
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: plain system call on our own child with a valid pointer.
        let rc =
            unsafe { libc::prlimit(self.pid(), libc::RLIMIT_FSIZE, &limit, std::ptr::null_mut()) };
        assert_eq!(rc, 0, "prlimit: {}", std::io::Error::last_os_error());
    }

    /// The last lines of its log.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Every log line so far containing [`Spawn::keep`] (also after the process died: its
    /// log is read to the end).
    pub fn kept(&self) -> Vec<String> {
        self.kept.lock().unwrap().clone()
    }

    /// `base` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Creates project `slug` and returns an upload token of it.
    pub async fn project_with_token(&self, http: &reqwest::Client, slug: &str) -> String {
        let r = http
            .post(self.url("/api/v1/projects"))
            .bearer_auth(PROCESS_ADMIN_TOKEN)
            .json(&json!({"slug": slug}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        let r = http
            .post(self.url(&format!("/api/v1/projects/{slug}/tokens")))
            .bearer_auth(PROCESS_ADMIN_TOKEN)
            .json(&json!({"scope": "upload"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        r.json::<Value>().await.unwrap()["token"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
