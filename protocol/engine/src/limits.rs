//! The largest specs the engine accepts (docs/games.md "Limits"). Anything larger is
//! refused with an error naming the limit.

/// Heaps in `nim` and `heaps`, and in a `twist` split.
pub const MAX_HEAPS: usize = 10_000;
/// Largest heap in `nim` and `heaps` (2^63).
pub const MAX_HEAP_SIZE: u64 = 1 << 63;
/// Heaps in `moore` and `new-stone`; pieces in `staircase`.
pub const MAX_SMALL_HEAPS: usize = 1_000;
/// Wythoff heaps.
pub const MAX_WYTHOFF: u64 = 1_000_000_000_000_000;
/// Wythoff heaps in a part of a sum (its Grundy values come from a table).
pub const MAX_WYTHOFF_PART: u64 = 2_000;
/// Parts of a `sum` (after nested sums are flattened).
pub const MAX_SUM_PARTS: usize = 100;
/// Numbers and grid cells in all the parts of a sum together (a graph's
/// vertices count too): what one graph at its limit holds.
pub const MAX_SUM_ITEMS: usize = 1_100_000;
/// The exact searches of the `moore` and `new-stone` parts of one sum: the
/// positions they may reach and the moves they may try, all parts together.
pub const MAX_SUM_SEARCH_POSITIONS: usize = 100_000;
pub const MAX_SUM_SEARCH_MOVES: usize = 1_000_000;
/// Staircase cells.
pub const MAX_CELL: u64 = 1_000_000_000_000_000;
/// Treblecross strip length.
pub const MAX_STRIP: usize = 2_000;
/// Darkraft grid side.
pub const MAX_GRID: usize = 20;
/// Twist stones.
pub const MAX_TWIST_STONES: u64 = 1_000_000_000_000;
/// Coins in a row of `mock-turtles` and `ruler`.
pub const MAX_COIN_ROW: usize = 1_000;
/// Rows and columns of `turning-corners`: below 64, every value and
/// coordinate difference lies in the field of nimbers below 256.
pub const MAX_CORNERS_SIDE: usize = 64;
/// Graph game.
pub const MAX_VERTICES: u64 = 100_000;
pub const MAX_EDGES: usize = 1_000_000;
pub const MAX_TOKENS: usize = 10_000;
/// A `set` heap whose Grundy sequence is not proven periodic.
pub const MAX_SET_HEAP: u64 = 1_000_000;
/// An `octal` heap whose Grundy sequence is not proven periodic.
pub const MAX_OCTAL_HEAP: u64 = 10_000;
/// Misère `heaps` under a rule that is not proven tame: the largest heap of the
/// misère quotient (docs/games.md "Misère play").
pub const MAX_MISERE_QUOTIENT_HEAP: u64 = 100;
/// The work one quotient may take to build (about 2 s in a release build).
pub const MISERE_QUOTIENT_WORK: u64 = 200_000_000;
/// Exhaustive misère search: the most positions reachable from the start.
pub const MAX_MISERE_SEARCH_POSITIONS: usize = 100_000;
