//! Whole numbers as people type them, refused with what is wrong with them.

use std::fmt;

/// A word that is not a whole number ≥ 0, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotANumber {
    pub word: String,
    pub why: Why,
}

/// What is wrong with a word that should be a whole number ≥ 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    TooLarge,
    Negative,
    /// It holds a control character, as an arrow or function key types.
    Control,
    /// Digits other than 0-9 (`３`).
    OtherDigits,
    NotDigits,
}

impl fmt::Display for NotANumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = &self.word;
        match self.why {
            Why::TooLarge => write!(
                f,
                "{word:?} is too large (the largest number is {})",
                u64::MAX
            ),
            Why::Negative => write!(f, "{word:?} is negative: write a whole number ≥ 0"),
            Why::Control => write!(
                f,
                "{word:?} is not a whole number ≥ 0 (it holds a control character, as an \
                 arrow or function key types)"
            ),
            Why::OtherDigits => write!(
                f,
                "{word:?} is not a whole number ≥ 0 (write it with the digits 0-9)"
            ),
            Why::NotDigits => write!(f, "{word:?} is not a whole number ≥ 0"),
        }
    }
}

impl std::error::Error for NotANumber {}

/// A whole number ≥ 0 as a person types it; the error says what is wrong
/// with it (not a number, negative, or too large).
pub fn whole_number(word: &str) -> Result<u64, NotANumber> {
    word.parse::<u64>().map_err(|_| {
        let digits = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
        let why = if digits(word) {
            Why::TooLarge
        } else if word.strip_prefix('-').is_some_and(digits) {
            Why::Negative
        } else if word.chars().any(char::is_control) {
            Why::Control
        } else if word.chars().any(|c| c.is_numeric() && !c.is_ascii_digit()) {
            Why::OtherDigits
        } else {
            Why::NotDigits
        };
        NotANumber {
            word: word.to_string(),
            why,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_that_is_not_one_is_named_for_what_is_wrong() {
        let why = |w: &str| whole_number(w).unwrap_err().why;
        assert_eq!(why("99999999999999999999999"), Why::TooLarge);
        assert_eq!(why("-3"), Why::Negative);
        assert_eq!(why("x"), Why::NotDigits);
        assert_eq!(why("\u{1b}[A"), Why::Control);
        assert_eq!(why("３"), Why::OtherDigits);
        assert_eq!(why(""), Why::NotDigits);
        assert_eq!(whole_number("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            whole_number("-3").unwrap_err().to_string(),
            "\"-3\" is negative: write a whole number ≥ 0"
        );
    }
}
