//! A real Caddy for tests, in front of a server as a deployment puts it
//! (docs/deploy.md, "Behind a proxy"): it terminates TLS with a certificate
//! from its own internal CA (`tls internal`) and proxies HTTP and the
//! WebSocket upgrade to the server, setting `X-Forwarded-For` to the
//! client's address. One per test, from the installed binary (Debian's
//! `caddy` package), on a free loopback port, in a temporary directory of
//! its own (its Caddyfile, its storage: HOME and the XDG directories point
//! there), without its admin endpoint; killed by PID when dropped. When it
//! cannot run, tests skip with the reason rather than fail.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::process;

const INSTALL: &str = "apt-get install -y caddy (or set CADDY to its path)";

/// How long Caddy may take to listen (it makes its CA and certificate
/// first).
const START_WITHIN: Duration = Duration::from_secs(20);

pub struct TestCaddy {
    pid: u32,
    port: u16,
    dir: tempfile::TempDir,
}

/// The site a deployment uses, proxying to `upstream` (the same text as
/// docs/deploy.md's recipe), with the test's own directives in `local`
/// (`tls internal` instead of a public certificate, `bind`; none in a
/// deployment).
pub fn site_block(site: &str, local: &str, upstream: SocketAddr) -> String {
    format!(
        r#"{site} {{
	{local}
	reverse_proxy {upstream} {{
		# Only one of the two headers reaches grundy-server: a client's
		# own Forwarded is dropped.
		header_up -Forwarded
	}}
}}
"#
    )
}

impl TestCaddy {
    /// Caddy on a free loopback port, terminating TLS for `localhost` and
    /// proxying to `upstream`. Err: why it cannot run here.
    pub fn start(upstream: SocketAddr) -> Result<TestCaddy, String> {
        let bin = process::installed("CADDY", &["/usr/bin/caddy", "/usr/sbin/caddy"], INSTALL)?;
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
        let mut last = String::new();
        // Another process may take a port between our probe and the bind.
        for _ in 0..3 {
            let [port, http_port] = free_ports()?;
            let file = dir.path().join("Caddyfile");
            std::fs::write(&file, caddyfile(port, http_port, upstream))
                .map_err(|e| format!("cannot write the Caddyfile: {e}"))?;
            let (bin, home) = (bin.clone(), dir.path().to_path_buf());
            match process::on_parked_thread("test-caddy", move || listen(&bin, &home, port)) {
                Ok(pid) => return Ok(TestCaddy { pid, port, dir }),
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    /// [`TestCaddy::start`], or None with "skipped: <reason>" printed.
    pub fn start_or_skip(upstream: SocketAddr) -> Option<TestCaddy> {
        TestCaddy::start(upstream)
            .map_err(|reason| eprintln!("skipped: {reason}"))
            .ok()
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// `wss://localhost:PORT`, the address a client is given.
    pub fn url(&self) -> String {
        format!("wss://localhost:{}", self.port)
    }

    /// The root of Caddy's internal CA, PEM: what a client must trust.
    pub fn ca_file(&self) -> PathBuf {
        self.dir
            .path()
            .join("data/caddy/pki/authorities/local/root.crt")
    }

    /// What Caddy logged, for a failing test to show.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("caddy.log")).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }
}

impl Drop for TestCaddy {
    fn drop(&mut self) {
        process::stop(self.pid, libc::SIGTERM);
    }
}

/// The whole Caddyfile: no admin endpoint, nothing installed into the
/// system's trust, no port 80 (its redirect port is a free one), listening
/// on loopback only.
fn caddyfile(port: u16, http_port: u16, upstream: SocketAddr) -> String {
    format!(
        r#"{{
	admin off
	skip_install_trust
	http_port {http_port}
	https_port {port}
	auto_https disable_redirects
}}
{site}"#,
        site = site_block(
            &format!("localhost:{port}"),
            "tls internal\n\tbind 127.0.0.1",
            upstream
        ),
    )
}

/// Two loopback ports free a moment ago, different.
fn free_ports() -> Result<[u16; 2], String> {
    let a = TcpListener::bind((Ipv4Addr::LOCALHOST, 0));
    let b = TcpListener::bind((Ipv4Addr::LOCALHOST, 0));
    let port = |l: std::io::Result<TcpListener>| {
        l.and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("cannot find a free port: {e}"))
    };
    Ok([port(a)?, port(b)?])
}

/// Starts Caddy with the Caddyfile in `home`: its PID once it serves TLS
/// for `localhost` on `port`.
fn listen(bin: &Path, home: &Path, port: u16) -> Result<u32, String> {
    let log_file = home.join("caddy.log");
    let out =
        std::fs::File::create(&log_file).map_err(|e| format!("cannot write caddy.log: {e}"))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(bin);
    cmd.arg("run")
        .arg("--config")
        .arg(home.join("Caddyfile"))
        .args(["--adapter", "caddyfile"])
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"));
    process::die_with_us(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let root = home.join("data/caddy/pki/authorities/local/root.crt");
    let deadline = Instant::now() + START_WITHIN;
    let log = || std::fs::read_to_string(&log_file).unwrap_or_default();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("caddy exited ({status}) on port {port}: {}", log()));
        }
        // Caddy listens, and writes its root, before its certificate for
        // `localhost` is issued: ready once a client's handshake completes.
        if root.is_file() && handshake(addr, &root) {
            return Ok(child.id());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "caddy did not listen on port {port} within {START_WITHIN:?}: {}",
                log()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a TLS handshake with `addr` as `localhost`, trusting `root`,
/// completes.
fn handshake(addr: SocketAddr, root: &Path) -> bool {
    let Ok(trust) = grundy_client::tls::Trust::with_ca_file(root) else {
        return false;
    };
    let Ok(name) = "localhost".try_into() else {
        return false;
    };
    let Ok(mut tls) = rustls::ClientConnection::new(trust.config(), name) else {
        return false;
    };
    let Ok(mut tcp) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    if tcp.set_read_timeout(Some(Duration::from_secs(2))).is_err() {
        return false;
    }
    while tls.is_handshaking() {
        if tls.complete_io(&mut tcp).is_err() {
            return false;
        }
    }
    true
}
