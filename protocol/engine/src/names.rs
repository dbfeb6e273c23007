//! The games' own names and short descriptions of specs, for lists a person
//! reads (the lobby): a summary names the game and sketches its start, where
//! the whole spec could be tens of kilobytes; and counts in words (`1 stone`,
//! `3 stones`), for every message that names a number of things.

use serde_json::Value;

pub use crate::count::count;
use crate::games::{catalogue, game};

/// The name of the game a spec's `game` id stands for (the id itself if it is
/// none of the catalogue's).
pub fn game_name(id: &str) -> &str {
    game(id).map_or(id, |g| g.name)
}

/// Whether `text` names a game, by its id or its name, in any case (`nim`,
/// `Dawson's Kayles`).
pub fn is_game(text: &str) -> bool {
    let text = text.trim();
    catalogue().any(|g| g.id.eq_ignore_ascii_case(text) || g.name.eq_ignore_ascii_case(text))
}

/// The game's name for a spec (by its `game` field).
pub fn spec_name(spec: &Value) -> &str {
    game_name(spec.get("game").and_then(Value::as_str).unwrap_or(""))
}

/// A spec in a few words: its fields other than `game`, as compact JSON
/// (`heaps [3,4,5]`), cut to at most `max_chars` characters with `…`. Stops
/// serialising once the cut is certain, so a huge spec costs no more than a
/// small one.
pub fn describe_spec(spec: &Value, max_chars: usize) -> String {
    let mut out = String::new();
    if let Some(fields) = spec.as_object() {
        for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "game") {
            if !out.is_empty() {
                out.push_str(", ");
            }
            out.push_str(key);
            out.push(' ');
            if out.chars().count() > max_chars {
                break;
            }
            // A value longer than what is left is written only up to the cut
            // (a character takes at most 4 bytes).
            let room = 4 * (max_chars.saturating_sub(out.chars().count()) + 1);
            out.push_str(&json_prefix(value, room));
            if out.chars().count() > max_chars {
                break;
            }
        }
    }
    cut(out.trim_end(), max_chars)
}

/// The first `max_bytes` bytes (or fewer, on a character boundary) of a
/// value's compact JSON, written no further than that.
fn json_prefix(value: &Value, max_bytes: usize) -> String {
    struct Prefix {
        buf: Vec<u8>,
        max: usize,
    }
    impl std::io::Write for Prefix {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            let room = self.max - self.buf.len();
            self.buf.extend_from_slice(&data[..data.len().min(room)]);
            if data.len() > room {
                return Err(std::io::Error::other("long enough"));
            }
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut prefix = Prefix {
        buf: Vec::new(),
        max: max_bytes,
    };
    let _ = serde_json::to_writer(&mut prefix, value);
    match String::from_utf8(prefix.buf) {
        Ok(text) => text,
        // Cut inside a character: keep the whole ones.
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    }
}

/// `text` cut to at most `max_chars` characters, the last one `…` if cut.
pub fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_are_singular_for_one() {
        assert_eq!(count(1, "stone", "stones"), "1 stone");
        assert_eq!(count(0, "stone", "stones"), "0 stones");
        assert_eq!(count(2, "vertex", "vertices"), "2 vertices");
    }

    #[test]
    fn presets_have_their_own_names() {
        assert_eq!(
            spec_name(&json!({"game": "kayles", "heaps": [3]})),
            "Kayles"
        );
        assert_eq!(game_name("dawson"), "Dawson's Kayles");
        assert_eq!(game_name("lasker"), "Lasker's Nim");
        assert_eq!(game_name("no-such"), "no-such");
        assert_eq!(spec_name(&json!(5)), "");
    }

    #[test]
    fn every_random_game_id_has_a_name() {
        for id in crate::random::game_ids() {
            assert_ne!(game_name(id), id, "{id} has no name");
        }
    }

    #[test]
    fn a_short_spec_is_described_whole() {
        let spec = json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [10, 7]});
        assert_eq!(describe_spec(&spec, 120), "heaps [10,7], set [1,3,4]");
    }

    #[test]
    fn a_long_spec_is_cut_to_the_bound() {
        let heaps: Vec<u64> = (0..10_000).collect();
        let spec = json!({"game": "nim", "heaps": heaps});
        let text = describe_spec(&spec, 40);
        assert_eq!(text.chars().count(), 40);
        assert!(text.starts_with("heaps [0,1,2,3"), "{text}");
        assert!(text.ends_with('…'), "{text}");
        let words = json!({"game": "treblecross", "board": "é".repeat(500)});
        let text = describe_spec(&words, 30);
        assert_eq!(text.chars().count(), 30);
        assert!(text.ends_with('…'));
    }
}
