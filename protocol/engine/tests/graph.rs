mod common;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Position, Rules, Status, Strategy as _};
use proptest::prelude::*;
use serde_json::{json, Value};

fn to_json<T: serde::Serialize>(m: &T) -> Value {
    serde_json::to_value(m).unwrap()
}

/// A random DAG on up to 7 vertices: edges only from lower to higher index,
/// then the labels shuffled so that edges run both ways; a few edges twice.
fn dag() -> impl proptest::strategy::Strategy<Value = Value> {
    (1u32..=7)
        .prop_flat_map(|n| {
            let pairs = (n * (n - 1) / 2) as usize;
            (
                Just(n),
                prop::collection::vec(prop::bool::weighted(0.4), pairs),
                Just((0..n).collect::<Vec<u32>>()).prop_shuffle(),
                prop::collection::vec(0..n, 0..=3),
                prop::bool::ANY,
            )
        })
        .prop_map(|(n, keep, label, tokens, twice)| {
            let mut edges = Vec::new();
            let mut k = 0;
            for a in 0..n {
                for b in a + 1..n {
                    if keep[k] {
                        edges.push([label[a as usize], label[b as usize]]);
                        if twice && k % 3 == 0 {
                            edges.push([label[a as usize], label[b as usize]]);
                        }
                    }
                    k += 1;
                }
            }
            json!({"game": "graph", "vertices": n, "edges": edges, "tokens": tokens})
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    #[test]
    fn graph_matches_oracle(spec in dag()) {
        check_against_oracle(&spec, true);
    }

    /// Misère: one movable token by the vertex table, several by search.
    #[test]
    fn misere_graph_matches_oracle(mut spec in dag()) {
        spec["misere"] = json!(true);
        check_against_oracle(&spec, false);
    }
}

/// Vertex k is a heap of k stones from which 1, 2 or 3 may be taken.
fn subtraction_graph(n: u32) -> Vec<[u32; 2]> {
    (0..n)
        .flat_map(|k| (1..=3).filter(move |&j| j <= k).map(move |j| [k, k - j]))
        .collect()
}

#[test]
fn seed_example() {
    // Take 1, 2 or 3 of 21 stones: g(k) = k % 4, so take 1 and leave 20.
    let spec =
        json!({"game": "graph", "vertices": 22, "edges": subtraction_graph(22), "tokens": [21]});
    let a = Analysis::of(&parse(&spec), 100);
    assert_eq!(a.outcome, Outcome::N);
    assert_eq!(a.grundy, Some(1));
    assert_eq!(to_json(&a.best_move), json!({"token": 0, "to": 20}));
    assert_eq!(a.winning_move_count, Some(1));
    // Two tokens on equal values cancel.
    let spec =
        json!({"game": "graph", "vertices": 22, "edges": subtraction_graph(22), "tokens": [4, 4]});
    assert_eq!(parse(&spec).outcome(), Outcome::P);
}

#[test]
fn moves_up_the_values_can_win() {
    // 0 -> 1 -> 2 and 0 -> 2, and 3 -> 4 (values: g(2)=0, g(1)=1, g(0)=2,
    // g(4)=0, g(3)=1). Tokens on 0 and 3: total 3; token 0 must reach value
    // 2 ^ 3 = 1 (vertex 1); token 1 would need value 1 ^ 3 = 2, which no
    // successor of vertex 3 has.
    let spec = json!({"game": "graph", "vertices": 5,
        "edges": [[0, 1], [1, 2], [0, 2], [3, 4]], "tokens": [0, 3]});
    let p = parse(&spec);
    assert_eq!(p.grundy(), Some(3));
    let w: Vec<Value> = p.winning_moves(10).moves.iter().map(to_json).collect();
    assert_eq!(w, vec![json!({"token": 0, "to": 1})]);
    // A winning move may go up in value: add 5 -> 0 (value 2) and 5 -> 2
    // (value 0), so g(5) = 1 with a successor of value 2.
    let spec = json!({"game": "graph", "vertices": 6,
        "edges": [[0, 1], [1, 2], [0, 2], [3, 4], [5, 0], [5, 2]], "tokens": [5, 0]});
    // g(5) = mex{2, 0} = 1, g(0) = 2: total 3. Token 0 (on 5) to value 1 ^ 3 = 2:
    // vertex 0 (up from 1 to 2). Token 1 (on 0) to value 2 ^ 3 = 1: vertex 1.
    let p = parse(&spec);
    assert_eq!(p.grundy(), Some(3));
    let mut w: Vec<Value> = p.winning_moves(10).moves.iter().map(to_json).collect();
    w.sort_by_key(|v| v["token"].as_u64());
    assert_eq!(
        w,
        vec![json!({"token": 0, "to": 0}), json!({"token": 1, "to": 1})]
    );
}

#[test]
fn long_chains_do_not_overflow_the_stack() {
    let n = 100_000u32;
    // v -> v + 1: the sink 99999 has value 0, and values alternate.
    let edges: Vec<[u32; 2]> = (0..n - 1).map(|v| [v, v + 1]).collect();
    let p =
        parse(&json!({"game": "graph", "vertices": n, "edges": edges, "tokens": [0, 2, 99_998]}));
    // Three tokens, each on a value-1 vertex.
    assert_eq!(p.grundy(), Some(1));
    assert_eq!(
        to_json(&p.best_move().unwrap()),
        json!({"token": 0, "to": 1})
    );
    // The other way round: v + 1 -> v.
    let edges: Vec<[u32; 2]> = (0..n - 1).map(|v| [v + 1, v]).collect();
    let p = parse(&json!({"game": "graph", "vertices": n, "edges": edges, "tokens": [99_999]}));
    assert_eq!(p.grundy(), Some(1));
    // A cycle through the whole chain is refused, and the message stays short.
    let mut edges: Vec<[u32; 2]> = (0..n - 1).map(|v| [v, v + 1]).collect();
    edges.push([n - 1, 0]);
    let err =
        Position::from_spec(&json!({"game": "graph", "vertices": n, "edges": edges, "tokens": []}))
            .unwrap_err()
            .to_string();
    assert!(
        err.starts_with("edges: the edges form a cycle through vertex "),
        "{err}"
    );
    assert!(err.contains("(100000 vertices)"), "{err}");
    assert!(err.len() < 200, "{err}");
}

#[test]
fn at_the_limits() {
    // 100,000 vertices, v -> v+1 ..= v+10 (999,945 edges), 10,000 tokens: the
    // values are the subtraction game's, g(v) = (n - 1 - v) % 11.
    let n = 100_000u32;
    let edges: Vec<[u32; 2]> = (0..n)
        .flat_map(|v| {
            (1..=10)
                .filter(move |&k| v + k < n)
                .map(move |k| [v, v + k])
        })
        .collect();
    assert!(edges.len() <= 1_000_000);
    let tokens: Vec<u32> = (0..10_000u32).map(|i| (i * 7919) % n).collect();
    let g = |v: u32| u64::from((n - 1 - v) % 11);
    let want = tokens.iter().fold(0, |x, &v| x ^ g(v));
    let spec = json!({"game": "graph", "vertices": n, "edges": edges, "tokens": tokens});
    let p = parse(&spec);
    assert_eq!(p.grundy(), Some(want));
    assert_ne!(want, 0);
    let best = p.best_move().unwrap();
    let mut q = p.clone();
    q.play(&best).unwrap();
    assert_eq!(q.grundy(), Some(0));
    // From the P-position the bot still moves, along the longest play.
    let patient = q.best_move().unwrap();
    assert!(q.check(&patient).is_ok());
    assert!(q.winning_moves(10).moves.is_empty());
    let w = p.winning_moves(usize::MAX);
    assert!(w.complete && !w.moves.is_empty());
}

#[test]
fn bad_specs_name_the_field() {
    let g = |edges: Value, tokens: Value| json!({"game": "graph", "vertices": 3, "edges": edges, "tokens": tokens});
    let cases = [
        (
            json!({"game": "graph", "edges": [], "tokens": []}),
            "vertices: is required but missing",
        ),
        (
            json!({"game": "graph", "vertices": 100_001, "edges": [], "tokens": []}),
            "vertices: must be at most 100000",
        ),
        (
            g(json!([[0, 1], [1, 3]]), json!([])),
            "edges[1][1]: vertex 3 does not exist (vertices are numbered 0 to 2)",
        ),
        (
            g(json!([[0, 1], [-1, 2]]), json!([])),
            "edges[1][0]: must not be negative",
        ),
        (
            g(json!([[0, 1], [2, 2]]), json!([])),
            "edges[1]: a self-loop at vertex 2",
        ),
        (
            g(json!([[0, 1, 2]]), json!([])),
            "edges[0]: expected a pair [from, to], got an array of 3",
        ),
        (
            g(json!([{"from": 0}]), json!([])),
            "edges[0]: expected a pair [from, to], got an object",
        ),
        (
            g(json!([[0, 1], [1, 2], [2, 0]]), json!([])),
            "edges: the edges form a cycle through vertex 0: 0 -> 1 -> 2 -> 0",
        ),
        (
            g(json!([[0, 1], [1, 2], [2, 1]]), json!([])),
            "edges: the edges form a cycle through vertex 1: 1 -> 2 -> 1",
        ),
        (
            g(json!([]), json!([0, 3])),
            "tokens[1]: vertex 3 does not exist",
        ),
        (g(json!([]), json!(0)), "tokens: expected an array"),
        (
            json!({"game": "graph", "vertices": 0, "edges": [], "tokens": [0]}),
            "tokens[0]: vertex 0 does not exist: the graph has no vertices",
        ),
        (
            json!({"game": "graph", "vertices": 2, "edges": [[0, 1]]}),
            "tokens: is required",
        ),
    ];
    common::assert_specs_refused(&cases);
    let err = Position::from_spec(&g(json!([]), json!(vec![0; 10_001]))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tokens: has 10001 entries; the limit is 10000"
    );
}

#[test]
fn bad_moves_say_why() {
    let p = parse(
        &json!({"game": "graph", "vertices": 4, "edges": [[0, 1], [1, 2], [1, 2]], "tokens": [0, 3]}),
    );
    let cases = [
        (
            json!({"token": 2, "to": 1}),
            "no token 2: there are 2 (numbered from 0)",
        ),
        (
            json!({"token": 0, "to": 4}),
            "no vertex 4: there are 4 (numbered from 0)",
        ),
        (
            json!({"token": 0, "to": 2}),
            "there is no edge from vertex 0 (token 0) to vertex 2",
        ),
        (
            json!({"token": 1, "to": 2}),
            "token 1 is on vertex 3, which has no outgoing edge",
        ),
        (
            json!({"token": 0, "to": u64::MAX}),
            "no vertex 18446744073709551615",
        ),
        (json!({"token": 0}), "to: is required"),
        (json!({"token": -1, "to": 1}), "token: must not be negative"),
    ];
    common::assert_moves_refused(&p, &cases);
    // Duplicate edges count once.
    assert_eq!(p.legal_moves(100).moves.len(), 1);
    let mut p = p;
    p.play(&p.parse_move(&json!({"token": 0, "to": 1})).unwrap())
        .unwrap();
    p.play(&p.parse_move(&json!({"token": 0, "to": 2})).unwrap())
        .unwrap();
    assert_eq!(
        p.status(),
        Status::Over {
            to_move_wins: false
        }
    );
    let err = p
        .parse_move(&json!({"token": 0, "to": 1}))
        .and_then(|m| p.check(&m));
    assert_eq!(err.unwrap_err().to_string(), "the game is over");
    assert_eq!(
        p.to_json(),
        json!({"game": "graph", "vertices": 4, "edges": [[0, 1], [1, 2]], "tokens": [2, 3]})
    );
}

/// Misère with one token that can move: a per-vertex outcome, on the largest
/// graph. On a chain a sink wins for the player to move, so outcomes alternate.
#[test]
fn misere_one_token_on_100000_vertices() {
    let n = 100_000u32;
    let edges: Vec<[u32; 2]> = (0..n - 1).map(|v| [v, v + 1]).collect();
    let spec = |tokens: Value| json!({"game": "graph", "vertices": n, "edges": edges, "tokens": tokens, "misere": true});
    // 99,999 steps from the sink: an odd distance, lost for the player to move.
    let p = parse(&spec(json!([0, 99_999, 99_999])));
    let Position::Graph(g) = &p else {
        unreachable!()
    };
    assert_eq!(
        g.misere_method(),
        Some(grundy_engine::misere::Method::Search)
    );
    assert_eq!(p.outcome(), Outcome::P);
    assert_eq!(p.grundy(), None);
    assert_eq!(
        to_json(&p.best_move().unwrap()),
        json!({"token": 0, "to": 1})
    );
    let p = parse(&spec(json!([1])));
    assert_eq!(p.outcome(), Outcome::N);
    assert_eq!(
        Analysis::of(&p, 10)
            .winning_moves
            .iter()
            .map(to_json)
            .collect::<Vec<_>>(),
        [json!({"token": 0, "to": 2})]
    );
    // Every token on the sink: the game is over, won by the player to move.
    let p = parse(&spec(json!([99_999])));
    assert_eq!(p.status(), Status::Over { to_move_wins: true });
    assert_eq!(Position::from_spec(&p.to_json()).unwrap(), p);
}

#[test]
fn misere_several_tokens_are_searched_within_the_limit() {
    // Two tokens on a chain of 20: a few hundred positions, searched.
    let edges: Vec<[u32; 2]> = (0..19).map(|v| [v, v + 1]).collect();
    let spec =
        json!({"game": "graph", "vertices": 20, "edges": edges, "tokens": [0, 3], "misere": true});
    let p = parse(&spec);
    let Position::Graph(g) = &p else {
        unreachable!()
    };
    assert_eq!(
        g.misere_method(),
        Some(grundy_engine::misere::Method::Search)
    );
    // Every move is one step: 19 + 16 steps in all, an odd count, so the
    // player to move makes the last one and loses.
    assert_eq!(p.outcome(), Outcome::P);
    check_against_oracle(&spec, false);
    // Three tokens on a chain of 100,000 reach far too many positions.
    let n = 100_000u32;
    let edges: Vec<[u32; 2]> = (0..n - 1).map(|v| [v, v + 1]).collect();
    let err = Position::from_spec(
        &json!({"game": "graph", "vertices": n, "edges": edges, "tokens": [0, 1, 2], "misere": true}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("misere: 3 tokens can move: misère sums have no values to add, so several tokens are played by exhaustive search, limited to 100000 positions"),
        "{err}"
    );
}
