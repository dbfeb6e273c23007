//! Who holds a seat or a registration: a name, the kind of player behind it,
//! and the account when there is one. The name is what others read; only the
//! account proves anything (a seat an account took can be resumed with the
//! account's token; ratings move for accounts only).

use grundy_protocol::wire::PlayerKind;

/// An account's number in the store.
pub type AccountId = u64;

/// A seat's or a registration's holder. A connection always has a name and
/// a kind; records made before accounts have a name at most.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Player {
    pub name: Option<String>,
    pub kind: Option<PlayerKind>,
    pub account: Option<AccountId>,
}

impl Player {
    /// A guest (a connection without an account, or a house bot's seat
    /// before its kind was known) under `name`.
    pub fn guest(name: impl Into<String>) -> Player {
        Player {
            name: Some(name.into()),
            kind: Some(PlayerKind::Guest),
            account: None,
        }
    }

    /// One of the server's own house bots: a bot, owned by no account that
    /// a connection could act as.
    pub fn house(name: impl Into<String>) -> Player {
        Player {
            name: Some(name.into()),
            kind: Some(PlayerKind::Bot),
            account: None,
        }
    }
}
