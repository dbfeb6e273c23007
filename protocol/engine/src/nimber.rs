//! Nimbers: nim-addition and nim-multiplication of whole numbers, the field
//! the values of the two-dimensional coin-turning games live in (Turning
//! Corners: a head at (x, y) is worth x ⊗ y; docs/games.md "Coin-turning
//! games").
//!
//! Nim-addition is xor. Nim-multiplication is defined (Conway, *On Numbers
//! and Games*, ch. 6) as a ⊗ b = mex { a' ⊗ b ⊕ a ⊗ b' ⊕ a' ⊗ b' : a' < a,
//! b' < b }; below every Fermat 2-power F = 2^(2^k) the nimbers form a field
//! of F elements. The definition asks for a ⋅ b earlier products; the
//! product here uses two facts of that field instead: F ⊗ x is the ordinary
//! product F ⋅ x for x < F, and F ⊗ F = 3F/2 (= F ⊕ F/2). Writing a = a1 F ⊕
//! a0 and b = b1 F ⊕ b0 with halves below F,
//!
//! a ⊗ b = ((a1 ⊗ b1) ⊕ (a1 ⊗ b0) ⊕ (a0 ⊗ b1)) F ⊕ (a0 ⊗ b0) ⊕ (a1 ⊗ b1) ⊗ F/2,
//!
//! three products of halves (Karatsuba: the middle term is
//! (a1 ⊕ a0) ⊗ (b1 ⊕ b0) ⊕ a1 ⊗ b1 ⊕ a0 ⊗ b0) and one by F/2, down to bytes,
//! which are read from a 256 × 256 table built once. A 64-bit product is 64
//! table reads and a few hundred xors (`cargo bench -p grundy-engine --bench
//! nimber`).

use std::sync::OnceLock;

/// a ⊕ b: nim-addition is xor.
pub fn nim_add(a: u64, b: u64) -> u64 {
    a ^ b
}

/// a ⊗ b, the nim-product of any two 64-bit numbers (the nimbers below
/// 2^64 are a field, so the product is below 2^64 too).
pub fn nim_mul(a: u64, b: u64) -> u64 {
    mul(a, b, 64)
}

/// The inverse of `a` ≠ 0 in the field of nimbers below 2^64: a^(2^64 − 2),
/// by squaring. None for 0.
pub fn nim_inverse(a: u64) -> Option<u64> {
    if a == 0 {
        return None;
    }
    // 2^64 − 2 is 63 ones then a zero: a^2 ⊗ a^4 ⊗ ... ⊗ a^(2^63).
    let mut result = 1;
    let mut square = a;
    for _ in 0..63 {
        square = nim_mul(square, square);
        result = nim_mul(result, square);
    }
    Some(result)
}

/// The product of two bytes, from the table.
fn byte_mul(a: u64, b: u64) -> u64 {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = vec![0u8; 256 * 256];
        for a in 0..256u64 {
            for b in 0..256u64 {
                t[(a * 256 + b) as usize] = small_mul(a, b, 8) as u8;
            }
        }
        t
    });
    table[(a * 256 + b) as usize] as u64
}

/// a ⊗ b for a, b < 2^bits (bits a power of 2, at most 64).
fn mul(a: u64, b: u64, bits: u32) -> u64 {
    if a < 2 || b < 2 {
        return a * b;
    }
    if bits <= 8 {
        return byte_mul(a, b);
    }
    split(a, b, bits, mul)
}

/// The same recursion without the table, down to single bits: how the table
/// is built.
fn small_mul(a: u64, b: u64, bits: u32) -> u64 {
    if a < 2 || b < 2 {
        return a * b;
    }
    split(a, b, bits, small_mul)
}

/// One step of the recursion: a, b < 2^bits as halves below F = 2^(bits/2).
fn split(a: u64, b: u64, bits: u32, mul: fn(u64, u64, u32) -> u64) -> u64 {
    let half = bits / 2;
    if a >> half == 0 && b >> half == 0 {
        return mul(a, b, half);
    }
    let mask = (1u64 << half) - 1;
    let (a1, a0) = (a >> half, a & mask);
    let (b1, b0) = (b >> half, b & mask);
    let high = mul(a1, b1, half);
    let low = mul(a0, b0, half);
    let cross = mul(a1 ^ a0, b1 ^ b0, half);
    // F ⊗ F = F ⊕ F/2: a1 ⊗ b1 goes to the F term and, times F/2, to the low.
    ((cross ^ low) << half) | (low ^ mul(high, 1 << (half - 1), half))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, product by product: every a ⊗ b for a, b < n.
    fn by_definition(n: usize) -> Vec<Vec<u64>> {
        let mut t = vec![vec![0u64; n]; n];
        let mut seen = vec![false; 4 * n];
        for a in 0..n {
            for b in 0..n {
                seen.iter_mut().for_each(|s| *s = false);
                for x in 0..a {
                    for y in 0..b {
                        let v = (t[x][b] ^ t[a][y] ^ t[x][y]) as usize;
                        if v < seen.len() {
                            seen[v] = true;
                        }
                    }
                }
                t[a][b] = seen.iter().position(|&s| !s).unwrap_or(seen.len()) as u64;
            }
        }
        t
    }

    #[test]
    fn products_below_64_are_the_definition() {
        let t = by_definition(64);
        for a in 0..64u64 {
            for b in 0..64u64 {
                assert_eq!(nim_mul(a, b), t[a as usize][b as usize], "{a} ⊗ {b}");
                assert_eq!(small_mul(a, b, 8), t[a as usize][b as usize], "{a} ⊗ {b}");
            }
        }
    }

    /// OEIS A051775, the nim-product table read by antidiagonals (T(n, m)
    /// with n + m = d, n from 0): its published data, antidiagonals 0 to 11
    /// and the start of 12.
    #[test]
    fn the_table_is_oeis_a051775() {
        let a051775: [u64; 83] = [
            0, 0, 0, 0, 1, 0, 0, 2, 2, 0, 0, 3, 3, 3, 0, 0, 4, 1, 1, 4, 0, 0, 5, 8, 2, 8, 5, 0, 0,
            6, 10, 12, 12, 10, 6, 0, 0, 7, 11, 15, 6, 15, 11, 7, 0, 0, 8, 9, 13, 2, 2, 13, 9, 8, 0,
            0, 9, 12, 14, 14, 7, 14, 14, 12, 9, 0, 0, 10, 14, 4, 10, 8, 8, 10, 4, 14, 10, 0, 0, 11,
            15, 7, 11,
        ];
        let mut read = Vec::new();
        'diagonals: for d in 0u64.. {
            for n in 0..=d {
                if read.len() == a051775.len() {
                    break 'diagonals;
                }
                read.push(nim_mul(n, d - n));
            }
        }
        assert_eq!(read, a051775);
        // The table's rows as OEIS prints them.
        assert_eq!(
            (0..7).map(|m| nim_mul(4, m)).collect::<Vec<_>>(),
            [0, 4, 8, 12, 6, 2, 14]
        );
    }

    /// Fermat 2-powers: F ⊗ x is the ordinary product for x < F, F ⊗ F = 3F/2.
    #[test]
    fn fermat_two_powers() {
        for k in 0..6 {
            let f = 1u64 << (1 << k);
            if f < 1 << 32 {
                assert_eq!(nim_mul(f, f), 3 * f / 2, "F = {f}");
            }
            for x in [0, 1, 2, 3, f / 2, f - 1] {
                if x < f && f.checked_mul(x).is_some() {
                    assert_eq!(nim_mul(f, x), f * x, "{f} ⊗ {x}");
                }
            }
        }
        assert_eq!(nim_mul(1 << 32, 1 << 32), (1 << 32) | (1 << 31));
    }

    /// The field laws on 64-bit numbers: what makes the product exact beyond
    /// the definition's reach.
    #[test]
    fn the_64_bit_nimbers_are_a_field() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            x ^ (x >> 29)
        };
        for _ in 0..300 {
            let (a, b, c) = (next(), next(), next());
            assert_eq!(nim_mul(a, b), nim_mul(b, a));
            assert_eq!(nim_mul(nim_mul(a, b), c), nim_mul(a, nim_mul(b, c)));
            assert_eq!(nim_mul(a, nim_add(b, c)), nim_mul(a, b) ^ nim_mul(a, c));
            assert_eq!(nim_mul(a, 1), a);
            let inv = nim_inverse(a).expect("a is not 0");
            assert_eq!(nim_mul(a, inv), 1, "{a} ⊗ {inv}");
        }
        assert_eq!(nim_inverse(0), None);
        assert_eq!(nim_inverse(2), Some(3));
    }
}
