//! A real NATS server for tests (the cluster's bus): one per test process,
//! started on first use from the installed binary (Debian's `nats-server`
//! package) on a free loopback port. When it cannot run, tests skip with the
//! reason rather than fail.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::process;

const INSTALL: &str = "apt-get install -y nats-server (or set NATS_SERVER to its path)";

pub struct TestNats {
    pid: u32,
    port: u16,
}

static SHARED: OnceLock<Result<TestNats, String>> = OnceLock::new();

/// One NATS server per test process, started on first use. Err: the reason
/// it cannot run, for the test to print and skip.
pub fn shared() -> Result<&'static TestNats, String> {
    SHARED
        .get_or_init(|| {
            let nats = process::on_parked_thread("test-nats", start)?;
            unsafe { libc::atexit(stop_at_exit) };
            Ok(nats)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Prints "skipped: <reason>" and returns None when NATS cannot run.
pub fn or_skip() -> Option<&'static TestNats> {
    shared()
        .map_err(|reason| eprintln!("skipped: {reason}"))
        .ok()
}

impl TestNats {
    /// The server's URL, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }
}

extern "C" fn stop_at_exit() {
    if let Some(Ok(nats)) = SHARED.get() {
        process::stop(nats.pid, libc::SIGTERM);
    }
}

fn binary() -> Result<PathBuf, String> {
    process::installed(
        "NATS_SERVER",
        &["/usr/sbin/nats-server", "/usr/bin/nats-server"],
        INSTALL,
    )
}

fn start() -> Result<TestNats, String> {
    let mut last = String::new();
    // Another process may take the port between our probe and the bind.
    for _ in 0..3 {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot find a free port: {e}"))?
            .port();
        match listen(port) {
            Ok(pid) => return Ok(TestNats { pid, port }),
            Err(why) => last = why,
        }
    }
    Err(last)
}

/// Starts a server on `port`: its PID once it listens.
fn listen(port: u16) -> Result<u32, String> {
    let bin = binary()?;
    let mut cmd = Command::new(&bin);
    cmd.args(["-a", "127.0.0.1", "-p", &port.to_string()]);
    process::die_with_us(&mut cmd);
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("nats-server exited ({status}) on port {port}"));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(child.id());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "nats-server did not listen on port {port} within 10 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A NATS server of one test's own, which it may take away and bring back
/// on the same port while the shared one serves the other tests; stopped
/// when dropped.
pub struct OwnNats {
    pid: u32,
    port: u16,
}

/// A server of the test's own; None (the reason printed) when NATS cannot
/// run here.
pub fn own_or_skip() -> Option<OwnNats> {
    process::on_parked_thread("test-nats", start)
        .map(|nats| OwnNats {
            pid: nats.pid,
            port: nats.port,
        })
        .map_err(|reason| eprintln!("skipped: {reason}"))
        .ok()
}

impl OwnNats {
    /// The server's URL, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server: its clients lose their connections at once, and
    /// whatever was on its way.
    pub fn kill(&mut self) {
        process::stop(self.pid, libc::SIGKILL);
    }

    /// Starts a new server on the same port (after [`OwnNats::kill`]).
    pub fn start_again(&mut self) -> Result<(), String> {
        let port = self.port;
        self.pid = process::on_parked_thread("test-nats", move || listen(port))?;
        Ok(())
    }
}

impl Drop for OwnNats {
    fn drop(&mut self) {
        process::stop(self.pid, libc::SIGTERM);
    }
}
