//! Positions in the short forms people type: `nim 3 4 5`, `kayles 5 7`,
//! `bash --k 3 5 6`, `subtraction --set 1,3,4 10`, `treblecross ..X..`,
//! `darkraft RL LR`, `twist 10`, `mock-turtles THHT`, `turning-corners THT HTH`,
//! sums joined by `+`, or a whole JSON spec;
//! read into a spec ([`parse`], [`build`]) and written back ([`write`]).

use serde_json::{json, Value};

use super::number::whole_number;
use crate::error::SpecError;
use crate::{Position, Rules};

/// A short form that names no position, and why, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShortSpecError(pub String);

type Result<T> = std::result::Result<T, ShortSpecError>;

macro_rules! bail {
    ($($t:tt)*) => { return Err(ShortSpecError(format!($($t)*))) };
}

/// The options a short form may carry besides the game and its numbers.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    pub misere: bool,
    pub k: Option<u64>,
    pub set: Vec<u64>,
    pub max_take: Option<u64>,
}

/// The games with a short form, as a person lists them.
const SHORT_GAMES: &str =
    "nim, kayles, dawson, lasker, grundy, bash, subtraction, wythoff, moore, \
     new-stone, staircase, treblecross, darkraft, twist, mock-turtles, ruler, \
     turning-corners, and sums of them joined by + \
     (`nim 3 5 + kayles 7`)";

/// Whole specs of the games that have no short form, to copy and change.
pub const GRAPH_EXAMPLE: &str =
    r#"{"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2], [0, 2]], "tokens": [0, 1]}"#;
pub const HEAPS_EXAMPLE: &str = r#"{"game": "heaps", "heaps": [{"size": 5, "rule": {"upto": 3}}, {"size": 7, "rule": "odd"}, {"size": 6, "rule": {"octal": "0.77"}}]}"#;

/// A flag a short form may carry: its name, the games that take it, and what
/// it means for a game that cannot do without it (with an example).
struct Flag {
    name: &'static str,
    games: &'static [&'static str],
    needed_by: &'static [(&'static str, &'static str)],
}

const FLAGS: &[Flag] = &[
    Flag {
        name: "--misere",
        games: &[
            "nim",
            "kayles",
            "dawson",
            "lasker",
            "grundy",
            "bash",
            "subtraction",
        ],
        needed_by: &[],
    },
    Flag {
        name: "--k",
        games: &["bash", "moore"],
        needed_by: &[
            ("bash", "the most one move may take (e.g. `bash --k 3 5 6`)"),
            (
                "moore",
                "the most heaps one move may take from (e.g. `moore --k 2 3 4 5`)",
            ),
        ],
    },
    Flag {
        name: "--set",
        games: &["subtraction"],
        needed_by: &[(
            "subtraction",
            "the amounts a move may take (e.g. `subtraction --set 1,3,4 10`)",
        )],
    },
    Flag {
        name: "--max-take",
        games: &["moore"],
        needed_by: &[],
    },
];

/// Builds a spec from `GAME ARGS...` and the flags; words may carry flags of
/// their own too (`bash --k 3 5`). A sum's parts are joined by `+`
/// (`nim 3 5 + kayles 7 + wythoff 3 5`): each part takes the flags written
/// in it, and the flags given outside apply to every part that takes them,
/// except `--misere`, which makes the whole sum misère.
pub fn build(words: &[String], flags: &Flags) -> Result<Value> {
    // One quoted argument may hold the whole short form.
    let words: Vec<String> = words
        .iter()
        .flat_map(|w| w.split_whitespace())
        .map(str::to_string)
        .collect();
    let chunks: Vec<&[String]> = words.split(|w| w == "+").collect();
    if chunks.len() == 1 {
        let (words, own) = read_flags(&words)?;
        return build_one(&words, &own.over(flags));
    }
    // `--misere` outside the parts makes the whole sum misère.
    let misere = flags.misere;
    let flags = &Flags {
        misere: false,
        ..flags.clone()
    };
    let mut parts = Vec::with_capacity(chunks.len());
    let mut taken = [false; 4];
    for (i, chunk) in chunks.iter().enumerate() {
        // A part with no short form (a graph) may be its JSON spec.
        if chunk.first().is_some_and(|w| w.starts_with('{')) {
            let spec = serde_json::from_str(&chunk.join(" ")).map_err(|e| {
                ShortSpecError(format!("part {i}: the spec is not valid JSON: {e}"))
            })?;
            parts.push(spec);
            continue;
        }
        let (words, own) = read_flags(chunk)?;
        let Some(game) = words.first() else {
            bail!("part {i} of the sum is empty: join the parts with +, e.g. `nim 3 5 + kayles 7`");
        };
        // The outer flags, only where this part's game takes them.
        let mut outer = flags.clone();
        for (j, flag) in FLAGS.iter().enumerate() {
            if flag.games.contains(&game.as_str()) {
                taken[j] |= flag_given(flags, j);
            } else {
                clear_flag(&mut outer, j);
            }
        }
        let spec = build_one(&words, &own.over(&outer))
            .map_err(|e| ShortSpecError(format!("part {i} ({game}): {e}")))?;
        parts.push(spec);
    }
    for (j, flag) in FLAGS.iter().enumerate() {
        if flag_given(flags, j) && !taken[j] {
            bail!(
                "{} is an option of no part of this sum (it is for {})",
                flag.name,
                flag.games.join(" and ")
            );
        }
    }
    if misere {
        return Ok(json!({"game": "sum", "parts": parts, "misere": true}));
    }
    Ok(json!({"game": "sum", "parts": parts}))
}

/// Whether the `j`-th flag of [`FLAGS`] is given.
fn flag_given(flags: &Flags, j: usize) -> bool {
    [
        flags.misere,
        flags.k.is_some(),
        !flags.set.is_empty(),
        flags.max_take.is_some(),
    ][j]
}

fn clear_flag(flags: &mut Flags, j: usize) {
    match j {
        0 => flags.misere = false,
        1 => flags.k = None,
        2 => flags.set.clear(),
        _ => flags.max_take = None,
    }
}

impl Flags {
    /// These flags, with `outer`'s where these give none.
    fn over(self, outer: &Flags) -> Flags {
        Flags {
            misere: self.misere || outer.misere,
            k: self.k.or(outer.k),
            set: if self.set.is_empty() {
                outer.set.clone()
            } else {
                self.set
            },
            max_take: self.max_take.or(outer.max_take),
        }
    }
}

/// Splits the flags (`--misere`, `--k N`, `--set A,B,..`, `--max-take N`)
/// from the other words.
fn read_flags(words: &[String]) -> Result<(Vec<String>, Flags)> {
    let mut rest = Vec::new();
    let mut flags = Flags::default();
    let mut it = words.iter().map(String::as_str);
    let number = |name: &str, v: Option<&str>| -> Result<u64> {
        let v = v.ok_or_else(|| ShortSpecError(format!("{name} needs a number")))?;
        whole_number(v).map_err(|e| ShortSpecError(format!("{name}: {e}")))
    };
    while let Some(w) = it.next() {
        match w {
            "--misere" | "misere" => flags.misere = true,
            "--k" => flags.k = Some(number("--k", it.next())?),
            "--max-take" => flags.max_take = Some(number("--max-take", it.next())?),
            "--set" => {
                let v = it
                    .next()
                    .ok_or_else(|| ShortSpecError("--set needs amounts, e.g. 1,3,4".into()))?;
                flags.set = v
                    .split(',')
                    .map(|s| {
                        whole_number(s.trim()).map_err(|e| ShortSpecError(format!("--set: {e}")))
                    })
                    .collect::<Result<_>>()?;
            }
            other => rest.push(other.to_string()),
        }
    }
    Ok((rest, flags))
}

/// One game's spec from its words and flags.
fn build_one(words: &[String], flags: &Flags) -> Result<Value> {
    let Some((game, rest)) = words.split_first() else {
        bail!("say which position, e.g. `nim 3 4 5`, or give a JSON spec");
    };
    let numbers = || -> Result<Vec<u64>> {
        rest.iter()
            .map(|s| whole_number(s).map_err(|e| ShortSpecError(e.to_string())))
            .collect()
    };
    let one_number = || -> Result<u64> {
        match numbers()?.as_slice() {
            [n] => Ok(*n),
            _ => bail!("{game} takes one number, e.g. `{game} 10`"),
        }
    };
    let mut fields = serde_json::Map::new();
    fields.insert("game".into(), json!(game));
    match game.as_str() {
        "nim" | "kayles" | "dawson" | "lasker" | "grundy" | "new-stone" | "wythoff" | "moore"
        | "bash" | "subtraction" => {
            fields.insert("heaps".into(), json!(numbers()?));
        }
        "staircase" => {
            fields.insert("pieces".into(), json!(numbers()?));
        }
        "twist" => {
            fields.insert("stones".into(), json!(one_number()?));
        }
        "treblecross" => match rest {
            [s] if s.chars().all(|c| c.is_ascii_digit()) => {
                fields.insert("length".into(), json!(one_number()?));
            }
            [board] => {
                fields.insert("board".into(), json!(board));
            }
            _ => bail!("treblecross takes a length or a board such as ..X.."),
        },
        "darkraft" => {
            fields.insert("grid".into(), json!(rest));
        }
        "mock-turtles" | "ruler" => match rest {
            [row] => {
                fields.insert("coins".into(), json!(row));
            }
            _ => bail!(
                "{game} takes one row of coins, H for heads and T for tails, e.g. `{game} THHT`"
            ),
        },
        "turning-corners" => {
            if rest.is_empty() {
                bail!("turning-corners takes its rows of coins, H for heads and T for tails, e.g. `turning-corners TTH HTH`");
            }
            fields.insert("coins".into(), json!(rest));
        }
        "coins" => bail!(
            "coins has no short form: name its rule as the game, e.g. `mock-turtles THHT`, \
             `ruler HTH` or `turning-corners TTH HTH`"
        ),
        "graph" => bail!(
            "graph has no short form: give its whole spec as JSON, e.g. '{GRAPH_EXAMPLE}' \
             (docs/games.md: edges go from one vertex to another, tokens stand on vertices)"
        ),
        "heaps" => bail!(
            "heaps has no short form: give its whole spec as JSON, e.g. '{HEAPS_EXAMPLE}' \
             (docs/games.md: a rule per heap; kayles, dawson, lasker, grundy, bash and \
             subtraction have short forms)"
        ),
        other => bail!("unknown game {other:?} (games with a short form: {SHORT_GAMES})"),
    }
    // The game is one with a short form: are its flags the ones it takes?
    let given = [
        ("--misere", flags.misere),
        ("--k", flags.k.is_some()),
        ("--set", !flags.set.is_empty()),
        ("--max-take", flags.max_take.is_some()),
    ];
    for (flag, (_, is_given)) in FLAGS.iter().zip(given) {
        let name = flag.name;
        if is_given && !flag.games.contains(&game.as_str()) {
            let (last, rest) = flag.games.split_last().expect("a flag has games");
            let games = if rest.is_empty() {
                last.to_string()
            } else {
                format!("{} and {last}", rest.join(", "))
            };
            bail!("{name} is not an option of {game} (it is for {games})");
        }
        if let Some((_, what)) = flag.needed_by.iter().find(|(g, _)| g == game) {
            if !is_given {
                bail!("{game} needs {name}: {what}");
            }
        }
    }
    if flags.misere {
        fields.insert("misere".into(), json!(true));
    }
    if let Some(k) = flags.k {
        fields.insert("k".into(), json!(k));
    }
    if !flags.set.is_empty() {
        fields.insert("set".into(), json!(flags.set));
    }
    if let Some(m) = flags.max_take {
        fields.insert("max_take".into(), json!(m));
    }
    Ok(Value::Object(fields))
}

/// A refusal of a spec built from a short form, in the short form's words:
/// `--k` for the field `k`, `heap 2` for `heaps[2]`, `row 1` for `grid[1]`.
pub fn refusal(e: &SpecError) -> String {
    // A sum's part: `part 2, heap 0: ...`.
    if let Some((i, rest)) = e
        .field
        .strip_prefix("parts[")
        .and_then(|f| f.split_once(']'))
    {
        let inner = SpecError::new(rest.trim_start_matches('.'), e.message.clone());
        let said = if inner.field == "game" {
            inner.message.clone()
        } else {
            refusal(&inner)
        };
        return if inner.field.is_empty() || inner.field == "game" {
            format!("part {i}: {said}")
        } else {
            format!("part {i}, {said}")
        };
    }
    let field = e.field.as_str();
    let indexed = |name: &str| -> Option<u64> {
        field
            .strip_prefix(name)?
            .strip_prefix('[')?
            .strip_suffix(']')?
            .parse()
            .ok()
    };
    let said = match field {
        "k" => "--k".to_string(),
        "max_take" => "--max-take".to_string(),
        "misere" => "--misere".to_string(),
        f if f == "set" || f.starts_with("set[") => "--set".to_string(),
        "board" | "length" | "stones" => format!("the {field}"),
        _ => match (indexed("heaps"), indexed("pieces"), indexed("grid")) {
            (Some(i), _, _) => format!("heap {i}"),
            (_, Some(i), _) => format!("piece {i}"),
            (_, _, Some(i)) => format!("row {i}"),
            _ => return e.to_string(),
        },
    };
    format!("{said}: {}", e.message)
}

/// Reads one string: a JSON spec (`{"game": ...}`), or a short form whose
/// words may carry `--misere`, `--k N`, `--set A,B,..`, `--max-take N`.
pub fn parse(text: &str) -> Result<Value> {
    let text = text.trim();
    if text.starts_with('{') {
        return serde_json::from_str(text)
            .map_err(|e| ShortSpecError(format!("the spec is not valid JSON: {e}")));
    }
    let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    build(&words, &Flags::default())
}

/// A position in the short form [`parse`] reads back to the same position:
/// `nim 3 5`, `kayles --misere 4 7`, `nim 3 + wythoff 2 5`. A position with
/// no short form (a graph, heaps under mixed rules, a misère sum) is written
/// as its compact JSON spec, which [`parse`] reads too; so is a part of a sum
/// that has none (`nim 3 + {"game":"graph",...}`).
pub fn write(position: &Position) -> String {
    let spec = position.to_json();
    write_spec(&spec).unwrap_or_else(|| spec.to_string())
}

/// A spec (as [`Position`]'s `to_json` gives it) in the short form; None
/// when it has none.
fn write_spec(spec: &Value) -> Option<String> {
    let fields = spec.as_object()?;
    let game = fields.get("game")?.as_str()?;
    let misere = fields.get("misere").and_then(Value::as_bool) == Some(true);
    let numbers = |key: &str| -> Option<Vec<String>> {
        let list = fields.get(key)?.as_array()?;
        list.iter().map(|n| Some(n.as_u64()?.to_string())).collect()
    };
    let mut words: Vec<String> = Vec::new();
    match game {
        "sum" if !misere => {
            let parts = fields.get("parts")?.as_array()?;
            let written: Vec<String> = parts
                .iter()
                .map(|p| write_spec(p).unwrap_or_else(|| p.to_string()))
                .collect();
            return Some(written.join(" + "));
        }
        "nim" | "wythoff" | "new-stone" => {
            words.push(game.into());
            words.extend(numbers("heaps")?);
        }
        "moore" => {
            words.extend(["moore".into(), "--k".into(), fields.get("k")?.to_string()]);
            if let Some(most) = fields.get("max_take") {
                words.extend(["--max-take".into(), most.to_string()]);
            }
            words.extend(numbers("heaps")?);
        }
        "heaps" => {
            // One rule for every heap, that of a game with a short form.
            let rule = fields.get("rule")?;
            let as_text = |key: &str| rule.get(key).and_then(Value::as_str);
            if as_text("octal") == Some("0.77") {
                words.push("kayles".into());
            } else if as_text("octal") == Some("0.07") {
                words.push("dawson".into());
            } else if rule.as_str() == Some("lasker") {
                words.push("lasker".into());
            } else if rule.as_str() == Some("grundy") {
                words.push("grundy".into());
            } else if let Some(k) = rule.get("upto").and_then(Value::as_u64) {
                words.extend(["bash".into(), "--k".into(), k.to_string()]);
            } else if let Some(set) = rule.get("set").and_then(Value::as_array) {
                let set: Option<Vec<String>> =
                    set.iter().map(|n| Some(n.as_u64()?.to_string())).collect();
                words.extend(["subtraction".into(), "--set".into(), set?.join(",")]);
            } else {
                return None;
            }
            words.extend(numbers("heaps")?);
        }
        "staircase" => {
            words.push(game.into());
            words.extend(numbers("pieces")?);
        }
        "twist" => words.extend([game.into(), fields.get("stones")?.to_string()]),
        "treblecross" => {
            words.push(game.into());
            match (fields.get("length"), fields.get("board")) {
                (Some(length), _) => words.push(length.to_string()),
                (None, Some(board)) => words.push(board.as_str()?.into()),
                (None, None) => return None,
            }
        }
        "mock-turtles" | "ruler" => {
            words.extend([game.into(), fields.get("coins")?.as_str()?.into()]);
        }
        "darkraft" | "turning-corners" => {
            words.push(game.into());
            let key = if game == "darkraft" { "grid" } else { "coins" };
            let rows = fields.get(key)?.as_array()?;
            let rows: Option<Vec<String>> = rows.iter().map(|r| Some(r.as_str()?.into())).collect();
            let rows = rows?;
            // A row that is not one word would not read back as one row.
            if rows.is_empty()
                || rows
                    .iter()
                    .any(|r| r.is_empty() || r.contains(char::is_whitespace))
            {
                return None;
            }
            words.extend(rows);
        }
        _ => return None,
    }
    if misere {
        words.insert(1, "--misere".into());
    }
    Some(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_forms() {
        assert_eq!(
            parse("nim 3 4 5").ok(),
            Some(json!({"game": "nim", "heaps": [3, 4, 5]}))
        );
        assert_eq!(
            parse("subtraction --set 1,3,4 10").ok(),
            Some(json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [10]}))
        );
        assert_eq!(
            parse("treblecross ..X..").ok(),
            Some(json!({"game": "treblecross", "board": "..X.."}))
        );
        assert_eq!(
            parse(r#"{"game": "wythoff", "heaps": [3, 5]}"#).ok(),
            Some(json!({"game": "wythoff", "heaps": [3, 5]}))
        );
        assert!(parse("").is_err());
        assert!(parse("nim x").is_err());
        assert!(parse("chess 1").is_err());
        assert!(parse("bash --k").is_err());
    }

    /// A sum's parts are joined by `+`, in one argument or many; each part
    /// takes its own flags, and outer flags go to the parts that take them.
    #[test]
    fn sums_are_parts_joined_by_plus() {
        let sum = |parts: Value| Some(json!({"game": "sum", "parts": parts}));
        assert_eq!(
            parse("nim 3 5 + kayles 7 + wythoff 3 5").ok(),
            sum(
                json!([{"game": "nim", "heaps": [3, 5]}, {"game": "kayles", "heaps": [7]},
                {"game": "wythoff", "heaps": [3, 5]}])
            )
        );
        assert_eq!(
            parse("bash --k 3 5 + bash --k 2 4").ok(),
            sum(
                json!([{"game": "bash", "k": 3, "heaps": [5]}, {"game": "bash", "k": 2, "heaps": [4]}])
            )
        );
        let words: Vec<String> = ["bash", "5", "+", "nim 2"].map(String::from).to_vec();
        let flags = Flags {
            k: Some(3),
            ..Flags::default()
        };
        assert_eq!(
            build(&words, &flags).ok(),
            sum(json!([{"game": "bash", "k": 3, "heaps": [5]}, {"game": "nim", "heaps": [2]}]))
        );
        let said = |text: &str| parse(text).unwrap_err().to_string();
        assert!(said("nim 3 + + kayles 2").starts_with("part 1 of the sum is empty"));
        assert_eq!(
            parse(r#"nim 3 + {"game": "graph", "vertices": 2, "edges": [[0, 1]], "tokens": [0]}"#)
                .ok(),
            sum(json!([{"game": "nim", "heaps": [3]},
                {"game": "graph", "vertices": 2, "edges": [[0, 1]], "tokens": [0]}]))
        );
        assert!(said("nim 3 + {\"game\": ").starts_with("part 1: the spec is not valid JSON"));
        assert!(said("nim 3 + chess 2").starts_with("part 1 (chess): unknown game"));
        assert!(said("nim 3 + bash 2").starts_with("part 1 (bash): bash needs --k"));
        let flags = Flags {
            misere: true,
            ..Flags::default()
        };
        // Outside the parts, --misere makes the whole sum misère.
        let words: Vec<String> = ["kayles", "3", "+", "nim", "1", "2"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            build(&words, &flags).ok(),
            Some(json!({"game": "sum", "misere": true, "parts": [
                {"game": "kayles", "heaps": [3]}, {"game": "nim", "heaps": [1, 2]}]}))
        );
        let flags = Flags {
            k: Some(2),
            ..Flags::default()
        };
        assert!(build(&words, &flags)
            .unwrap_err()
            .to_string()
            .starts_with("--k is an option of no part of this sum"));
        let refused = |text: &str| {
            let spec = parse(text).expect("builds");
            refusal(&Position::from_spec(&spec).unwrap_err())
        };
        assert_eq!(
            refused("nim 3 + nim 1 18446744073709551615"),
            "part 1, heap 1: must be at most 9223372036854775808, got 18446744073709551615"
        );
        assert!(
            refused("nim 2 + treblecross ..X").starts_with("part 1: treblecross cannot be a part")
        );
    }

    /// A flag the game needs, or one it does not take, is named as typed.
    #[test]
    fn flags_are_named_as_typed() {
        let said = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            said("moore 3 4 5"),
            "moore needs --k: the most heaps one move may take from (e.g. `moore --k 2 3 4 5`)"
        );
        assert!(said("bash 5 6").starts_with("bash needs --k:"));
        assert!(said("subtraction 10").starts_with("subtraction needs --set:"));
        assert_eq!(
            said("nim --k 2 3 4"),
            "--k is not an option of nim (it is for bash and moore)"
        );
        assert!(said("wythoff --misere 3 5").starts_with("--misere is not an option of wythoff"));
        assert_eq!(
            parse("kayles --misere 3 4").ok(),
            Some(json!({"game": "kayles", "heaps": [3, 4], "misere": true}))
        );
        assert!(said("wythoff --max-take 2 3 5").contains("it is for moore"));
        assert_eq!(
            parse("moore --k 2 --max-take 3 3 4 5").ok(),
            Some(json!({"game": "moore", "heaps": [3, 4, 5], "k": 2, "max_take": 3}))
        );
        assert!(said("chess 1").contains("games with a short form: nim,"));
    }

    /// The games with no short form say how to write their spec, with an
    /// example that is a good spec.
    #[test]
    fn games_without_a_short_form_give_an_example() {
        for (game, example) in [("graph", GRAPH_EXAMPLE), ("heaps", HEAPS_EXAMPLE)] {
            let said = parse(&format!("{game} 1 2")).unwrap_err().to_string();
            assert!(said.contains(example), "{said}");
            let spec = parse(example).expect("the example is JSON");
            Position::from_spec(&spec).expect("the example is a good spec");
        }
    }

    #[test]
    fn refusals_of_short_forms_name_what_was_typed() {
        let refused = |text: &str| {
            let spec = parse(text).expect("builds");
            refusal(&Position::from_spec(&spec).unwrap_err())
        };
        assert!(
            refused("moore --k 0 3 4").starts_with("--k: must be at least 1"),
            "{}",
            refused("moore --k 0 3 4")
        );
        assert!(refused("nim 1 18446744073709551615").starts_with("heap 1: "));
        assert!(refused("subtraction --set 0,2 5").starts_with("--set: "));
        assert!(refused("darkraft RL R").starts_with("row 1: has 1 cell but"));
        assert!(refused("staircase 3 3").starts_with("piece 1: "));
    }

    #[test]
    fn a_number_that_is_not_one_is_named_for_what_is_wrong() {
        let said = |text: &str| parse(text).unwrap_err().to_string();
        assert!(
            said("nim 99999999999999999999999").contains("too large"),
            "{}",
            said("nim 99999999999999999999999")
        );
        assert!(said("nim -3").contains("negative"));
        assert!(said("nim x").contains("not a whole number"));
        assert!(said("nim \u{1b}[A").contains("control character"));
        assert!(said("nim ３").contains("digits 0-9"));
    }
}
