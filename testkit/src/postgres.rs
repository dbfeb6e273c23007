//! A real PostgreSQL server for tests: one per test process, started on first
//! use from the installed binaries (Debian's `postgresql` package), with an
//! empty database per test. When PostgreSQL cannot run, tests skip with the
//! reason rather than fail.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;

use crate::process;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const INSTALL: &str =
    "apt-get install -y postgresql (or set PG_BIN to a directory with initdb and postgres)";

pub struct TestPostgres {
    bin: PathBuf,
    pid: u32,
    port: u16,
    // Never dropped (it lives in a static): the atexit handler removes it.
    dir: tempfile::TempDir,
}

static SHARED: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

/// One PostgreSQL server per test process, started on first use.
/// Err: the reason it cannot run, for the test to print and skip.
pub fn shared() -> Result<&'static TestPostgres, String> {
    SHARED
        .get_or_init(start_on_own_thread)
        .as_ref()
        .map_err(Clone::clone)
}

/// Prints "skipped: <reason>" and returns None when PostgreSQL cannot run:
/// `let Some(pg) = postgres::or_skip() else { return };`
pub fn or_skip() -> Option<&'static TestPostgres> {
    shared()
        .map_err(|reason| eprintln!("skipped: {reason}"))
        .ok()
}

impl TestPostgres {
    /// A new, empty database on the shared server, as a URL.
    pub fn fresh_database(&self) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "grundy_t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Ends every session on the database `url` names (as an administrator,
    /// or a restarting PostgreSQL, would): how many it ended.
    pub fn end_sessions(&self, url: &str) -> usize {
        let database = url.rsplit('/').next().unwrap_or_default();
        let ended = self.psql(
            database,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        );
        ended.lines().filter(|line| line.trim() == "t").count()
    }

    /// The backend processes of the sessions on the database `url` names
    /// whose `application_name` is `name` (a grundy-server's are
    /// `grundy-server PID`): a test may pause them, as a database that
    /// stops answering one server would.
    pub fn sessions_named(&self, url: &str, name: &str) -> Vec<u32> {
        let database = url.rsplit('/').next().unwrap_or_default();
        let quoted = name.replace('\'', "''");
        let pids = self.psql(
            database,
            &format!(
                "SELECT pid FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = '{quoted}'"
            ),
        );
        pids.lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Runs `sql` on `database` with psql, as the superuser; its output
    /// (unaligned, tuples only). Panics with what psql said if it fails.
    fn psql(&self, database: &str, sql: &str) -> String {
        let psql = Some(self.bin.join("psql"))
            .filter(|p| p.exists())
            .unwrap_or_else(|| "psql".into());
        let out = Command::new(&psql)
            .args(["-X", "-q", "-tA", "-h", "127.0.0.1", "-U", "postgres"])
            .args(["-d", database, "-p", &self.port.to_string()])
            .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", psql.display()));
        assert!(
            out.status.success(),
            "{sql} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A program of this PostgreSQL's installation (`pg_dump`, ...), if
    /// it has it: the one whose version is the server's.
    pub fn program(&self, name: &str) -> Option<PathBuf> {
        Some(self.bin.join(name)).filter(|p| p.exists())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Fast shutdown (SIGINT), SIGKILL after 5 s, then remove the files.
    fn stop(&self) {
        process::stop(self.pid, libc::SIGINT);
        let _ = std::fs::remove_dir_all(self.dir.path());
    }
}

extern "C" fn stop_at_exit() {
    if let Some(Ok(pg)) = SHARED.get() {
        pg.stop();
    }
}

fn start_on_own_thread() -> Result<TestPostgres, String> {
    let pg = process::on_parked_thread("test-postgres", start)?;
    // std::process::exit (what the test harness ends with) runs atexit handlers.
    unsafe { libc::atexit(stop_at_exit) };
    Ok(pg)
}

fn start() -> Result<TestPostgres, String> {
    let bin = find_bin()?;
    let owner = owner()?;
    let dir = tempfile::Builder::new()
        .prefix("grundy-pg")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir for PostgreSQL: {e}"))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
            .map_err(|e| format!("cannot chown {} to postgres: {e}", dir.path().display()))?;
    }
    let data = dir.path().join("data");

    let out = command(&bin.join("initdb"), owner, dir.path())
        .arg("-D")
        .arg(&data)
        .args(["--auth=trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
        .arg("--locale=C")
        .output()
        .map_err(|e| format!("cannot run {}/initdb: {e}", bin.display()))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    // Another process may take the port between our probe and postgres's bind.
    let mut last = String::new();
    for _ in 0..3 {
        match launch(&bin, owner, dir.path(), &data) {
            Ok((pid, port)) => {
                return Ok(TestPostgres {
                    bin,
                    pid,
                    port,
                    dir,
                })
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Starts postgres on a free port and waits until it accepts connections.
fn launch(
    bin: &Path,
    owner: Option<(u32, u32)>,
    dir: &Path,
    data: &Path,
) -> Result<(u32, u16), String> {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("cannot find a free port: {e}"))?
        .port();
    let log_path = dir.join("postgres.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
    let log_text = || std::fs::read_to_string(&log_path).unwrap_or_default();

    let mut cmd = command(&bin.join("postgres"), owner, dir);
    cmd.arg("-D").arg(data).arg("-k").arg(dir);
    cmd.args(["-p", &port.to_string(), "-h", "127.0.0.1"]);
    for setting in [
        "fsync=off",
        "synchronous_commit=off",
        "full_page_writes=off",
        "max_connections=200",
    ] {
        cmd.args(["-c", setting]);
    }
    process::die_with_us(&mut cmd);
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot run {}/postgres: {e}", bin.display()))?;
    let pid = child.id();

    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "postgres exited ({status}) on port {port}:\n{}",
                log_text()
            ));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() && ready(bin, port)
        {
            return Ok((pid, port));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(format!(
        "postgres did not accept connections on port {port} within 30 s:\n{}",
        log_text()
    ))
}

/// pg_isready's answer; a bare TCP connect is all we have without it.
fn ready(bin: &Path, port: u16) -> bool {
    Command::new(bin.join("pg_isready"))
        .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
        .status()
        .map_or(true, |s| s.success())
}

/// A command run as `owner` (if any), from `dir` (postgres's own tools refuse
/// a working directory they cannot read).
fn command(program: &Path, owner: Option<(u32, u32)>, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir);
    if let Some((uid, gid)) = owner {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

/// PostgreSQL refuses to run as root: then run it as the `postgres` user.
fn owner() -> Result<Option<(u32, u32)>, String> {
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let pw = unsafe { libc::getpwnam(c"postgres".as_ptr()) };
    if pw.is_null() {
        return Err(format!(
            "running as root, and PostgreSQL refuses root, but there is no `postgres` user: {INSTALL}, or run as a non-root user"
        ));
    }
    Ok(Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) }))
}

/// $PG_BIN, else the highest /usr/lib/postgresql/*/bin with initdb and postgres.
fn find_bin() -> Result<PathBuf, String> {
    let usable = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os("PG_BIN").map(PathBuf::from) {
        return if usable(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "PG_BIN={} has no initdb and postgres; unset it or {INSTALL}",
                dir.display()
            ))
        };
    }
    let version =
        |name: &str| -> Vec<u32> { name.split('.').map_while(|n| n.parse().ok()).collect() };
    std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| {
            (
                version(&entry.file_name().to_string_lossy()),
                entry.path().join("bin"),
            )
        })
        .filter(|(_, bin)| usable(bin))
        .max()
        .map(|(_, bin)| bin)
        .ok_or_else(|| {
            format!("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): {INSTALL}")
        })
}

/// Runs `sql` (with `args` as `$1`, `$2`...) in a transaction on a thread of
/// its own, and keeps the transaction, and the locks it took, open until the
/// returned sender sends or is dropped; returns once the locks are held.
pub async fn hold_locks(db: &str, sql: &str, args: &[&str]) -> std::sync::mpsc::Sender<()> {
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (locked, is_locked) = tokio::sync::oneshot::channel();
    let (db, sql) = (db.to_owned(), sql.to_owned());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    std::thread::spawn(move || {
        let mut client = ::postgres::Client::connect(&db, ::postgres::NoTls).expect("connect");
        let mut tx = client.transaction().expect("begin");
        let params: Vec<&(dyn ::postgres::types::ToSql + Sync)> = args
            .iter()
            .map(|a| a as &(dyn ::postgres::types::ToSql + Sync))
            .collect();
        tx.execute(sql.as_str(), &params).expect("take the locks");
        let _ = locked.send(());
        let _ = released.recv();
        tx.commit().expect("commit");
    });
    is_locked.await.expect("locked");
    release
}
