//! The documents checked against the code: the short forms of docs/games.md
//! read as the JSON beside them, and every file or folder a document cites is
//! in the repository.

use std::path::{Path, PathBuf};

use grundy_protocol::Position;
use serde_json::Value;

use crate::input::{parse, Input};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every row of games.md's "Short forms": the typed position reads as the
/// spec, and the typed move as the move's JSON, a legal move there.
#[test]
fn games_md_short_forms_read_as_their_json() {
    let text = read("docs/games.md");
    let section = text
        .split("### Short forms")
        .nth(1)
        .and_then(|s| s.split("\n#").next())
        .expect("a Short forms section");
    let mut rows = 0;
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().trim_matches('`'))
            .collect();
        let [game, typed, spec, typed_move, move_json] = cells[..] else {
            panic!("a row of five cells: {line}");
        };
        let spec: Value = serde_json::from_str(spec).unwrap_or_else(|e| panic!("{game}: {e}"));
        if typed != "—" {
            let read = crate::spec::parse(typed).unwrap_or_else(|e| panic!("{typed}: {e}"));
            assert_eq!(read, spec, "{game}: {typed}");
        }
        let position = Position::from_spec(&spec).unwrap_or_else(|e| panic!("{game}: {e}"));
        let want: Value = serde_json::from_str(move_json).expect("the move's JSON");
        match parse(&position, typed_move) {
            Ok(Input::Move(v, _)) => assert_eq!(v, want, "{game}: {typed_move}"),
            other => panic!("{game}: {typed_move:?} gave {other:?}"),
        }
        rows += 1;
    }
    assert!(rows >= 16, "{rows} rows");
}

/// Every path in the repository (folders end with `/`), but the build's.
fn repository_paths() -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "target" || name.starts_with('.') {
                continue;
            }
            let path = format!("{prefix}{name}");
            if entry.path().is_dir() {
                out.push(format!("{path}/"));
                walk(&entry.path(), &format!("{path}/"), out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out
}

/// A file or folder named in a document (`seeds/`, `room/core.rs`, a link)
/// is in the repository: at that path, or (for the crate maps that name
/// paths within a crate) at the end of one. What a build makes (`target/`)
/// and what is not a path (`application/json`) are not checked.
#[test]
fn documents_cite_only_what_is_in_the_repository() {
    let paths = repository_paths();
    let exists = |cited: &str| {
        let cited = cited.trim_start_matches("./");
        paths
            .iter()
            .any(|p| p == cited || p.ends_with(&format!("/{cited}")))
    };
    let mut documents = vec![
        "README.md".to_string(),
        "ARCHITECTURE.md".to_string(),
        "examples/python/README.md".to_string(),
    ];
    documents.extend(
        paths
            .iter()
            .filter(|p| p.starts_with("docs/") && p.ends_with(".md"))
            .cloned(),
    );
    let mut missing = Vec::new();
    for doc in &documents {
        let text = read(doc);
        let dir = Path::new(doc).parent().unwrap_or(Path::new(""));
        for cited in cited_paths(&text) {
            if !exists(cited) {
                missing.push(format!("{doc}: `{cited}`"));
            }
        }
        // Links to files: [text](path), relative to the document.
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap_or("");
            let target = target.split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") {
                continue;
            }
            if !root().join(dir).join(target).exists() {
                missing.push(format!("{doc}: link ({target})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "cited but not in the repository:\n{}",
        missing.join("\n")
    );
}

/// The `code` spans of `text` that look like paths (a folder, or a file
/// with an extension), but what a build makes (`target/`).
fn cited_paths(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|cited| {
            !cited.contains(char::is_whitespace)
                && cited.contains('/')
                && !cited.starts_with(['/', '~', '$', '#', '.'])
                && !cited.contains("://")
                && !cited.contains(|c: char| "{}[]()<>*=?:|\"',".contains(c))
                && (cited.ends_with('/')
                    || cited.rsplit('/').next().is_some_and(|f| f.contains('.')))
                && !cited.starts_with("target/")
        })
        .collect()
}

/// ARCHITECTURE.md stays a map a newcomer reads in minutes: under 250
/// lines, its invariants stated as such, and every path it names written
/// from the repository's root and there (no path that merely ends so).
#[test]
fn architecture_is_short_and_names_paths_from_the_root() {
    let text = read("ARCHITECTURE.md");
    let lines = text.lines().count();
    assert!(lines < 250, "ARCHITECTURE.md has {lines} lines");
    let invariants = text
        .lines()
        .filter(|l| l.trim_start_matches("- ").starts_with("Invariant:"))
        .count();
    assert!(invariants >= 5, "{invariants} invariants");
    let missing: Vec<&str> = cited_paths(&text)
        .into_iter()
        .filter(|p| !root().join(p).exists())
        .collect();
    assert!(missing.is_empty(), "not at these paths: {missing:?}");
}

/// Where the README runs the Python example, it says what the example is
/// (a bot that plays random moves, not you) and what it needs.
#[test]
fn readme_says_what_the_python_example_is_and_needs() {
    let text = read("README.md");
    let at = text
        .find("python3 examples/python/random_bot.py")
        .expect("the README runs the Python example");
    // The comment lines just above the command.
    let before: Vec<&str> = text[..at]
        .lines()
        .rev()
        .take_while(|l| l.starts_with('#'))
        .collect();
    let said = before.join(" ");
    assert!(said.contains("pip install websockets"), "{said}");
    assert!(said.contains("random"), "{said}");
    assert!(!said.contains("yourself"), "{said}");
}
