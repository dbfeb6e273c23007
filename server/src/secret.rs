//! The secrets the server hands out (seat and tournament tokens, and API
//! tokens' secrets): how they are made, kept (as their SHA-256 only, so that
//! a copy of the database lets nobody act for anyone) and how a presented
//! one is compared; and the secrets it is given (a database's or bus's
//! password in its URL), kept out of what it prints.

use sha2::{Digest, Sha256};

/// A fresh token: 128 random bits, as 32 hex digits.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The SHA-256 of a secret: what the store keeps of it.
pub fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// [`digest`] as 64 lowercase hex digits: how seat, player and owner tokens
/// are kept (in text columns, and in the rooms' and tournaments' memory).
pub fn hash(secret: &str) -> String {
    digest(secret).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `secret` is the one whose [`hash`] is `kept`, compared in
/// constant time. An empty secret matches nothing.
pub fn matches_hash(secret: &str, kept: &str) -> bool {
    !secret.is_empty() && constant_time_eq(hash(secret).as_bytes(), kept.as_bytes())
}

/// Compares secrets without leaking where they differ through timing.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `url` with its password (`user:PASSWORD@`, and any `password=` of its
/// query) replaced by `***`: what a message or `config check` may show.
/// Anything else (an SQLite file's path) is shown as given.
pub fn url_without_password(url: &str) -> String {
    let Some(scheme) = url.find("://") else {
        return url.to_owned();
    };
    let start = scheme + 3;
    // The authority ends at the path, the query or the fragment; a password
    // may hold `/`, so the last `@` of the URL before the query ends it.
    let query_at = url[start..]
        .find(['?', '#'])
        .map_or(url.len(), |i| start + i);
    let mut shown = String::with_capacity(url.len());
    shown.push_str(&url[..start]);
    let rest = match url[start..query_at].rfind('@') {
        Some(at) => {
            let userinfo = &url[start..start + at];
            match userinfo.split_once(':') {
                Some((user, _)) => {
                    shown.push_str(user);
                    shown.push_str(":***");
                }
                None => shown.push_str(userinfo),
            }
            &url[start + at..]
        }
        None => &url[start..],
    };
    match rest.split_once('?') {
        Some((before, query)) => {
            shown.push_str(before);
            shown.push('?');
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            shown.push_str(&pairs.join("&"));
        }
        None => shown.push_str(rest),
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_kept_as_its_sha256_and_matches_only_itself() {
        // The SHA-256 of "abc" (FIPS 180-2's example).
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let token = new_token();
        let kept = hash(&token);
        assert!(matches_hash(&token, &kept));
        assert!(!matches_hash(&new_token(), &kept));
        assert!(!matches_hash(&kept, &kept), "the hash is no token");
        assert!(!matches_hash("", &hash("")), "an empty token is none");
    }

    #[test]
    fn a_urls_password_is_masked_wherever_it_is() {
        for (url, shown) in [
            (
                "postgres://grundy:s3cret@db:5432/grundy",
                "postgres://grundy:***@db:5432/grundy",
            ),
            (
                "postgres://grundy:p/a@ss@db/g",
                "postgres://grundy:***@db/g",
            ),
            (
                "postgresql://grundy@db/g?password=s3cret&sslmode=require",
                "postgresql://grundy@db/g?password=***&sslmode=require",
            ),
            (
                "nats://bus:s3cret@10.0.0.1:4222",
                "nats://bus:***@10.0.0.1:4222",
            ),
            ("postgres://db/g", "postgres://db/g"),
            ("./grundy.db", "./grundy.db"),
            ("/var/lib/a:b@c.db", "/var/lib/a:b@c.db"),
        ] {
            assert_eq!(url_without_password(url), shown, "{url}");
            assert!(!url_without_password(url).contains("s3cret"));
        }
    }

    #[test]
    fn equal_only_when_equal() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn tokens_differ() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
