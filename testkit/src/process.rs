//! What the services share: a child started so that it dies with the test
//! process, and stopped by PID.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A Debian package's program: the path in `$env` if set, else the first of
/// `paths` that is a file; else why not, with how to install it.
pub(crate) fn installed(env: &str, paths: &[&str], install: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(env).map(PathBuf::from) {
        return Ok(path);
    }
    let name = paths
        .first()
        .and_then(|p| p.rsplit('/').next())
        .unwrap_or(env);
    paths
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| format!("{name} is not installed: {install}"))
}

/// Runs `start` on a thread that then parks forever, and returns what it
/// made. PR_SET_PDEATHSIG fires when the *thread* that forked the child
/// exits, and each test runs on its own short-lived thread: a service is
/// spawned from a thread that dies only with the whole process.
pub(crate) fn on_parked_thread<T: Send + 'static>(
    name: &str,
    start: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(start());
            loop {
                std::thread::park();
            }
        })
        .map_err(|e| format!("cannot spawn the {name} thread: {e}"))?;
    rx.recv()
        .map_err(|_| format!("the {name} thread panicked"))?
}

/// The child is killed with us if we crash; if we already died, it does not
/// start at all.
pub(crate) fn die_with_us(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Sends `signal`, then SIGKILL if the process is still there after 5 s.
pub(crate) fn stop(pid: u32, signal: libc::c_int) {
    let pid = pid as libc::pid_t;
    unsafe { libc::kill(pid, signal) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if !gone(pid) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}

/// Whether `pid` has exited (reaping it if it is our child).
fn gone(pid: libc::pid_t) -> bool {
    let mut status = 0;
    match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
        0 => false,
        -1 => (unsafe { libc::kill(pid, 0) }) != 0, // not our child: just probe it
        _ => true,
    }
}
