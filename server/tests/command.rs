//! `grundy-server` as a person runs it: one `listening on` line, plain logs
//! when they go to a file, and a port in use refused by name without leaving
//! a database file behind.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_grundy-server");

#[test]
fn a_port_in_use_is_named_and_leaves_no_database() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let out = Command::new(BIN)
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--db")
        .arg(&db)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on {addr}")),
        "{stderr}"
    );
    assert!(!db.exists(), "a database was created: {stderr}");
    drop(taken);
}

#[test]
fn logs_to_a_file_are_plain_and_the_address_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--db")
        .arg(dir.path().join("g.db"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    // Once it has said where it listens, stop it as a person would (SIGTERM).
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("the first line");
    let pid = child.id().to_string();
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("the rest");
    let out = child.wait_with_output().expect("exits");
    let stdout = first + &rest;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.starts_with("listening on ws://127.0.0.1:"),
        "{stdout}"
    );
    assert!(
        stderr.contains("the web app: http://127.0.0.1:"),
        "{stderr}"
    );
    let said = stdout.matches("listening on").count() + stderr.matches("listening on").count();
    assert_eq!(said, 1, "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.contains("shutting down"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a log file: {stderr:?}"
    );
}
