//! Text that others are shown: a guest's name, a tournament's title. One
//! check for every such field ([`check_shown`]), so that what one refuses
//! the other refuses too.
//!
//! Refused: control characters; characters that change the direction of
//! the text (bidirectional marks, embeddings, overrides and isolates), which
//! can make a name or a title read as something else; characters that draw
//! nothing (Unicode's format characters, category `Cf`: zero-width spaces
//! and joiners, the byte-order mark, soft hyphen, tag characters; and the
//! fillers and variation selectors that show nothing); and combining marks
//! with nothing of their own to sit on or piled up: a mark at the start of
//! the text (it would sit on whatever is drawn before it), or more than
//! [`MAX_MARKS`] on one character (a pile of marks climbs over the lines
//! above and below: "Zalgo" text).

use unicode_normalization::char::is_combining_mark;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Most combining marks one character may carry. Written languages need two
/// or three (Vietnamese decomposed: a vowel, its tone and its hat; Thai: a
/// vowel and a tone mark; pointed Hebrew); a pile of more only climbs.
pub const MAX_MARKS: usize = 4;

/// Whether `text`, shown to others as `field`, holds only characters that
/// show as what they are; the refusal names the field and what is wrong.
/// (Lengths are the caller's: they differ from field to field.)
pub fn check_shown(field: &str, text: &str) -> Result<(), String> {
    // Marks on the character before, in a row.
    let mut marks = 0;
    for (i, c) in text.chars().enumerate() {
        if let Some(what) = unshown(c) {
            return Err(format!("{field}: {} is not allowed: {what}", describe(c)));
        }
        if !is_combining_mark(c) {
            marks = 0;
            continue;
        }
        if i == 0 {
            return Err(format!(
                "{field}: must not begin with a combining mark ({}): it would sit on \
                 whatever is shown before it",
                describe(c)
            ));
        }
        marks += 1;
        if marks > MAX_MARKS {
            return Err(format!(
                "{field}: at most {MAX_MARKS} combining marks may sit on one character \
                 ({} is one more): piled marks climb over the lines around",
                describe(c)
            ));
        }
    }
    Ok(())
}

/// What `c` is, when it may not be shown.
fn unshown(c: char) -> Option<&'static str> {
    if c.is_control() {
        Some("a control character")
    } else if turns(c) {
        Some("it changes the direction of the text")
    } else if invisible(c) {
        Some("an invisible (format) character")
    } else {
        None
    }
}

/// The characters that change the direction of the text: the Arabic letter
/// mark, the left-to-right and right-to-left marks, embeddings and
/// overrides (U+202A–U+202E), isolates (U+2066–U+2069).
fn turns(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Characters that draw nothing: every format character (`Cf`: zero-width
/// spaces and joiners, word joiner, invisible operators, the byte-order
/// mark, soft hyphen, tag characters, ...), and the fillers, the combining
/// grapheme joiner and the variation selectors, which show nothing either.
fn invisible(c: char) -> bool {
    c.general_category() == GeneralCategory::Format
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
            | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E0FFF}')
}

/// A character as a refusal names it: itself when it can be read alone,
/// else its code point.
pub(crate) fn describe(c: char) -> String {
    if c.is_control() || invisible(c) || c.is_whitespace() || is_combining_mark(c) {
        format!("character U+{:04X}", c as u32)
    } else {
        format!("character {c:?} (U+{:04X})", c as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_in_any_script_is_shown() {
        for ok in [
            "Zoë the Great",
            "李小龍",
            "Spring Open 2024: Kayles, round robin",
            "Nguyễn Thị Minh Khai",
            // Vietnamese decomposed: e, dot below, circumflex, grave.
            "Nguye\u{0323}\u{0302}\u{0300}n",
            "שָׁלוֹם",
            "สวัสดี",
            "नमस्ते",
            "مرحبا",
            "Café ☕ 🎲",
        ] {
            assert_eq!(check_shown("name", ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn turning_invisible_control_and_piled_characters_are_refused() {
        for (bad, says) in [
            (
                "\u{202E}Official \u{2066}house-bot\u{2069} Championship",
                "U+202E",
            ),
            ("a\u{2066}b", "direction"),
            ("a\u{2069}b", "direction"),
            ("a\u{200E}b", "direction"),
            ("a\u{200F}b", "direction"),
            ("a\u{061C}b", "direction"),
            ("a\u{202A}b", "direction"),
            ("a\u{200B}b", "invisible"),
            ("a\u{200D}b", "invisible"),
            ("a\u{FEFF}b", "invisible"),
            ("a\u{2062}b", "invisible"),  // invisible times, Cf
            ("a\u{0600}b", "invisible"),  // Arabic number sign, Cf
            ("a\u{E0041}b", "invisible"), // tag A
            ("a\u{1D173}b", "invisible"), // musical symbol begin beam, Cf
            ("a\nb", "control"),
            ("a\u{0085}b", "control"),
            ("\u{0301}abc", "begin with a combining mark"),
            ("Z\u{0301}\u{0302}\u{0303}\u{0304}\u{0305}algo", "at most 4"),
            ("Z\u{0489}\u{0489}\u{0489}\u{0489}\u{0489}", "at most 4"), // enclosing marks
        ] {
            let refusal = check_shown("title", bad).expect_err(bad);
            assert!(refusal.starts_with("title: "), "{bad:?}: {refusal}");
            assert!(refusal.contains(says), "{bad:?}: {refusal}");
        }
        // Four marks on a character are fine, on every character.
        let four = "Z\u{0301}\u{0302}\u{0303}\u{0304}a\u{0301}\u{0302}\u{0303}\u{0304}";
        assert_eq!(check_shown("title", four), Ok(()));
    }
}
