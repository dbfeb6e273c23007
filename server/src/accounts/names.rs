//! Names: an account's username (its alphabet, its length, how it is
//! compared) and what a guest may call itself.
//!
//! A username is 2 to 24 characters of ASCII letters, digits, `_` and `-`,
//! beginning and ending with a letter or a digit: no control, invisible,
//! bidirectional or look-alike character can be part of one. Two usernames
//! are the same name whatever their case (`key`); beyond that, a new account
//! (and a guest) is refused a name that reads as an existing account's (the
//! look-alike folding of [`reads_as`]: `a1ice` reads as `alice`).

use crate::house::Reserved;
use crate::text::describe;

/// Shortest and longest username, in characters.
pub const MIN_USERNAME: usize = 2;
pub const MAX_USERNAME: usize = 24;

/// Longest guest name, in characters.
pub const MAX_GUEST_NAME: usize = 40;

/// Usernames beginning so are the server's (guests' given names).
const GUEST_PREFIX: &str = "guest";

/// The name as it is compared for uniqueness.
pub fn key(username: &str) -> String {
    username.to_ascii_lowercase()
}

/// Whether `username` is one an account may take; the refusal names what is
/// wrong with it.
pub fn check_username(username: &str) -> Result<(), String> {
    let count = username.chars().count();
    if !(MIN_USERNAME..=MAX_USERNAME).contains(&count) {
        return Err(format!(
            "username: must be {MIN_USERNAME} to {MAX_USERNAME} characters, got {count}"
        ));
    }
    if let Some(c) = username
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "username: {} is not allowed: use ASCII letters, digits, '_' and '-'",
            describe(c)
        ));
    }
    let ends = [username.chars().next(), username.chars().last()];
    if ends.iter().flatten().any(|c| !c.is_ascii_alphanumeric()) {
        return Err("username: must begin and end with a letter or a digit".into());
    }
    if key(username).starts_with(GUEST_PREFIX) {
        return Err(format!(
            "username: names beginning with {GUEST_PREFIX:?} are the server's, for guests"
        ));
    }
    if let Some(whose) = crate::house::reserved(username) {
        return Err(whose.refusal(username));
    }
    Ok(())
}

/// Whether a guest may use `name` (trimmed already): not too long, not the
/// house bots' (below), and only characters that show as what they are
/// (`crate::text::check_shown`, the check of every text others are shown).
/// (Whether an account has it is the registry's question.)
///
/// `external_house`: the server leaves rooms that ask for a bot to external
/// `grundy-bot house` processes (its own house bots are off). Those come as
/// guests named exactly `grundy-bot (LEVEL)`, and such a server must let
/// them: see [`crate::house::reserved`].
pub fn check_guest_name(name: &str, external_house: bool) -> Result<(), String> {
    let count = name.chars().count();
    if count > MAX_GUEST_NAME {
        return Err(format!(
            "name: must be at most {MAX_GUEST_NAME} characters, got {count}"
        ));
    }
    // First: hiding the house bot's name among invisible characters is
    // refused for what it tries.
    match crate::house::reserved(name) {
        Some(Reserved::External) if external_house && crate::house::is_external_name(name) => {}
        Some(whose) => return Err(whose.refusal(name)),
        None => {}
    }
    crate::text::check_shown("name", name)
}

/// A server-given guest name, e.g. `guest-4f2a`.
pub fn guest_name() -> String {
    let n = uuid::Uuid::new_v4().as_u128() as u16;
    format!("{GUEST_PREFIX}-{n:04x}")
}

/// What a name reads as: compatibility forms folded (fullwidth, styled
/// letters), look-alike characters mapped to the one they imitate (Unicode's
/// confusables, UTS #39, which also drops invisible characters and splits off
/// accents), lower case, and only ASCII letters and digits kept.
pub fn reads_as(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let folded: String = name.nfkc().flat_map(char::to_lowercase).collect();
    unicode_security::skeleton(&folded)
        .flat_map(char::to_lowercase)
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_keep_to_their_alphabet_and_length() {
        for ok in ["al", "Alice", "bob_99", "x-y", "A1234567890123456789012Z"] {
            assert_eq!(check_username(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("a", "2 to 24"),
            ("abcdefghijklmnopqrstuvwxy", "2 to 24"),
            ("al ice", "U+0020"),
            ("ali\u{202E}ce", "U+202E"),
            ("ali\u{200B}ce", "U+200B"),
            ("alïce", "'ï'"),
            ("_alice", "begin and end"),
            ("alice-", "begin and end"),
            ("Guest-4f2a", "guest"),
            ("house-bot", "reserved"),
            ("HouseBot9", "reserved"),
            ("grundy-bot", "reserved"),
            ("GrundyBot2", "reserved"),
        ] {
            let refusal = check_username(bad).expect_err(bad);
            assert!(refusal.contains(says), "{bad}: {refusal}");
        }
    }

    #[test]
    fn names_compare_whatever_the_case_and_look_alikes_read_alike() {
        assert_eq!(key("Alice"), key("aLICE"));
        assert_eq!(reads_as("Alice"), reads_as("a1ice"));
        assert_eq!(reads_as("alice"), reads_as("\u{0430}lice")); // Cyrillic а
        assert_eq!(reads_as("alice"), reads_as("ali\u{200B}ce"));
        assert_ne!(reads_as("alice"), reads_as("alicia"));
    }

    #[test]
    fn guests_may_use_any_visible_name() {
        for external_house in [false, true] {
            assert_eq!(check_guest_name("Zoë the Great", external_house), Ok(()));
            assert_eq!(check_guest_name("李小龍", external_house), Ok(()));
            for bad in [
                "a\u{202E}b",
                "a\u{2066}b",
                "a\u{200D}b",
                "a\u{2062}b",
                "a\nb",
                "\u{0301}ab",
                "Z\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}",
                "house bot",
                "house-bot (perfect)",
                "Grundy-Bot (perfect)",
                "the grundy bot",
                "grundy-bot (banana)",
            ] {
                assert!(check_guest_name(bad, external_house).is_err(), "{bad:?}");
            }
            assert!(check_guest_name(&"x".repeat(41), external_house).is_err());
        }
        let given = guest_name();
        assert!(given.starts_with("guest-") && given.len() == 10, "{given}");
    }

    /// The external house bot's names are refused, except exactly them on
    /// a server that leaves its bot rooms to external house bots.
    #[test]
    fn the_external_house_bot_s_names_are_its_own_only_where_it_serves() {
        for name in [
            "grundy-bot (perfect)",
            "grundy-bot (random)",
            "grundy-bot (3)",
        ] {
            let refusal = check_guest_name(name, false).expect_err(name);
            assert!(refusal.contains("reserved"), "{refusal}");
            assert_eq!(check_guest_name(name, true), Ok(()), "{name}");
        }
    }
}
