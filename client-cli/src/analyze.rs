//! `grundy analyze`: outcome, Grundy value, winning moves and the perfect move of
//! a position, for a person (with the binary table that shows why) or as JSON.

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use grundy_protocol::{Analysis, Outcome, Position};
use serde_json::{json, Value};

use crate::describe::{describe_move, nim_table, position_line};

/// Analyse a position: who wins, the Grundy value, every winning move, the best move.
///
/// Give the position as a spec (`--spec '{"game": "nim", "heaps": [3, 4, 5]}'`)
/// or in short: `grundy analyze nim 3 4 5`, `grundy analyze kayles 5 7`,
/// `grundy analyze bash --k 3 5 6`, `grundy analyze subtraction --set 1,3,4 10`,
/// `grundy analyze wythoff 3 5`, `grundy analyze treblecross ..X..`,
/// `grundy analyze darkraft RL LR`, `grundy analyze twist 10`.
#[derive(ClapArgs)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The game id (nim, heaps, bash, subtraction, kayles, dawson, lasker,
    /// wythoff, moore, new-stone, staircase, treblecross, darkraft, twist)
    /// followed by the position: heap sizes, pieces, a board or grid rows.
    #[arg(value_name = "GAME [POSITION]...", conflicts_with = "spec")]
    short: Vec<String>,
    /// The position as a JSON spec (see docs/games.md and docs/protocol.md).
    #[arg(long)]
    spec: Option<String>,
    /// Print exactly one JSON object instead of the person-friendly view.
    #[arg(long)]
    json: bool,
    /// List at most this many winning moves.
    #[arg(long, default_value_t = 1000)]
    limit: usize,
    /// Misère play (nim only): whoever takes the last stone loses.
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
    let spec = match &args.spec {
        Some(text) => serde_json::from_str(text).context("--spec is not valid JSON")?,
        None => short_spec(&args)?,
    };
    let position = Position::from_spec(&spec).context("the spec was refused")?;
    let analysis = Analysis::of(&position, args.limit);
    if args.json {
        println!("{}", serde_json::to_string(&analysis)?);
    } else {
        print!("{}", report(&position, &analysis, args.limit));
    }
    Ok(())
}

/// Builds a spec from `GAME ARGS...` and the flags.
fn short_spec(args: &Args) -> Result<Value> {
    if args.short.is_empty() {
        bail!("say which position: `grundy analyze nim 3 4 5` or `--spec '<json>'`");
    }
    let flags = crate::spec::Flags {
        misere: args.misere,
        k: args.k,
        set: args.set.clone(),
        max_take: args.max_take,
    };
    Ok(crate::spec::build(&args.short, &flags)?)
}

/// The person-friendly view (`limit`: how many winning moves were asked for).
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
    line(match a.grundy {
        Some(g) => format!("Grundy    {g}"),
        None => "Grundy    (none: not a normal-play sum, or not cheaply known)".into(),
    });
    let count = match a.winning_move_count {
        Some(n) => n.to_string(),
        None => format!("{} shown, more exist", a.winning_moves.len()),
    };
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
                "  {:<40}  {}",
                describe_move(position, m),
                json!(m)
            ));
        }
    }
    match &a.best_move {
        Some(m) => line(format!(
            "Best move {}   {}{}",
            describe_move(position, m),
            json!(m),
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
}
