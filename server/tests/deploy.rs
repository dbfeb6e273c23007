//! The systemd unit of docs/deploy.md (`deploy/grundy-server.service`):
//! `systemd-analyze verify` finds nothing wrong in it, and its sandbox
//! leaves an exposure of at most 2.0 (`systemd-analyze security`, offline).
//! Where systemd-analyze is not installed this says so and checks nothing.

use std::path::Path;
use std::process::Command;

const UNIT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../deploy/grundy-server.service"
);

/// The unit as installed, but starting this build's binary (verify checks
/// that `ExecStart` is an executable).
fn unit_for_this_build(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(UNIT).expect("the unit");
    let exec = "ExecStart=/usr/local/bin/grundy-server";
    assert!(text.contains(exec), "the unit starts {exec}");
    let here = text.replace(
        exec,
        &format!("ExecStart={}", env!("CARGO_BIN_EXE_grundy-server")),
    );
    let path = dir.join("grundy-server.service");
    std::fs::write(&path, here).expect("written");
    path
}

fn systemd_analyze() -> Option<&'static str> {
    let found = Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("skipped: systemd-analyze is not installed; the unit was not checked");
    }
    found.then_some("systemd-analyze")
}

#[test]
fn the_systemd_unit_verifies_and_is_sandboxed() {
    let Some(analyze) = systemd_analyze() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let unit = unit_for_this_build(dir.path());
    let verify = Command::new(analyze)
        .arg("verify")
        .arg(&unit)
        .output()
        .expect("systemd-analyze runs");
    let said = String::from_utf8_lossy(&verify.stderr);
    assert!(verify.status.success(), "{said}");
    assert!(!said.contains("grundy-server.service"), "warnings: {said}");

    // 0 to 100 here: the exposure level times ten.
    let security = Command::new(analyze)
        .args(["security", "--offline=true", "--threshold=20"])
        .arg(&unit)
        .output()
        .expect("systemd-analyze runs");
    let report = String::from_utf8_lossy(&security.stdout);
    assert!(security.status.success(), "{report}");
    assert!(report.contains("Overall exposure level"), "{report}");
}
