//! `grundy analyze` as a person or a script runs it: the real binary.

use std::process::Command;

use serde_json::{json, Value};

fn grundy(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_grundy"))
        .args(args)
        .output()
        .expect("run grundy");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn analyze_json(args: &[&str]) -> Value {
    let mut all = vec!["analyze", "--json"];
    all.extend_from_slice(args);
    let (code, out, err) = grundy(&all);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "exactly one JSON object: {out}");
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn json_report_of_the_seed_examples() {
    let a = analyze_json(&["nim", "3", "4", "5"]);
    assert_eq!(a["outcome"], "N");
    assert_eq!(a["grundy"], 2);
    assert_eq!(a["winning_moves"], json!([{"heap": 0, "take": 2}]));
    assert_eq!(a["best_move"], json!({"heap": 0, "take": 2}));
    let a = analyze_json(&["--spec", r#"{"game": "nim", "heaps": [7, 9, 12, 15]}"#]);
    assert_eq!(a["winning_move_count"], 3);
    let a = analyze_json(&["nim", "3", "2", "1"]);
    assert_eq!(a["outcome"], "P");
    assert_eq!(a["winning_moves"], json!([]));
    let a = analyze_json(&["nim", "--misere", "1", "1", "1"]);
    assert_eq!(a["outcome"], "P");
    assert_eq!(a["grundy"], Value::Null);
    let a = analyze_json(&["wythoff", "3", "5"]);
    assert_eq!(a["outcome"], "P");
    let a = analyze_json(&["subtraction", "--set", "1,3,4", "1000000000000000"]);
    assert_eq!(a["outcome"], "N");
    let a = analyze_json(&["darkraft", "RR", "RR"]);
    assert_eq!(a["outcome"], "N");
}

#[test]
fn person_view_explains_with_the_binary_table() {
    let (code, out, _) = grundy(&["analyze", "nim", "3", "4", "5"]);
    assert_eq!(code, 0);
    assert!(out.contains("Outcome   N"), "{out}");
    assert!(out.contains("take 2 from heap 0 (of 3)"), "{out}");
    assert!(out.contains("nim-sum  2  0 1 0"), "{out}");
    assert!(out.contains(". U ."), "{out}");
}

#[test]
fn bad_input_is_named_and_exits_2() {
    let (code, _, err) = grundy(&["analyze", "--spec", r#"{"game": "nim", "heaps": [1, -4]}"#]);
    assert_eq!(code, 2);
    assert!(
        err.contains("heaps[1]: must not be negative, got -4"),
        "{err}"
    );
    let (code, _, err) = grundy(&["analyze", "--spec", "{nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("not valid JSON"), "{err}");
    let (code, _, err) = grundy(&["analyze", "kayles", "five"]);
    assert_eq!(code, 2);
    assert!(err.contains("\"five\" is not a whole number"), "{err}");
    let (code, _, err) = grundy(&["analyze", "chess", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown game"), "{err}");
}

#[test]
fn json_report_has_each_move_in_the_short_form_too() {
    let a = analyze_json(&["nim", "3", "4", "5"]);
    assert_eq!(a["winning_moves_short"], json!(["0 2"]));
    assert_eq!(a["best_move_short"], "0 2");
    let a = analyze_json(&["wythoff", "3", "6"]);
    assert_eq!(a["winning_moves"], json!([{"take": [0, 1]}]));
    assert_eq!(a["winning_moves_short"], json!(["b 1"]));
    let a = analyze_json(&["nim", "1", "1"]);
    assert_eq!(a["winning_moves_short"], json!([]));
    let a = analyze_json(&["--spec", r#"{"game": "nim", "heaps": [0]}"#]);
    assert_eq!(a["best_move"], Value::Null);
    assert_eq!(a["best_move_short"], Value::Null);
    // Twist: each split once, whatever the order of its heaps.
    let a = analyze_json(&["twist", "10"]);
    assert_eq!(a["winning_move_count"], 10);
    let short = a["winning_moves_short"].as_array().expect("a list");
    assert_eq!(short.len(), 10);
    assert_eq!(short[0], "split 5 5");
    assert!(short.contains(&json!("split 5 4 1")), "{short:?}");
    assert!(!short.contains(&json!("split 1 4 5")), "{short:?}");
    // A JSON spec pasted where the short form goes reads as with --spec.
    let a = analyze_json(&[r#"{"game": "nim", "heaps": [3, 4, 5]}"#]);
    assert_eq!(a["winning_moves_short"], json!(["0 2"]));
}

#[test]
fn short_forms_name_their_flags_and_the_spec_of_games_without_one() {
    let refused = |args: &[&str]| {
        let mut all = vec!["analyze"];
        all.extend_from_slice(args);
        let (code, out, err) = grundy(&all);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    let err = refused(&["moore", "3", "4", "5"]);
    assert!(err.contains("moore needs --k: the most heaps"), "{err}");
    assert!(!err.contains("k: is required"), "{err}");
    let err = refused(&["moore", "--k", "0", "3", "4", "5"]);
    assert!(err.contains("--k: must be at least 1"), "{err}");
    let err = refused(&["bash", "5", "6"]);
    assert!(err.contains("bash needs --k"), "{err}");
    let err = refused(&["nim", "--k", "2", "3"]);
    assert!(err.contains("--k is not an option of nim"), "{err}");
    let err = refused(&["graph", "1", "2"]);
    assert!(
        err.contains(r#"e.g. '{"game": "graph", "vertices": 3"#),
        "{err}"
    );
    let err = refused(&["heaps", "5"]);
    assert!(err.contains(r#"e.g. '{"game": "heaps""#), "{err}");
    let err = refused(&["nim", "1", "18446744073709551615"]);
    assert!(err.contains("heap 1: "), "{err}");
    // What a person may paste or type by mistake: a clear answer, no panic.
    for args in [
        &["nim", "\x1b[A"][..],
        &["nim", "３"],
        &["nim", "é"],
        &["{nope"],
        &["treblecross", "..X\u{7}.."],
        &["darkraft", "RL", "R"],
        &["twist", "0"],
        &["twist", "1", "2"],
        &[""],
    ] {
        let err = refused(args);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}
