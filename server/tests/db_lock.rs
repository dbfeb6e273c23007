//! One server per database, with the real binary: a second `grundy-server`
//! on a file a running one holds exits at once with an error naming the file
//! and the holder's pid, and creates nothing; once the holder is killed with
//! SIGKILL, the file can be opened again (the OS let go of the lock).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::timeout;

const PATIENCE: Duration = Duration::from_secs(10);

fn server(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grundy-server"));
    command
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--db")
        .arg(db)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

/// Starts a server over `db` and waits for its `listening on` line.
async fn start(db: &Path) -> Child {
    let mut child = server(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let read = timeout(PATIENCE, stdout.read_line(&mut line)).await;
    assert!(matches!(read, Ok(Ok(1..))), "no address printed");
    assert!(line.starts_with("listening on ws://"), "{line:?}");
    child
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_second_server_on_a_held_database_refuses_to_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("g.db");
    let mut first = start(&db).await;
    let pid = first.id().expect("running");
    let before = listing(dir.path());
    assert!(before.contains(&"g.db.lock".to_string()), "{before:?}");

    let second = timeout(PATIENCE, server(&db).output())
        .await
        .expect("the second server exits at once")
        .expect("it runs");
    let stderr = String::from_utf8_lossy(&second.stderr);
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(!second.status.success(), "{:?}", second.status);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: the database {} is in use by another grundy-server (pid {pid}); \
             stop it first or choose another --db",
            db.display()
        )
    );
    assert_eq!(stdout, "", "it never listened");
    assert_eq!(listing(dir.path()), before, "it created nothing");

    // The lock dies with its holder, even by SIGKILL: a server starts again.
    first.kill().await.expect("kill -9");
    first.wait().await.expect("wait");
    let mut third = start(&db).await;
    third.kill().await.expect("kill -9");
}
