//! Checking what `create_tournament` asks for, and filling in the defaults, so
//! a tournament's settings are complete and valid once it exists.

use grundy_protocol::time_control::check_clock;
use grundy_protocol::wire::{Clock, ErrorCode, Limits, TournamentFormat, TournamentSettings};
use grundy_protocol::{Position, Rules, Status};
use serde_json::Value;

use crate::player::Player;
use crate::refusal::Refusal;

/// The time control when none is given: time to think for people, and far
/// more than a bot needs.
pub const DEFAULT_CLOCK: Clock = Clock {
    initial_ms: 120_000,
    increment_ms: 2_000,
};
/// Longest title.
const MAX_NAME: usize = 80;
/// Most rounds a Swiss may ask for (it is cut to what the players allow).
const MAX_ROUNDS: u32 = 1000;
/// How many random starts are drawn at creation to check that the family and
/// size give games that can be played.
const PROBES: u64 = 4;

fn bad<T>(message: impl Into<String>) -> Result<T, Refusal> {
    Err((ErrorCode::BadRequest, message.into()))
}

/// Checks `settings`, asked for by `creator`, and fills in every default;
/// `seed` is used when none is given.
pub fn fill(
    mut settings: TournamentSettings,
    limits: &Limits,
    seed: u64,
    creator: &Player,
) -> Result<TournamentSettings, Refusal> {
    // Only accounts play in a rated tournament (`register`), and only an
    // account may open one: a guest's would move ratings on nobody's word.
    if settings.rated && creator.account.is_none() {
        return Err((
            ErrorCode::AccountRequired,
            "rated: only an account may create a rated tournament (say hello with a token), \
             or leave rated out"
                .to_string(),
        ));
    }
    if let Some(title) = &settings.name {
        check_title(title)?;
    }
    match (&settings.spec, &settings.family) {
        (Some(_), None) | (None, Some(_)) => {}
        _ => {
            return bad(
                "give exactly one of spec (one start for every game) and family (random starts)",
            )
        }
    }
    if settings.spec.is_some() && settings.size.is_some() {
        return bad("size bounds random starts: give it with family, not with spec");
    }
    match (settings.format, settings.rounds) {
        (_, Some(0)) => return bad("rounds must be at least 1"),
        (_, Some(r)) if r > MAX_ROUNDS => {
            return bad(format!("rounds must be at most {MAX_ROUNDS}"))
        }
        (TournamentFormat::Swiss, None) => return bad("a swiss tournament needs rounds"),
        _ => {}
    }
    let clock = settings.clock.unwrap_or(DEFAULT_CLOCK);
    if let Err(why) = check_clock(&clock) {
        return bad(why);
    }
    settings.clock = Some(clock);
    let most = limits.tournament_players;
    match settings.max_players {
        Some(n) if !(2..=most).contains(&n) => {
            return bad(format!("max_players: must be 2 to {most}, got {n}"))
        }
        Some(_) => {}
        None => settings.max_players = Some(most),
    }
    settings.seed = Some(settings.seed.unwrap_or(seed));
    Ok(settings)
}

/// Refuses a title (the setting `name`) that is too long, or holds what a
/// guest's name may not: it is shown in every list, as names are
/// (`crate::text::check_shown`).
fn check_title(title: &str) -> Result<(), Refusal> {
    const FIELD: &str = "name (the title)";
    let count = title.chars().count();
    if count > MAX_NAME {
        return bad(format!(
            "{FIELD}: must be at most {MAX_NAME} characters, got {count}"
        ));
    }
    crate::text::check_shown(FIELD, title).or_else(bad)
}

/// Starts a tournament with these settings will play: the fixed spec, or the
/// first few random starts.
pub fn probe_specs(settings: &TournamentSettings) -> Result<Vec<Value>, Refusal> {
    if let Some(spec) = &settings.spec {
        return Ok(vec![spec.clone()]);
    }
    let family = settings.family.as_deref().unwrap_or_default();
    (0..PROBES)
        .map(|i| {
            grundy_protocol::random::random_spec(
                family,
                settings.seed.unwrap_or(0).wrapping_add(i),
                settings.size,
            )
            .map_err(|e| {
                let field = grundy_protocol::random::request_field(&e);
                (ErrorCode::BadSpec, format!("{field}: {}", e.message))
            })
        })
        .collect()
}

/// Refuses a tournament one of whose rounds could not be announced in half a
/// message: a `round_started` event lists every pairing with its start, and
/// a state cut to one round (`only_round`) holds them beside the players,
/// the standings and the round's games. The probe starts stand for the rest,
/// with room for starts up to twice as large (a random start's size varies
/// with the seed, within its bound).
pub fn round_fits(
    settings: &TournamentSettings,
    specs: &[Value],
    max_message_bytes: usize,
) -> Result<(), Refusal> {
    let start_bytes = specs
        .iter()
        .map(|s| serde_json::to_string(s).map_or(usize::MAX, |t| t.len()))
        .max()
        .unwrap_or(0);
    let pairings = settings.max_players.unwrap_or(2).div_ceil(2) as usize;
    // Each pairing: its start, its round and players; the event: its envelope.
    let round_bytes = pairings
        .saturating_mul(start_bytes.saturating_mul(2).saturating_add(64))
        .saturating_add(1024);
    if round_bytes > max_message_bytes / 2 {
        return bad(format!(
            "a round of {pairings} pairings with starts of up to {start_bytes} bytes would \
             not fit in half a message (max_message_bytes, {max_message_bytes}): \
             ask for fewer max_players or a smaller size"
        ));
    }
    Ok(())
}

/// Reads the probe starts (blocking: a spec may build a table); refuses a
/// start that is no game, or one nobody could move from.
pub fn check_starts(specs: &[Value]) -> Result<(), Refusal> {
    if specs.is_empty() {
        return Err((ErrorCode::BadSpec, "no start".to_string()));
    }
    for spec in specs {
        let start = Position::from_spec(spec)
            .map_err(|e| (ErrorCode::BadSpec, format!("spec refused: {e}")))?;
        if start.status() != Status::Ongoing {
            return Err((
                ErrorCode::BadSpec,
                format!("the start {spec} is already over: nobody could move (a larger size?)"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use grundy_protocol::wire::PlayerKind;
    use serde_json::json;

    fn asked(extra: Value) -> TournamentSettings {
        let mut settings = json!({"format": "round_robin", "family": "nim"});
        for (k, v) in extra.as_object().expect("an object") {
            settings[k] = v.clone();
        }
        serde_json::from_value(settings).expect("settings")
    }

    fn account() -> Player {
        Player {
            name: Some("alice".into()),
            kind: Some(PlayerKind::Person),
            account: Some(1),
        }
    }

    #[test]
    fn a_title_is_checked_as_a_guest_s_name_is() {
        let limits = crate::Config::default().limits;
        for (title, says) in [
            (
                "\u{202E}Official \u{2066}house-bot\u{2069} Championship",
                "U+202E is not allowed: it changes the direction of the text",
            ),
            ("Spring\u{2066} Open", "U+2066"),
            ("Spring\u{200B}Open", "U+200B is not allowed: an invisible"),
            ("Spring\u{FEFF}Open", "U+FEFF"),
            ("Spring\nOpen", "control"),
            ("\u{0301}Spring Open", "begin with a combining mark"),
            (
                "Spring O\u{0310}\u{0311}\u{0312}\u{0313}\u{0314}\u{0315}pen",
                "combining marks",
            ),
        ] {
            let (code, message) =
                fill(asked(json!({"name": title})), &limits, 1, &account()).expect_err(title);
            assert_eq!(code, ErrorCode::BadRequest, "{title:?}");
            assert!(
                message.starts_with("name (the title): "),
                "{title:?}: {message}"
            );
            assert!(message.contains(says), "{title:?}: {message}");
        }
        let long = "x".repeat(MAX_NAME + 1);
        let (_, message) =
            fill(asked(json!({"name": long})), &limits, 1, &account()).expect_err("too long");
        assert!(
            message.contains("at most 80 characters, got 81"),
            "{message}"
        );
        for title in [
            "Spring Open 2024",
            "Coupe de Noël",
            "春季赛",
            "Nguye\u{0323}\u{0302}\u{0300}n Cup",
        ] {
            let filled = fill(asked(json!({"name": title})), &limits, 1, &account());
            assert_eq!(filled.map(|s| s.name), Ok(Some(title.to_string())));
        }
    }

    #[test]
    fn only_an_account_creates_a_rated_tournament() {
        let limits = crate::Config::default().limits;
        let guest = Player::guest("gus");
        let (code, message) =
            fill(asked(json!({"rated": true})), &limits, 1, &guest).expect_err("a guest");
        assert_eq!(code, ErrorCode::AccountRequired);
        assert!(message.starts_with("rated: "), "{message}");
        assert!(fill(asked(json!({"rated": false})), &limits, 1, &guest).is_ok());
        let filled = fill(asked(json!({"rated": true})), &limits, 1, &account());
        assert!(filled.is_ok_and(|s| s.rated));
    }
}
