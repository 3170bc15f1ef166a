//! The pure schedule behind every ticker: deadlines, missed-tick policies and
//! stats, with no clock of its own (`spec/ticker.md`; the vectors in
//! `spec/vectors/ticker.json` drive it directly).

use super::{MissedTicks, TickNs, TickerStats};
use crate::Error;

/// What a [`Schedule`] wants done when `tick()` is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Wait until this deadline, then call [`Schedule::woke`].
    Wait {
        /// Absolute deadline in platform nanoseconds.
        deadline_ns: u64,
    },
    /// The deadline had passed: this tick is delivered at once.
    Now(TickNs),
}

/// The pure state machine behind [`Ticker`](super::Ticker): deadlines, missed-tick policies
/// and stats, with no clock of its own (spec/ticker.md; the vectors in
/// `spec/vectors/ticker.json` drive it directly).
#[derive(Clone, Debug)]
pub struct Schedule {
    period_ns: u64,
    policy: MissedTicks,
    base_ns: u64,
    base_index: u64,
    next_index: u64,
    stats: TickerStats,
}

impl Schedule {
    /// A schedule whose slot `k` is due at `start_ns + k·period_ns`.
    ///
    /// # Errors
    /// [`Error::ZeroPeriod`] when `period_ns` is 0.
    pub fn new(start_ns: u64, period_ns: u64, policy: MissedTicks) -> Result<Self, Error> {
        if period_ns == 0 {
            return Err(Error::ZeroPeriod);
        }
        Ok(Schedule {
            period_ns,
            policy,
            base_ns: start_ns,
            base_index: 0,
            next_index: 1,
            stats: TickerStats::default(),
        })
    }

    fn deadline(&self, index: u64) -> u64 {
        (index - self.base_index)
            .saturating_mul(self.period_ns)
            .saturating_add(self.base_ns)
    }

    /// Deadline of the next slot (saturates at `u64::MAX` for absurd periods).
    pub fn next_deadline_ns(&self) -> u64 {
        self.deadline(self.next_index)
    }

    /// Index of the next slot.
    pub fn next_index(&self) -> u64 {
        self.next_index
    }

    /// The period in nanoseconds.
    pub fn period_ns(&self) -> u64 {
        self.period_ns
    }

    /// The missed-tick policy.
    pub fn policy(&self) -> MissedTicks {
        self.policy
    }

    /// Counters so far.
    pub fn stats(&self) -> TickerStats {
        self.stats
    }

    /// `tick()` was called at `now_ns`: wait, or deliver a late tick at once.
    pub fn poll(&mut self, now_ns: u64) -> Step {
        let due = self.next_deadline_ns();
        if now_ns < due {
            return Step::Wait { deadline_ns: due };
        }
        let mut index = self.next_index;
        let mut skipped = 0;
        match self.policy {
            MissedTicks::Burst => {}
            MissedTicks::Skip => {
                skipped = (now_ns - due) / self.period_ns;
                index = index.saturating_add(skipped);
            }
            MissedTicks::Delay => {
                self.base_ns = now_ns;
                self.base_index = index;
            }
        }
        let scheduled_ns = if self.policy == MissedTicks::Delay {
            due
        } else {
            self.deadline(index)
        };
        self.next_index = index.saturating_add(1);
        if now_ns > due {
            self.stats.missed = self.stats.missed.saturating_add(1 + skipped);
            self.stats.skipped = self.stats.skipped.saturating_add(skipped);
        }
        Step::Now(self.record(index, scheduled_ns, now_ns, skipped))
    }

    /// The wait asked for by [`poll`](Self::poll) ended at `woke_ns`.
    pub fn woke(&mut self, woke_ns: u64) -> TickNs {
        let index = self.next_index;
        let scheduled_ns = self.next_deadline_ns();
        self.next_index = index.saturating_add(1);
        self.record(index, scheduled_ns, woke_ns, 0)
    }

    /// The wait for `deadline_ns` that [`poll`](Self::poll) asked for ended
    /// at `woke_ns`: its tick, or `None` when the schedule changed meanwhile
    /// (a [`reset`](Self::reset) or a new period moved the next deadline) and
    /// the ticker must poll again (`spec/ticker.md`, *The driver*).
    pub fn woke_for(&mut self, deadline_ns: u64, woke_ns: u64) -> Option<TickNs> {
        (self.next_deadline_ns() == deadline_ns).then(|| self.woke(woke_ns))
    }

    fn record(&mut self, index: u64, scheduled_ns: u64, at_ns: u64, skipped: u64) -> TickNs {
        let lateness_ns = at_ns.saturating_sub(scheduled_ns);
        self.stats.ticks = self.stats.ticks.saturating_add(1);
        self.stats.worst_lateness_ns = self.stats.worst_lateness_ns.max(lateness_ns);
        TickNs {
            index,
            scheduled_ns,
            lateness_ns,
            skipped,
        }
    }

    /// Restarts the schedule from `now_ns`: the next slot is due one period later.
    pub fn reset(&mut self, now_ns: u64) {
        self.base_ns = now_ns;
        self.base_index = self.next_index - 1;
    }

    /// Changes the period; the next slot is due one new period after the last
    /// delivered slot's deadline (or the start).
    ///
    /// # Errors
    /// [`Error::ZeroPeriod`] when `period_ns` is 0 (the schedule is unchanged).
    pub fn set_period(&mut self, period_ns: u64) -> Result<(), Error> {
        if period_ns == 0 {
            return Err(Error::ZeroPeriod);
        }
        let last = self.next_index - 1;
        self.base_ns = self.deadline(last);
        self.base_index = last;
        self.period_ns = period_ns;
        Ok(())
    }
}
