//! Personal API tokens: `grundy_<id>_<secret>`, the id 64 random bits and the
//! secret 256 (both from the OS, in hex). The store keeps the id and the
//! SHA-256 of the secret; a presented token is found by its id and its
//! secret's hash compared in constant time.

use crate::secret::{constant_time_eq, digest};

const PREFIX: &str = "grundy_";
const ID_BYTES: usize = 8;
const SECRET_BYTES: usize = 32;

/// A new token: the text shown once, its id, and what the store keeps.
pub struct Minted {
    pub text: String,
    pub id: String,
    pub secret_sha256: [u8; 32],
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn mint() -> Result<Minted, String> {
    let mut id = [0u8; ID_BYTES];
    let mut secret = [0u8; SECRET_BYTES];
    getrandom::fill(&mut id).map_err(|e| format!("no randomness: {e}"))?;
    getrandom::fill(&mut secret).map_err(|e| format!("no randomness: {e}"))?;
    let (id, secret) = (hex(&id), hex(&secret));
    Ok(Minted {
        text: format!("{PREFIX}{id}_{secret}"),
        secret_sha256: digest(&secret),
        id,
    })
}

/// Whether `text` looks like an API token (rather than a seat token).
pub fn looks_like(text: &str) -> bool {
    text.starts_with(PREFIX)
}

/// The id and secret of a well-formed token.
pub fn parse(text: &str) -> Option<(&str, &str)> {
    let (id, secret) = text.strip_prefix(PREFIX)?.split_once('_')?;
    let hex_of = |s: &str, n: usize| s.len() == 2 * n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex_of(id, ID_BYTES) && hex_of(secret, SECRET_BYTES)).then_some((id, secret))
}

/// Whether `secret` is the one whose hash is `expected`.
pub fn matches(secret: &str, expected: &[u8; 32]) -> bool {
    constant_time_eq(&digest(secret), expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_parses_and_matches_its_hash_only() {
        let t = mint().expect("mint");
        assert_eq!(t.text.len(), PREFIX.len() + 16 + 1 + 64);
        let (id, secret) = parse(&t.text).expect("well formed");
        assert_eq!(id, t.id);
        assert!(matches(secret, &t.secret_sha256));
        let other = mint().expect("mint");
        assert_ne!(other.id, t.id);
        let (_, other_secret) = parse(&other.text).expect("well formed");
        assert!(!matches(other_secret, &t.secret_sha256));
        assert!(looks_like(&t.text));
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        let t = mint().expect("mint").text;
        for bad in [
            "",
            "grundy_",
            &t[..t.len() - 1],
            &format!("{t}0"),
            &t.replace("grundy_", "grundi_"),
            &t.to_uppercase(),
            "grundy_zzzzzzzzzzzzzzzz_00",
        ] {
            assert!(parse(bad).is_none(), "{bad:?}");
        }
    }
}
