//! Words for positions and moves, and the binary table that shows a person why
//! a Nim-like position is won or lost (Bouton: a column with an odd number of
//! 1s is unbalanced; the player to move wins iff some column is).

use grundy_protocol::games::wythoff::HEAP_NAMES;
use grundy_protocol::{Move, Position};
use serde_json::{json, Value};

/// One line describing the position.
pub fn position_line(p: &Position) -> String {
    if let Position::Sum(s) = p {
        let parts: Vec<String> = s.parts.iter().map(|p| p.label()).collect();
        let misere = if s.misere.is_some() { ", misère" } else { "" };
        return cut(format!("sum {}{misere}", parts.join(" + ")));
    }
    let spec = grundy_protocol::Rules::to_json(p);
    let mut fields = spec.as_object().cloned().unwrap_or_default();
    let game = fields
        .remove("game")
        .and_then(|g| g.as_str().map(str::to_string))
        .unwrap_or_default();
    let text = serde_json::to_string(&Value::Object(fields)).unwrap_or_default();
    cut(format!("{game} {text}"))
}

/// At most 200 bytes of a line, with `…` where it was cut.
fn cut(text: String) -> String {
    const MAX: usize = 200;
    if text.len() > MAX {
        let end = (0..=MAX)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}…", &text[..end])
    } else {
        text
    }
}

/// A move in words, from its wire encoding (shared by every family).
pub fn describe_move(p: &Position, m: &Move) -> String {
    if let (Position::Sum(s), Move::Sum(pm)) = (p, m) {
        if let Some(part) = s.parts.get(pm.part) {
            let inner = describe_move(&part.game, &pm.inner);
            return format!("in part {} ({}): {inner}", pm.part, part.label());
        }
    }
    let v = json!(m);
    let num = |k: &str| v.get(k).and_then(Value::as_u64);
    let pairs = |k: &str| -> Option<Vec<(u64, u64)>> {
        v.get(k)?
            .as_array()?
            .iter()
            .map(|pair| Some((pair.get(0)?.as_u64()?, pair.get(1)?.as_u64()?)))
            .collect()
    };
    if let (Some(heap), Some(take)) = (num("heap"), num("take")) {
        let size = heap_size(p, heap as usize);
        let from = match size {
            Some(s) => format!("heap {heap} (of {s})"),
            None => format!("heap {heap}"),
        };
        let mut text = if take == 0 {
            format!("split {from}")
        } else {
            format!("take {take} from {from}")
        };
        if let Some([a, b]) = v
            .get("leave")
            .and_then(|l| serde_json::from_value::<[u64; 2]>(l.clone()).ok())
        {
            text.push_str(&format!(", leaving {a} and {b}"));
        }
        if let Some(give) = pairs("give").filter(|g| !g.is_empty()) {
            let parts: Vec<String> = give
                .iter()
                .map(|(j, a)| format!("{a} to heap {j}"))
                .collect();
            text.push_str(&format!(", moving {}", parts.join(", ")));
        }
        return text;
    }
    if let Some(take) = pairs("take") {
        let parts: Vec<String> = take
            .iter()
            .map(|(h, a)| format!("{a} from heap {h}"))
            .collect();
        return format!("take {}", parts.join(", "));
    }
    if let (Position::Wythoff(w), Some([a, b])) = (
        p,
        v.get("take")
            .and_then(|t| serde_json::from_value::<[u64; 2]>(t.clone()).ok()),
    ) {
        // The heaps by the names the board gives them.
        let [name_a, name_b] = HEAP_NAMES;
        let [size_a, size_b] = w.heaps;
        return match (a, b) {
            (0, b) => format!("take {b} from heap {name_b} (of {size_b})"),
            (a, 0) => format!("take {a} from heap {name_a} (of {size_a})"),
            (a, _) => format!("take {a} from both heaps"),
        };
    }
    if let (Some(from), Some(to)) = (num("from"), num("to")) {
        return format!("move the piece on cell {from} to cell {to}");
    }
    if let (Some(token), Some(to)) = (num("token"), num("to")) {
        return format!("move token {token} to vertex {to}");
    }
    if let (Some(r), Some(c)) = (num("row"), num("col")) {
        return format!("play the cell at row {r}, column {c}");
    }
    if let Some(cell) = num("cell") {
        return format!("put an X on cell {cell}");
    }
    if let Some(split) = v.get("split").and_then(Value::as_array) {
        let parts: Vec<String> = split.iter().map(|x| x.to_string()).collect();
        return match parts.as_slice() {
            [one] => format!("keep the stones as one heap of {one}"),
            _ => format!("split into heaps {}", parts.join(" + ")),
        };
    }
    v.to_string()
}

fn heap_size(p: &Position, i: usize) -> Option<u64> {
    match p {
        Position::Nim(n) => n.heaps.get(i).copied(),
        Position::Heaps(h) => h.heaps.get(i).map(|h| h.size),
        #[allow(unreachable_patterns)]
        _ => grundy_protocol::Rules::to_json(p)
            .get("heaps")?
            .get(i)?
            .as_u64(),
    }
}

/// What the table means for this family.
fn table_note(p: &Position) -> &'static str {
    match p {
        Position::Nim(n) if n.misere => {
            "Misère: play as in normal Nim until the move would leave no heap above 1; then leave an odd number of 1-heaps."
        }
        Position::Nim(_) | Position::Twist(_) => {
            "Bouton: the player to move wins iff some column is unbalanced (odd number of 1s); the winning move balances every column."
        }
        Position::Staircase(_) => {
            "Staircase: pair the pieces from the right; each gap inside a pair is a Nim heap (moving a pair's left piece only grows its gap, and can be undone)."
        }
        _ => "Sprague–Grundy: each row is a part's Grundy value; the player to move wins iff some column is unbalanced.",
    }
}

/// The binary table with the nim-sum row, or None for games that are not sums.
pub fn nim_table(p: &Position) -> Option<String> {
    const MAX_ROWS: usize = 40;
    let rows: Vec<(String, u64)> = grundy_protocol::components(p)?
        .into_iter()
        .map(|c| (c.label, c.value))
        .collect();
    let note = table_note(p);
    if rows.is_empty() {
        return None;
    }
    if rows.len() > MAX_ROWS {
        return Some(format!(
            "({} components: binary table omitted)\n",
            rows.len()
        ));
    }
    let sum = rows.iter().fold(0, |acc, (_, g)| acc ^ g);
    let max = rows.iter().map(|(_, g)| *g).max().unwrap_or(0).max(sum);
    let bits = (64 - max.leading_zeros()).max(1) as usize;
    // Powers of two as headers while they stay short, bit numbers after that.
    let headers: Vec<String> = (0..bits)
        .rev()
        .map(|b| {
            if bits <= 8 {
                (1u64 << b).to_string()
            } else {
                b.to_string()
            }
        })
        .collect();
    let width = headers.iter().map(String::len).max().unwrap_or(1);
    let label_width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0).max(7);
    let value_width = max.to_string().len();
    let cells = |g: u64| -> String {
        (0..bits)
            .rev()
            .map(|b| format!("{:>width$}", (g >> b) & 1))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = format!("{note}\n");
    out.push_str(&format!(
        "{:label_width$}  {:>value_width$}  {}\n",
        "",
        "",
        headers
            .iter()
            .map(|h| format!("{h:>width$}"))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    for (label, g) in &rows {
        out.push_str(&format!(
            "{label:label_width$}  {g:>value_width$}  {}\n",
            cells(*g)
        ));
    }
    out.push_str(&format!(
        "{:label_width$}  {sum:>value_width$}  {}\n",
        "nim-sum",
        cells(sum)
    ));
    let marks: Vec<String> = (0..bits)
        .rev()
        .map(|b| format!("{:>width$}", if (sum >> b) & 1 == 1 { "U" } else { "." }))
        .collect();
    out.push_str(&format!(
        "{:label_width$}  {:>value_width$}  {}   (U: unbalanced column)\n",
        "",
        "",
        marks.join(" ")
    ));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grundy_protocol::Rules;

    fn words(spec: Value, mv: Value) -> String {
        let p = Position::from_spec(&spec).expect("spec");
        let m = p.parse_move(&mv).expect("move");
        describe_move(&p, &m)
    }

    #[test]
    fn wythoff_heaps_are_named_as_the_board_names_them() {
        let spec = json!({"game": "wythoff", "heaps": [3, 5]});
        assert_eq!(
            words(spec.clone(), json!({"take": [2, 0]})),
            "take 2 from heap a (of 3)"
        );
        assert_eq!(
            words(spec.clone(), json!({"take": [0, 4]})),
            "take 4 from heap b (of 5)"
        );
        assert_eq!(
            words(spec, json!({"take": [1, 1]})),
            "take 1 from both heaps"
        );
    }

    #[test]
    fn a_twist_kept_whole_is_one_heap() {
        let spec = json!({"game": "twist", "stones": 4});
        assert_eq!(
            words(spec.clone(), json!({"split": [4]})),
            "keep the stones as one heap of 4"
        );
        assert_eq!(
            words(spec, json!({"split": [1, 3]})),
            "split into heaps 1 + 3"
        );
    }
}
