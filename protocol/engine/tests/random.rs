//! Random start specs: every game id, many seeds and sizes. Each spec parses,
//! is a pure function of its seed, stays within its size bound and is not over
//! before the first move (unless the size forces it).

use std::collections::HashSet;

use grundy_engine::random::{default_size, game_ids, max_size, random_spec};
use grundy_engine::{Family, Position, Rules, Status};
use serde_json::{json, Value};

/// The presets of `heaps`, `mix` (a random `sum`), and the coin-turning
/// games named by their rule.
const PRESETS: &[&str] = &[
    "bash",
    "subtraction",
    "kayles",
    "dawson",
    "lasker",
    "mix",
    "mock-turtles",
    "ruler",
    "turning-corners",
];

/// Whatever `Family::ALL` holds today, plus the presets of `heaps`.
fn ids() -> Vec<&'static str> {
    let mut ids: Vec<&str> = Family::ALL.iter().map(|f| f.id()).collect();
    ids.extend_from_slice(PRESETS);
    ids
}

fn spec(id: &str, seed: u64, size: Option<u64>) -> Value {
    random_spec(id, seed, size).unwrap_or_else(|e| panic!("{id} seed {seed} size {size:?}: {e}"))
}

fn parse(id: &str, seed: u64, size: Option<u64>, s: &Value) -> Position {
    Position::from_spec(s)
        .unwrap_or_else(|e| panic!("{id} seed {seed} size {size:?}: {s} refused: {e}"))
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().or_else(|| x["size"].as_u64()).expect("a size"))
        .collect()
}

/// The position's size in the sense of the module doc of `random`.
fn measure(s: &Value) -> u64 {
    if let Some(parts) = s.get("parts") {
        // A mix draws each part with the same bound (or a smaller cap).
        parts
            .as_array()
            .unwrap()
            .iter()
            .map(measure)
            .max()
            .expect("a part")
    } else if let Some(h) = s.get("heaps") {
        u64s(h).into_iter().max().expect("at least one heap")
    } else if let Some(p) = s.get("pieces") {
        u64s(p).into_iter().max().expect("at least one piece")
    } else if let Some(l) = s.get("length") {
        l.as_u64().unwrap()
    } else if let Some(g) = s.get("grid") {
        let rows = g.as_array().unwrap();
        let cols = rows[0].as_str().unwrap().len();
        (rows.len() as u64).max(cols as u64)
    } else if let Some(m) = s.get("stones") {
        m.as_u64().unwrap()
    } else if let Some(c) = s.get("coins") {
        // A row's length, or a rectangle's longer side.
        match c {
            Value::String(row) => row.len() as u64,
            rows => {
                let rows = rows.as_array().unwrap();
                let cols = rows[0].as_str().unwrap().len();
                (rows.len() as u64).max(cols as u64)
            }
        }
    } else if let Some(n) = s.get("vertices") {
        n.as_u64().unwrap()
    } else {
        panic!("no size in {s}")
    }
}

/// Sizes to try for `id`, with how many seeds each.
fn plan(id: &str) -> Vec<(Option<u64>, u64)> {
    let limit = max_size(id).unwrap();
    let mut out = vec![(None, 60)];
    for s in [1, 2, 3, 4, 5, 7, 10, 13, 20, 50] {
        if s < limit {
            // A darkraft grid above 10 × 10 takes milliseconds to build.
            out.push((Some(s), if id == "darkraft" && s > 10 { 4 } else { 30 }));
        }
    }
    for s in [1_000, 100_000, 1 << 40, 1 << 62] {
        if s < limit {
            out.push((Some(s), 4));
        }
    }
    out.push((Some(limit), 4));
    out
}

#[test]
fn every_family_and_preset_is_offered() {
    let offered: HashSet<&str> = game_ids().collect();
    for id in ids() {
        assert!(offered.contains(id), "random_spec does not offer {id}");
        assert!(default_size(id).unwrap() <= max_size(id).unwrap());
    }
}

#[test]
fn specs_parse_are_deterministic_and_respect_the_size() {
    for id in ids() {
        for (size, seeds) in plan(id) {
            let bound = size.unwrap_or_else(|| default_size(id).unwrap());
            for seed in (0..seeds).map(|i| i * 0x9e37_79b9 + i) {
                let s = spec(id, seed, size);
                assert_eq!(s["game"], if id == "mix" { "sum" } else { id }, "{s}");
                assert_eq!(
                    s,
                    spec(id, seed, size),
                    "{id} seed {seed}: not deterministic"
                );
                let pos = parse(id, seed, size, &s);
                let m = measure(&s);
                assert!(
                    (1..=bound).contains(&m),
                    "{id} size {bound}: {s} measures {m}"
                );
                // A coin board of 1 × 1 has no rectangle (a `coins` start
                // may be one of Turning Corners).
                let forced_over = bound == 1
                    && ["dawson", "staircase", "graph", "coins", "turning-corners"].contains(&id);
                if !forced_over {
                    assert_eq!(pos.status(), Status::Ongoing, "{id}: {s} is over already");
                }
                assert!(s.get("misere").is_none(), "{s}");
            }
        }
    }
}

#[test]
fn different_seeds_mostly_differ() {
    for id in ids() {
        let big = max_size(id).unwrap().min(1_000);
        let distinct: HashSet<String> = (0..50)
            .map(|seed| spec(id, seed, Some(big)).to_string())
            .collect();
        assert!(distinct.len() >= 45, "{id} size {big}: {}", distinct.len());
        let distinct: HashSet<String> = (0..50)
            .map(|seed| spec(id, seed, None).to_string())
            .collect();
        assert!(distinct.len() >= 8, "{id} default size: {}", distinct.len());
    }
}

#[test]
fn bad_requests_name_the_field() {
    for game in ["", "Nim", "chess", "heaps "] {
        let e = random_spec(game, 1, None).unwrap_err();
        assert_eq!(e.field, "game", "{e}");
        assert!(e.message.contains("nim"), "the known ids are listed: {e}");
    }
    for id in ids() {
        let e = random_spec(id, 1, Some(0)).unwrap_err();
        assert_eq!(e.field, "size", "{e}");
        let limit = max_size(id).unwrap();
        let e = random_spec(id, 1, Some(limit + 1)).unwrap_err();
        assert_eq!(e.field, "size", "{e}");
        assert!(e.message.contains(&limit.to_string()), "{e}");
        let e = random_spec(id, 1, Some(u64::MAX)).unwrap_err();
        assert_eq!(e.field, "size", "{e}");
    }
}

#[test]
fn limits_follow_the_catalogue() {
    let expect = [
        ("nim", 1u64 << 63),
        ("heaps", 1 << 63),
        ("kayles", 1 << 63),
        ("treblecross", 2_000),
        ("darkraft", 20),
        ("staircase", 1_000_000_000_000_000),
        ("twist", 1_000_000_000_000),
        ("graph", 1_000),
        ("wythoff", 1_000_000_000_000_000),
    ];
    for (id, limit) in expect {
        assert_eq!(max_size(id), Some(limit), "{id}");
    }
    assert_eq!(max_size("chess"), None);
}

/// A random start is held to the size of a spec a client could send: every
/// game at its largest size, on many seeds, fits in `MAX_RANDOM_SPEC_BYTES`.
#[test]
fn random_starts_fit_in_a_client_frame() {
    for id in ids() {
        let limit = max_size(id).unwrap();
        let mut largest = 0;
        for seed in 0..200 {
            let bytes = spec(id, seed, Some(limit)).to_string().len();
            largest = largest.max(bytes);
        }
        assert!(
            largest <= grundy_engine::random::MAX_RANDOM_SPEC_BYTES,
            "{id} at size {limit}: {largest} bytes"
        );
    }
    let e = random_spec("graph", 1, Some(100_000)).unwrap_err();
    assert_eq!(e.field, "size", "{e}");
    assert!(e.message.contains("1000"), "{e}");
}

#[test]
fn defaults_are_small() {
    for seed in 0..100 {
        let s = spec("treblecross", seed, None);
        assert!((8..=20).contains(&s["length"].as_u64().unwrap()), "{s}");
        let s = spec("darkraft", seed, None);
        let grid = s["grid"].as_array().unwrap();
        assert!((4..=6).contains(&grid.len()), "{s}");
        assert!((4..=6).contains(&grid[0].as_str().unwrap().len()), "{s}");
        let s = spec("nim", seed, None);
        let heaps = u64s(&s["heaps"]);
        assert!((3..=5).contains(&heaps.len()) && heaps.iter().all(|&h| h <= 10));
        let s = spec("graph", seed, None);
        let n = s["vertices"].as_u64().unwrap();
        for e in s["edges"].as_array().unwrap() {
            let (a, b) = (e[0].as_u64().unwrap(), e[1].as_u64().unwrap());
            assert!(a < b && b < n, "{s}: edges go from lower to higher index");
        }
        let s = spec("staircase", seed, Some(8));
        let pieces = u64s(&s["pieces"]);
        assert_eq!(pieces.iter().collect::<HashSet<_>>().len(), pieces.len());
    }
}

/// The starts are pinned: a change here means every stored seed now replays a
/// different start. Only accept it on purpose.
#[test]
fn starts_are_pinned() {
    let pins = [
        (
            "nim",
            1,
            None,
            json!({"game": "nim", "heaps": [10, 1, 6, 2, 9]}),
        ),
        (
            "twist",
            42,
            Some(1000),
            json!({"game": "twist", "stones": 573}),
        ),
        (
            "darkraft",
            7,
            Some(3),
            json!({"game": "darkraft", "grid": ["LL", "RL", "RL"]}),
        ),
        (
            "heaps",
            3,
            None,
            json!({"game": "heaps", "heaps": [
                {"size": 6, "rule": {"upto": 4}},
                {"size": 3, "rule": "lasker"},
                {"size": 1, "rule": {"octal": "0.07"}},
            ]}),
        ),
        (
            "graph",
            5,
            Some(5),
            json!({"game": "graph", "vertices": 4, "edges": [[0, 3], [0, 2], [1, 3], [2, 3]], "tokens": [1]}),
        ),
        (
            "moore",
            2,
            None,
            json!({"game": "moore", "heaps": [2, 7, 10, 10, 3], "k": 2}),
        ),
        (
            "staircase",
            9,
            None,
            json!({"game": "staircase", "pieces": [2, 4]}),
        ),
    ];
    for (id, seed, size, want) in pins {
        assert_eq!(spec(id, seed, size), want, "{id} seed {seed} size {size:?}");
    }
}
