//! Game specs from the short forms people type: `nim 3 4 5`, `kayles 5 7`,
//! `bash --k 3 5 6`, `subtraction --set 1,3,4 10`, `treblecross ..X..`,
//! `darkraft RL LR`, `twist 10`, or a whole JSON spec (one reading for
//! `grundy analyze`, `grundy play --game`, `grundy tournament create --spec`
//! and `grundy-bot --spec`).

use serde_json::{json, Value};

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

/// A whole number ≥ 0 as a person types it; the error says what is wrong
/// with it (not a number, negative, or too large).
pub fn whole_number(word: &str) -> std::result::Result<u64, String> {
    word.parse::<u64>().map_err(|_| {
        let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
        if digits(word) {
            format!("{word:?} is too large (the largest number is {})", u64::MAX)
        } else if word.strip_prefix('-').is_some_and(digits) {
            format!("{word:?} is negative: write a whole number ≥ 0")
        } else {
            format!("{word:?} is not a whole number ≥ 0")
        }
    })
}

/// Builds a spec from `GAME ARGS...` and the flags.
pub fn build(words: &[String], flags: &Flags) -> Result<Value> {
    let Some((game, rest)) = words.split_first() else {
        bail!("say which position, e.g. `nim 3 4 5`, or give a JSON spec");
    };
    let numbers = || -> Result<Vec<u64>> {
        rest.iter()
            .map(|s| whole_number(s).map_err(ShortSpecError))
            .collect()
    };
    let one_number = || -> Result<u64> {
        match numbers()?.as_slice() {
            [n] => Ok(*n),
            _ => bail!("{game} takes one number"),
        }
    };
    let mut fields = serde_json::Map::new();
    fields.insert("game".into(), json!(game));
    match game.as_str() {
        "nim" | "kayles" | "dawson" | "lasker" | "new-stone" | "wythoff" | "moore" | "bash"
        | "subtraction" => {
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
        "heaps" | "graph" => bail!("{game} needs a full JSON spec"),
        other => bail!("unknown game {other:?}"),
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

/// Reads one string: a JSON spec (`{"game": ...}`), or a short form whose
/// words may carry `--misere`, `--k N`, `--set A,B,..`, `--max-take N`.
pub fn parse(text: &str) -> Result<Value> {
    let text = text.trim();
    if text.starts_with('{') {
        return serde_json::from_str(text)
            .map_err(|e| ShortSpecError(format!("the spec is not valid JSON: {e}")));
    }
    let mut words = Vec::new();
    let mut flags = Flags::default();
    let mut it = text.split_whitespace();
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
            other => words.push(other.to_string()),
        }
    }
    build(&words, &flags)
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
        assert_eq!(whole_number("18446744073709551615"), Ok(u64::MAX));
    }
}
