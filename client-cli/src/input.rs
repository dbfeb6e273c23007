//! What a person types during a match: commands, and moves in a short form per
//! family, turned into the protocol's move JSON and checked with the engine
//! before anything is sent.

use grundy_protocol::games::twist::Twist;
use grundy_protocol::{Move, Position, Rules};
use serde_json::{json, Value};

/// One line of input, understood.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A move the engine accepts here: its wire JSON, and the engine's move.
    Move(Value, Move),
    Help,
    Hint,
    Resign,
    /// Call the match off (before one's own first move).
    Abort,
    /// The moves so far.
    Moves,
    Quit,
    /// An empty line: draw the position again.
    Redraw,
}

/// Reads a line typed during a match at `position`. Moves are checked with the
/// engine: an `Err` is a message for the person (never sent to the server).
pub fn parse(position: &Position, line: &str) -> Result<Input, String> {
    let line = line.trim();
    match line.to_ascii_lowercase().as_str() {
        "" => return Ok(Input::Redraw),
        "help" | "h" | "?" => return Ok(Input::Help),
        "hint" => return Ok(Input::Hint),
        "resign" => return Ok(Input::Resign),
        "abort" => return Ok(Input::Abort),
        "moves" | "m" => return Ok(Input::Moves),
        "quit" | "exit" | "q" => return Ok(Input::Quit),
        _ => {}
    }
    let value = if line.starts_with('{') {
        serde_json::from_str::<Value>(line).map_err(|e| format!("that is not valid JSON: {e}"))?
    } else {
        short_move(position, line)?
    };
    let mv = checked(position, &value)?;
    Ok(Input::Move(value, mv))
}

/// The engine's verdict on a move's JSON: the move, or why it is illegal.
pub fn checked(position: &Position, value: &Value) -> Result<Move, String> {
    let mv = position
        .parse_move(value)
        .map_err(|e| format!("not a move of this game: {e}"))?;
    position
        .check(&mv)
        .map_err(|e| format!("illegal move: {e}"))?;
    Ok(mv)
}

fn num(word: &str) -> Result<u64, String> {
    crate::spec::whole_number(word).map_err(|e| format!("{e}; type `help` for how to write moves"))
}

fn nums(words: &[&str]) -> Result<Vec<u64>, String> {
    words.iter().map(|w| num(w)).collect()
}

/// `a:b` pairs, e.g. `0:2` (heap 0, amount 2).
fn pairs(words: &[&str]) -> Result<Vec<(u64, u64)>, String> {
    words
        .iter()
        .map(|w| match w.split_once(':') {
            Some((a, b)) => Ok((num(a)?, num(b)?)),
            None => Err(format!(
                "{w:?}: write heap:amount, e.g. 0:2; type `help` for how to write moves"
            )),
        })
        .collect()
}

fn garbage(line: &str) -> String {
    format!("{line:?} is not a move or a command; type `help` to see how to write them")
}

/// The short form of a move for this family (see `help_text`).
fn short_move(position: &Position, line: &str) -> Result<Value, String> {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .all(|w| w.parse::<u64>().is_err() && !w.contains(':') && !w.contains('+'))
    {
        return Err(garbage(line));
    }
    let take = |w: &[&str]| -> Result<Value, String> {
        match nums(w)?.as_slice() {
            [h, k] => Ok(json!({"heap": h, "take": k})),
            _ => Err("write a heap and an amount: `2 3` takes 3 from heap 2".into()),
        }
    };
    match position {
        Position::Nim(_) => take(&words),
        Position::Heaps(_) => match words.as_slice() {
            ["split", rest @ ..] => match nums(rest)?.as_slice() {
                [h, a, b] => Ok(json!({"heap": h, "take": 0, "leave": [a, b]})),
                _ => Err("write `split HEAP A B`: split the heap into A and B".into()),
            },
            _ => match nums(&words)?.as_slice() {
                [h, k] => Ok(json!({"heap": h, "take": k})),
                [h, k, a, b] => Ok(json!({"heap": h, "take": k, "leave": [a, b]})),
                _ => Err("write `HEAP AMOUNT`, or `HEAP AMOUNT A B` to leave two heaps".into()),
            },
        },
        Position::Wythoff(_) => {
            let (which, amount) = match words.as_slice() {
                [w, k] => (w.to_ascii_lowercase(), num(k)?),
                _ => return Err("write `a 3`, `b 3` or `both 3`".into()),
            };
            match which.as_str() {
                "a" | "0" => Ok(json!({"take": [amount, 0]})),
                "b" | "1" => Ok(json!({"take": [0, amount]})),
                "both" | "ab" => Ok(json!({"take": [amount, amount]})),
                _ => Err("write `a 3`, `b 3` or `both 3`".into()),
            }
        }
        Position::Moore(_) => {
            if words.iter().all(|w| w.contains(':')) {
                Ok(json!({"take": pairs(&words)?}))
            } else {
                match nums(&words)?.as_slice() {
                    [h, k] => Ok(json!({"take": [[h, k]]})),
                    _ => Err("write heap:amount pairs, e.g. `0:2 3:1`, or `HEAP AMOUNT`".into()),
                }
            }
        }
        Position::NewStone(_) => {
            if words.len() < 2 {
                return Err(
                    "write `HEAP AMOUNT`, then heap:amount to move stones, e.g. `0 3 2:1`".into(),
                );
            }
            let (h, k) = (num(words[0])?, num(words[1])?);
            let give = pairs(&words[2..])?;
            if give.is_empty() {
                Ok(json!({"heap": h, "take": k}))
            } else {
                Ok(json!({"heap": h, "take": k, "give": give}))
            }
        }
        Position::Staircase(_) => match nums(&words)?.as_slice() {
            [from, to] => Ok(json!({"from": from, "to": to})),
            _ => Err("write `FROM TO`: move the piece on cell FROM to cell TO".into()),
        },
        Position::Treblecross(_) => match nums(&words)?.as_slice() {
            [cell] => Ok(json!({"cell": cell})),
            _ => Err("write a cell number, e.g. `5`".into()),
        },
        Position::Darkraft(_) => match nums(&words)?.as_slice() {
            [r, c] => Ok(json!({"row": r, "col": c})),
            _ => Err("write `ROW COL`, e.g. `2 3`".into()),
        },
        Position::Graph(_) => match nums(&words)?.as_slice() {
            [t, v] => Ok(json!({"token": t, "to": v})),
            _ => Err("write `TOKEN VERTEX`: move that token to that vertex".into()),
        },
        Position::Twist(Twist::Unsplit(_)) => {
            let parts: Vec<&str> = match words.as_slice() {
                ["split", rest @ ..] => rest.to_vec(),
                _ => words.iter().flat_map(|w| w.split('+')).collect(),
            };
            let parts: Vec<&str> = parts
                .iter()
                .flat_map(|w| w.split('+'))
                .filter(|w| !w.is_empty())
                .collect();
            Ok(json!({"split": nums(&parts)?}))
        }
        Position::Twist(Twist::Split(_)) => take(&words),
        Position::Sum(s) => {
            // `2: 1 1`: the part, a colon, then the move as that part reads it.
            let Some((part, rest)) = line.split_once(':') else {
                return Err("write the part first: `2: 1 1` plays `1 1` in part 2".into());
            };
            let part = num(part.trim())?;
            let Some(p) = s.parts.get(part as usize) else {
                return Err(format!(
                    "there is no part {part}: the parts are numbered 0 to {}",
                    s.parts.len() - 1
                ));
            };
            let rest = rest.trim();
            let inner = if rest.starts_with('{') {
                serde_json::from_str::<Value>(rest)
                    .map_err(|e| format!("that is not valid JSON: {e}"))?
            } else {
                short_move(&p.game, rest).map_err(|e| format!("in part {part}: {e}"))?
            };
            Ok(json!({"part": part, "move": inner}))
        }
    }
}

/// A move in the short form `parse` reads back (`0 2`, `a 3`, `split 4 6`,
/// `0:2 3:1`...): what a person types at the prompt. A move that has no short
/// form (one the rules refuse anyway, such as Wythoff's `[2, 3]`) is written
/// as its JSON, which the prompt reads too.
pub fn short_form(m: &Move) -> String {
    use grundy_protocol::games::twist::TwistMove;
    let pairs = |list: &[(usize, u64)]| -> Vec<String> {
        list.iter().map(|(h, k)| format!("{h}:{k}")).collect()
    };
    match m {
        Move::Nim(t) => format!("{} {}", t.heap, t.take),
        Move::Heaps(h) => match h.leave {
            None => format!("{} {}", h.heap, h.take),
            Some([a, b]) if h.take == 0 => format!("split {} {a} {b}", h.heap),
            Some([a, b]) => format!("{} {} {a} {b}", h.heap, h.take),
        },
        Move::Wythoff(w) => match w.take {
            [x, 0] if x > 0 => format!("a {x}"),
            [0, y] if y > 0 => format!("b {y}"),
            [x, y] if x == y && x > 0 => format!("both {x}"),
            _ => json!(m).to_string(),
        },
        Move::Moore(mm) => match mm.take.as_slice() {
            [] => json!(m).to_string(),
            [(h, k)] => format!("{h} {k}"),
            list => pairs(list).join(" "),
        },
        Move::NewStone(n) => {
            let mut words = vec![n.heap.to_string(), n.take.to_string()];
            words.extend(pairs(&n.give));
            words.join(" ")
        }
        Move::Staircase(s) => format!("{} {}", s.from, s.to),
        Move::Treblecross(c) => c.cell.to_string(),
        Move::Darkraft(c) => format!("{} {}", c.row, c.col),
        Move::Graph(g) => format!("{} {}", g.token, g.to),
        Move::Twist(TwistMove::Split { split }) if !split.is_empty() => {
            let sizes: Vec<String> = split.iter().map(u64::to_string).collect();
            format!("split {}", sizes.join(" "))
        }
        Move::Twist(TwistMove::Split { .. }) => json!(m).to_string(),
        Move::Twist(TwistMove::Take(t)) => format!("{} {}", t.heap, t.take),
        Move::Sum(pm) => format!("{}: {}", pm.part, short_form(&pm.inner)),
    }
}

/// How to write moves of this family, and the commands.
pub fn help_text(position: &Position) -> String {
    format!(
        "Moves (numbers as shown on the board):\n{}\n  {{...}}          any move as raw JSON, e.g. {}\n\
         Commands:\n  help           this text\n  hint           who wins, the winning move, and why (rooms with hints)\n  \
         moves          the moves so far\n  \
         abort          call the match off, before your first move\n  \
         resign         give up the match (asks to confirm)\n  quit           leave (your seat stays: `grundy play --resume` comes back)\n  \
         (empty line)   draw the board again\n",
        moves_help(position),
        example_json(position)
    )
}

/// How to write the moves of this family, one example a line.
fn moves_help(position: &Position) -> String {
    match position {
        Position::Nim(_) => "  2 3            take 3 stones from heap 2".to_string(),
        Position::Heaps(h) => heap_rule_help(h),
        Position::Wythoff(_) => [
            "  a 3            take 3 from heap a",
            "  b 3            take 3 from heap b",
            "  both 3         take 3 from both heaps",
        ]
        .join("\n"),
        Position::Moore(m) => {
            // Amounts the game allows: at most max_take from a heap.
            let most = m.max_take.unwrap_or(u64::MAX);
            let (one, two) = (most.min(3), most.min(2));
            let only = format!("  2 {one:<13}take {one} from heap 2 only");
            if m.k >= 2 {
                let pair = format!("0:{two} 3:1");
                format!(
                    "  {pair:<15}take {two} from heap 0 and 1 from heap 3 (at most {} heaps at once)\n{only}",
                    m.k
                )
            } else {
                only
            }
        }
        Position::NewStone(_) => [
            "  2 3            take 3 from heap 2",
            "  2 3 0:1 4:2    take 3 from heap 2, then move 1 of its stones to heap 0 and 2 to heap 4",
        ]
        .join("\n"),
        Position::Staircase(_) => {
            "  6 4            move the piece on cell 6 left to cell 4".to_string()
        }
        Position::Treblecross(_) => "  5              put an X on cell 5".to_string(),
        Position::Darkraft(_) => {
            "  2 3            choose the active cell at row 2, column 3".to_string()
        }
        Position::Graph(_) => "  1 7            move token 1 along an edge to vertex 7".to_string(),
        Position::Twist(Twist::Unsplit(_)) => [
            "  split 4 6      split the stones into heaps of 4 and 6 (also `4+6`)",
            "  then: 2 3      take 3 stones from heap 2",
        ]
        .join("\n"),
        Position::Twist(Twist::Split(_)) => {
            "  2 3            take 3 stones from heap 2".to_string()
        }
        Position::Sum(s) => {
            // The part's number and a colon, then the part's own move; each
            // kind of part shown once.
            let mut lines = vec!["  P: MOVE        play MOVE in part P, as that part reads it:".to_string()];
            let mut shown = Vec::new();
            for (i, p) in s.parts.iter().enumerate() {
                if shown.contains(&p.id) {
                    continue;
                }
                shown.push(p.id.clone());
                for line in moves_help(&p.game).lines() {
                    lines.push(format!("  {i}:{line}"));
                }
            }
            lines.join("\n")
        }
    }
}

/// The moves of heaps under rules, only those some heap's rule allows: a take
/// with an amount the rule allows, a take that splits the rest (Kayles), a
/// split without taking (Lasker's Nim).
fn heap_rule_help(h: &grundy_protocol::games::heaps::Heaps) -> String {
    // What each rule allows from a heap of 10.
    let mut takes = Vec::new();
    let (mut split_take, mut split_only) = (None::<u64>, false);
    for heap in &h.heaps {
        heap.rule.steps(10, &mut |step| {
            match (step.take, step.split) {
                (0, Some(_)) => split_only = true,
                (t, Some(_)) => split_take = Some(split_take.map_or(t, |s| s.min(t))),
                (t, None) => takes.push(t),
            }
            true
        });
    }
    let rules: Vec<String> = h.heaps.iter().map(|h| h.rule.kind.to_string()).collect();
    let rule = if rules.windows(2).all(|w| w[0] == w[1]) {
        match rules.first() {
            Some(r) => format!(" (the rule: {r})"),
            None => String::new(),
        }
    } else {
        " (each heap's rule, shown on the board, says how many)".to_string()
    };
    let mut lines = Vec::new();
    // 3 if a rule allows it, else the largest amount below, else the least.
    let take = takes
        .iter()
        .copied()
        .filter(|&t| t <= 3)
        .max()
        .or_else(|| takes.iter().copied().min());
    if let Some(t) = take {
        let typed = format!("2 {t}");
        lines.push(format!("  {typed:<15}take {t} from heap 2{rule}"));
    }
    if let Some(t) = split_take {
        let typed = format!("2 {t} 3 4");
        lines.push(format!(
            "  {typed:<15}take {t} from heap 2 and split the rest into heaps 3 and 4"
        ));
    }
    if split_only {
        lines.push(
            "  split 2 3 4    split heap 2 into heaps 3 and 4 without taking anything".to_string(),
        );
    }
    lines.join("\n")
}

fn example_json(position: &Position) -> String {
    match position {
        Position::Nim(_) | Position::Heaps(_) | Position::NewStone(_) => {
            r#"{"heap": 0, "take": 1}"#
        }
        Position::Twist(Twist::Split(_)) => r#"{"heap": 0, "take": 1}"#,
        Position::Twist(Twist::Unsplit(_)) => r#"{"split": [4, 6]}"#,
        Position::Wythoff(_) => r#"{"take": [2, 2]}"#,
        Position::Moore(_) => r#"{"take": [[0, 2]]}"#,
        Position::Staircase(_) => r#"{"from": 6, "to": 4}"#,
        Position::Treblecross(_) => r#"{"cell": 5}"#,
        Position::Darkraft(_) => r#"{"row": 0, "col": 1}"#,
        Position::Graph(_) => r#"{"token": 0, "to": 1}"#,
        Position::Sum(s) => {
            let first = s
                .parts
                .first()
                .map_or_else(String::new, |p| example_json(&p.game));
            return format!(r#"{{"part": 0, "move": {first}}}"#);
        }
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(spec: Value) -> Position {
        Position::from_spec(&spec).expect("test spec")
    }

    fn wire(p: &Position, line: &str) -> Value {
        match parse(p, line) {
            Ok(Input::Move(v, _)) => v,
            other => panic!("{line:?} gave {other:?}"),
        }
    }

    fn refused(p: &Position, line: &str) -> String {
        match parse(p, line) {
            Err(e) => e,
            other => panic!("{line:?} was accepted: {other:?}"),
        }
    }

    #[test]
    fn commands() {
        let p = pos(json!({"game": "nim", "heaps": [3, 4, 5]}));
        assert_eq!(parse(&p, " help "), Ok(Input::Help));
        assert_eq!(parse(&p, "?"), Ok(Input::Help));
        assert_eq!(parse(&p, "HINT"), Ok(Input::Hint));
        assert_eq!(parse(&p, "resign"), Ok(Input::Resign));
        assert_eq!(parse(&p, "quit"), Ok(Input::Quit));
        assert_eq!(parse(&p, ""), Ok(Input::Redraw));
    }

    #[test]
    fn nim() {
        let p = pos(json!({"game": "nim", "heaps": [3, 4, 5]}));
        assert_eq!(wire(&p, "0 2"), json!({"heap": 0, "take": 2}));
        assert_eq!(wire(&p, "2, 5"), json!({"heap": 2, "take": 5}));
        assert_eq!(
            wire(&p, r#"{"heap": 1, "take": 4}"#),
            json!({"heap": 1, "take": 4})
        );
        assert!(
            refused(&p, "0 5").contains("only 3"),
            "{}",
            refused(&p, "0 5")
        );
        assert!(
            refused(&p, "7 1").contains("no heap 7"),
            "{}",
            refused(&p, "7 1")
        );
        assert!(refused(&p, "0 0").starts_with("illegal move"));
        assert!(refused(&p, "banana").contains("help"));
        assert!(refused(&p, "1").contains("heap"));
        assert!(refused(&p, "1 2 3").contains("heap"));
        assert!(refused(&p, "-1 2").contains("help"));
        assert!(refused(&p, "99999999999999999999999 1").contains("too large"));
        assert!(refused(&p, "{not json").contains("JSON"));
        assert!(refused(&p, r#"{"cell": 1}"#).contains("not a move of this game"));
    }

    #[test]
    fn heaps_and_presets() {
        let k = pos(json!({"game": "kayles", "heaps": [5]}));
        assert_eq!(
            wire(&k, "0 1 2 2"),
            json!({"heap": 0, "take": 1, "leave": [2, 2]})
        );
        assert_eq!(wire(&k, "0 2"), json!({"heap": 0, "take": 2}));
        assert!(refused(&k, "0 3").starts_with("illegal move"));
        let l = pos(json!({"game": "lasker", "heaps": [5]}));
        assert_eq!(
            wire(&l, "split 0 2 3"),
            json!({"heap": 0, "take": 0, "leave": [2, 3]})
        );
        assert!(refused(&l, "split 0 2 2").starts_with("illegal move"));
        let b = pos(json!({"game": "bash", "k": 3, "heaps": [5, 6]}));
        assert_eq!(wire(&b, "1 3"), json!({"heap": 1, "take": 3}));
        assert!(refused(&b, "1 4").starts_with("illegal move"));
    }

    #[test]
    fn wythoff() {
        let p = pos(json!({"game": "wythoff", "heaps": [3, 5]}));
        assert_eq!(wire(&p, "a 3"), json!({"take": [3, 0]}));
        assert_eq!(wire(&p, "B 2"), json!({"take": [0, 2]}));
        assert_eq!(wire(&p, "both 3"), json!({"take": [3, 3]}));
        assert!(refused(&p, "both 4").starts_with("illegal move"));
        assert!(refused(&p, "c 1").contains("both"));
    }

    #[test]
    fn moore() {
        let p = pos(json!({"game": "moore", "heaps": [3, 5, 6], "k": 2}));
        assert_eq!(wire(&p, "0:2 2:1"), json!({"take": [[0, 2], [2, 1]]}));
        assert_eq!(wire(&p, "1 5"), json!({"take": [[1, 5]]}));
        assert!(refused(&p, "0:1 1:1 2:1").starts_with("illegal move"));
        assert!(refused(&p, "0:x").contains("whole number"));
    }

    #[test]
    fn new_stone() {
        let p = pos(json!({"game": "new-stone", "heaps": [2, 3, 4]}));
        assert_eq!(wire(&p, "2 1"), json!({"heap": 2, "take": 1}));
        assert_eq!(
            wire(&p, "2 1 0:1 1:2"),
            json!({"heap": 2, "take": 1, "give": [[0, 1], [1, 2]]})
        );
        assert!(refused(&p, "2 1 0:5").starts_with("illegal move"));
        assert!(refused(&p, "2").contains("HEAP AMOUNT"));
    }

    #[test]
    fn staircase() {
        let p = pos(json!({"game": "staircase", "pieces": [1, 4, 6]}));
        assert_eq!(wire(&p, "6 5"), json!({"from": 6, "to": 5}));
        assert!(refused(&p, "6 4").starts_with("illegal move"));
        assert!(refused(&p, "6").contains("FROM TO"));
    }

    #[test]
    fn treblecross() {
        let p = pos(json!({"game": "treblecross", "board": "..X.."}));
        assert_eq!(wire(&p, "4"), json!({"cell": 4}));
        assert!(refused(&p, "2").starts_with("illegal move"));
        assert!(refused(&p, "9").starts_with("illegal move"));
    }

    #[test]
    fn darkraft() {
        let p = pos(json!({"game": "darkraft", "grid": ["RL", "LR"]}));
        assert_eq!(wire(&p, "1 0"), json!({"row": 1, "col": 0}));
        assert!(refused(&p, "2 0").starts_with("illegal move"));
    }

    #[test]
    fn graph() {
        let p = pos(
            json!({"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2]], "tokens": [0, 1]}),
        );
        assert_eq!(wire(&p, "1 2"), json!({"token": 1, "to": 2}));
        assert!(refused(&p, "0 2").starts_with("illegal move"));
    }

    #[test]
    fn twist() {
        let p = pos(json!({"game": "twist", "stones": 10}));
        assert_eq!(wire(&p, "split 4 6"), json!({"split": [4, 6]}));
        assert_eq!(wire(&p, "4+6"), json!({"split": [4, 6]}));
        assert_eq!(wire(&p, "3 3 4"), json!({"split": [3, 3, 4]}));
        assert!(refused(&p, "split 4 5").starts_with("illegal move"));
        let mut q = p.clone();
        let mv = checked(&q, &json!({"split": [4, 6]})).expect("legal");
        q.play(&mv).expect("legal");
        assert_eq!(wire(&q, "1 6"), json!({"heap": 1, "take": 6}));
    }

    /// Every legal move of small positions of every family, written in the
    /// short form, reads back as the same move (and the same wire JSON).
    #[test]
    fn short_forms_read_back_as_the_same_move() {
        let specs = [
            json!({"game": "nim", "heaps": [3, 4, 0, 5]}),
            json!({"game": "nim", "misere": true, "heaps": [1, 2]}),
            json!({"game": "kayles", "heaps": [5, 7]}),
            json!({"game": "dawson", "heaps": [6]}),
            json!({"game": "lasker", "heaps": [6, 3]}),
            json!({"game": "bash", "k": 3, "heaps": [5, 6]}),
            json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [9]}),
            json!({"game": "heaps", "heaps": [{"size": 6, "rule": {"octal": "4.07"}}, {"size": 7, "rule": "odd"}, {"size": 5, "rule": "half"}]}),
            json!({"game": "wythoff", "heaps": [4, 6]}),
            json!({"game": "moore", "heaps": [2, 3, 1], "k": 2}),
            json!({"game": "moore", "heaps": [3, 2, 2], "k": 3, "max_take": 2}),
            json!({"game": "new-stone", "heaps": [2, 3, 1]}),
            json!({"game": "staircase", "pieces": [1, 4, 7]}),
            json!({"game": "treblecross", "board": "..X...."}),
            json!({"game": "darkraft", "grid": ["RLX", "LRR"]}),
            json!({"game": "graph", "vertices": 4, "edges": [[0, 1], [0, 2], [1, 3], [2, 3]], "tokens": [0, 1, 3]}),
            json!({"game": "twist", "stones": 7}),
            json!({"game": "sum", "parts": [
                {"game": "nim", "heaps": [2, 1]}, {"game": "kayles", "heaps": [4]},
                {"game": "wythoff", "heaps": [2, 3]}, {"game": "moore", "heaps": [1, 2, 1], "k": 2},
                {"game": "new-stone", "heaps": [2, 1]}, {"game": "staircase", "pieces": [2, 4]},
                {"game": "darkraft", "grid": ["RL"]},
                {"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2]], "tokens": [0]}]}),
        ];
        let mut checked_moves = 0;
        for spec in specs {
            let mut positions = vec![pos(spec.clone())];
            // The start, and every position one move on (Twist after its split).
            let first = positions[0].legal_moves(usize::MAX);
            assert!(first.complete, "{spec}");
            for m in first.moves.iter().take(3) {
                let mut q = positions[0].clone();
                q.play(m).expect("legal");
                positions.push(q);
            }
            for p in &positions {
                for m in p.legal_moves(usize::MAX).moves {
                    let text = short_form(&m);
                    assert!(!text.starts_with('{'), "{spec}: {m:?} has no short form");
                    match parse(p, &text) {
                        Ok(Input::Move(v, back)) => {
                            assert_eq!(back, m, "{spec}: {text:?}");
                            assert_eq!(v, json!(m), "{spec}: {text:?}");
                        }
                        other => panic!("{spec}: {text:?} for {m:?} read back as {other:?}"),
                    }
                    checked_moves += 1;
                }
            }
        }
        assert!(checked_moves > 500, "{checked_moves}");
    }

    #[test]
    fn a_move_with_no_short_form_is_written_as_json() {
        let p = pos(json!({"game": "wythoff", "heaps": [4, 6]}));
        let odd = p.parse_move(&json!({"take": [2, 3]})).expect("well formed");
        assert_eq!(short_form(&odd), r#"{"take":[2,3]}"#);
        assert!(refused(&p, &short_form(&odd)).starts_with("illegal move"));
    }

    #[test]
    fn nothing_typed_panics() {
        let specs = [
            json!({"game": "nim", "heaps": [3, 4, 5]}),
            json!({"game": "kayles", "heaps": [5]}),
            json!({"game": "lasker", "heaps": [5]}),
            json!({"game": "wythoff", "heaps": [3, 5]}),
            json!({"game": "moore", "heaps": [3, 5, 6], "k": 2}),
            json!({"game": "new-stone", "heaps": [2, 3]}),
            json!({"game": "staircase", "pieces": [1, 4]}),
            json!({"game": "treblecross", "length": 5}),
            json!({"game": "darkraft", "grid": ["RL", "LR"]}),
            json!({"game": "graph", "vertices": 2, "edges": [[0, 1]], "tokens": [0]}),
            json!({"game": "twist", "stones": 4}),
        ];
        let lines = [
            "18446744073709551615 18446744073709551615",
            "0 18446744073709551615 18446744073709551615 1",
            "split 0 18446744073709551615 1",
            "0:18446744073709551615 1:1",
            "both 18446744073709551615",
            "+",
            "++1",
            ":",
            "0:",
            "a",
            "1 2 3 4 5 6 7 8 9",
            "{\"heap\": -1}",
            "{}",
            "[1]",
            "{\"split\": []}",
            "é 1",
            "\u{0}",
        ];
        for spec in &specs {
            let p = pos(spec.clone());
            for l in &lines {
                let _ = parse(&p, l);
            }
        }
    }

    /// Help shows the moves the game's rule allows, and no other.
    #[test]
    fn help_shows_only_what_the_rule_allows() {
        let help = |spec: Value| {
            let h = help_text(&pos(spec));
            h[..h.find("{...}").expect("the JSON line")].to_string()
        };
        let bash = help(json!({"game": "bash", "k": 2, "heaps": [5, 6]}));
        assert!(
            bash.contains("  2 2            take 2 from heap 2 (the rule: take 1 to 2)"),
            "{bash}"
        );
        assert!(!bash.contains("split"), "{bash}");
        let sub = help(json!({"game": "subtraction", "set": [4, 5], "heaps": [9]}));
        assert!(
            sub.contains("  2 4            take 4 from heap 2 (the rule: take one of {4, 5})"),
            "{sub}"
        );
        assert!(!sub.contains("split"), "{sub}");
        let kayles = help(json!({"game": "kayles", "heaps": [5]}));
        assert!(
            kayles.contains("  2 2            take 2 from heap 2"),
            "{kayles}"
        );
        assert!(
            kayles.contains("  2 1 3 4        take 1 from heap 2 and split"),
            "{kayles}"
        );
        assert!(!kayles.contains("split 2 3 4"), "{kayles}");
        let lasker = help(json!({"game": "lasker", "heaps": [5]}));
        assert!(lasker.contains("  split 2 3 4    split heap 2"), "{lasker}");
        assert!(!lasker.contains("2 1 3 4"), "{lasker}");
        let mixed = help(
            json!({"game": "heaps", "heaps": [{"size": 5, "rule": "odd"}, {"size": 4, "rule": {"octal": "4.07"}}]}),
        );
        assert!(mixed.contains("each heap's rule"), "{mixed}");
        assert!(mixed.contains("split 2 3 4"), "{mixed}");
        let moore1 = help(json!({"game": "moore", "heaps": [3, 5], "k": 1}));
        assert!(!moore1.lines().skip(1).any(|l| l.contains(':')), "{moore1}");
        let moore = help(json!({"game": "moore", "heaps": [3, 5, 6], "k": 2, "max_take": 1}));
        assert!(
            moore.contains(
                "  0:1 3:1        take 1 from heap 0 and 1 from heap 3 (at most 2 heaps at once)"
            ),
            "{moore}"
        );
        assert!(
            moore.contains("  2 1            take 1 from heap 2 only"),
            "{moore}"
        );
        // Every example is a legal move where heap 2 is large enough.
        for spec in [
            json!({"game": "bash", "k": 2, "heaps": [5, 6, 9]}),
            json!({"game": "kayles", "heaps": [5, 6, 8]}),
            json!({"game": "lasker", "heaps": [5, 6, 7]}),
            json!({"game": "moore", "heaps": [3, 5, 6, 4], "k": 2, "max_take": 6}),
        ] {
            let p = pos(spec.clone());
            for line in help(spec.clone()).lines().skip(1) {
                if line.trim().is_empty() {
                    continue;
                }
                let typed: String = line.chars().skip(2).take(15).collect();
                match parse(&p, typed.trim()) {
                    Ok(Input::Move(..)) => {}
                    other => panic!("{spec}: {typed:?} gave {other:?}"),
                }
            }
        }
    }

    #[test]
    fn help_for_every_family() {
        for spec in [
            json!({"game": "nim", "heaps": [1]}),
            json!({"game": "twist", "stones": 3}),
            json!({"game": "darkraft", "grid": ["L"]}),
        ] {
            let h = help_text(&pos(spec));
            assert!(h.contains("hint") && h.contains("resign") && h.contains("JSON"));
        }
    }
}
