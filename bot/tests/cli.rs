//! `grundy-bot` as a person runs it: a failure is one line on standard
//! error and exit status 1, whatever `RUST_BACKTRACE` says.

use std::process::Command;

#[test]
fn a_failure_is_one_error_line_and_status_1() {
    // A port nothing listens on: taken, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let out = Command::new(env!("CARGO_BIN_EXE_grundy-bot"))
        .args(["--server", &format!("127.0.0.1:{port}"), "house"])
        .env("RUST_BACKTRACE", "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("grundy-bot runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: cannot connect to ws://127.0.0.1:"),
        "{err}"
    );
}
