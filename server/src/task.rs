//! What every actor task (a room, a tournament) needs: a guard that runs its
//! exit hook however it ends, the end of its life (telling its registry it has
//! finished, lingering, closing its queue), sleeping until an optional
//! deadline, and waiting for a store write to be committed.

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
