//! A real nginx for tests, in front of a server as a deployment puts it
//! (docs/deploy.md, "Behind a proxy"): it terminates TLS with a certificate
//! of a test CA and proxies HTTP and the WebSocket upgrade to the server,
//! appending the client's address to `X-Forwarded-For`. One per test, from
//! the installed binary (Debian's `nginx` package), on a free loopback port,
//! in a temporary directory of its own (its `nginx.conf`, certificate, logs,
//! PID file); killed by PID when dropped. When it cannot run, tests skip
//! with the reason rather than fail.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::process;
use crate::tls::TestCa;

const INSTALL: &str = "apt-get install -y nginx (or set NGINX to its path)";

/// How long nginx may take to listen.
const START_WITHIN: Duration = Duration::from_secs(10);

pub struct TestNginx {
    pid: u32,
    port: u16,
    ca: PathBuf,
    pin: String,
    dir: tempfile::TempDir,
}

/// The `server` block a deployment uses, proxying to `upstream` (the same
/// text as docs/deploy.md's recipe, with the test's paths).
pub fn server_block(listen: &str, cert: &Path, key: &Path, upstream: SocketAddr) -> String {
    format!(
        r#"    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    server {{
        listen {listen} ssl;
        ssl_certificate     {cert};
        ssl_certificate_key {key};
        # Browsers keep to https:// for a year (the server sends this itself
        # only when it serves TLS).
        add_header Strict-Transport-Security "max-age=31536000" always;
        # The metrics are for your monitoring, which reads them from the server
        # itself (http://127.0.0.1:7878/metrics), not for the internet.
        location = /metrics {{
            return 404;
        }}
        location / {{
            proxy_pass http://{upstream};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            # The client's address, appended to whatever the client sent:
            # grundy-server --trusted-proxy believes only the right-most
            # address that is not a trusted proxy.
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            # Only one of the two headers: a client's own Forwarded is dropped.
            proxy_set_header Forwarded "";
            # A WebSocket is quiet between moves (the server pings every 5 s).
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
        }}
    }}
"#,
        cert = cert.display(),
        key = key.display(),
    )
}

impl TestNginx {
    /// nginx on a free loopback port, terminating TLS for `localhost` and
    /// 127.0.0.1 and proxying to `upstream`. Err: why it cannot run here.
    pub fn start(upstream: SocketAddr) -> Result<TestNginx, String> {
        let bin = binary()?;
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
        let ca = TestCa::new("grundy test proxy CA");
        let ca_file = ca.write(dir.path(), "ca.pem");
        let files = ca.write_server(dir.path(), "proxy");
        let key = std::fs::read_to_string(&files.key)
            .map_err(|e| format!("cannot read back the key: {e}"))?;
        let pin = crate::tls::spki_pin(&key);
        let mut last = String::new();
        // Another process may take the port between our probe and the bind.
        for _ in 0..3 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("cannot find a free port: {e}"))?
                .port();
            let conf = config(dir.path(), port, &files.cert, &files.key, upstream);
            let conf_path = dir.path().join("nginx.conf");
            std::fs::write(&conf_path, conf)
                .map_err(|e| format!("cannot write nginx.conf: {e}"))?;
            let (bin, prefix) = (bin.clone(), dir.path().to_path_buf());
            match process::on_parked_thread("test-nginx", move || listen(&bin, &prefix, port)) {
                Ok(pid) => {
                    return Ok(TestNginx {
                        pid,
                        port,
                        ca: ca_file,
                        pin: pin.clone(),
                        dir,
                    })
                }
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    /// [`TestNginx::start`], or None with "skipped: <reason>" printed.
    pub fn start_or_skip(upstream: SocketAddr) -> Option<TestNginx> {
        TestNginx::start(upstream)
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

    /// The test CA's certificate, PEM: what a client must trust.
    pub fn ca_file(&self) -> &Path {
        &self.ca
    }

    /// Its certificate's public-key pin ([`crate::tls::spki_pin`]): how a
    /// browser is told to trust it.
    pub fn spki_pin(&self) -> &str {
        &self.pin
    }

    /// What nginx logged (its error log), for a failing test to show.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }
}

impl Drop for TestNginx {
    fn drop(&mut self) {
        // SIGTERM is nginx's fast shutdown.
        process::stop(self.pid, libc::SIGTERM);
    }
}

fn binary() -> Result<PathBuf, String> {
    process::installed("NGINX", &["/usr/sbin/nginx", "/usr/bin/nginx"], INSTALL)
}

/// The whole configuration: one process in the foreground (no workers to
/// switch users or outlive it), everything it writes in `dir`.
fn config(dir: &Path, port: u16, cert: &Path, key: &Path, upstream: SocketAddr) -> String {
    let d = dir.display();
    format!(
        r#"daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{
    worker_connections 256;
}}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
{server}}}
"#,
        server = server_block(&format!("127.0.0.1:{port}"), cert, key, upstream),
    )
}

/// Starts nginx with the configuration in `prefix`: its PID once it
/// listens on `port`.
fn listen(bin: &Path, prefix: &Path, port: u16) -> Result<u32, String> {
    let mut cmd = Command::new(bin);
    cmd.arg("-p")
        .arg(prefix)
        .arg("-c")
        .arg(prefix.join("nginx.conf"))
        // Where it writes before it has read the configuration.
        .arg("-e")
        .arg(prefix.join("error.log"));
    process::die_with_us(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + START_WITHIN;
    let log = || std::fs::read_to_string(prefix.join("error.log")).unwrap_or_default();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("nginx exited ({status}) on port {port}: {}", log()));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(child.id());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "nginx did not listen on port {port} within {START_WITHIN:?}: {}",
                log()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
