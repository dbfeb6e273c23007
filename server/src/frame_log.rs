//! `--log-frames`: every WebSocket text frame a connection reads or is sent,
//! logged with its secrets masked. Off by default, and then it costs one
//! relaxed load of a flag per read and per send; the WebSocket library's
//! own frame logging is never let through (`main.rs` caps its targets),
//! since it prints frames whole, passwords and tokens included.
//!
//! What is masked: the value of every object key, at any depth, whose name
//! holds `password` or `token` in any case (`password`, `new_password`,
//! `token`, `owner_token`, `tokens`, ...), whatever the value (null stays
//! null); it becomes `"***"`. A frame that is not JSON is logged as its
//! length only.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

/// The target frames are logged under (at `debug`); `--log-frames` lets it
/// through whatever `RUST_LOG` says of other targets.
pub const TARGET: &str = "grundy_server::frames";

static ON: AtomicBool = AtomicBool::new(false);

/// Turns frame logging on or off (once, at start).
pub fn set(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether frames are logged.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Logs a text frame connection `conn` read.
pub fn inbound(conn: u64, text: &str) {
    tracing::debug!(target: TARGET, conn, "frame in: {}", masked(text));
}

/// Logs a text frame handed to connection `conn`'s outbox.
pub fn outbound(conn: u64, text: &str) {
    tracing::debug!(target: TARGET, conn, "frame out: {}", masked(text));
}

/// Logs a binary frame connection `conn` read (its length only).
pub fn inbound_binary(conn: u64, len: usize) {
    tracing::debug!(target: TARGET, conn, "frame in: <binary, {len} bytes>");
}

/// Whether a key's value is a secret.
fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password") || key.contains("token")
}

/// `text` as it may be logged: JSON with every secret's value replaced by
/// `"***"`, or, when it is not JSON, its length.
pub fn masked(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            mask(&mut value);
            value.to_string()
        }
        Err(_) => format!("<not JSON, {} bytes>", text.len()),
    }
}

fn mask(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if secret_key(key) {
                    if !inner.is_null() {
                        *inner = Value::String("***".into());
                    }
                } else {
                    mask(inner);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn masked_value(v: Value) -> Value {
        serde_json::from_str(&masked(&v.to_string())).unwrap()
    }

    #[test]
    fn passwords_and_tokens_are_masked() {
        let login = json!({"type": "login", "id": 1, "username": "ann", "password": "hunter2"});
        assert_eq!(
            masked_value(login),
            json!({"type": "login", "id": 1, "username": "ann", "password": "***"})
        );
        let resume = json!({"type": "resume", "room": "ab12", "token": "f00d", "since": 3});
        assert_eq!(
            masked_value(resume),
            json!({"type": "resume", "room": "ab12", "token": "***", "since": 3})
        );
    }

    #[test]
    fn any_key_naming_a_password_or_token_whatever_its_case() {
        let v = json!({
            "new_password": "a", "Seat_Token": "b", "api_token": 7,
            "owner_token": {"nested": "c"}, "tokens": [{"id": "x"}], "gone_token": null,
            "name": "keeps"
        });
        assert_eq!(
            masked_value(v),
            json!({
                "new_password": "***", "Seat_Token": "***", "api_token": "***",
                "owner_token": "***", "tokens": "***", "gone_token": null,
                "name": "keeps"
            })
        );
    }

    #[test]
    fn nested_objects_and_arrays() {
        let v = json!({
            "type": "seated",
            "seat": {"token": "s3cret", "player": {"name": "bob"}},
            "list": [{"password": "p"}, [{"token": "t"}], "plain", 3]
        });
        assert_eq!(
            masked_value(v),
            json!({
                "type": "seated",
                "seat": {"token": "***", "player": {"name": "bob"}},
                "list": [{"password": "***"}, [{"token": "***"}], "plain", 3]
            })
        );
    }

    #[test]
    fn text_that_is_not_json_is_its_length() {
        assert_eq!(masked("password=hunter2"), "<not JSON, 16 bytes>");
        assert_eq!(masked(""), "<not JSON, 0 bytes>");
        assert_eq!(masked(r#"{"token": "abc""#), "<not JSON, 15 bytes>");
    }

    #[test]
    fn values_that_only_mention_secrets_stay() {
        let v = json!({"type": "create_token", "name": "my token"});
        assert_eq!(masked_value(v.clone()), v);
        assert_eq!(masked("\"token\""), "\"token\"");
    }
}
