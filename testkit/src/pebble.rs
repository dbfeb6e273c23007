//! A real ACME directory for tests: Debian's `pebble`, with
//! `pebble-challtestsrv` as its DNS server answering every name with
//! 127.0.0.1, so that a certificate can be ordered for any test name and
//! pebble validates it (TLS-ALPN-01) by connecting to the server under
//! test on loopback. One of each per test, on free loopback ports, in a
//! temporary directory of their own (pebble's configuration and its https
//! certificate from a test CA); killed by PID when dropped. When they
//! cannot run, tests skip with the reason rather than fail.
//!
//! Pebble's real validation runs (not `PEBBLE_VA_ALWAYS_VALID`), without
//! its random sleep before validating (`PEBBLE_VA_NOSLEEP`) and without the
//! nonces it rejects at random to exercise clients' retries
//! (`PEBBLE_WFE_NONCEREJECT=0`): a test must not depend on luck.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::process;
use crate::tls::TestCa;

const INSTALL: &str = "apt-get install -y pebble (or set PEBBLE and PEBBLE_CHALLTESTSRV)";

/// How long pebble and its DNS server may take to listen.
const START_WITHIN: Duration = Duration::from_secs(10);

pub struct TestPebble {
    pebble: u32,
    dns: u32,
    acme_port: u16,
    management_port: u16,
    ca: PathBuf,
    dir: tempfile::TempDir,
}

impl TestPebble {
    /// Pebble on free loopback ports, validating TLS-ALPN-01 challenges on
    /// `tls_port` of 127.0.0.1 (where every name resolves). Err: why it
    /// cannot run here.
    pub fn start(tls_port: u16) -> Result<TestPebble, String> {
        let pebble =
            process::installed("PEBBLE", &["/usr/bin/pebble", "/usr/sbin/pebble"], INSTALL)?;
        let challtestsrv = process::installed(
            "PEBBLE_CHALLTESTSRV",
            &["/usr/bin/pebble-challtestsrv"],
            INSTALL,
        )?;
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
        let ca = TestCa::new("grundy test pebble https CA");
        let ca_file = ca.write(dir.path(), "pebble-https-ca.pem");
        let files = ca.write_server(dir.path(), "pebble-https");
        let mut last = String::new();
        // Another process may take a port between our probe and the bind.
        for _ in 0..3 {
            let [dns_port, dns_management, acme_port, management_port, http_port] = free_ports()?;
            let dns_log = dir.path().join("challtestsrv.log");
            let mut dns = Command::new(&challtestsrv);
            dns.args(["-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""])
                .args(["-dns01", &format!("127.0.0.1:{dns_port}")])
                .args(["-management", &format!("127.0.0.1:{dns_management}")])
                .args(["-http01", "", "-https01", "", "-tlsalpn01", ""]);
            let dns_pid = match spawn("pebble-challtestsrv", dns, &dns_log, dns_management) {
                Ok(pid) => pid,
                Err(why) => {
                    last = why;
                    continue;
                }
            };
            let config = serde_json::json!({
                "pebble": {
                    "listenAddress": format!("127.0.0.1:{acme_port}"),
                    "managementListenAddress": format!("127.0.0.1:{management_port}"),
                    "certificate": files.cert,
                    "privateKey": files.key,
                    "httpPort": http_port,
                    "tlsPort": tls_port,
                    "ocspResponderURL": "",
                    "externalAccountBindingRequired": false,
                }
            });
            let config_file = dir.path().join("pebble-config.json");
            std::fs::write(&config_file, config.to_string())
                .map_err(|e| format!("cannot write pebble's configuration: {e}"))?;
            let mut cmd = Command::new(&pebble);
            cmd.arg("-config")
                .arg(&config_file)
                .args(["-dnsserver", &format!("127.0.0.1:{dns_port}")])
                .env("PEBBLE_VA_NOSLEEP", "1")
                .env("PEBBLE_WFE_NONCEREJECT", "0");
            let log = dir.path().join("pebble.log");
            match spawn("pebble", cmd, &log, acme_port) {
                Ok(pid) => {
                    return Ok(TestPebble {
                        pebble: pid,
                        dns: dns_pid,
                        acme_port,
                        management_port,
                        ca: ca_file,
                        dir,
                    })
                }
                Err(why) => {
                    process::stop(dns_pid, libc::SIGTERM);
                    last = why;
                }
            }
        }
        Err(last)
    }

    /// [`TestPebble::start`], or None with "skipped: <reason>" printed.
    pub fn start_or_skip(tls_port: u16) -> Option<TestPebble> {
        TestPebble::start(tls_port)
            .map_err(|reason| eprintln!("skipped: {reason}"))
            .ok()
    }

    /// The ACME directory's URL (`--acme-directory`).
    pub fn directory(&self) -> String {
        format!("https://127.0.0.1:{}/dir", self.acme_port)
    }

    /// The CA of pebble's own https certificate (`--acme-directory-ca`).
    pub fn directory_ca(&self) -> &Path {
        &self.ca
    }

    /// The root that issues pebble's certificates, PEM: what a client of a
    /// server with such a certificate must trust. Pebble makes a new one at
    /// every start and hands it out on its management port.
    pub fn issuing_root(&self) -> Result<String, String> {
        self.management_get("/roots/0")
    }

    /// What pebble and its DNS server logged, for a failing test to show.
    pub fn log(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.path().join(name));
        format!(
            "pebble:\n{}\npebble-challtestsrv:\n{}",
            read("pebble.log").unwrap_or_default(),
            read("challtestsrv.log").unwrap_or_default()
        )
    }

    /// A GET on the management port (https, pebble's own certificate), its
    /// body if answered 200.
    fn management_get(&self, path: &str) -> Result<String, String> {
        let trust = grundy_client::tls::Trust::with_ca_file(&self.ca).map_err(|e| e.to_string())?;
        let name = "127.0.0.1".try_into().map_err(|_| "a server name")?;
        let tls = rustls::ClientConnection::new(trust.config(), name)
            .map_err(|e| format!("TLS to pebble: {e}"))?;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.management_port));
        let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map_err(|e| format!("cannot reach pebble's management port: {e}"))?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        let mut stream = rustls::StreamOwned::new(tls, tcp);
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        stream
            .write_all(request.as_bytes())
            .map_err(|e| format!("GET {path} from pebble: {e}"))?;
        let mut answer = Vec::new();
        // Pebble closes without a TLS close_notify: what was read stands.
        if let Err(e) = stream.read_to_end(&mut answer) {
            if answer.is_empty() {
                return Err(format!("GET {path} from pebble: {e}"));
            }
        }
        let answer = String::from_utf8_lossy(&answer);
        let (head, body) = answer
            .split_once("\r\n\r\n")
            .ok_or_else(|| format!("GET {path} from pebble: no HTTP answer: {answer}"))?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(format!("GET {path} from pebble: {head}"));
        }
        Ok(body.to_string())
    }
}

impl Drop for TestPebble {
    fn drop(&mut self) {
        process::stop(self.pebble, libc::SIGTERM);
        process::stop(self.dns, libc::SIGTERM);
    }
}

/// Five loopback ports free a moment ago, all different.
fn free_ports() -> Result<[u16; 5], String> {
    let listeners = (0..5)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    let mut ports = [0; 5];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener
            .local_addr()
            .map_err(|e| format!("cannot find a free port: {e}"))?
            .port();
    }
    Ok(ports)
}

/// Starts `cmd` (its output to `log`) on a thread that outlives the test,
/// and returns its PID once it listens on `port`.
fn spawn(name: &str, cmd: Command, log: &Path, port: u16) -> Result<u32, String> {
    let (name, log) = (name.to_string(), log.to_path_buf());
    let thread = format!("test-{name}");
    process::on_parked_thread(&thread, move || listen(&name, cmd, &log, port))
}

fn listen(name: &str, mut cmd: Command, log: &Path, port: u16) -> Result<u32, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("cannot write {name}'s log: {e}"))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    process::die_with_us(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + START_WITHIN;
    let log = || std::fs::read_to_string(log).unwrap_or_default();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "{name} exited ({status}) on port {port}: {}",
                log()
            ));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(child.id());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{name} did not listen on port {port} within {START_WITHIN:?}: {}",
                log()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
