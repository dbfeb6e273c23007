//! `grundy-server backup` (docs/deploy.md, "Backup and restore"): a copy
//! of the SQLite file made while a server serves it, without its lock; the
//! documented restore (stop, put the copy in place, start) brings back every
//! match the copy holds, with its moves, and its players resume it.

mod support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use grundy_testkit::client::{heaps_of, two_players, Client};
use serde_json::json;
use support::Process;
use tokio::process::Command;
use tokio::time::timeout;

/// `grundy-server backup ARGS`, run to its end.
async fn backup(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grundy-server"));
    for (name, _) in std::env::vars() {
        if name.starts_with("GRUNDY_") {
            command.env_remove(name);
        }
    }
    command.arg("backup").args(args).kill_on_drop(true);
    timeout(Duration::from_secs(30), command.output())
        .await
        .expect("the backup ends within 30 s")
        .expect("the command runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[tokio::test]
async fn a_backup_made_while_serving_restores_every_match_with_its_moves() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("grundy.db");
    let copy = dir.path().join("backups/grundy-copy.db");
    std::fs::create_dir(dir.path().join("backups")).unwrap();
    let mut serving = Process::start(&db).await;
    let (room, code, t0, t1, mut a, mut b) = two_players(
        &serving.url,
        json!({"game": "nim", "heaps": [3, 4, 5]}),
        None,
    )
    .await;
    let moves = [
        json!({"heap": 0, "take": 1}),
        json!({"heap": 1, "take": 2}),
        json!({"heap": 2, "take": 3}),
    ];
    for (i, mv) in moves.iter().enumerate() {
        let (mover, token) = if i % 2 == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
    }

    // While it serves: the server holds its lock, the backup needs none.
    let made = backup(&["--db", path(&db), "--to", path(&copy)]).await;
    assert!(made.status.success(), "{}", text(&made.stderr));
    assert!(
        text(&made.stdout).starts_with("backed up "),
        "{}",
        text(&made.stdout)
    );
    // The server goes on: a move after the backup is acknowledged (and is
    // not in the copy).
    let ack = b
        .request(json!({"type": "move", "room": room, "token": t1, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");

    // A second backup to the same file is refused, the first kept; asked,
    // it is replaced.
    let again = backup(&["--db", path(&db), "--to", path(&copy)]).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("--overwrite"),
        "{}",
        text(&again.stderr)
    );
    let kept = std::fs::read(&copy).unwrap();
    let replaced_copy = dir.path().join("backups/replaced.db");
    std::fs::write(&replaced_copy, b"old").unwrap();
    let replaced = backup(&[
        "--db",
        path(&db),
        "--to",
        path(&replaced_copy),
        "--overwrite",
    ])
    .await;
    assert!(replaced.status.success(), "{}", text(&replaced.stderr));
    assert_ne!(std::fs::read(&replaced_copy).unwrap(), b"old");
    assert!(!kept.is_empty());

    // The restore, as documented: stop the server, put the copy in place of
    // the database (its -wal and -shm gone with it), start the server.
    assert!(serving.terminate().await.success());
    drop((a, b));
    for companion in ["grundy.db-wal", "grundy.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(companion));
    }
    std::fs::copy(&copy, &db).unwrap();
    let restored = Process::start(&db).await;

    let mut b = Client::connect(&restored.url, "bob").await;
    let back = b
        .request(json!({"type": "resume", "room": code, "token": t1}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let snapshot = &back["snapshot"];
    let kept = snapshot["moves"].as_array().expect("moves");
    assert_eq!(
        kept.as_slice(),
        &moves[..],
        "the moves up to the backup: {snapshot}"
    );
    assert_eq!(heaps_of(snapshot), [2, 2, 2], "{snapshot}");
    // And the match goes on from there: bob's turn again.
    let ack = b
        .request(json!({"type": "move", "room": room, "token": t1, "move": {"heap": 2, "take": 2}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
}

#[tokio::test]
async fn a_postgres_database_is_refused_with_the_pg_dump_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("copy.db");
    let refused = backup(&[
        "--db",
        "postgres://grundy:s3cret@db.example/grundy",
        "--to",
        path(&to),
    ])
    .await;
    let said = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(
        said.contains("pg_dump") && said.contains("pg_restore"),
        "{said}"
    );
    assert!(!said.contains("s3cret"), "{said}");
    assert!(!to.exists());

    let missing = backup(&["--db", path(&dir.path().join("none.db")), "--to", path(&to)]).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).contains("none.db"),
        "{}",
        text(&missing.stderr)
    );
    assert!(!to.exists());
}

/// The PostgreSQL recipe of docs/deploy.md: `pg_dump --format=custom` while
/// the server serves, `pg_restore` into an empty database, a server on it.
#[tokio::test]
async fn a_pg_dump_taken_while_serving_restores_with_pg_restore() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let (Some(pg_dump), Some(pg_restore)) =
        (postgres.program("pg_dump"), postgres.program("pg_restore"))
    else {
        eprintln!("skipped: no pg_dump and pg_restore beside this PostgreSQL");
        return;
    };
    let db = postgres.fresh_database();
    let serving = Process::start(&db).await;
    let (room, code, t0, t1, mut a, mut b) = two_players(
        &serving.url,
        json!({"game": "nim", "heaps": [3, 4, 5]}),
        None,
    )
    .await;
    let moves = [json!({"heap": 0, "take": 1}), json!({"heap": 1, "take": 2})];
    for (i, mv) in moves.iter().enumerate() {
        let (mover, token) = if i % 2 == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
    }
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("grundy.dump");
    let dumped = Command::new(&pg_dump)
        .args(["--format=custom", "--file"])
        .arg(&dump)
        .arg(&db)
        .output()
        .await
        .expect("pg_dump runs");
    assert!(dumped.status.success(), "{}", text(&dumped.stderr));
    drop(serving);
    drop((a, b));

    let restored_db = postgres.fresh_database();
    let restored = Command::new(&pg_restore)
        .args(["--no-owner", "--exit-on-error", "--dbname"])
        .arg(&restored_db)
        .arg(&dump)
        .output()
        .await
        .expect("pg_restore runs");
    assert!(restored.status.success(), "{}", text(&restored.stderr));
    let server = Process::start(&restored_db).await;
    let mut a = Client::connect(&server.url, "alice").await;
    let back = a
        .request(json!({"type": "resume", "room": code, "token": t0}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let snapshot = &back["snapshot"];
    assert_eq!(
        snapshot["moves"].as_array().expect("moves").as_slice(),
        &moves[..]
    );
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 2, "take": 5}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
}
