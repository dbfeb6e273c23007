//! Passwords: hashed with Argon2id (the `argon2` crate) and checked against
//! the hash, never kept or compared in clear.
//!
//! Parameters: 19 MiB of memory, 2 passes, 1 lane (OWASP's recommended
//! minimum for Argon2id), a 16-byte random salt per password; the PHC string
//! the store keeps carries them, so stronger ones later still check old
//! hashes. One hash takes tens of milliseconds of one core and 19 MiB: the
//! server runs them in a bounded pool (`password_checks`), never on the
//! reactor.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// Shortest and longest password, in characters.
pub const MIN_PASSWORD: usize = 8;
pub const MAX_PASSWORD: usize = 128;

fn argon2() -> Argon2<'static> {
    // The parameters are constants within the crate's bounds.
    let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Whether `password` may be an account's; the refusal says why not.
pub fn check(password: &str) -> Result<(), String> {
    let count = password.chars().count();
    if !(MIN_PASSWORD..=MAX_PASSWORD).contains(&count) {
        return Err(format!(
            "password: must be {MIN_PASSWORD} to {MAX_PASSWORD} characters, got {count}"
        ));
    }
    Ok(())
}

/// The PHC string of `password` with a fresh salt.
pub fn hash(password: &str) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no randomness: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Whether `password` is the one `phc` was made from. `None` (no such
/// account) checks against a hash of nothing, so that an unknown name costs
/// the same time as a wrong password.
pub fn verify(password: &str, phc: Option<&str>) -> bool {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let decoy = DECOY.get_or_init(|| hash("not anyone's password").unwrap_or_default());
    let known = phc.is_some();
    let Ok(parsed) = PasswordHash::new(phc.unwrap_or(decoy)) else {
        return false;
    };
    argon2()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
        && known
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_checks_its_password_only_and_keeps_no_clear_text() {
        let phc = hash("correct horse").expect("hash");
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(!phc.contains("correct horse"));
        assert!(verify("correct horse", Some(&phc)));
        assert!(!verify("correct horsE", Some(&phc)));
        assert!(!verify("correct horse", None));
        assert!(!verify("x", Some("not a phc string")));
        assert_ne!(phc, hash("correct horse").expect("hash"), "salted");
    }

    #[test]
    fn lengths_are_checked() {
        assert!(check("1234567").is_err());
        assert!(check("12345678").is_ok());
        assert!(check(&"é".repeat(128)).is_ok());
        assert!(check(&"é".repeat(129)).is_err());
    }
}
