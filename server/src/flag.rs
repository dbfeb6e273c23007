//! What a connection's task waits for beside its socket, made cheap to poll:
//! a one-way [`Flag`] (its outbox kicked, the server stopping) and an
//! [`Alarm`] (its ping timer).
//!
//! A connection's task waits for these in the same `select!` as its socket,
//! so it polls them at every wake-up, that is for every frame in or out.
//! Polling a `CancellationToken`'s future takes the token's lock (and its
//! waiter list's) each time; a [`Flag`] costs one atomic load instead. Its
//! token is polled only on the first poll, which puts the task on the
//! token's waiter list, when the waker changes, and once the flag is up.
//! Likewise an [`Alarm`] polls its timer only when its deadline has passed
//! or the waker changed: otherwise a poll is one read of the clock.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

#[derive(Clone, Debug, Default)]
pub struct Flag(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    raised: AtomicBool,
    /// Cancelled after `raised` is set: whoever it wakes sees the flag.
    token: CancellationToken,
}

impl Flag {
    /// Raises the signal (once and for all) and wakes whoever waits for it.
    pub fn raise(&self) {
        self.0.raised.store(true, Ordering::Release);
        self.0.token.cancel();
    }

    pub fn is_raised(&self) -> bool {
        self.0.raised.load(Ordering::Acquire)
    }

    /// Resolves once the signal is raised.
    pub fn raised(&self) -> Raised {
        Raised {
            raised: self.clone(),
            wait: self.0.token.clone().cancelled_owned(),
            registered: Registration::default(),
        }
    }
}

pin_project_lite::pin_project! {
    /// [`Flag::raised`]'s future.
    pub struct Raised {
        raised: Flag,
        #[pin]
        wait: WaitForCancellationFutureOwned,
        // The waker the token's waiter list holds.
        registered: Registration,
    }
}

/// The waker an inner future holds from the last poll that reached it, so
/// that polls with the same waker can skip it.
#[derive(Default)]
struct Registration(Option<Waker>);

impl Registration {
    /// The inner future holds this context's waker already.
    fn holds(&self, cx: &Context<'_>) -> bool {
        self.0.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
    }

    fn set(&mut self, cx: &Context<'_>) {
        self.0 = Some(cx.waker().clone());
    }

    fn clear(&mut self) {
        self.0 = None;
    }
}

impl Future for Raised {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if this.registered.holds(cx) && !this.raised.is_raised() {
            // Still on the token's waiter list, with this very waker.
            return Poll::Pending;
        }
        // The first poll, or one from another task (or waker): the token's
        // future takes the new waker.
        this.registered.set(cx);
        this.wait.poll(cx)
    }
}

pin_project_lite::pin_project! {
    /// A timer that resolves at its deadline, like tokio's `Sleep`, polled
    /// cheaply before it: once its sleep holds the task's waker, the timer
    /// wakes the task when due, and a poll before then needs no more than
    /// the time of day.
    pub struct Alarm {
        #[pin]
        sleep: Sleep,
        // The waker the sleep's timer holds.
        registered: Registration,
    }
}

impl Alarm {
    pub fn at(deadline: Instant) -> Alarm {
        Alarm {
            sleep: tokio::time::sleep_until(deadline),
            registered: Registration::default(),
        }
    }

    /// Sets the alarm again, to `deadline`.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.project();
        this.sleep.reset(deadline);
        // The next poll reaches the timer, which takes the waker again.
        this.registered.clear();
    }
}

impl Future for Alarm {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        // The timer fires no sooner than its deadline: before it, nothing
        // to ask it.
        if this.registered.holds(cx) && Instant::now() < this.sleep.deadline() {
            return Poll::Pending;
        }
        // Out of the task's coop budget, the sleep asks for another poll
        // without reaching its timer: only a poll that had budget leaves
        // the timer holding the waker.
        let had_budget = tokio::task::coop::has_budget_remaining();
        let ready = this.sleep.poll(cx);
        if had_budget && ready.is_pending() {
            this.registered.set(cx);
        } else {
            this.registered.clear();
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Wake, Waker};

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_task_that_polled_once_is_woken_when_the_signal_is_raised() {
        let signal = Flag::default();
        let woken = Arc::new(Count::default());
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let mut raised = std::pin::pin!(signal.raised());
        // Polled many times before the signal, as in a select! loop: only
        // the first poll joins the token's waiter list.
        for _ in 0..3 {
            assert!(raised.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(woken.0.load(Ordering::SeqCst), 0);
        signal.raise();
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "raising wakes the task");
        assert!(raised.as_mut().poll(&mut cx).is_ready());
        assert!(signal.is_raised());
    }

    #[test]
    fn a_poll_with_another_waker_moves_the_wake_up_to_it() {
        let signal = Flag::default();
        let (first, second) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let mut raised = std::pin::pin!(signal.raised());
        let waker = Waker::from(first.clone());
        assert!(raised
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        // Moved on: polled from elsewhere, with another waker.
        let waker = Waker::from(second.clone());
        assert!(raised
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        signal.raise();
        assert_eq!(
            second.0.load(Ordering::SeqCst),
            1,
            "the latest waker is woken"
        );
    }

    #[test]
    fn raised_before_the_first_poll_is_ready_at_once() {
        let signal = Flag::default();
        signal.raise();
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        assert!(std::pin::pin!(signal.raised()).poll(&mut cx).is_ready());
    }

    #[tokio::test(start_paused = true)]
    async fn an_alarm_rings_at_its_deadline_and_again_once_reset() {
        let start = Instant::now();
        let alarm = Alarm::at(start + std::time::Duration::from_secs(5));
        tokio::pin!(alarm);
        // Polled before its deadline (as at every frame), it waits.
        let woken = Arc::new(Count::default());
        let waker = Waker::from(woken.clone());
        let mut cx = Context::from_waker(&waker);
        for _ in 0..3 {
            assert!(alarm.as_mut().poll(&mut cx).is_pending());
        }
        // Awaited here (another waker): were the task not woken, it would
        // sleep on, and the timeout would end the test.
        let ring = std::time::Duration::from_secs(60);
        tokio::time::timeout(ring, &mut alarm)
            .await
            .expect("the alarm rings");
        assert_eq!(Instant::now() - start, std::time::Duration::from_secs(5));
        alarm
            .as_mut()
            .reset(Instant::now() + std::time::Duration::from_secs(2));
        tokio::time::timeout(ring, &mut alarm)
            .await
            .expect("the alarm rings again");
        assert_eq!(Instant::now() - start, std::time::Duration::from_secs(7));
    }

    #[tokio::test(start_paused = true)]
    async fn an_alarm_first_polled_out_of_budget_still_rings() {
        // In a task of its own: a task's waker is the same at each poll,
        // which lets the alarm skip its timer.
        let task = tokio::spawn(async {
            let alarm = Alarm::at(Instant::now() + std::time::Duration::from_secs(1));
            tokio::pin!(alarm);
            std::future::poll_fn(|cx| {
                // The task's budget spent, as by a burst of frames in one
                // poll...
                while std::pin::pin!(tokio::task::coop::consume_budget())
                    .poll(cx)
                    .is_ready()
                {}
                // ...the alarm's first poll cannot reach its timer.
                assert!(alarm.as_mut().poll(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            alarm.await;
        });
        tokio::time::timeout(std::time::Duration::from_secs(60), task)
            .await
            .expect("the alarm rings all the same")
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn an_alarm_polled_by_another_task_wakes_that_task() {
        let mut alarm = Box::pin(Alarm::at(
            Instant::now() + std::time::Duration::from_secs(1),
        ));
        // First polled with a waker nobody will answer...
        let idle = Waker::from(Arc::new(Count::default()));
        assert!(alarm
            .as_mut()
            .poll(&mut Context::from_waker(&idle))
            .is_pending());
        // ...then awaited by a task: its waker must reach the timer, or
        // the task sleeps on and the timeout ends the test.
        let task = tokio::spawn(alarm);
        tokio::time::timeout(std::time::Duration::from_secs(10), task)
            .await
            .expect("the task awaiting the alarm is woken when it rings")
            .unwrap();
    }
}
