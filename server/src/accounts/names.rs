//! Names: an account's username (its alphabet, its length, how it is
//! compared) and what a guest may call itself.
//!
//! A username is 2 to 24 characters of ASCII letters, digits, `_` and `-`,
//! beginning and ending with a letter or a digit: no control, invisible,
//! bidirectional or look-alike character can be part of one. Two usernames
//! are the same name whatever their case (`key`); beyond that, a new account
//! (and a guest) is refused a name that reads as an existing account's (the
//! look-alike folding of [`reads_as`]: `a1ice` reads as `alice`).

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
    if crate::house::reserved_name(username) {
        return Err(crate::house::name_reserved(username));
    }
    Ok(())
}

/// Whether a guest may use `name` (trimmed already): printable, visible
/// characters only, not too long, not the house bots'. (Whether an account
/// has it is the registry's question.)
pub fn check_guest_name(name: &str) -> Result<(), String> {
    let count = name.chars().count();
    if count > MAX_GUEST_NAME {
        return Err(format!(
            "name: must be at most {MAX_GUEST_NAME} characters, got {count}"
        ));
    }
    // First: hiding the house bot's name among invisible characters is
    // refused for what it tries.
    if crate::house::reserved_name(name) {
        return Err(crate::house::name_reserved(name));
    }
    if let Some(c) = name.chars().find(|&c| invisible(c)) {
        return Err(format!("name: {} is not allowed in a name", describe(c)));
    }
    Ok(())
}

/// A server-given guest name, e.g. `guest-4f2a`.
pub fn guest_name() -> String {
    let n = uuid::Uuid::new_v4().as_u128() as u16;
    format!("{GUEST_PREFIX}-{n:04x}")
}

/// Control characters, and the format characters that draw nothing or turn
/// the text around: zero-width spaces and joiners, bidirectional marks,
/// overrides and isolates, the byte-order mark, soft hyphen, tag characters.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
            | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E0FFF}')
}

/// A character as a refusal names it: itself when it can be read, else its
/// code point.
fn describe(c: char) -> String {
    if c.is_control() || invisible(c) || c.is_whitespace() {
        format!("character U+{:04X}", c as u32)
    } else {
        format!("character {c:?} (U+{:04X})", c as u32)
    }
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
        assert_eq!(check_guest_name("Zoë the Great"), Ok(()));
        assert_eq!(check_guest_name("李小龍"), Ok(()));
        for bad in [
            "a\u{202E}b",
            "a\u{2066}b",
            "a\u{200D}b",
            "a\nb",
            "house bot",
        ] {
            assert!(check_guest_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_guest_name(&"x".repeat(41)).is_err());
        let given = guest_name();
        assert!(given.starts_with("guest-") && given.len() == 10, "{given}");
    }
}
