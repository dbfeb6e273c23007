//! Coming back after a lost connection, the one loop every client uses (the
//! bot's seats and the server's house bots, tournament players and
//! followers, the terminal client's matches, tournaments and spectators):
//! connect to the next address of the list, say hello, and let the caller
//! `resume`, `rejoin` or `watch`; after an error worth another try
//! ([`ClientError::is_transient`]), the caller tells whoever waits and waits
//! ([`backoff`]). The caller drives it (one [`Reconnect::attempt`] at a
//! time), so that its messages and its way of waiting (a person may type
//! `quit`) stay plain code of its own.

use std::future::Future;
use std::time::Duration;

use grundy_protocol::wire::ErrorCode;

use crate::address::nth_first;
use crate::client::{Client, ClientError, Hello};

/// The wait before attempt `n` (from 1) again: 0.2 s doubling to 1.6 s.
/// Short, because the usual trouble (a restart, a cluster's takeover) is over
/// in seconds, and a player waits through every one.
pub fn backoff(n: u32) -> Duration {
    Duration::from_millis(200u64 << n.clamp(1, 4).saturating_sub(1))
}

/// How many attempts in a row an unknown room or tournament is asked for
/// again where nothing else bounds the loop (a person, who can stop it): one
/// that finished while this client was away has left the server's memory
/// for good, and a restart or a takeover brings the others back well within
/// these ~10 s.
pub const UNKNOWN_ATTEMPTS: u32 = 10;

/// An attempt that failed and will be tried again: what the loop tells its
/// caller, who says so (or not) and waits.
#[derive(Debug)]
pub struct Retrying {
    /// The attempt that failed, from 1.
    pub attempt: u32,
    pub error: ClientError,
    /// How long to wait before the next attempt.
    pub wait: Duration,
}

impl Retrying {
    /// Waits before the next attempt.
    pub async fn sleep(&self) {
        tokio::time::sleep(self.wait).await
    }

    /// Logs the failure and waits: for callers with nobody to tell.
    pub async fn log_and_sleep(&self, what: &str) {
        tracing::info!(
            attempt = self.attempt,
            "{what} failed: {}; retrying in {:?}",
            self.error,
            self.wait
        );
        self.sleep().await;
    }
}

/// What one attempt came to.
#[derive(Debug)]
pub enum Attempt<T> {
    /// Back: what the caller's `resume` returned.
    Back(T),
    /// It failed, and another attempt may work: tell whoever waits, wait
    /// [`Retrying::wait`] (or stop, where a person says so) and try again.
    Retry(Retrying),
    /// An error asking again would not change, or the last one once the
    /// attempts ran out (`error.is_transient()` then).
    GaveUp { error: ClientError, attempts: u32 },
}

/// Where and as whom to come back, how many times to try, and the attempts
/// so far. The caller's loop reads:
///
/// ```ignore
/// let mut tries = Reconnect::new(url, &hello, Some(20));
/// let back = loop {
///     match tries.attempt(|c| resume(c)).await {
///         Attempt::Back(back) => break back,
///         Attempt::Retry(r) => r.log_and_sleep("resume").await,
///         Attempt::GaveUp { error, .. } => return Err(error),
///     }
/// };
/// ```
pub struct Reconnect<'a> {
    url: &'a str,
    hello: &'a Hello,
    attempts: Option<u32>,
    attempt: u32,
    unknown: u32,
}

impl<'a> Reconnect<'a> {
    /// `url`: the server, or a cluster's nodes separated by commas: attempt
    /// `n` starts with the `n`-th node after the first (counting round), so
    /// a node that went away (or hangs) is left for the next. `attempts`:
    /// at most this many in a row; None: until the caller stops (a person
    /// who can type `quit`), an unknown room or tournament still at most
    /// [`UNKNOWN_ATTEMPTS`] times.
    pub fn new(url: &'a str, hello: &'a Hello, attempts: Option<u32>) -> Reconnect<'a> {
        Reconnect {
            url,
            hello,
            attempts,
            attempt: 0,
            unknown: 0,
        }
    }

    /// One attempt: connects to the next address (with `hello`) and hands
    /// the connection to `resume` (`resume`, `rejoin`, `watch`, ...).
    pub async fn attempt<T, F>(&mut self, resume: impl FnOnce(Client) -> F) -> Attempt<T>
    where
        F: Future<Output = Result<T, ClientError>>,
    {
        self.attempt += 1;
        let url = nth_first(self.url, self.attempt as usize);
        let tried = match Client::connect_as(&url, self.hello).await {
            Ok(c) => resume(c).await,
            Err(e) => Err(e),
        };
        let error = match tried {
            Ok(back) => return Attempt::Back(back),
            Err(e) => e,
        };
        self.unknown = if is_unknown(&error) {
            self.unknown + 1
        } else {
            0
        };
        let spent = match self.attempts {
            Some(n) => self.attempt >= n,
            None => self.unknown >= UNKNOWN_ATTEMPTS,
        };
        if spent || !error.is_transient() {
            return Attempt::GaveUp {
                error,
                attempts: self.attempt,
            };
        }
        Attempt::Retry(Retrying {
            attempt: self.attempt,
            error,
            wait: backoff(self.attempt),
        })
    }
}

fn is_unknown(e: &ClientError) -> bool {
    matches!(
        e,
        ClientError::Refused {
            code: ErrorCode::UnknownRoom | ErrorCode::UnknownTournament,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use std::time::Duration;

    #[test]
    fn the_wait_doubles_from_a_fifth_of_a_second_to_1_6_s() {
        let waits: Vec<Duration> = (1..=6).map(backoff).collect();
        let ms = |n| Duration::from_millis(n);
        assert_eq!(
            waits,
            [ms(200), ms(400), ms(800), ms(1600), ms(1600), ms(1600)]
        );
    }
}
