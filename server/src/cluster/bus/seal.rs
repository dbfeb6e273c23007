//! Every message on the bus is signed with the cluster's secret (HMAC-SHA256)
//! and numbered by its sender; one from another cluster, forged, or replayed
//! is refused and logged.

use super::*;

/// Milliseconds since the Unix epoch, now.
pub(super) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Seen {
    pub(super) fn fresh(&mut self, n: u64) -> bool {
        if n + REPLAY_WINDOW <= self.highest || !self.window.insert(n) {
            return false;
        }
        if n > self.highest {
            self.highest = n;
            let floor = self.highest.saturating_sub(REPLAY_WINDOW);
            if self.window.len() as u64 > 2 * REPLAY_WINDOW {
                self.window.retain(|&k| k > floor);
            }
        }
        true
    }
}

/// `body` from `from` as message number `n`, signed with `secret`: the
/// HMAC-SHA256 of the JSON, then the JSON.
pub(super) fn seal<T: Serialize>(secret: &[u8], from: &str, n: u64, body: &T) -> Bytes {
    let envelope = Envelope {
        from: from.to_owned(),
        n,
        body,
    };
    let json = serde_json::to_vec(&envelope).expect("bus messages encode");
    let mut mac = HmacSha256::new_from_slice(secret).expect("any key length");
    mac.update(&json);
    let mut out = mac.finalize().into_bytes().to_vec();
    out.extend_from_slice(&json);
    Bytes::from(out)
}

/// What [`seal`] made, if `secret` signed it and `seen` has not had its
/// number from its sender on this kind of message (`what`: each kind has
/// its own task, which may lag behind the others); else why not.
pub(super) fn open<T: serde::de::DeserializeOwned>(
    secret: &[u8],
    seen: &mut HashMap<String, Seen>,
    what: &str,
    payload: &[u8],
) -> Result<(String, T), String> {
    if payload.len() < 32 {
        return Err("too short to be signed".into());
    }
    let (tag, json) = payload.split_at(32);
    let mut mac = HmacSha256::new_from_slice(secret).expect("any key length");
    mac.update(json);
    if mac.verify_slice(tag).is_err() {
        return Err("not signed with this cluster's secret (another cluster's, or forged)".into());
    }
    let envelope: Envelope<T> =
        serde_json::from_slice(json).map_err(|e| format!("unreadable: {e}"))?;
    if !seen
        .entry(format!("{}/{what}", envelope.from))
        .or_default()
        .fresh(envelope.n)
    {
        return Err(format!(
            "replayed (number {} from {})",
            envelope.n, envelope.from
        ));
    }
    Ok((envelope.from, envelope.body))
}

impl Bus {
    pub(super) fn seal<T: Serialize>(&self, body: &T) -> Bytes {
        let n = self
            .numbers
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        seal(&self.secret, &self.me, n, body)
    }

    /// The message's sender and body, if it is signed with our secret and
    /// new; a refusal is logged.
    pub(super) fn open<T: serde::de::DeserializeOwned>(
        &self,
        payload: &[u8],
        what: &str,
    ) -> Option<(String, T)> {
        match open(&self.secret, &mut lock(&self.seen), what, payload) {
            Ok(opened) => Some(opened),
            Err(why) => {
                tracing::warn!("bus: refused a {what} message: {why}");
                None
            }
        }
    }
}
