//! Positions drawn for a person, one drawing per family, with the last move
//! marked: heaps as rows of stones with their sizes, the treblecross strip with
//! cell numbers, the darkraft grid with coordinates, the staircase strip, a
//! graph as its tokens and vertices, coins heads (H) and tails (T) in a row or
//! on a rectangle.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use grundy_protocol::games::twist::Twist;
use grundy_protocol::names::count;
use grundy_protocol::{Position, Rules, Status};
use serde_json::Value;

/// Colours on or off (off for pipes, `NO_COLOR`, and the snapshot tests).
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    pub color: bool,
}

impl Paint {
    #[cfg(test)]
    pub const PLAIN: Paint = Paint { color: false };

    /// Colours when stdout is a terminal and `NO_COLOR` is not set.
    pub fn detect() -> Paint {
        Paint {
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn wrap(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// The opponent's last move, and what it touched.
    pub fn mark(&self, s: &str) -> String {
        self.wrap("1;33", s)
    }

    pub fn good(&self, s: &str) -> String {
        self.wrap("1;32", s)
    }

    pub fn bad(&self, s: &str) -> String {
        self.wrap("1;31", s)
    }

    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
}

/// Stones drawn per heap before the row is cut short.
const MAX_STONES: u64 = 40;
/// Cells per line of a strip.
const STRIP_LINE: usize = 20;
/// The longest staircase strip drawn cell by cell.
const MAX_STRIP: u64 = 120;
/// Rows of heaps, tokens or adjacency drawn before "... more".
const MAX_ROWS: usize = 60;

/// The title of heaps that all play one rule: the game's own name where the
/// rule is a named game's (a `kayles` spec is read as heaps of octal 0.77).
fn heaps_title(rule: &grundy_protocol::games::rule::RuleKind) -> String {
    use grundy_protocol::games::rule::RuleKind;
    match rule {
        RuleKind::Octal(code) if code == "0.77" => {
            "Kayles (octal 0.77): take 1 or 2 from a heap, leaving the rest as one heap or two"
                .to_string()
        }
        RuleKind::Octal(code) if code == "0.07" => {
            "Dawson's Kayles (octal 0.07): take 2 from a heap, leaving the rest as one heap or two"
                .to_string()
        }
        RuleKind::Lasker => {
            "Lasker's Nim: take any number from a heap, or split a heap in two".to_string()
        }
        RuleKind::Grundy => {
            "Grundy's game: split a heap into two unequal heaps (heaps of 1 and 2 cannot move)"
                .to_string()
        }
        RuleKind::UpTo(k) => format!("Bash: take 1 to {k} from a heap"),
        RuleKind::Set(_) => format!("Subtraction game: {rule} from a heap"),
        other => format!("Heaps, every heap: {other}"),
    }
}

/// The position drawn; `last` is the last move's wire JSON, marked on the board.
pub fn board(position: &Position, last: Option<&Value>, paint: &Paint) -> String {
    let json = position.to_json();
    match position {
        Position::Nim(n) => {
            let title = if n.misere {
                "Nim, misère: whoever takes the last stone loses"
            } else {
                "Nim: take any number from one heap; whoever takes the last stone wins"
            };
            heap_rows(title, &n.heaps, &[], last, paint)
        }
        Position::Heaps(h) => {
            let sizes: Vec<u64> = h.heaps.iter().map(|h| h.size).collect();
            let rules: Vec<String> = h.heaps.iter().map(|h| h.rule.kind.to_string()).collect();
            let same = rules.windows(2).all(|w| w[0] == w[1]);
            let (title, notes) = if same {
                let title = h
                    .heaps
                    .first()
                    .map_or_else(String::new, |first| heaps_title(&first.rule.kind));
                (title, vec![])
            } else {
                ("Heaps, each with its own rule".to_string(), rules)
            };
            let title = if h.misere.is_some() {
                format!("{title} (misère: whoever takes the last stone loses)")
            } else {
                title
            };
            heap_rows(&title, &sizes, &notes, last, paint)
        }
        Position::Moore(m) => {
            let mut title = if m.k == 1 {
                "Moore's Nim with k = 1: take from one heap, as in Nim".to_string()
            } else {
                format!("Moore's Nim: take from 1 to {} heaps at once", m.k)
            };
            match (m.max_take, m.k) {
                (Some(t), 1) => title.push_str(&format!(", at most {t}")),
                (Some(t), _) => title.push_str(&format!(", at most {t} from each")),
                (None, _) => {}
            }
            heap_rows(&title, &m.heaps, &[], last, paint)
        }
        Position::NewStone(n) => heap_rows(
            "New Stone Game: take from a heap, then move any of its rest onto other non-empty heaps",
            &n.heaps,
            &[],
            last,
            paint,
        ),
        Position::Twist(Twist::Split(heaps)) => heap_rows(
            "Twist, after the split: Nim on these heaps",
            heaps,
            &[],
            last,
            paint,
        ),
        Position::Twist(Twist::Unsplit(1)) => {
            "Twist: 1 stone, not split yet.\nThe first move leaves it as a heap of 1; then it is Nim.\n"
                .to_string()
        }
        Position::Twist(Twist::Unsplit(m)) => format!(
            "Twist: {m} stones, not split yet.\nThe first move splits them into heaps (sizes adding up to {m}); then it is Nim.\n"
        ),
        Position::Wythoff(w) => wythoff(w.heaps, last, paint),
        Position::Staircase(_) => staircase(&json, last, paint),
        Position::Treblecross(_) => treblecross(&json, last, paint),
        Position::Darkraft(_) => darkraft(&json, last, paint),
        Position::Graph(_) => graph(&json, last, paint),
        Position::Coins(c) => coins(c, last, paint),
        Position::Sum(s) => {
            let mut out = String::from(if s.misere.is_some() {
                "A sum of games, misère: each move is a move in one part; whoever makes the last move loses\n"
            } else {
                "A sum of games: each move is a move in one part; whoever makes the last move wins\n"
            });
            for (i, p) in s.parts.iter().enumerate() {
                // The last move is marked in its own part only.
                let last = last
                    .filter(|m| m.get("part").and_then(Value::as_u64) == Some(i as u64))
                    .and_then(|m| m.get("move"));
                let finished = if p.game.status() == Status::Ongoing {
                    ""
                } else {
                    " (finished: no move left)"
                };
                out.push_str(&format!("\npart {i}{finished} · "));
                out.push_str(&board(&p.game, last, paint));
            }
            out
        }
        // A family this client has no drawing for: its position as typed.
        _ => format!("{}\n", grundy_protocol::short::position::write(position)),
    }
}

fn stones(n: u64, taken: u64, paint: &Paint) -> String {
    let shown = n.min(MAX_STONES);
    let mut s = String::new();
    for i in 0..shown {
        if i > 0 && i % 5 == 0 {
            s.push(' ');
        }
        s.push('●');
    }
    if n > MAX_STONES {
        s.push_str(" …");
    }
    let gone = taken.min(MAX_STONES.saturating_sub(shown));
    if gone > 0 {
        let mut g = String::from(" ");
        for _ in 0..gone {
            g.push('○');
        }
        s.push_str(&paint.mark(&g));
    }
    s
}

/// What the last move did to each heap: (stones taken, a note).
fn heap_marks(last: Option<&Value>) -> BTreeMap<u64, (u64, String)> {
    let mut marks = BTreeMap::new();
    let Some(m) = last else { return marks };
    let heap = m.get("heap").and_then(Value::as_u64);
    let take = m.get("take");
    if let (Some(h), Some(k)) = (heap, take.and_then(Value::as_u64)) {
        let mut note = if k == 0 {
            "split".to_string()
        } else {
            format!("took {k}")
        };
        if let Some([a, b]) = m
            .get("leave")
            .and_then(|l| serde_json::from_value::<[u64; 2]>(l.clone()).ok())
        {
            note.push_str(&format!(", left {a} and {b}"));
        }
        let split = m.get("leave").and_then(Value::as_array).map(Vec::len) == Some(2);
        if split {
            // The heap became two: this one and the one inserted after it.
            marks.insert(h, (0, note));
            marks.insert(h.saturating_add(1), (0, format!("split off heap {h}")));
        } else {
            marks.insert(h, (k, note));
        }
        if let Some(give) = m.get("give").and_then(Value::as_array) {
            for g in give {
                if let (Some(j), Some(a)) = (
                    g.get(0).and_then(Value::as_u64),
                    g.get(1).and_then(Value::as_u64),
                ) {
                    marks.insert(j, (0, format!("got {a}")));
                }
            }
        }
    } else if let Some(list) = take.and_then(Value::as_array) {
        for pair in list {
            if let (Some(h), Some(k)) = (
                pair.get(0).and_then(Value::as_u64),
                pair.get(1).and_then(Value::as_u64),
            ) {
                marks.insert(h, (k, format!("took {k}")));
            }
        }
    }
    marks
}

fn heap_rows(
    title: &str,
    heaps: &[u64],
    notes: &[String],
    last: Option<&Value>,
    paint: &Paint,
) -> String {
    let marks = heap_marks(last);
    let label_w = format!("heap {}", heaps.len().saturating_sub(1)).len();
    let size_w = heaps.iter().map(|h| h.to_string().len()).max().unwrap_or(1);
    let mut out = format!("{title}\n");
    // A split (heaps after it shifted) would mismark later heaps: mark only the split heap.
    for (i, &h) in heaps.iter().enumerate().take(MAX_ROWS) {
        let (taken, note) = marks
            .get(&(i as u64))
            .map(|(k, n)| (*k, Some(n.clone())))
            .unwrap_or((0, None));
        let label = format!("{:<label_w$}", format!("heap {i}"));
        let mut line = format!("  {label}  {h:>size_w$}  {}", stones(h, taken, paint));
        if let Some(rule) = notes.get(i) {
            line.push_str(&format!("  ({rule})"));
        }
        if let Some(n) = note {
            line.push_str(&paint.mark(&format!("  ← {n}")));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if heaps.len() > MAX_ROWS {
        out.push_str(&format!(
            "  … and {}\n",
            count((heaps.len() - MAX_ROWS) as u64, "more heap", "more heaps")
        ));
    }
    out
}

fn wythoff(heaps: [u64; 2], last: Option<&Value>, paint: &Paint) -> String {
    let taken: [u64; 2] = last
        .and_then(|m| m.get("take"))
        .and_then(|t| serde_json::from_value(t.clone()).ok())
        .unwrap_or([0, 0]);
    let w = heaps.iter().map(|h| h.to_string().len()).max().unwrap_or(1);
    let mut out =
        "Wythoff: take any number from one heap, or the same number from both\n".to_string();
    for (i, name) in ["a", "b"].iter().enumerate() {
        let mut line = format!(
            "  heap {name}  {:>w$}  {}",
            heaps[i],
            stones(heaps[i], taken[i], paint)
        );
        if taken[i] > 0 {
            line.push_str(&paint.mark(&format!("  ← took {}", taken[i])));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A strip drawn in lines of `STRIP_LINE` cells: the cell numbers above, the
/// cells below; `mark` is a cell to highlight.
fn strip(cells: &[(u64, String)], mark: Option<u64>, paint: &Paint) -> String {
    strip_of("cell", cells, mark.as_slice(), paint)
}

/// A strip whose numbers are labelled `label` (`cell`, `coin`), with the
/// cells in `marks` highlighted.
fn strip_of(label: &str, cells: &[(u64, String)], marks: &[u64], paint: &Paint) -> String {
    let w = cells
        .iter()
        .map(|(i, _)| i.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    for chunk in cells.chunks(STRIP_LINE) {
        let numbers: Vec<String> = chunk.iter().map(|(i, _)| format!("{i:>w$}")).collect();
        let shown: Vec<String> = chunk
            .iter()
            .map(|(i, c)| {
                let cell = format!("{c:>w$}");
                if marks.contains(i) {
                    paint.mark(&cell)
                } else {
                    cell
                }
            })
            .collect();
        out.push_str(&format!("  {label}  {}\n", numbers.join(" ")));
        out.push_str(&format!(
            "  {:>w2$}  {}\n",
            "",
            shown.join(" "),
            w2 = label.len()
        ));
    }
    out
}

fn treblecross(json: &Value, last: Option<&Value>, paint: &Paint) -> String {
    let board: String = match (json.get("board"), json.get("length")) {
        (Some(Value::String(b)), _) => b.clone(),
        (_, Some(n)) => ".".repeat(n.as_u64().unwrap_or(0) as usize),
        _ => String::new(),
    };
    let mark = last.and_then(|m| m.get("cell")).and_then(Value::as_u64);
    let cells: Vec<(u64, String)> = board
        .chars()
        .enumerate()
        .map(|(i, c)| (i as u64, c.to_string()))
        .collect();
    let mut out = "Treblecross: put an X on an empty cell; three X in a row wins\n".to_string();
    out.push_str(&strip(&cells, mark, paint));
    if let Some(c) = mark {
        out.push_str(&paint.mark(&format!("  last X on cell {c}")));
        out.push('\n');
    }
    out
}

fn staircase(json: &Value, last: Option<&Value>, paint: &Paint) -> String {
    let pieces: Vec<u64> = json
        .get("pieces")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .unwrap_or_default();
    let to = last.and_then(|m| m.get("to")).and_then(Value::as_u64);
    let from = last.and_then(|m| m.get("from")).and_then(Value::as_u64);
    let max = pieces.iter().copied().max().unwrap_or(0);
    let mut out =
        "Staircase: move a piece left, not onto or past another piece (cell 0 is off the strip)\n"
            .to_string();
    if max <= MAX_STRIP {
        let cells: Vec<(u64, String)> = (1..=max.max(1))
            .map(|c| {
                let s = if pieces.contains(&c) {
                    "●"
                } else if Some(c) == from {
                    "○"
                } else {
                    "."
                };
                (c, s.to_string())
            })
            .collect();
        out.push_str(&strip(&cells, to, paint));
    } else {
        let mut sorted = pieces.clone();
        sorted.sort_unstable();
        let list: Vec<String> = sorted.iter().take(MAX_ROWS).map(u64::to_string).collect();
        out.push_str(&format!("  pieces on cells {}", list.join(", ")));
        if sorted.len() > MAX_ROWS {
            out.push_str(&format!(" … and {} more", sorted.len() - MAX_ROWS));
        }
        out.push('\n');
    }
    if let (Some(f), Some(t)) = (from, to) {
        out.push_str(&paint.mark(&format!("  last move: cell {f} → cell {t}")));
        out.push('\n');
    }
    out
}

fn darkraft(json: &Value, last: Option<&Value>, paint: &Paint) -> String {
    let grid: Vec<String> = json
        .get("grid")
        .and_then(|g| serde_json::from_value(g.clone()).ok())
        .unwrap_or_default();
    let cols = grid.first().map(|r| r.chars().count()).unwrap_or(0);
    let mark = last.and_then(|m| {
        Some((
            m.get("row")?.as_u64()? as usize,
            m.get("col")?.as_u64()? as usize,
        ))
    });
    let mut out = "World of Darkraft: choose an active cell; it and its diagonals (L ↙↗, R ↖↘, X both) go dark ('.')\n".to_string();
    // Column numbers across the top, row numbers down the side.
    let header: Vec<String> = (0..cols).map(|c| format!("{c:>2}")).collect();
    out.push_str(&format!("  row\\col {}\n", header.join(" ")));
    for (r, row) in grid.iter().enumerate() {
        let cells: Vec<String> = row
            .chars()
            .enumerate()
            .map(|(c, ch)| {
                if mark == Some((r, c)) {
                    paint.mark(" *")
                } else {
                    format!("{ch:>2}")
                }
            })
            .collect();
        out.push_str(&format!("  {r:>7} {}\n", cells.join(" ")));
    }
    if let Some((r, c)) = mark {
        out.push_str(&paint.mark(&format!("  * last chosen: row {r}, column {c}")));
        out.push('\n');
    }
    out
}

/// The coins a move turned: numbers in a row, `(row, column)` on a board.
fn turned(last: Option<&Value>) -> Vec<(u64, u64)> {
    let Some(list) = last.and_then(|m| m.get("turn")).and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|c| match c {
            Value::Array(rc) => Some((rc.first()?.as_u64()?, rc.get(1)?.as_u64()?)),
            n => Some((0, n.as_u64()?)),
        })
        .collect()
}

/// Coins heads (H) or tails (T): a row as a strip of numbered coins, a
/// rectangle with its row and column numbers; the coins the last move
/// turned are marked.
fn coins(c: &grundy_protocol::games::coins::Coins, last: Option<&Value>, paint: &Paint) -> String {
    use grundy_protocol::games::coins::CoinRule;
    let title = match c.rule {
        CoinRule::MockTurtles => "Mock Turtles: turn over one, two or three coins; the rightmost goes from heads (H) to tails (T)",
        CoinRule::Ruler => "Ruler: turn over a run of consecutive coins; the rightmost goes from heads (H) to tails (T)",
        CoinRule::TurningCorners => "Turning Corners: turn over the four corners of a rectangle; the one farthest from row 0, column 0 goes from heads (H) to tails (T)",
    };
    let mut out = format!("{title}\n");
    let marks = turned(last);
    let view = c.view();
    if !c.rule.is_grid() {
        let cells: Vec<(u64, String)> = view
            .first()
            .map(|row| {
                row.chars()
                    .enumerate()
                    .map(|(i, ch)| (i as u64, ch.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let marked: Vec<u64> = marks.iter().map(|&(_, i)| i).collect();
        out.push_str(&strip_of("coin", &cells, &marked, paint));
        if !marks.is_empty() {
            let list: Vec<String> = marks.iter().map(|(_, i)| i.to_string()).collect();
            out.push_str(&paint.mark(&format!("  last move turned coins {}", list.join(", "))));
            out.push('\n');
        }
        return out;
    }
    let header: Vec<String> = (0..c.cols()).map(|col| format!("{col:>2}")).collect();
    out.push_str(&format!("  row\\col {}\n", header.join(" ")));
    for (r, row) in view.iter().enumerate() {
        let cells: Vec<String> = row
            .chars()
            .enumerate()
            .map(|(col, ch)| {
                let cell = format!("{ch:>2}");
                if marks.contains(&(r as u64, col as u64)) {
                    paint.mark(&cell)
                } else {
                    cell
                }
            })
            .collect();
        out.push_str(&format!("  {r:>7} {}\n", cells.join(" ")));
    }
    if let [(a, b), .., (x, y)] = marks.as_slice() {
        out.push_str(&paint.mark(&format!(
            "  last move turned the corners of rows {a} and {x}, columns {b} and {y}"
        )));
        out.push('\n');
    }
    out
}

fn graph(json: &Value, last: Option<&Value>, paint: &Paint) -> String {
    let n = json.get("vertices").and_then(Value::as_u64).unwrap_or(0);
    let tokens: Vec<u64> = json
        .get("tokens")
        .and_then(|t| serde_json::from_value(t.clone()).ok())
        .unwrap_or_default();
    let edges: Vec<[u64; 2]> = json
        .get("edges")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
        .unwrap_or_default();
    let mut succ: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for [a, b] in &edges {
        succ.entry(*a).or_default().push(*b);
    }
    let moved = last.and_then(|m| m.get("token")).and_then(Value::as_u64);
    let mut out = format!(
        "Graph game: move one token along an edge; {}, {}\n",
        count(n, "vertex", "vertices"),
        count(edges.len() as u64, "edge", "edges")
    );
    for (t, v) in tokens.iter().enumerate().take(MAX_ROWS) {
        let next = succ
            .get(v)
            .map(|s| s.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
            .unwrap_or_else(|| "nowhere (stuck)".into());
        let line = format!("  token {t} at vertex {v}  → can go to {next}");
        if moved == Some(t as u64) {
            out.push_str(&paint.mark(&format!("{line}  ← moved")));
        } else {
            out.push_str(&line);
        }
        out.push('\n');
    }
    if tokens.len() > MAX_ROWS {
        out.push_str(&format!(
            "  … and {}\n",
            count(
                (tokens.len() - MAX_ROWS) as u64,
                "more token",
                "more tokens"
            )
        ));
    }
    if n as usize <= MAX_ROWS && !succ.is_empty() {
        out.push_str("  edges:");
        for (v, s) in &succ {
            let s: Vec<String> = s.iter().map(u64::to_string).collect();
            out.push_str(&format!(" {v}→{}", s.join("/")));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn draw(spec: Value, last: Option<Value>) -> String {
        let p = Position::from_spec(&spec).expect("test spec");
        board(&p, last.as_ref(), &Paint::PLAIN)
    }

    #[test]
    fn nim() {
        insta::assert_snapshot!(draw(
            json!({"game": "nim", "heaps": [1, 4, 12]}),
            Some(json!({"heap": 1, "take": 2}))
        ));
    }

    #[test]
    fn nim_big_and_misere() {
        insta::assert_snapshot!(draw(
            json!({"game": "nim", "misere": true, "heaps": [0, 9223372036854775808u64]}),
            None
        ));
    }

    #[test]
    fn heaps_rules() {
        insta::assert_snapshot!(draw(
            json!({"game": "heaps", "heaps": [{"size": 5, "rule": {"upto": 3}}, {"size": 7, "rule": "odd"}, {"size": 4, "rule": {"octal": "0.77"}}]}),
            Some(json!({"heap": 2, "take": 1, "leave": [1, 2]}))
        ));
    }

    #[test]
    fn kayles() {
        insta::assert_snapshot!(draw(json!({"game": "kayles", "heaps": [5, 7]}), None));
    }

    #[test]
    fn wythoff() {
        insta::assert_snapshot!(draw(
            json!({"game": "wythoff", "heaps": [3, 5]}),
            Some(json!({"take": [2, 2]}))
        ));
    }

    #[test]
    fn moore() {
        insta::assert_snapshot!(draw(
            json!({"game": "moore", "heaps": [3, 5, 6], "k": 2, "max_take": 4}),
            Some(json!({"take": [[0, 1], [2, 2]]}))
        ));
    }

    #[test]
    fn moore_one_heap_at_a_time() {
        let text = draw(
            json!({"game": "moore", "heaps": [3, 5], "k": 1, "max_take": 2}),
            None,
        );
        assert!(
            text.starts_with("Moore's Nim with k = 1: take from one heap, as in Nim, at most 2\n"),
            "{text}"
        );
    }

    #[test]
    fn new_stone() {
        insta::assert_snapshot!(draw(
            json!({"game": "new-stone", "heaps": [2, 3, 4]}),
            Some(json!({"heap": 2, "take": 1, "give": [[0, 1]]}))
        ));
    }

    #[test]
    fn staircase() {
        insta::assert_snapshot!(draw(
            json!({"game": "staircase", "pieces": [1, 4, 6]}),
            Some(json!({"from": 8, "to": 6}))
        ));
    }

    #[test]
    fn staircase_far() {
        insta::assert_snapshot!(draw(
            json!({"game": "staircase", "pieces": [3, 1000000000]}),
            None
        ));
    }

    #[test]
    fn treblecross() {
        insta::assert_snapshot!(draw(
            json!({"game": "treblecross", "board": "..X.......X.........X.."}),
            Some(json!({"cell": 20}))
        ));
    }

    #[test]
    fn darkraft() {
        let mut p =
            Position::from_spec(&json!({"game": "darkraft", "grid": ["RLX", "LRR", "XLR"]}))
                .expect("spec");
        insta::assert_snapshot!("darkraft_start", board(&p, None, &Paint::PLAIN));
        let last = json!({"row": 1, "col": 1});
        let mv = p.parse_move(&last).expect("move");
        p.play(&mv).expect("legal");
        insta::assert_snapshot!(board(&p, Some(&last), &Paint::PLAIN));
    }

    #[test]
    fn coin_rows_and_boards() {
        let row = draw(
            json!({"game": "mock-turtles", "coins": "THTTHT"}),
            Some(json!({"turn": [1, 3, 5]})),
        );
        assert!(
            row.starts_with("Mock Turtles: turn over one, two or three coins"),
            "{row}"
        );
        assert!(
            row.contains("  coin  0 1 2 3 4 5\n        T H T T H T\n"),
            "{row}"
        );
        assert!(row.contains("last move turned coins 1, 3, 5"), "{row}");
        let ruler = draw(json!({"game": "ruler", "coins": "HTH"}), None);
        assert!(
            ruler.starts_with("Ruler: turn over a run of consecutive coins"),
            "{ruler}"
        );
        assert!(!ruler.contains("last move"), "{ruler}");
        let corners = draw(
            json!({"game": "turning-corners", "coins": ["TTH", "HTT", "THH"]}),
            Some(json!({"turn": [[0, 1], [0, 2], [2, 1], [2, 2]]})),
        );
        assert!(
            corners.starts_with("Turning Corners: turn over the four corners"),
            "{corners}"
        );
        assert!(
            corners.contains(
                "  row\\col  0  1  2\n        0  T  T  H\n        1  H  T  T\n        2  T  H  H\n"
            ),
            "{corners}"
        );
        assert!(
            corners.contains("last move turned the corners of rows 0 and 2, columns 1 and 2"),
            "{corners}"
        );
    }

    #[test]
    fn twist() {
        insta::assert_snapshot!(draw(json!({"game": "twist", "stones": 10}), None));
        let mut p = Position::from_spec(&json!({"game": "twist", "stones": 10})).expect("spec");
        let mv = p.parse_move(&json!({"split": [4, 6]})).expect("move");
        p.play(&mv).expect("legal");
        insta::assert_snapshot!(
            "twist_split",
            board(&p, Some(&json!({"split": [4, 6]})), &Paint::PLAIN)
        );
    }

    #[test]
    fn graph() {
        insta::assert_snapshot!(draw(
            json!({"game": "graph", "vertices": 4, "edges": [[0, 1], [0, 2], [1, 3], [2, 3]], "tokens": [0, 3, 1]}),
            Some(json!({"token": 2, "to": 1}))
        ));
    }

    /// One of a thing is said in the singular.
    #[test]
    fn one_is_singular() {
        let twist = draw(json!({"game": "twist", "stones": 1}), None);
        assert!(
            twist.starts_with("Twist: 1 stone, not split yet."),
            "{twist}"
        );
        let graph = draw(
            json!({"game": "graph", "vertices": 1, "edges": [], "tokens": [0]}),
            None,
        );
        assert!(graph.contains("; 1 vertex, 0 edges"), "{graph}");
        let heaps: Vec<u64> = vec![1; MAX_ROWS + 1];
        let nim = draw(json!({"game": "nim", "heaps": heaps}), None);
        assert!(nim.ends_with("  … and 1 more heap\n"), "{nim}");
        for text in [twist, graph, nim] {
            for word in ["stones", "vertices", "edges", "heaps", "tokens"] {
                assert!(!text.contains(&format!(" 1 {word}")), "{text}");
            }
        }
    }

    #[test]
    fn colours_only_when_asked() {
        let p = Position::from_spec(&json!({"game": "nim", "heaps": [3]})).expect("spec");
        let last = json!({"heap": 0, "take": 1});
        assert!(!board(&p, Some(&last), &Paint::PLAIN).contains('\x1b'));
        assert!(board(&p, Some(&last), &Paint { color: true }).contains('\x1b'));
    }

    /// The heap presets are titled with the game's own name, not the
    /// general rule the engine reads them as.
    #[test]
    fn heap_presets_are_named() {
        let title = |spec| {
            draw(spec, None)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert!(title(json!({"game": "kayles", "heaps": [5]})).starts_with("Kayles (octal 0.77)"));
        assert!(title(json!({"game": "dawson", "heaps": [5]}))
            .starts_with("Dawson's Kayles (octal 0.07)"));
        assert!(title(json!({"game": "lasker", "heaps": [5]})).starts_with("Lasker's Nim: "));
        assert!(title(json!({"game": "grundy", "heaps": [5]}))
            .starts_with("Grundy's game: split a heap into two unequal heaps"));
        assert_eq!(
            title(json!({"game": "bash", "k": 3, "heaps": [5]})),
            "Bash: take 1 to 3 from a heap"
        );
        assert_eq!(
            title(json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [5]})),
            "Subtraction game: take one of {1, 3, 4} from a heap"
        );
        assert_eq!(
            title(json!({"game": "heaps", "rule": "odd", "heaps": [5]})),
            "Heaps, every heap: take an odd number"
        );
    }
}
