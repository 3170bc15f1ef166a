//! One process-wide precise waiter for async code: it wakes a task's
//! [`Waker`](std::task::Waker) a learned *executor wake-up latency* before the task's deadline,
//! so that the task, when polled, is just short of its deadline and finishes
//! with a few µs of work of its own. Feature `async`; used by
//! `keeptime::tokio` and by the Python binding's
//! `keeptime.asyncio`. The rules are `spec/waiter.md`'s.
//!
//! # How a precise async sleep runs
//!
//! ```text
//!   arm ─────────── waiter thread: keeptime Sleeper ──────────▶ fire (wake the Waker)
//!                                                     │ executor latency (learned) │
//!   task polled again ────────────────────────────────┘      yield … spin ≤ 4 µs ▶ deadline
//!                      wake = deadline − lead,  lead = margin of the observed latencies
//! ```
//!
//! * **The waiter** is one thread, started on first use and parked on a
//!   condition variable while no timer is armed. It waits toward the earliest
//!   precise wake time with a [`Sleeper`](crate::Sleeper) whose OS wait is that condition
//!   variable's timed wait: the core's algorithm (learned margin, then a spin
//!   of a few µs) on an OS wait that a new, earlier timer can interrupt. It
//!   fires in one batch every precise timer due within [`BATCH_NS`].
//! * **The lead** is learned with a [`MarginEstimator`](crate::MarginEstimator), the core's estimator
//!   and spec (`spec/estimator.md`): a wake-up through the executor is just
//!   another overshoot. Each sample is "polled again − waker fired", filed
//!   under the length of the sleep it ended; the lead is the bucket's margin,
//!   capped at [`MAX_LEAD_NS`]. Only wake-ups of an idle executor are samples
//!   ([`learns_latency`]): under load the delay is queueing, not latency, and
//!   a lead learned from it would make every later sleep yield for longer.
//! * **The capacity** ([`capacity`]) is how many deadlines per second the
//!   waiter and the executors serve precisely: a quarter CPU second divided by
//!   the measured cost of one precise deadline ([`Capacity`]). Each
//!   [`SLOT_NS`] of deadlines admits that many precise timers
//!   ([`Admission`]), only a trickle of them ([`TRICKLE_SHARE_PPM`]) while
//!   more than [`SATURATED_LOAD`] times the capacity is offered by
//!   concurrent sleeps; the rest are *coarse*: woken after their deadline by
//!   a plain OS wait (at most one per [`COARSE_PERIOD_NS`] for a stream of
//!   them, [`plan`]), finished in one poll, no lead, no yield, no spin, like
//!   the runtime's own timer but on the µs clock. A lone sleeper (no other
//!   precise wait in progress, no timer armed) is always admitted. While
//!   more than [`BEHIND_BACKLOG`] fired timers wait for their task to be
//!   polled, new timers are coarse too ([`next_step`]'s `behind`).
//! * **The relay**: of a batch's coarse timers of relaying waits
//!   ([`PreciseWait::set_relay`], `keeptime::tokio`'s), the waiter wakes the
//!   first [`RELAY_DIRECT`] (one, of a small batch) and leaves the rest in a
//!   list that every poll of
//!   a relaying wait draws [`RELAY_BATCH`] from, so most wakes come from an
//!   executor thread (for tokio, a push to its own run queue) rather than
//!   from the waiter thread; whatever is left is woken by the waiter within
//!   [`RELAY_GRACE_NS`] ([`relays`], [`relay_wait`]).
//! * **The finish** runs in the task, decided by [`next_step`]: within
//!   [`FINISH_SPIN_NS`] of the deadline it spins (the longest a precise sleep
//!   holds an executor thread in one poll); otherwise it wakes itself and
//!   returns `Pending` (the executor runs other tasks in between: a
//!   cooperative spin, bounded by the lead); woken earlier than the lead (a
//!   spurious poll, or a lead that shrank) it re-arms the timer instead.
//!
//! Dropping a [`Timer`] removes it at once; the waiter re-plans and, with
//! nothing left, parks. Never early: a sleep completes only on a clock reading
//! at or past its deadline.

mod capacity;
mod decide;
mod latency;
mod queue;
#[cfg(test)]
mod tests;
mod timer;

pub use capacity::{finish_share, Admission, Capacity};
pub use decide::{
    fires, learns_latency, next_step, offers_finish, plan, relay_wait, relays, Plan, Step,
    TimerState,
};
pub use latency::{WakeLatency, LEAD_SHARE_PPM};
pub use queue::{behind, capacity, stats, WaiterStats};
pub use timer::{probe_capacity, PreciseWait, Progress, Timer};

/// The longest spin a task does in one poll to finish a sleep: the longest a
/// precise sleep holds an executor thread (plus the poll's own few hundred ns).
pub const FINISH_SPIN_NS: u64 = 4_000;

/// The longest lead: a task is woken at most this long before its deadline,
/// so the cooperative finish (self-wake and yield) never costs more than this
/// per sleep, whatever the estimator says. Executors slower than this to wake
/// a task make sleeps late, never early.
pub const MAX_LEAD_NS: u64 = 200_000;

/// The waiter fires, in one batch, every precise timer whose wake time is
/// within this of its clock reading: the tasks it wakes a little early finish
/// with their own spin, and the waiter saves an OS wait and a spin per timer.
pub const BATCH_NS: u64 = 4_000;

/// Of the coarse timers of relaying waits ([`PreciseWait::set_relay`]) that
/// one wake-up fires, the waiter wakes this many itself when they are more
/// than [`RELAY_SMALL_BATCH`] (else [`RELAY_DIRECT_SMALL`]) and hands the
/// others to the relay: the tasks it woke wake them when polled, from an
/// executor thread, where a wake is a push to the thread's own run queue
/// instead of a push to a shared queue from outside ([`relays`]).
pub const RELAY_DIRECT: usize = 4;

/// A batch of at most this many relaying timers is a small one: the waiter
/// wakes [`RELAY_DIRECT_SMALL`] of them itself, not [`RELAY_DIRECT`]. Each
/// wake from outside may unpark an executor thread; one thread's polls
/// serve a small batch.
pub const RELAY_SMALL_BATCH: usize = 128;

/// The waiter's own wakes of a small batch's relaying timers
/// ([`RELAY_SMALL_BATCH`]).
pub const RELAY_DIRECT_SMALL: usize = 1;

/// A poll of a relaying wait wakes at most this many timers of the relay
/// (a few µs of the executor thread), and each of them as many more when
/// polled: a batch of a thousand is woken within a few generations.
pub const RELAY_BATCH: usize = 16;

/// Timers left in the relay this long after their firing (their relaying
/// tasks dropped, or never polled) are woken by the waiter itself, at its
/// next wake-up at the latest: the next coarse one under a steady load.
pub const RELAY_GRACE_NS: u64 = COARSE_PERIOD_NS + COARSE_SLACK_NS;

/// The waiter waits for a coarse timer until this after its wake time, so
/// that one OS wake-up fires the coarse timers of the next 250 µs together
/// rather than one per deadline ([`plan`]).
pub const COARSE_SLACK_NS: u64 = 250_000;

/// The waiter's plain OS waits for coarse timers end at least this far
/// apart ([`plan`]): a stream of coarse timers wakes the waiter, and through
/// it the executor, at most about once a millisecond, as the runtime's own
/// millisecond timer does, each timer ending at most about 1 ms late.
pub const COARSE_PERIOD_NS: u64 = 1_000_000;

/// Deadlines are admitted as precise per slot of this length
/// ([`Admission`]): [`Capacity::per_slot_at`] of them per slot, or
/// [`Capacity::trickle_per_slot_at`] while the waiter is saturated.
pub const SLOT_NS: u64 = 1_000_000;

/// More fired timers than this whose tasks were not polled yet: the executor
/// is behind, and new timers are coarse (no lead, no yield) until it catches up.
pub const BEHIND_BACKLOG: u64 = 16;

/// The cost of one precise deadline assumed before any was measured, ns.
pub const DEFAULT_COST_NS: u64 = 10_000;

/// The largest cost sample taken as it is, ns (a preempted poll is not a cost).
pub const MAX_COST_NS: u64 = 1_000_000;

/// The smallest cost sample taken as it is, ns: no deadline is served
/// precisely for less (so the capacity never claims more than
/// `CAPACITY_SHARE_PPM · 1000 / MIN_COST_NS` = 250 000 a second).
pub const MIN_COST_NS: u64 = 1_000;

/// A precise deadline that ends more than this late was not served
/// precisely: instead of its (small) cost, the capacity learns a failure
/// ([`Capacity::observe_late`]).
pub const LATE_NS: u64 = 50_000;

/// The share of one CPU the precise deadlines may use (ppm): the capacity is
/// this share of a second divided by the cost of one deadline, so that the
/// waker-to-poll queue stays well inside the lead.
pub const CAPACITY_SHARE_PPM: u64 = 250_000;

/// The waiter is saturated while more than this many times a slot's share
/// of the capacity is offered per slot of arm time ([`Admission::offer`]):
/// precise timers are then admitted only at the trickle's share.
pub const SATURATED_LOAD: u64 = 2;

/// The waiter is also saturated while more than [`SATURATED_LOAD`] times a
/// slot's share of the capacity was offered on average over this many slots
/// of arm time before the current one ([`Admission::saturated`]): coarse
/// timers are re-armed in batches about a slot apart, so one slot can hold a
/// whole batch and the next a lone straggler or nothing.
pub const SATURATION_SLOTS: u64 = 4;

/// The share of one CPU (ppm) the precise deadlines of saturated slots may
/// use ([`Capacity::trickle_per_slot_at`]): enough to keep the cost measured
/// while a heavy load is served coarse, so that the capacity can recover.
pub const TRICKLE_SHARE_PPM: u64 = 2_000;

/// The longest finishing spin a caller may configure
/// ([`PreciseWait::set_finish_spin_ns`]): for event loops whose round trip
/// (yield, run the other ready tasks, come back) is itself several µs, so a
/// shorter spin would only make the sleep late by one round.
pub const MAX_FINISH_SPIN_NS: u64 = 50_000;
