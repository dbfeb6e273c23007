//! Counting things in words, for every message: `1 stone`, `3 stones`. A
//! leaf, so every family can say how many of a thing without importing
//! the catalogue's names.

/// `n` things in words: `1 stone`, `0 stones`, `3 stones` (`one` and `many`
/// are the singular and the plural).
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}
