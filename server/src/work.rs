//! Work that can take a core or block a thread — building a position from a
//! spec (which may build a table), drawing a random start, reading the store
//! for a client — runs here: on tokio's blocking threads, never on the
//! reactor threads that carry moves, at most so many at once per kind, with a
//! bounded queue per kind. A request that finds its queue full is refused at
//! once (`busy`), so a stream of expensive requests can neither take every
//! core from the matches in progress nor pile up waiting in memory.

use std::sync::atomic::{AtomicUsize, Ordering};

use grundy_protocol::wire::{ErrorCode, RequestId, ServerBody, ServerMsg};
use tokio::sync::Semaphore;

/// How long a refused client is told to wait before asking again.
const RETRY_AFTER_MS: u64 = 1_000;

/// One kind of work: its permits and its queue.
pub struct Pool {
    /// The pool's name, as a `busy` refusal names it (`limit`).
    name: &'static str,
    permits: Semaphore,
    /// Requests waiting for a permit or running.
    admitted: AtomicUsize,
    /// `admitted` may not exceed this: the permits plus the queue.
    max_admitted: usize,
}

/// Why a job did not run or finish.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue is full: try again later.
    Busy { pool: &'static str },
    /// The job panicked.
    Failed,
}

impl Refused {
    /// The error answer for a client's request.
    pub fn answer(&self, id: Option<RequestId>) -> ServerMsg {
        match self {
            Refused::Busy { pool } => ServerMsg { id, body: ServerBody::Error { code: ErrorCode::Busy, message: format!(
                    "the server has as much of this work queued as it takes ({pool}); retry in a second"
                ), retry_after_ms: Some(RETRY_AFTER_MS), limit: Some(pool.to_string()) } },
            Refused::Failed => ServerMsg::error(id, ErrorCode::Internal, "the server failed at it"),
        }
    }
}

/// Gives back an admission when the request ends, however it ends.
struct Admitted<'a>(&'a AtomicUsize);

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Pool {
    /// `concurrency` jobs at once (at least one), and up to `queue` more
    /// waiting.
    pub fn new(name: &'static str, concurrency: usize, queue: usize) -> Pool {
        let concurrency = concurrency.max(1);
        Pool {
            name,
            permits: Semaphore::new(concurrency),
            admitted: AtomicUsize::new(0),
            max_admitted: concurrency + queue,
        }
    }

    /// Runs `job` on a blocking thread once a permit is free; refused at once
    /// when the queue is full.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
        if self.admitted.fetch_add(1, Ordering::AcqRel) >= self.max_admitted {
            self.admitted.fetch_sub(1, Ordering::AcqRel);
            return Err(Refused::Busy { pool: self.name });
        }
        let _admitted = Admitted(&self.admitted);
        // The semaphore is never closed.
        let _permit = self.permits.acquire().await.map_err(|_| Refused::Failed)?;
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|_| Refused::Failed)
    }

    /// Requests waiting or running.
    pub fn load(&self) -> usize {
        self.admitted.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_full_queue_refuses_at_once_and_frees_up_after() {
        let pool = Arc::new(Pool::new("test", 1, 2));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = Arc::new(std::sync::Mutex::new(wait));
        // One running and two queued: the pool is full.
        let mut jobs = Vec::new();
        for _ in 0..3 {
            let (pool, wait) = (pool.clone(), wait.clone());
            jobs.push(tokio::spawn(async move {
                pool.run(move || {
                    let _ = wait.lock().map(|w| w.recv());
                })
                .await
            }));
        }
        while pool.load() < 3 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            pool.run(|| ()).await,
            Err(Refused::Busy { pool: "test" }),
            "a fourth request is refused while three are admitted"
        );
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        for job in jobs {
            assert_eq!(job.await.unwrap(), Ok(()));
        }
        assert_eq!(pool.load(), 0);
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }

    #[tokio::test]
    async fn a_panicking_job_fails_alone() {
        let pool = Pool::new("test", 1, 0);
        assert_eq!(
            pool.run(|| panic!("boom")).await,
            Err::<(), _>(Refused::Failed)
        );
        assert_eq!(pool.run(|| 1).await, Ok(1));
        assert_eq!(pool.load(), 0);
    }

    #[test]
    fn a_busy_answer_names_the_pool_and_when_to_retry() {
        let msg = Refused::Busy {
            pool: "spec_builds",
        }
        .answer(Some(RequestId::Number(3)));
        let ServerMsg {
            body:
                ServerBody::Error {
                    code,
                    retry_after_ms,
                    limit,
                    ..
                },
            ..
        } = msg
        else {
            panic!("not an error: {msg:?}");
        };
        assert_eq!(code, ErrorCode::Busy);
        assert_eq!(retry_after_ms, Some(RETRY_AFTER_MS));
        assert_eq!(limit.as_deref(), Some("spec_builds"));
    }
}
