//! The waiter's pure decisions (`spec/waiter.md`): what a polled sleep does
//! next ([`next_step`]), which timers a batch fires ([`fires`]), what the
//! waiter waits for ([`plan`]) and which wake-ups are latency samples
//! ([`learns_latency`]).

use super::{
    BATCH_NS, COARSE_PERIOD_NS, COARSE_SLACK_NS, FINISH_SPIN_NS, MAX_LEAD_NS, RELAY_DIRECT,
    RELAY_DIRECT_SMALL, RELAY_SMALL_BATCH,
};

/// Where a timer stands when its task is polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerState {
    /// No timer armed (first poll, or the last one was used up).
    Unarmed,
    /// Armed and not yet fired: the poll is spurious (or a re-poll by a
    /// combinator).
    Armed,
    /// The waiter fired it, aiming to wake the task `lead_ns` before the
    /// deadline (0 for a coarse timer).
    Fired {
        /// The lead the timer was armed with.
        lead_ns: u64,
    },
}

/// What a polled precise sleep does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The deadline has passed: complete.
    Done,
    /// Within [`FINISH_SPIN_NS`](super::FINISH_SPIN_NS) of the deadline: spin to it in this poll, complete.
    Spin,
    /// Keep waiting for the armed timer (update its waker).
    Wait,
    /// Wake itself and return `Pending`: the executor runs other ready tasks
    /// and polls again (a cooperative spin through the executor).
    Yield,
    /// Arm (or re-arm) the timer to fire at `deadline − lead_ns`; a zero
    /// lead asks for a coarse timer (fired at the deadline).
    Arm {
        /// How early the waiter will wake the task.
        lead_ns: u64,
    },
}

/// The decision a polled precise sleep makes, as a pure function of the
/// clock reading `now_ns`, its `deadline_ns`, its timer's state, the current
/// learned lead for the remaining time (`lead_ns`, see
/// [`WakeLatency::lead_ns`](super::WakeLatency::lead_ns)) and whether the executor is `behind` (more than
/// [`BEHIND_BACKLOG`](super::BEHIND_BACKLOG) fired timers not yet polled, [`behind`](super::behind)).
///
/// * past the deadline: [`Step::Done`]; within `finish_spin_ns` (normally
///   [`FINISH_SPIN_NS`](super::FINISH_SPIN_NS)): [`Step::Spin`];
/// * an armed timer: [`Step::Wait`];
/// * behind: [`Step::Arm`] with a zero lead (a coarse timer; never a yield,
///   which would only add polls to a queue that is already late);
/// * fired, and no more than the armed lead to go: [`Step::Yield`]; fired
///   but earlier than that (woken far too early): [`Step::Arm`] again;
/// * unarmed: [`Step::Yield`] if the remaining time is within the lead (a
///   wake-up through the waiter would come too late anyway), else [`Step::Arm`].
pub fn next_step(
    now_ns: u64,
    deadline_ns: u64,
    state: TimerState,
    lead_ns: u64,
    finish_spin_ns: u64,
    behind: bool,
) -> Step {
    if now_ns >= deadline_ns {
        return Step::Done;
    }
    let remaining = deadline_ns - now_ns;
    if remaining <= finish_spin_ns {
        return Step::Spin;
    }
    let lead_ns = lead_ns.min(MAX_LEAD_NS);
    match state {
        TimerState::Armed => Step::Wait,
        _ if behind => Step::Arm { lead_ns: 0 },
        TimerState::Fired { lead_ns: armed } if remaining <= armed.min(MAX_LEAD_NS) => Step::Yield,
        TimerState::Unarmed if remaining <= lead_ns => Step::Yield,
        _ => Step::Arm { lead_ns },
    }
}

/// Whether a poll's `step` is a precise finish that the poll offers to the
/// admission before taking it (`spec/waiter.md`, *A poll*): a yield, or a
/// spin longer than [`FINISH_SPIN_NS`] (`remaining_ns` to the deadline: an
/// event loop's finishing spin, raised to its round trip), of a sleep whose
/// precision was not `admitted` already (a precise timer armed or fired for
/// it, or an admitted finish in progress). Not admitted, the poll arms a
/// coarse timer instead.
///
/// ```
/// use keeptime::waiter::{offers_finish, Step};
/// assert!(offers_finish(Step::Yield, 100_000, false));
/// assert!(offers_finish(Step::Spin, 30_000, false)); // a 30 µs spin
/// assert!(!offers_finish(Step::Spin, 3_000, false)); // cheaper than arming
/// assert!(!offers_finish(Step::Yield, 100_000, true));
/// ```
pub fn offers_finish(step: Step, remaining_ns: u64, admitted: bool) -> bool {
    !admitted
        && match step {
            Step::Yield => true,
            Step::Spin => remaining_ns > FINISH_SPIN_NS,
            _ => false,
        }
}

/// Whether the waiter fires a timer armed for `wake_ns` at its clock reading
/// `now_ns`: a precise one when due within [`BATCH_NS`], a coarse one when due.
pub fn fires(wake_ns: u64, precise: bool, now_ns: u64) -> bool {
    if precise {
        wake_ns <= now_ns.saturating_add(BATCH_NS)
    } else {
        wake_ns <= now_ns
    }
}

/// Whether the wake-up of a fired timer is a sample of the executor's
/// wake-up latency: only the first precise timer of a batch fired while no
/// earlier fired timer was waiting for its poll (`backlog_before == 0`).
/// Any other delay includes the executor's queue.
pub fn learns_latency(first_in_batch: bool, backlog_before: u64) -> bool {
    first_in_batch && backlog_before == 0
}

/// What the waiter waits for next, from the earliest precise and coarse wake
/// times `p` and `c` and the reading `last_coarse_ns` that ended its previous
/// completed coarse wait (`None` before the first). The coarse wake time is
/// `w = max(c + COARSE_SLACK_NS, last + COARSE_PERIOD_NS)`: a plain OS wait
/// (no spin) until `w` if that comes more than [`MAX_LEAD_NS`] before `p` (or
/// there is no `p`), else the precise wait for `p` with its sleeper (OS
/// wait, then spin), the coarse timers due by then firing with it. `None`:
/// nothing armed, park. A lone coarse timer waits [`COARSE_SLACK_NS`]; a
/// stream of them wakes the waiter at most once per [`COARSE_PERIOD_NS`].
///
/// ```
/// use keeptime::waiter::{plan, Plan};
/// // A lone coarse timer: 250 µs of slack.
/// assert_eq!(plan(None, Some(10_000_000), None), Some(Plan::Coarse(10_250_000)));
/// // 100 µs after the previous coarse wake-up: the next one a period after it.
/// assert_eq!(plan(None, Some(10_100_000), Some(10_000_000)), Some(Plan::Coarse(11_000_000)));
/// ```
pub fn plan(
    precise_ns: Option<u64>,
    coarse_ns: Option<u64>,
    last_coarse_ns: Option<u64>,
) -> Option<Plan> {
    let period_end = last_coarse_ns.map_or(0, |l| l.saturating_add(COARSE_PERIOD_NS));
    let coarse = coarse_ns.map(|c| c.saturating_add(COARSE_SLACK_NS).max(period_end));
    match (precise_ns, coarse) {
        (None, None) => None,
        (Some(p), None) => Some(Plan::Precise(p)),
        (None, Some(c)) => Some(Plan::Coarse(c)),
        (Some(p), Some(c)) if c.saturating_add(MAX_LEAD_NS) < p => Some(Plan::Coarse(c)),
        (Some(p), Some(_)) => Some(Plan::Precise(p)),
    }
}

/// The waiter's next wait ([`plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// A precise wait to this wake time (the core's sleep: OS wait, spin).
    Precise(u64),
    /// A plain OS wait to this wake time.
    Coarse(u64),
}

/// Whether the `k`-th (from 0, in firing order) of a batch's `n` coarse
/// timers of relaying waits goes to the relay rather than being woken by
/// the waiter: all but the first [`RELAY_DIRECT`] of a batch of more than
/// [`RELAY_SMALL_BATCH`], all but the first [`RELAY_DIRECT_SMALL`] of a
/// smaller one (`spec/waiter.md`, *The relay*).
///
/// ```
/// use keeptime::waiter::relays;
/// assert!(!relays(0, 10) && relays(1, 10)); // a small batch: one direct wake
/// assert!(!relays(3, 1_000) && relays(4, 1_000)); // a large one: four
/// ```
pub fn relays(k: usize, n: usize) -> bool {
    let direct = if n <= RELAY_SMALL_BATCH {
        RELAY_DIRECT_SMALL
    } else {
        RELAY_DIRECT
    };
    k >= direct
}

/// The wake time of the waiter's wait for the relay instead of its plan:
/// `relay_check` (the firing that filled the relay plus
/// [`RELAY_GRACE_NS`](super::RELAY_GRACE_NS), `None` while the relay is
/// empty) if it comes before the plan's wake time `plan_ns` (or there is no
/// plan); `None`: follow the plan (or park).
///
/// ```
/// use keeptime::waiter::relay_wait;
/// assert_eq!(relay_wait(Some(5_000_000), None), Some(5_000_000));
/// assert_eq!(relay_wait(Some(5_000_000), Some(4_000_000)), None);
/// assert_eq!(relay_wait(None, None), None);
/// ```
pub fn relay_wait(relay_check: Option<u64>, plan_ns: Option<u64>) -> Option<u64> {
    relay_check.filter(|&r| plan_ns.map_or(true, |p| r < p))
}
