//! What every actor task (a room, a tournament) needs: a guard that runs its
//! exit hook however it ends, sleeping until an optional deadline, and waiting
//! for a store write to be committed.

use tokio::sync::oneshot;
use tokio::time::Instant;

use grundy_protocol::wire::ErrorCode;

use crate::room::Refusal;
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
    match done.await {
        Ok(Ok(())) => Ok(()),
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
