//! What a person types during a match: commands, and moves in the engine's
//! short forms (`grundy_protocol::short::moves`), read and checked before
//! anything is sent; and the help that says how to type them.

use grundy_protocol::games::twist::Twist;
use grundy_protocol::short::{moves, MoveFormError};
use grundy_protocol::{Move, Position, Rules};
use serde_json::Value;

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
    let (value, mv) = moves::read(position, line).map_err(|e| said(&e))?;
    Ok(Input::Move(value, mv))
}

/// Why a typed move was not read, as the prompt says it: where a word is
/// wrong, with a pointer to `help`.
fn said(e: &MoveFormError) -> String {
    match e {
        MoveFormError::NotAMove { line } => {
            format!("{line:?} is not a move or a command; type `help` to see how to write them")
        }
        MoveFormError::Number(_) | MoveFormError::NotAPair { .. } => {
            format!("{e}; type `help` for how to write moves")
        }
        MoveFormError::InPart { part, error } => format!("in part {part}: {}", said(error)),
        _ => e.to_string(),
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
        Position::Coins(c) => {
            use grundy_protocol::games::coins::CoinRule;
            match c.rule {
                CoinRule::MockTurtles => [
                    "  4              turn coin 4 (heads) to tails",
                    "  1 2 4          turn coins 1, 2 and 4: one, two or three coins, the last heads",
                ]
                .join("\n"),
                CoinRule::Ruler => {
                    "  2 3 4          turn coins 2 to 4: a run of coins, the last heads".to_string()
                }
                CoinRule::TurningCorners => {
                    "  0:1 2:3        turn the corners [0, 1], [0, 3], [2, 1], [2, 3]; [2, 3] heads"
                        .to_string()
                }
            }
        }
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
        _ => "  {...}          the move as JSON, as in the example below".to_string(),
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
        // A family this client knows no example for: its first legal move.
        _ => {
            let moves = position.legal_moves(1).moves;
            return moves
                .first()
                .map_or_else(String::new, |m| m.to_json_text().to_string());
        }
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use grundy_protocol::Rules;
    use serde_json::json;

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
        let mv = moves::checked(&q, &json!({"split": [4, 6]})).expect("legal");
        q.play(&mv).expect("legal");
        assert_eq!(wire(&q, "1 6"), json!({"heap": 1, "take": 6}));
    }

    #[test]
    fn a_move_with_no_short_form_is_written_as_json() {
        let p = pos(json!({"game": "wythoff", "heaps": [4, 6]}));
        let odd = p.parse_move(&json!({"take": [2, 3]})).expect("well formed");
        assert_eq!(moves::write(&odd), r#"{"take":[2,3]}"#);
        assert!(refused(&p, &moves::write(&odd)).starts_with("illegal move"));
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
        // Grundy's game only splits: no take is offered.
        let grundy = help(json!({"game": "grundy", "heaps": [5]}));
        assert!(grundy.contains("  split 2 3 4    split heap 2"), "{grundy}");
        assert!(!grundy.contains("take 3 from heap 2"), "{grundy}");
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
