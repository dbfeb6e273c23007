//! `grundy analyze`: outcome, Grundy value, winning moves and the perfect move of
//! a position, for a person (with the binary table that shows why) or as JSON.

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use grundy_protocol::games::twist::Twist;
use grundy_protocol::misere::Method;
use grundy_protocol::{Analysis, Outcome, Position};
use serde_json::Value;

use crate::describe::{describe_move, nim_table, position_line};
use grundy_protocol::short::moves::write as short_form;

/// Analyse a position: who wins, the Grundy value, every winning move, the best move.
///
/// Give the position as a spec (`--spec '{"game": "nim", "heaps": [3, 4, 5]}'`)
/// or in short: `grundy analyze nim 3 4 5`, `grundy analyze kayles 5 7`,
/// `grundy analyze bash --k 3 5 6`, `grundy analyze subtraction --set 1,3,4 10`,
/// `grundy analyze wythoff 3 5`, `grundy analyze treblecross ..X..`,
/// `grundy analyze darkraft RL LR`, `grundy analyze twist 10`,
/// `grundy analyze mock-turtles THTHH`, `grundy analyze turning-corners TTH HTT`, and sums of
/// different games, parts joined by `+`: `grundy analyze nim 3 5 + kayles 7 +
/// wythoff 3 5` (each part's value in the table, moves typed `PART: MOVE`).
/// Graphs and heaps with a rule each have no short form: give their spec.
///
/// Each move is shown in words and as you would type it at the `grundy play`
/// prompt; `--json` prints both, the wire JSON and that short form.
#[derive(ClapArgs)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The game id (nim, heaps, bash, subtraction, kayles, dawson, lasker,
    /// grundy, wythoff, moore, new-stone, staircase, treblecross, darkraft,
    /// twist, mock-turtles, ruler, turning-corners) followed by the position:
    /// heap sizes, pieces, a board, grid rows or rows of coins (H and T);
    /// or several of those joined by `+`, a sum.
    #[arg(value_name = "GAME [POSITION]...", conflicts_with = "spec")]
    short: Vec<String>,
    /// The position as a JSON spec (see docs/games.md and docs/protocol.md).
    #[arg(long)]
    spec: Option<String>,
    /// Print exactly one JSON object instead of the person-friendly view:
    /// outcome, grundy, winning_moves and best_move (wire JSON),
    /// winning_move_count, and winning_moves_short and best_move_short (the
    /// moves as typed at the `grundy play` prompt).
    #[arg(long)]
    json: bool,
    /// List at most this many winning moves.
    #[arg(long, default_value_t = 1000)]
    limit: usize,
    /// Misère play (nim, kayles, dawson, lasker, bash, subtraction): whoever
    /// makes the last move loses.
    #[arg(long)]
    misere: bool,
    /// bash: take at most K; moore: move in at most K heaps at once.
    #[arg(long)]
    k: Option<u64>,
    /// subtraction: the allowed amounts, e.g. 1,3,4.
    #[arg(long, value_delimiter = ',')]
    set: Vec<u64>,
    /// moore: take at most this many from each chosen heap.
    #[arg(long)]
    max_take: Option<u64>,
}

pub fn run(args: Args) -> Result<()> {
    let (spec, short) = match &args.spec {
        Some(text) => (
            serde_json::from_str(text).context("--spec is not valid JSON")?,
            false,
        ),
        None => short_spec(&args)?,
    };
    let position = Position::from_spec(&spec).map_err(|e| {
        if short {
            // In the words typed: `--k`, `heap 2`.
            anyhow!(crate::spec::refusal(&e))
        } else {
            anyhow!(e).context("the spec was refused")
        }
    })?;
    let analysis = Analysis::of(&position, args.limit);
    if args.json {
        println!("{}", serde_json::to_string(&json_report(&analysis)?)?);
    } else {
        print!("{}", report(&position, &analysis, args.limit));
    }
    Ok(())
}

/// Builds a spec from `GAME ARGS...` and the flags (true: a short form), or
/// reads the JSON spec pasted in their place.
fn short_spec(args: &Args) -> Result<(Value, bool)> {
    if args.short.is_empty() {
        bail!("say which position: `grundy analyze nim 3 4 5` or `--spec '<json>'`");
    }
    let flags = crate::spec::Flags {
        misere: args.misere,
        k: args.k,
        set: args.set.clone(),
        max_take: args.max_take,
    };
    let text = args.short.join(" ");
    if text.trim_start().starts_with('{') {
        if args.misere || args.k.is_some() || !args.set.is_empty() || args.max_take.is_some() {
            bail!("a JSON spec carries its own fields: write misere, k, set or max_take in it");
        }
        return Ok((crate::spec::parse(&text)?, false));
    }
    Ok((crate::spec::build(&args.short, &flags)?, true))
}

/// What `--json` prints: the analysis (as the HTTP API answers it), with
/// each move also in the short form the `grundy play` prompt reads.
fn json_report(a: &Analysis) -> Result<Value> {
    let mut out = serde_json::to_value(a)?;
    if let Some(fields) = out.as_object_mut() {
        let short: Vec<String> = a.winning_moves.iter().map(short_form).collect();
        fields.insert("winning_moves_short".into(), short.into());
        fields.insert(
            "best_move_short".into(),
            a.best_move.as_ref().map(short_form).into(),
        );
    }
    Ok(out)
}

/// The person-friendly view (`limit`: how many winning moves were asked for).
/// How a misère position was decided, in words (docs/games.md, "Misère play").
fn method_words(method: Method) -> &'static str {
    match method {
        Method::Genus => {
            "genus theory: the heaps are tame, so misère Nim on their Grundy values decides (Conway)"
        }
        Method::Quotient => {
            "the misère quotient of the rule for heaps up to the largest here (Plambeck–Siegel)"
        }
        Method::Search => "exhaustive search of every position reachable from the start",
    }
}

fn report(position: &Position, a: &Analysis, limit: usize) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!("Position  {}", position_line(position)));
    line(match a.outcome {
        Outcome::N => "Outcome   N: the player to move wins with perfect play".into(),
        Outcome::P => "Outcome   P: the player to move loses against perfect play".into(),
    });
    line(match (a.grundy, a.method) {
        (Some(g), _) => format!("Grundy    {g}"),
        (None, Some(_)) => "Grundy    (none: misère sums do not add by values)".into(),
        (None, None) => "Grundy    (none: not a normal-play sum, or not cheaply known)".into(),
    });
    if let Some(method) = a.method {
        line(format!("Method    {}", method_words(method)));
    }
    let mut count = match a.winning_move_count {
        Some(n) => n.to_string(),
        None => format!("{} shown, more exist", a.winning_moves.len()),
    };
    if let Position::Twist(Twist::Unsplit(_)) = position {
        count.push_str("; each split also in any other order of its heaps");
    }
    if a.winning_moves.is_empty() && a.winning_move_count == Some(0) {
        line("Winning moves: none".into());
    } else if a.winning_moves.is_empty() {
        line(format!(
            "Winning moves: some, none listed (--limit {limit}); the best move is one"
        ));
    } else {
        line(format!("Winning moves ({count}):"));
        for m in &a.winning_moves {
            line(format!(
                "  {:<40}  type {}",
                describe_move(position, m),
                short_form(m)
            ));
        }
    }
    match &a.best_move {
        Some(m) => line(format!(
            "Best move {}   (type {}){}",
            describe_move(position, m),
            short_form(m),
            if a.outcome == Outcome::P {
                "  (every move loses; this one keeps the game long)"
            } else {
                ""
            }
        )),
        None => line("Best move none: the game is over".into()),
    }
    if let Some(table) = nim_table(position) {
        line(String::new());
        out.push_str(&table);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(spec: Value, limit: usize) -> String {
        let position = Position::from_spec(&spec).unwrap();
        report(&position, &Analysis::of(&position, limit), limit)
    }

    #[test]
    fn winning_moves_left_unlisted_are_not_called_none() {
        // An N-position: winning moves exist, --limit 0 lists none of them.
        let text = view(json!({"game": "nim", "heaps": [3, 4, 5]}), 0);
        assert!(
            text.contains("Winning moves: some, none listed (--limit 0)"),
            "{text}"
        );
        // A P-position has none.
        let text = view(json!({"game": "nim", "heaps": [1, 2, 3]}), 0);
        assert!(text.contains("Winning moves: none"), "{text}");
        let text = view(json!({"game": "nim", "heaps": [3, 4, 5]}), 10);
        assert!(text.contains("Winning moves (1):"), "{text}");
    }

    /// Moves are shown as they are typed at the prompt, not as wire JSON.
    #[test]
    fn moves_are_shown_as_typed() {
        let text = view(json!({"game": "nim", "heaps": [3, 4, 5]}), 10);
        assert!(
            text.contains(&format!(
                "  {:<40}  type 0 2\n",
                "take 2 from heap 0 (of 3)"
            )),
            "{text}"
        );
        assert!(
            text.contains("Best move take 2 from heap 0 (of 3)   (type 0 2)\n"),
            "{text}"
        );
        assert!(!text.contains(r#"{"heap""#), "{text}");
    }

    /// Twist's winning splits are listed once each, not in every order.
    #[test]
    fn twist_lists_each_split_once() {
        let text = view(json!({"game": "twist", "stones": 10}), 1000);
        assert!(
            text.contains("Winning moves (10; each split also in any other order of its heaps):"),
            "{text}"
        );
        assert!(text.contains("split into heaps 5 + 5"), "{text}");
        assert!(text.contains("type split 5 4 1\n"), "{text}");
        assert!(!text.contains("split 1 4 5"), "{text}");
    }
}
