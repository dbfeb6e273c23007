//! Sums of independent normal-play components (Nim heaps, heaps under any rule,
//! graph tokens, Darkraft's two colours). By the Sprague–Grundy theorem the sum
//! is lost for the player to move iff the xor of the parts' values is 0, and a
//! winning move is a move in some part `i` to a position of value `g_i ^ total`.

/// The nim-sum of the parts' Grundy values.
pub fn nim_sum(values: impl IntoIterator<Item = u64>) -> u64 {
    values.into_iter().fold(0, |acc, g| acc ^ g)
}

/// For every part, the value it must be moved to so that the whole sum becomes
/// 0: `(index, g_i ^ total)`. Empty when the sum is already 0.
pub fn targets(values: &[u64]) -> Vec<(usize, u64)> {
    let total = nim_sum(values.iter().copied());
    if total == 0 {
        return Vec::new();
    }
    values
        .iter()
        .enumerate()
        .map(|(i, g)| (i, g ^ total))
        .collect()
}
