//! What every actor task (a room, a tournament) needs: a guard that runs its
//! exit hook however it ends, the end of its life (telling its registry it has
//! finished, lingering, closing its queue), sleeping until an optional
//! deadline (or one that keeps moving, [`DeadlineTimer`]), and waiting for a
//! store write to be committed.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use grundy_protocol::wire::ErrorCode;

use crate::refusal::Refusal;
use crate::store::StoreError;

/// A queued store write: resolves once committed, or with its error.
pub type Pending = oneshot::Receiver<Result<(), StoreError>>;

/// Runs its function when dropped: however the task ends, a panic included,
/// its registry never keeps an entry for a task that is gone.
pub struct OnExit<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> OnExit<F> {
    pub fn new(f: F) -> OnExit<F> {
        OnExit(Some(f))
    }
}

impl<F: FnOnce()> Drop for OnExit<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// The end of an actor's life. Once it has finished, its registry is told
/// (`on_finish`, once) and it lingers for late watchers; when the linger runs
/// out its command queue is closed, and the task ends once what was already
/// queued is answered.
pub struct Ending<F: FnOnce()> {
    on_finish: Option<F>,
    closed: bool,
}

impl<F: FnOnce()> Ending<F> {
    pub fn new(on_finish: F) -> Ending<F> {
        Ending {
            on_finish: Some(on_finish),
            closed: false,
        }
    }

    /// When the linger of an actor that finished at `finished_at` runs out
    /// (the registry is told the first time); None before the end, and once
    /// the queue is closed.
    pub fn linger_until(
        &mut self,
        finished_at: Option<Instant>,
        linger: Duration,
    ) -> Option<Instant> {
        let at = finished_at?;
        if let Some(on_finish) = self.on_finish.take() {
            on_finish();
        }
        (!self.closed).then(|| at + linger)
    }

    /// The linger ran out: later senders are refused, queued commands stay.
    pub fn close<C>(&mut self, commands: &mut mpsc::Receiver<C>) {
        commands.close();
        self.closed = true;
    }
}

/// Sleeps until `at`, or forever when there is no deadline.
pub async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The timer of a deadline that mostly moves later (an idle room's, a
/// clock's: every move pushes it on), set again only when the deadline comes
/// sooner than it is set for. A deadline that moved later lets it ring
/// early, once; whoever waits sees the deadline is not due and sets it again.
/// That is one early wake-up an hour for an idle room's deadline, where
/// resetting a timer at every command takes the timer wheel's lock, which
/// every worker shares.
pub struct DeadlineTimer {
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    set_for: Option<Instant>,
}

impl Default for DeadlineTimer {
    fn default() -> Self {
        DeadlineTimer {
            // Not registered with the timer until set.
            sleep: Box::pin(tokio::time::sleep_until(Instant::now())),
            set_for: None,
        }
    }
}

impl DeadlineTimer {
    /// Makes it ring no later than `deadline` (None: nothing new to wait for;
    /// a timer already set still rings, early).
    pub fn no_later_than(&mut self, deadline: Option<Instant>) {
        if let Some(at) = deadline {
            if self.set_for.is_none_or(|set| at < set) {
                self.sleep.as_mut().reset(at);
                self.set_for = Some(at);
            }
        }
    }

    /// Resolves when it rings (then it is unset); never while unset.
    /// Cancel-safe: dropped before it rings, it stays set.
    pub async fn rung(&mut self) {
        if self.set_for.is_none() {
            return std::future::pending().await;
        }
        self.sleep.as_mut().await;
        self.set_for = None;
    }
}

/// Waits for a queued write to be committed; a failure becomes the refusal
/// its command gets (`key`, the room or tournament, goes to the log).
pub async fn committed(done: Pending, key: &str) -> Result<(), Refusal> {
    outcome(done.await, key)
}

/// What a write's answer (`Pending`, awaited) means for the command that
/// asked for it.
pub fn outcome(
    answer: Result<Result<(), StoreError>, oneshot::error::RecvError>,
    key: &str,
) -> Result<(), Refusal> {
    match answer {
        Ok(Ok(())) => Ok(()),
        Ok(Err(StoreError::LeaseLost(e))) => {
            tracing::warn!(key, "store write refused: another node owns this now: {e}");
            Err((
                ErrorCode::Internal,
                "this is served by another node of the cluster now: connect again and resume"
                    .into(),
            ))
        }
        Ok(Err(e)) => {
            tracing::error!(key, "store write failed: {e}");
            Err((
                ErrorCode::Internal,
                "the server could not record this; try again".into(),
            ))
        }
        Err(_) => Err((
            ErrorCode::ShuttingDown,
            "the server is shutting down".into(),
        )),
    }
}

#[cfg(test)]
mod deadline_timer_tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn it_rings_at_the_soonest_deadline_and_early_for_one_that_moved_later() {
        let t0 = Instant::now();
        let mut timer = DeadlineTimer::default();
        // Unset: it never rings.
        assert!(
            tokio::time::timeout(Duration::from_secs(3600), timer.rung())
                .await
                .is_err()
        );
        let t0 = t0 + Duration::from_secs(3600);
        assert_eq!(Instant::now(), t0);
        timer.no_later_than(Some(t0 + Duration::from_secs(10)));
        // Later deadlines leave it as it is; a sooner one sets it.
        timer.no_later_than(Some(t0 + Duration::from_secs(20)));
        timer.no_later_than(None);
        timer.no_later_than(Some(t0 + Duration::from_secs(5)));
        timer.rung().await;
        assert_eq!(Instant::now(), t0 + Duration::from_secs(5));
        // Rung: unset, set again by the next deadline, however late.
        timer.no_later_than(Some(t0 + Duration::from_secs(30)));
        timer.rung().await;
        assert_eq!(Instant::now(), t0 + Duration::from_secs(30));
        // Dropped before it rings, it stays set.
        timer.no_later_than(Some(t0 + Duration::from_secs(40)));
        assert!(tokio::time::timeout(Duration::from_secs(1), timer.rung())
            .await
            .is_err());
        timer.rung().await;
        assert_eq!(Instant::now(), t0 + Duration::from_secs(40));
    }
}
