//! The JSON text the server writes for each move without a `Value` tree is
//! the text of the `Value`: a position's `write_json` against `to_json`, and
//! a move's `to_json_text` against the move printed as a `Value` (keys in the
//! order a `Value` keeps them). Every game id, random starts, along a random
//! playout.

use grundy_engine::random::{game_ids, random_spec};
use grundy_engine::{Position, Rules, Status};
use serde_json::Value;

fn position_text(p: &Position) -> String {
    let mut out = Vec::new();
    p.write_json(&mut out).unwrap();
    String::from_utf8(out).expect("UTF-8")
}

#[test]
fn typed_texts_are_the_texts_of_their_values() {
    let mut checked = 0;
    for id in game_ids() {
        for seed in 0..12 {
            let mut spec = random_spec(id, seed, None).unwrap();
            // Misère, where the family has it.
            if seed % 2 == 1 && matches!(id, "nim" | "heaps" | "kayles" | "sum") {
                spec["misere"] = Value::Bool(true);
            }
            let mut p = match Position::from_spec(&spec) {
                Ok(p) => p,
                // Only the misère made here may be refused (a sum with a
                // part that has no misère form).
                Err(e) if spec["misere"] == true => {
                    assert!(e.to_string().contains("mis"), "{id} seed {seed}: {e}");
                    continue;
                }
                Err(e) => panic!("{id} seed {seed}: {spec} refused: {e}"),
            };
            let mut step = seed as usize;
            loop {
                let value = serde_json::to_string(&p.to_json()).unwrap();
                assert_eq!(position_text(&p), value, "{id} seed {seed}: {spec}");
                let moves = p.legal_moves(64).moves;
                for m in &moves {
                    let value = serde_json::to_string(&serde_json::to_value(m).unwrap()).unwrap();
                    assert_eq!(m.to_json_text().get(), value, "{id} seed {seed}");
                }
                checked += 1;
                if p.status() != Status::Ongoing || moves.is_empty() {
                    break;
                }
                step = step.wrapping_mul(31).wrapping_add(7);
                p.play(&moves[step % moves.len()]).unwrap();
            }
        }
    }
    assert!(checked > 500, "only {checked} positions checked");
}
