//! What the person sees of the match: the greeting, the board, the prompt
//! (with the clocks), and what happened, in words.

use grundy_protocol::wire::Snapshot;

use super::{Seat, Where, NO_SHOW_MS};
use crate::console::Console;
use crate::follow::{clock_text, result_text, Follow, Happened};
use crate::render::Paint;

/// The greeting: the game, the room and the seat, how a friend joins, hints,
/// the clock, how to come back, and where help is.
pub(super) fn intro(
    f: &Follow,
    seat: &Seat,
    snapshot: &Snapshot,
    here: &Where,
    game: &str,
) -> String {
    let mut intro = format!(
        "{game}, room {} — you are seat {} ({}).",
        f.code,
        seat.seat,
        if seat.seat == 0 {
            "you move first"
        } else {
            "you move second"
        }
    );
    let open = f.game.seats.iter().any(|s| s.name.is_none()) && seat.bot.is_none();
    if open && f.game.result.is_none() {
        intro.push_str(&format!(
            "\nA friend joins with:  grundy play --join {}{}",
            f.code,
            here.server_flag()
        ));
    }
    intro.push_str(if snapshot.hints {
        "\nHints are on for both players (type `hint`)."
    } else {
        "\nNo hints in this match."
    });
    if snapshot.rated {
        intro.push_str(&format!(
            "\nA rated game: both players' {game} ratings move when it ends."
        ));
    }
    if let Some(c) = snapshot.clock {
        intro.push_str(&format!(
            "\nClock: {} + {} s a move. Each player's first move must come within {} s, or {}.",
            clock_text(c.initial_ms),
            c.increment_ms / 1000,
            NO_SHOW_MS / 1000,
            // A rated game's no-show loses it (docs/protocol.md, "Rated games").
            if snapshot.rated {
                "that player loses"
            } else {
                "the match is called off"
            }
        ));
    }
    if let Some(back) = &seat.comeback {
        intro.push_str(&format!(
            "\nIf you leave or lose the terminal, come back with:  {back}"
        ));
    }
    intro.push_str("\nType `help` for how to write moves and what else you can type.");
    intro
}

/// The prompt's text, with the time left for a first move where that limit
/// comes before the clock's.
pub(super) fn prompt_line(f: &Follow, me: u8) -> String {
    let mut text = f.prompt_text(me);
    if let (Some(_), Some(started), true) = (f.game.clock, f.game.turn_started, first_move(f, me)) {
        let left = NO_SHOW_MS.saturating_sub(started.elapsed().as_millis() as u64);
        text.push_str(&format!(" first move within {}", clock_text(left)));
    }
    text
}

/// Whether the person is to make their first move of the match.
pub(super) fn first_move(f: &Follow, me: u8) -> bool {
    f.to_move() == Some(me) && f.game.plies() < 2
}

/// Shows the prompt: drawn live by the line editor; in plain lines, printed
/// only when the person is to type a move.
pub(super) fn prompt(f: &Follow, me: u8, console: &Console) {
    if console.is_live() || f.to_move() == Some(me) {
        console.prompt(&prompt_line(f, me));
    } else {
        console.prompt("");
    }
}

pub(super) fn show(f: &Follow, me: u8, console: &Console, paint: &Paint) {
    console.say(&format!(
        "\n{}{}",
        f.draw(paint),
        f.status_line(Some(me), paint)
    ));
    prompt(f, me, console);
}

/// Tells what happened; true when the board should be drawn again.
pub(super) fn tell(f: &Follow, me: u8, h: &Happened, console: &Console, paint: &Paint) -> bool {
    match h {
        Happened::Seated(name) => {
            console.say(&format!("{name} sat down."));
            false
        }
        Happened::Started => {
            console.say(&format!(
                "The match starts. {}",
                f.status_line(Some(me), paint)
            ));
            prompt(f, me, console);
            false
        }
        Happened::Moved(seat, words) if *seat == me => {
            console.say(&format!("\nYou played: {words}."));
            true
        }
        Happened::Moved(seat, words) => {
            console.say(&format!(
                "\n{}",
                paint.mark(&format!("{} played: {words}.", f.name(*seat)))
            ));
            true
        }
        Happened::Presence(seat, connected) if *seat != me => {
            console.say(&format!(
                "{} {}.",
                f.name(*seat),
                if *connected {
                    "is back"
                } else {
                    "lost their connection"
                }
            ));
            prompt(f, me, console);
            false
        }
        Happened::Ended(r) => {
            let text = result_text(r, Some(me), f);
            let text = if r.winner == Some(me) {
                paint.good(&text)
            } else {
                paint.bad(&text)
            };
            console.say(&format!("\nThe match is over: {text}."));
            false
        }
        _ => false,
    }
}
