//! The stated capacity and the admission of precise timers
//! (`spec/waiter.md`, *Capacity*): the learned cost of one precise deadline
//! ([`Capacity`]) and the per-slot count of precise timers ([`Admission`]).

use super::{
    CAPACITY_SHARE_PPM, DEFAULT_COST_NS, MAX_COST_NS, MIN_COST_NS, SATURATED_LOAD,
    SATURATION_SLOTS, SLOT_NS, TRICKLE_SHARE_PPM,
};
use std::collections::BTreeMap;

/// What one stretch of a precise deadline's finish is charged, ns:
/// `stretch_ns · min(n, threads) / n`, with `n` (at least 1) the precise
/// deadlines of the same executor in their finish at the stretch's end, this
/// one included, and `threads` (at least 1) the threads the executor runs
/// them on (`spec/waiter.md`, *Capacity*). A burst finishing together is so
/// charged the executor's threads once, not once per task; a task finishing
/// alone is charged its whole stretch.
///
/// ```
/// use keeptime::waiter::finish_share;
/// assert_eq!(finish_share(60_000, 1, 2), 60_000); // alone: all of it
/// assert_eq!(finish_share(60_000, 2, 2), 60_000); // one thread each
/// assert_eq!(finish_share(60_000, 6, 2), 20_000); // two threads shared by six
/// assert_eq!(finish_share(60_000, 6, 1), 10_000); // an event loop's one thread
/// ```
pub fn finish_share(stretch_ns: u64, n: u64, threads: u64) -> u64 {
    let n = n.max(1);
    let busy = n.min(threads.max(1));
    (u128::from(stretch_ns) * u128::from(busy) / u128::from(n)) as u64
}

/// The learned cost of one precise deadline and the capacity it implies.
///
/// A sample is what one precise deadline cost: the waiter thread's CPU time
/// in its precise waits (OS wait and margin spin) since its previous batch
/// with precise timers, divided by the precise timers of its batch, plus the
/// task's share of its executor during its finish, from the start of its
/// first poll after the firing to the end (its yields keep an executor thread
/// busy all along when nothing else is ready; the spin), each stretch
/// between two polls charged by [`finish_share`].
/// The cost is a moving average,
/// `(15·cost + s) / 16` where `s` is the sample clamped to
/// `[cost/2, 2·cost]` (one preempted poll moves it by at most 1/16); the
/// first sample replaces [`DEFAULT_COST_NS`]; samples are clamped to
/// [`MIN_COST_NS`]`..=`[`MAX_COST_NS`]. A precise deadline that ended more than
/// [`LATE_NS`](super::LATE_NS) late is a failure, not a cost ([`observe_late`](Self::observe_late)):
/// otherwise a saturated waiter, whose late tasks finish at once, would
/// measure tiny costs and admit ever more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    cost_ns: u64,
    samples: u64,
}

impl Default for Capacity {
    fn default() -> Self {
        Capacity::new()
    }
}

impl Capacity {
    /// Nothing measured: the cost is [`DEFAULT_COST_NS`].
    pub const fn new() -> Self {
        Capacity {
            cost_ns: DEFAULT_COST_NS,
            samples: 0,
        }
    }

    /// The capacity with this cost and count of samples (a copy read back
    /// from the waiter's lock-free view of it).
    pub(super) const fn from_parts(cost_ns: u64, samples: u64) -> Self {
        Capacity { cost_ns, samples }
    }

    /// One precise deadline cost `cost_ns`.
    pub fn observe(&mut self, cost_ns: u64) {
        let c = cost_ns.clamp(MIN_COST_NS, MAX_COST_NS);
        self.cost_ns = if self.samples == 0 {
            c
        } else {
            let c = c.clamp(self.cost_ns / 2, self.cost_ns.saturating_mul(2));
            (self.cost_ns * 15 + c) / 16
        };
        self.samples += 1;
    }

    /// A precise deadline ended more than [`LATE_NS`](super::LATE_NS) late: the waiter or
    /// the executor was saturated, whatever the deadline cost. Learned as a
    /// sample of twice the current cost (the most one sample can raise it).
    pub fn observe_late(&mut self) {
        self.observe(self.cost_ns.saturating_mul(2));
    }

    /// The learned cost of one precise deadline, ns.
    pub fn cost_ns(&self) -> u64 {
        self.cost_ns
    }

    /// Cost samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Deadlines per second served precisely:
    /// `CAPACITY_SHARE_PPM · 1000 / cost_ns` (at least 1).
    pub fn per_second(&self) -> u64 {
        (CAPACITY_SHARE_PPM * 1_000 / self.cost_ns.max(1)).max(1)
    }

    /// Precise timers admitted in slot `slot` (deadlines in
    /// `[slot·SLOT_NS, (slot+1)·SLOT_NS)`): with `r = CAPACITY_SHARE_PPM ·
    /// SLOT_NS / 10⁶ / cost_ns` the slot's share of the capacity (a fraction),
    /// `⌊(slot+1)·r⌋ − ⌊slot·r⌋`, so that any run of slots admits the
    /// capacity to within one timer, also below one per slot.
    pub fn per_slot_at(&self, slot: u64) -> u64 {
        self.share_of_slot(slot, CAPACITY_SHARE_PPM)
    }

    /// Precise timers admitted in a saturated slot: as
    /// [`per_slot_at`](Self::per_slot_at) with [`TRICKLE_SHARE_PPM`] of a
    /// CPU in place of [`CAPACITY_SHARE_PPM`].
    pub fn trickle_per_slot_at(&self, slot: u64) -> u64 {
        self.share_of_slot(slot, TRICKLE_SHARE_PPM)
    }

    /// Whether `offers` deadlines offered to one slot are more than
    /// [`SATURATED_LOAD`] times the slot's share of the capacity:
    /// `offers · cost_ns > SATURATED_LOAD · CAPACITY_SHARE_PPM · SLOT_NS / 10⁶`.
    pub fn saturated_by(&self, offers: u64) -> bool {
        self.saturated_over(offers, 1)
    }

    /// Whether `offers` deadlines offered to `slots` slots together are more
    /// than [`SATURATED_LOAD`] times their share of the capacity:
    /// `offers · cost_ns > slots · SATURATED_LOAD · CAPACITY_SHARE_PPM ·
    /// SLOT_NS / 10⁶`.
    pub fn saturated_over(&self, offers: u64, slots: u64) -> bool {
        u128::from(offers) * u128::from(self.cost_ns)
            > u128::from(slots) * u128::from(SATURATED_LOAD) * slot_cpu_ns(CAPACITY_SHARE_PPM)
    }

    fn share_of_slot(&self, slot: u64, share_ppm: u64) -> u64 {
        let num = slot_cpu_ns(share_ppm);
        let den = u128::from(self.cost_ns.max(1));
        let upto = |k: u128| k * num / den;
        let s = u128::from(slot);
        (upto(s + 1) - upto(s)) as u64
    }
}

/// CPU time (ns) a share of one CPU (ppm) amounts to over one [`SLOT_NS`]
/// slot: `share_ppm · SLOT_NS / 10⁶`.
fn slot_cpu_ns(share_ppm: u64) -> u128 {
    u128::from(share_ppm) * u128::from(SLOT_NS) / 1_000_000
}

/// Which deadlines are served precisely: at most a slot's limit of precise
/// timers per [`SLOT_NS`] slot of deadlines (slot = `deadline / SLOT_NS`), in
/// the order they are armed; the rest are coarse. The limit is
/// [`Capacity::per_slot_at`], or [`Capacity::trickle_per_slot_at`] while the
/// waiter is saturated: more than [`SATURATED_LOAD`] times a slot's share of
/// the capacity offered concurrently (while other sleeps are in progress) in
/// the previous slot of arm time or so far in the current one, or on average
/// over the [`SATURATION_SLOTS`] slots before the current one
/// ([`offer`](Self::offer), `spec/waiter.md`).
///
/// ```
/// use keeptime::waiter::{Admission, Capacity};
/// let mut cap = Capacity::new();
/// cap.observe(100_000); // 100 µs a precise deadline: 2.5 a slot
/// let mut a = Admission::new();
/// // Twelve concurrent sleeps of 1 ms armed within one slot: two precise
/// // (the slot's share), then saturated (more than 2 × 2.5 offered): only
/// // the trickle.
/// let now = 9_000_000;
/// let precise = (0..12)
///     .filter(|i| a.offer(now + i * 1_000, 10_000_000 + i * 1_000, 50_000, true, &cap))
///     .count();
/// assert_eq!(precise, 2);
/// assert!(a.saturated(now + 20_000, &cap));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admission {
    slots: BTreeMap<u64, u64>,
    /// The slot of arm time of the latest offer.
    arm_slot: u64,
    /// Offers counted per slot of arm time, as (slot, offers), for the
    /// latest offer's slot and the [`SATURATION_SLOTS`] before it: the entry
    /// at `slot % (SATURATION_SLOTS + 1)`, stale when it names another slot.
    offers: [(u64, u64); OFFER_SLOTS],
}

/// The offers of the [`SATURATION_SLOTS`] slots before the current one in
/// a [`Admission::window`], summed.
fn recent(window: &[u64; OFFER_SLOTS]) -> u64 {
    window[..OFFER_SLOTS - 1]
        .iter()
        .fold(0, |sum, &n| sum.saturating_add(n))
}

/// The slots of arm time whose offers are remembered: the current one and
/// the [`SATURATION_SLOTS`] before it.
const OFFER_SLOTS: usize = SATURATION_SLOTS as usize + 1;

impl Admission {
    /// No deadline admitted.
    pub fn new() -> Self {
        Admission::default()
    }

    /// Offers, at the clock reading `now_ns`, a deadline that asks to be
    /// woken `lead_ns` early: counts the offer in the slot of `now_ns` if it
    /// is `concurrent` (made while other sleeps are in progress), then
    /// admits a precise timer if the lead is not zero and the deadline's
    /// slot holds fewer than its limit: none for a lone offer (a lone
    /// sleeper is always precise and never saturates the waiter), else the
    /// trickle while [`saturated`](Self::saturated), else
    /// [`Capacity::per_slot_at`]. Returns whether it admitted one.
    pub fn offer(
        &mut self,
        now_ns: u64,
        deadline_ns: u64,
        lead_ns: u64,
        concurrent: bool,
        capacity: &Capacity,
    ) -> bool {
        if concurrent {
            self.count_offer(now_ns);
        }
        if lead_ns == 0 {
            return false;
        }
        let slot = deadline_ns / SLOT_NS;
        let limit = if !concurrent {
            // A lone sleeper: its CPU is its own rate's; the capacity
            // governs the sleeps that compete.
            u64::MAX
        } else if self.saturated(now_ns, capacity) {
            capacity.trickle_per_slot_at(slot)
        } else {
            capacity.per_slot_at(slot)
        };
        self.try_admit(deadline_ns, limit)
    }

    fn count_offer(&mut self, now_ns: u64) {
        // A reading in an earlier slot (another thread's, read before the
        // latest offer's) counts in the latest slot.
        self.arm_slot = self.arm_slot.max(now_ns / SLOT_NS);
        let j = self.arm_slot;
        let entry = &mut self.offers[(j % OFFER_SLOTS as u64) as usize];
        if entry.0 != j {
            *entry = (j, 0);
        }
        entry.1 = entry.1.saturating_add(1);
    }

    /// Offers counted in slot `slot` of arm time (0 for a slot no longer
    /// remembered).
    fn offers_in(&self, slot: u64) -> u64 {
        match self.offers[(slot % OFFER_SLOTS as u64) as usize] {
            (s, n) if s == slot => n,
            _ => 0,
        }
    }

    /// The offers of the slots of arm time up to the one a query at `now_ns`
    /// is answered for (its own, or the latest offer's if that is later),
    /// oldest first: `window[i]` is slot `j − SATURATION_SLOTS + i`, so
    /// `window[SATURATION_SLOTS]` is `j`'s own (0 for a slot before 0).
    fn window(&self, now_ns: u64) -> [u64; OFFER_SLOTS] {
        let j = self.arm_slot.max(now_ns / SLOT_NS);
        std::array::from_fn(|i| {
            (j + i as u64)
                .checked_sub(SATURATION_SLOTS)
                .map_or(0, |slot| self.offers_in(slot))
        })
    }

    /// Offers counted in the slot of `now_ns` and in the one before it
    /// (`(before, current)`; both 0 for slots after the latest offer's but
    /// one, `current` 0 for the slot right after it; a reading in a slot
    /// before the latest offer's is answered for the latest offer's).
    pub fn offers_at(&self, now_ns: u64) -> (u64, u64) {
        let w = self.window(now_ns);
        (w[OFFER_SLOTS - 2], w[OFFER_SLOTS - 1])
    }

    /// Offers counted in the [`SATURATION_SLOTS`] slots before the slot of
    /// `now_ns` (read as in [`offers_at`](Self::offers_at)), summed.
    pub fn recent_offers(&self, now_ns: u64) -> u64 {
        recent(&self.window(now_ns))
    }

    /// Whether the waiter is saturated at `now_ns`: more than
    /// [`SATURATED_LOAD`] times a slot's share of `capacity` offered in the
    /// slot of `now_ns` so far or in the one before it
    /// ([`Capacity::saturated_by`]), or on average over the
    /// [`SATURATION_SLOTS`] slots before it ([`recent_offers`](Self::recent_offers),
    /// [`Capacity::saturated_over`]).
    pub fn saturated(&self, now_ns: u64, capacity: &Capacity) -> bool {
        let w = self.window(now_ns);
        capacity.saturated_by(w[OFFER_SLOTS - 2].max(w[OFFER_SLOTS - 1]))
            || capacity.saturated_over(recent(&w), SATURATION_SLOTS)
    }

    /// Admits a precise timer for `deadline_ns` if its slot holds fewer than
    /// `per_slot`; returns whether it did.
    pub fn try_admit(&mut self, deadline_ns: u64, per_slot: u64) -> bool {
        let n = self.slots.entry(deadline_ns / SLOT_NS).or_insert(0);
        if *n < per_slot {
            *n += 1;
            true
        } else {
            if *n == 0 {
                self.slots.remove(&(deadline_ns / SLOT_NS));
            }
            false
        }
    }

    /// A precise timer for `deadline_ns` was dropped before it fired.
    pub fn release(&mut self, deadline_ns: u64) {
        let slot = deadline_ns / SLOT_NS;
        if let Some(n) = self.slots.get_mut(&slot) {
            *n -= 1;
            if *n == 0 {
                self.slots.remove(&slot);
            }
        }
    }

    /// Forgets the slots that ended before `now_ns`.
    pub fn forget_before(&mut self, now_ns: u64) {
        self.slots = self.slots.split_off(&(now_ns / SLOT_NS));
    }

    /// Precise timers admitted in the slot of `deadline_ns`.
    pub fn admitted(&self, deadline_ns: u64) -> u64 {
        self.slots
            .get(&(deadline_ns / SLOT_NS))
            .copied()
            .unwrap_or(0)
    }

    /// Slots remembered with precise timers admitted.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
}
