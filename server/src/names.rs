//! Names: an account's username (its alphabet, its length, how it is
//! compared), what a guest may call itself, and the names reserved for the
//! house bots. A leaf: the store, the accounts and the house all read it.
//!
//! A username is 2 to 24 characters of ASCII letters, digits, `_` and `-`,
//! beginning and ending with a letter or a digit: no control, invisible,
//! bidirectional or look-alike character can be part of one. Two usernames
//! are the same name whatever their case (`key`); beyond that, a new account
//! (and a guest) is refused a name that reads as an existing account's (the
//! look-alike folding of [`reads_as`]: `a1ice` reads as `alice`).

use grundy_protocol::Level;

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
    if let Some(whose) = reserved(username) {
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
/// them: see [`reserved`].
pub fn check_guest_name(name: &str, external_house: bool) -> Result<(), String> {
    let count = name.chars().count();
    if count > MAX_GUEST_NAME {
        return Err(format!(
            "name: must be at most {MAX_GUEST_NAME} characters, got {count}"
        ));
    }
    // First: hiding the house bot's name among invisible characters is
    // refused for what it tries.
    match reserved(name) {
        Some(Reserved::External) if external_house && is_external_name(name) => {}
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

/// The name this server gives the seat it reserves for its own house bot of
/// `level`. Clients cannot take names like it ([`reserved`]).
pub fn house_name(level: Level) -> String {
    format!("house-bot ({level})")
}

/// The name the external house bot (`grundy-bot house`) plays under at
/// `level`: `grundy_bot::house::external_name`, which tests/tests/house.rs
/// holds equal to this one.
pub fn external_house_name(level: Level) -> String {
    format!("grundy-bot ({level})")
}

/// Whose a reserved name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserved {
    /// Reads as `house-bot`: this server's own house bots' ([`house_name`]).
    House,
    /// Reads as `grundy-bot`: the external house bot's
    /// ([`external_house_name`]).
    External,
}

impl Reserved {
    /// The refusal of `name`, reserved so.
    pub fn refusal(self, name: &str) -> String {
        match self {
            Reserved::House => format!(
                "name {name:?} is reserved: names like \"house-bot\" belong to the server's own bots"
            ),
            Reserved::External => format!(
                "name {name:?} is reserved: names like \"grundy-bot\" belong to the external \
                 house bot (grundy-bot house)"
            ),
        }
    }
}

/// Whether a client may not use `name`, and whose it is: it reads as
/// `house-bot` or as `grundy-bot`, whatever its case, spacing, punctuation,
/// accents, invisible characters or look-alike letters (anywhere in the name:
/// "the real house bot" too).
///
/// The external house bot says `hello` as a guest named
/// `grundy-bot (LEVEL)`: it has no account, and nothing it could send would
/// tell it from a person who sends the same. So its names are reserved like
/// the house's, for every guest, on a server whose own house bots serve the
/// rooms that ask for a bot (the default, and the `grundy-server` binary's
/// only way): no external house bot ever has a seat to take there, and
/// whoever says hello as one only poses as a bot. A server started with its
/// house bots off (`Config::house_bots`) leaves those rooms to external
/// house bots: there a guest may say hello (and register) under exactly
/// [`external_house_name`] of a level, as the bot does; every other name that
/// reads as `grundy-bot` is still refused (`names::check_guest_name`), and
/// usernames that read as it always are.
pub fn reserved(name: &str) -> Option<Reserved> {
    let read = reads_as(name);
    if read.contains(&reads_as("housebot")) {
        Some(Reserved::House)
    } else if read.contains(&reads_as("grundybot")) {
        Some(Reserved::External)
    } else {
        None
    }
}

/// Whether `name` is exactly one the external house bot plays under.
pub fn is_external_name(name: &str) -> bool {
    name.strip_prefix("grundy-bot (")
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|level| level.parse::<Level>().ok())
        .is_some_and(|level| external_house_name(level) == name)
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

    #[test]
    fn names_that_read_as_the_house_bot_s_are_reserved() {
        for name in [
            "house-bot (perfect)",
            "House-Bot (perfect)",
            " house-bot (3) ",
            "HOUSE BOT",
            "house_bot(7)",
            "housebot",
            "house-bot (banana)",
            "the real house-bot",
            "house\u{200b}-bot (perfect)", // zero-width space
            "h\u{043e}use-bot (perfect)",  // Cyrillic o
            "\u{04bb}ouse-bot (perfect)",  // Cyrillic shha
            "ho\u{0308}use-bo\u{0301}t",   // combining accents
            "h\u{00f3}use-b\u{00f6}t",     // precomposed accents
            "\u{ff48}\u{ff4f}\u{ff55}\u{ff53}\u{ff45}-\u{ff42}\u{ff4f}\u{ff54}", // fullwidth
            "\u{1d421}\u{1d428}\u{1d42e}\u{1d42c}\u{1d41e}\u{1d41b}\u{1d428}\u{1d42d}", // bold
            "h0use-b0t (perfect)",
            "HOUSE-BOT (PERFECT)",
        ] {
            assert_eq!(reserved(name), Some(Reserved::House), "{name:?} is refused");
        }
        for name in [
            "grundy-bot (perfect)",
            "Grundy-Bot (3)",
            "GRUNDY BOT",
            "grundy_bot",
            "the real grundy-bot",
            "grundy\u{200b}-bot (perfect)", // zero-width space
            "grund\u{0443}-bot (perfect)",  // Cyrillic u, which reads as y
            "gr\u{00fc}ndy-b\u{00f6}t",     // accents
            "grundy-b0t (random)",
        ] {
            assert_eq!(
                reserved(name),
                Some(Reserved::External),
                "{name:?} is refused"
            );
        }
        for name in [
            "alice",
            "house",
            "bot",
            "grundy",
            "housekeeper",
            "bot-house",
            "house-bat",
            "grundy-bat",
            "h-bot",
            "\u{0445}ouse-bot", // Cyrillic ha reads as x: xouse-bot
        ] {
            assert_eq!(reserved(name), None, "{name:?} is free");
        }
    }

    #[test]
    fn the_house_bots_names_are_reserved_and_the_external_bot_s_are_known() {
        for level in [Level::Perfect, Level::Casual(0), Level::Casual(7)] {
            assert_eq!(reserved(&house_name(level)), Some(Reserved::House));
            let external = external_house_name(level);
            assert_eq!(reserved(&external), Some(Reserved::External));
            assert!(is_external_name(&external), "{external}");
        }
        for name in [
            "grundy-bot (10)", // perfect is written "perfect"
            "grundy-bot (0)",  // and 0 "random"
            "grundy-bot (banana)",
            "Grundy-Bot (perfect)",
            "grundy-bot (perfect) ",
            "grundy-bot",
        ] {
            assert!(!is_external_name(name), "{name:?}");
        }
    }
}
