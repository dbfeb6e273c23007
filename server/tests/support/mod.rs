//! What the tests of the real binary share: a `grundy-server` process, and
//! the testkit's protocol v1 client.

#![allow(dead_code)] // each test file uses its own part

use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};
use tokio::time::timeout;

use grundy_testkit::client::PATIENCE;

/// A `grundy-server` process.
pub struct Process {
    pub child: Child,
    pub url: String,
    /// Its `--db`.
    pub db: String,
    pub stdout: BufReader<ChildStdout>,
    pub stderr: Arc<Mutex<String>>,
    /// Copies the pipe into `stderr` until the process closes it.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// A failed test shows what each of its servers logged: a rare failure in
/// CI is then read from its output, not guessed at.
impl Drop for Process {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
            eprintln!(
                "--- log of the server at {} ---\n{log}--- end of its log ---",
                self.url
            );
        }
    }
}

impl Process {
    /// Starts the binary on port 0 over `db` (a file or a `postgres://` URL)
    /// and reads the address it prints.
    pub async fn start(db: impl AsRef<std::ffi::OsStr>) -> Process {
        Process::start_with(db, &[]).await
    }

    /// [`Process::start`] with more arguments.
    pub async fn start_with(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Process {
        let log = std::env::var("GRUNDY_TEST_LOG").unwrap_or_else(|_| "info".into());
        Process::start_logging(db, args, &log).await
    }

    /// [`Process::start_with`] under `RUST_LOG=log`.
    pub async fn start_logging(
        db: impl AsRef<std::ffi::OsStr>,
        args: &[&str],
        log: &str,
    ) -> Process {
        Process::start_listening("127.0.0.1:0", db, args, log).await
    }

    /// [`Process::start_logging`] on `listen`, a port known beforehand.
    pub async fn start_listening(
        listen: &str,
        db: impl AsRef<std::ffi::OsStr>,
        args: &[&str],
        log: &str,
    ) -> Process {
        let db_arg = db.as_ref().to_string_lossy().into_owned();
        // Every test client is on loopback: not counted per address, unless
        // the test says which addresses are not.
        let unlimited: &[&str] = if args.contains(&"--unlimited-from") {
            &[]
        } else {
            &["--unlimited-from", "127.0.0.0/8"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_grundy-server"))
            .arg("--listen")
            .arg(listen)
            .arg("--db")
            .arg(db)
            .args(unlimited)
            .args(args)
            .env("RUST_LOG", log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_reader = child.stderr.take().map(|mut pipe| {
            let sink = stderr.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    let text = String::from_utf8_lossy(&buf[..n]);
                    sink.lock().unwrap().push_str(&text);
                }
            })
        });
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        let read = timeout(PATIENCE, stdout.read_line(&mut line)).await;
        assert!(
            matches!(read, Ok(Ok(1..))),
            "no address printed; stderr: {}",
            stderr.lock().unwrap()
        );
        let url = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first stdout line: {line:?}"))
            .to_string();
        assert!(
            url.starts_with("ws://127.0.0.1:") || url.starts_with("wss://127.0.0.1:"),
            "{line:?}"
        );
        Process {
            child,
            url,
            db: db_arg,
            stdout,
            stderr,
            stderr_reader,
        }
    }

    /// SIGKILL, as a crash or the OOM killer would.
    pub async fn kill_hard(&mut self) {
        self.child.kill().await.expect("kill -9");
        let status = self.child.wait().await.expect("wait");
        assert_eq!(signal_of(status), Some(9), "{status:?}");
        self.read_stderr_to_end().await;
    }

    /// SIGTERM, as a service manager would; returns the exit status.
    pub async fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().expect("running").to_string();
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(&pid)
            .status()
            .await
            .expect("kill -TERM");
        assert!(sent.success());
        let status = match timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(status) => status.expect("wait"),
            Err(_) => panic!(
                "still running 5 s after SIGTERM; stderr: {}",
                self.stderr.lock().unwrap()
            ),
        };
        self.read_stderr_to_end().await;
        status
    }

    /// Sends it signal `name` (`STOP`, `CONT`, ...).
    pub async fn signal(&self, name: &str) {
        let pid = self.child.id().expect("running");
        signal_pid(pid, name).await;
    }

    /// Everything it logged so far.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// How many times its log has `line` so far.
    pub fn logged(&self, line: &str) -> usize {
        self.stderr.lock().unwrap().matches(line).count()
    }

    /// Waits until the copy of stderr holds everything the exited process
    /// wrote: its last lines may still be in the pipe when `wait` returns.
    async fn read_stderr_to_end(&mut self) {
        if let Some(reader) = self.stderr_reader.take() {
            timeout(PATIENCE, reader)
                .await
                .expect("stderr closed after the exit")
                .expect("the stderr reader");
        }
    }
}

/// Sends process `pid` signal `name` (`STOP`, `CONT`, ...).
pub async fn signal_pid(pid: u32, name: &str) {
    let sent = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .await
        .expect("kill");
    assert!(sent.success(), "kill -{name} {pid}");
}

#[cfg(unix)]
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
pub fn signal_of(_: ExitStatus) -> Option<i32> {
    Some(9)
}
