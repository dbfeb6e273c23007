//! What ratings are kept under: a game's id, or the pooled history. A leaf,
//! read by the store, the rooms and the tournaments as well as the ratings.

/// The key of the ratings kept before ratings were per game: the engine's
/// family `heaps` pooled Kayles, Dawson's Kayles, Lasker's Nim, Bash,
/// subtraction games and custom heap rules into one rating. Schema version 7
/// moved those rows here; nothing rates under it any more.
pub const POOLED_HEAPS: &str = "heaps-pooled";

/// What a person reads for a rating key: the game's own name ("Kayles"), or
/// what the pooled history is.
pub fn key_name(key: &str) -> &str {
    if key == POOLED_HEAPS {
        "every heap game, pooled (before ratings were kept per game)"
    } else {
        grundy_protocol::names::game_name(key)
    }
}

/// Whether `key` is one ratings can be kept under: a game id of the
/// catalogue, or the pooled history.
pub fn known_key(key: &str) -> bool {
    key == POOLED_HEAPS || grundy_protocol::random::game_ids().any(|id| id == key)
}

/// The rating key of a start: its spec's `game` id.
pub fn key_of(spec: &serde_json::Value) -> String {
    spec.get("game")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_a_game_of_the_catalogue_or_the_pooled_history() {
        assert_eq!(key_name("dawson"), "Dawson's Kayles");
        assert!(known_key("lasker") && known_key(POOLED_HEAPS) && !known_key("chess"));
    }
}
