//! The abuse limits of accounts, as pure state over an explicit `now`: an
//! account's lock after wrong passwords, and per-address counts of logins and
//! of new accounts. Kept in memory (a restart forgets them).

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// The first lock, doubled by each further wrong password.
const FIRST_LOCK: Duration = Duration::from_secs(1);

/// An account's wrong passwords in a row and the lock they earned.
#[derive(Debug, Default, Clone)]
pub struct Lockout {
    failures: u32,
    until: Option<Instant>,
    /// Checks under way (a check takes tens of milliseconds): counted as
    /// failures-to-be, so that parallel guesses cannot slip past the lock.
    pending: u32,
}

impl Lockout {
    /// How long the account stays locked, if it is (`free`: the wrong
    /// passwords allowed before the first lock).
    pub fn locked(&self, now: Instant, free: u32) -> Option<Duration> {
        if let Some(until) = self.until.filter(|&u| u > now) {
            return Some(until - now);
        }
        // A check is under way, and one more failure would lock: wait for it.
        (self.pending > 0 && self.failures + self.pending >= free).then_some(FIRST_LOCK)
    }

    pub fn begin(&mut self) {
        self.pending += 1;
    }

    /// A wrong password: from the `free`-th on, a lock of 1 s, doubled by
    /// each further one, at most `max`.
    pub fn failed(&mut self, now: Instant, free: u32, max: Duration) {
        self.pending = self.pending.saturating_sub(1);
        self.failed_elsewhere(now, free, max);
    }

    /// A wrong password on another node of the cluster: counted as one
    /// here (its check was never under way here).
    pub fn failed_elsewhere(&mut self, now: Instant, free: u32, max: Duration) {
        self.failures = self.failures.saturating_add(1);
        if self.failures >= free.max(1) {
            let doublings = (self.failures - free.max(1)).min(30);
            let lock = FIRST_LOCK.saturating_mul(1 << doublings).min(max);
            self.until = Some(now + lock);
        }
    }

    /// A check that never finished: nothing learnt.
    pub fn abandoned(&mut self) {
        self.pending = self.pending.saturating_sub(1);
    }

    /// The right password: the count starts again.
    pub fn succeeded(&mut self) {
        *self = Lockout {
            pending: self.pending.saturating_sub(1),
            ..Lockout::default()
        };
    }

    /// The right password on another node: the count starts again (the
    /// checks under way here go on).
    pub fn succeeded_elsewhere(&mut self) {
        self.failures = 0;
        self.until = None;
    }

    /// Nothing to remember: no failures and nothing under way.
    pub fn idle(&self) -> bool {
        self.failures == 0 && self.pending == 0
    }
}

/// At most `limit` events per address in each `period` (a fixed window per
/// address, starting at its first event). The table holds at most `capacity`
/// addresses: past it, the windows that ended are dropped, and if none has,
/// every address waits (so a flood from many addresses costs bounded memory).
#[derive(Debug)]
pub struct PerAddress {
    limit: u32,
    period: Duration,
    capacity: usize,
    windows: HashMap<IpAddr, (Instant, u32)>,
}

impl PerAddress {
    pub fn new(limit: u32, period: Duration, capacity: usize) -> PerAddress {
        PerAddress {
            limit,
            period,
            capacity,
            windows: HashMap::new(),
        }
    }

    /// Counts an event from `address` (None: an exempt one), or says how
    /// long until one would be allowed.
    pub fn take(&mut self, address: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        let Some(address) = address else {
            return Ok(());
        };
        if !self.windows.contains_key(&address) && self.windows.len() >= self.capacity {
            let period = self.period;
            self.windows
                .retain(|_, (start, _)| now.duration_since(*start) < period);
            if self.windows.len() >= self.capacity {
                return Err(self.period);
            }
        }
        let (start, count) = self.windows.entry(address).or_insert((now, 0));
        if now.duration_since(*start) >= self.period {
            (*start, *count) = (now, 0);
        }
        if *count >= self.limit {
            return Err(self.period.saturating_sub(now.duration_since(*start)));
        }
        *count += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_secs(900);

    #[test]
    fn wrong_passwords_on_other_nodes_count_and_a_right_one_there_starts_again() {
        let t0 = Instant::now();
        let mut l = Lockout::default();
        l.begin();
        for _ in 0..5 {
            l.failed_elsewhere(t0, 5, MAX);
        }
        assert_eq!(l.locked(t0, 5), Some(Duration::from_secs(1)));
        l.succeeded_elsewhere();
        assert_eq!(l.locked(t0, 5), None);
        assert!(!l.idle(), "this node's own check is still under way");
        l.abandoned();
        assert!(l.idle());
    }

    #[test]
    fn wrong_passwords_lock_the_account_for_longer_each_time_up_to_the_most() {
        let t0 = Instant::now();
        let mut l = Lockout::default();
        for _ in 0..4 {
            assert_eq!(l.locked(t0, 5), None);
            l.begin();
            l.failed(t0, 5, MAX);
        }
        assert_eq!(l.locked(t0, 5), None, "four are free");
        l.begin();
        l.failed(t0, 5, MAX);
        assert_eq!(l.locked(t0, 5), Some(Duration::from_secs(1)));
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(l.locked(t1, 5), None, "the lock ends");
        l.begin();
        l.failed(t1, 5, MAX);
        assert_eq!(l.locked(t1, 5), Some(Duration::from_secs(2)), "doubled");
        for _ in 0..40 {
            l.begin();
            l.failed(t1, 5, MAX);
        }
        assert_eq!(l.locked(t1, 5), Some(MAX), "at most the most");
        l.begin();
        l.succeeded();
        assert!(l.idle());
        assert_eq!(l.locked(t1, 5), None, "the right password resets");
    }

    #[test]
    fn checks_under_way_count_against_the_lock() {
        let t0 = Instant::now();
        let mut l = Lockout::default();
        for _ in 0..4 {
            l.begin();
            l.failed(t0, 5, MAX);
        }
        l.begin();
        assert!(l.locked(t0, 5).is_some(), "the fifth is being checked");
        l.succeeded();
        assert_eq!(l.locked(t0, 5), None);
    }

    #[test]
    fn each_address_gets_its_share_per_period_and_exempt_ones_are_not_counted() {
        let t0 = Instant::now();
        let minute = Duration::from_secs(60);
        let mut p = PerAddress::new(2, minute, 10);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(p.take(Some(a), t0), Ok(()));
        assert_eq!(p.take(Some(a), t0), Ok(()));
        let later = t0 + Duration::from_secs(15);
        assert_eq!(p.take(Some(a), later), Err(Duration::from_secs(45)));
        assert_eq!(p.take(Some(b), later), Ok(()), "another address");
        assert_eq!(p.take(Some(a), t0 + minute), Ok(()), "a new window");
        for _ in 0..100 {
            assert_eq!(p.take(None, t0), Ok(()));
        }
    }

    #[test]
    fn a_full_table_drops_ended_windows_or_makes_everyone_wait() {
        let t0 = Instant::now();
        let minute = Duration::from_secs(60);
        let mut p = PerAddress::new(5, minute, 2);
        let ip = |n: u8| Some(IpAddr::from([192, 0, 2, n]));
        assert!(p.take(ip(1), t0).is_ok());
        assert!(p.take(ip(2), t0).is_ok());
        assert_eq!(p.take(ip(3), t0), Err(minute), "full");
        assert!(p.take(ip(1), t0).is_ok(), "known addresses go on");
        assert!(
            p.take(ip(3), t0 + minute).is_ok(),
            "ended windows make room"
        );
    }
}
