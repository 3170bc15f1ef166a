//! Replaying a trace: a simulated platform whose OS waits wake as the
//! trace's waits of the nearest length did.

use super::Trace;
use crate::platform::Platform;
use crate::sim::SimPlatform;
use crate::sys::OsWake;
use std::rc::Rc;
use std::time::Instant;

/// A simulated [`Platform`] whose OS waits replay a [`Trace`]: a
/// [`SimPlatform`] (its methods are reachable through `Deref`) whose wake
/// source walks the trace. Cheap to clone; clones share one simulated world.
/// Deterministic.
///
/// An OS wait issued at `now` to target `t` has length `L = t − now` (0 if
/// `t ≤ now`) and wakes at `max(now, t)` + the next overshoot of the recorded
/// length nearest to L: each recorded length has a cursor that walks its rows
/// in file order and starts over after the last; a negative recorded
/// overshoot counts as 0. An OS wait right after one of at least half the
/// length the trace's [after rows](Trace::after_rows) followed (a two-wait
/// plan's second wait after a long first one) takes the next after row of its
/// nearest recorded length instead, where that length has any, with a cursor
/// of its own: so a replay meets the later wake-ups the oracle prices such
/// waits with ([`Oracle`](super::Oracle)). The row's thread CPU is added to the simulated
/// thread-CPU counter. A spin iteration ([`relax`](Platform::relax)) advances
/// the clock and the CPU counter by the spin step (default 100 ns), a yield
/// by the yield step (default 1 µs). Spin slots are free unless
/// [`set_spin_slots_free(false)`](SimPlatform::set_spin_slots_free). OS waits
/// are not interrupted unless interrupts are scripted on the simulation.
#[derive(Clone, Debug)]
pub struct TracePlatform {
    trace: Rc<Trace>,
    sim: SimPlatform,
}

impl TracePlatform {
    /// Replays `trace` on a clock that starts at `start_ns`.
    pub fn new(trace: Trace, start_ns: u64) -> Self {
        Self::starting_at(trace, start_ns, 0, 1)
    }

    /// Replays `trace` from `part / parts` of the way through each recorded
    /// length's rows: the cursor of a length with `n` rows starts at row
    /// `⌊n · part / parts⌋ mod n` (so `part ≥ parts` wraps around, as the
    /// cursor does) and walks on as in [`new`](Self::new), which is
    /// `starting_at(trace, start_ns, 0, 1)`. One replay is one trajectory: a
    /// rare late wake-up early in a young model's life costs far more than
    /// the same wake-up later, so replays from several starting points of
    /// the same trace tell a rule's typical effect from one trajectory's.
    ///
    /// `parts = 0` is read as `parts = 1` (every cursor at row 0).
    pub fn starting_at(trace: Trace, start_ns: u64, part: u64, parts: u64) -> Self {
        let trace = Rc::new(trace);
        let sim = SimPlatform::new(start_ns);
        let replayed = Rc::clone(&trace);
        let parts = u128::from(parts.max(1));
        let start = |n: usize| {
            let n = n as u128;
            // n ≤ usize::MAX and the remainder is below n.
            ((n * u128::from(part) / parts) % n.max(1)) as usize
        };
        let mut cursors: Vec<usize> = trace.groups.iter().map(|g| start(g.waits.len())).collect();
        let mut after_cursors: Vec<usize> = (0..trace.groups.len())
            .map(|k| start(trace.after_waits(k).len()))
            .collect();
        let after_first = trace.after_rows().iter().map(|a| a.after_ns / 2).min();
        let mut previous = 0u64;
        sim.set_wake_source(move |len| {
            let k = replayed.nearest_index(len);
            let after = replayed.after_waits(k);
            let follows_long = after_first.is_some_and(|a| previous >= a);
            previous = len;
            if follows_long && !after.is_empty() {
                let row = after[after_cursors[k]];
                after_cursors[k] = (after_cursors[k] + 1) % after.len();
                return row;
            }
            let waits = &replayed.groups[k].waits;
            let row = waits[cursors[k]];
            cursors[k] = (cursors[k] + 1) % waits.len();
            row
        });
        TracePlatform { trace, sim }
    }

    /// The trace being replayed.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The simulated thread CPU so far (ns): replayed OS waits' thread CPU
    /// plus spin and yield steps.
    pub fn thread_cpu_ns(&self) -> u64 {
        self.sim.thread_cpu()
    }
}

impl std::ops::Deref for TracePlatform {
    type Target = SimPlatform;
    fn deref(&self) -> &SimPlatform {
        &self.sim
    }
}

impl Platform for TracePlatform {
    fn now_ns(&self) -> u64 {
        self.sim.now_ns()
    }
    fn os_wait_until(&self, target_ns: u64) -> OsWake {
        self.sim.os_wait_until(target_ns)
    }
    fn relax(&self) {
        self.sim.relax();
    }
    fn yield_now(&self) {
        self.sim.yield_now();
    }
    fn thread_cpu_ns(&self) -> Option<u64> {
        self.sim.thread_cpu_ns()
    }
    fn try_begin_spin(&self) -> bool {
        self.sim.try_begin_spin()
    }
    fn end_spin(&self) {
        self.sim.end_spin();
    }
    fn prepare_thread(&self) {}
    fn ns_from_instant(&self, instant: Instant) -> u64 {
        self.sim.ns_from_instant(instant)
    }
    fn instant_from_ns(&self, ns: u64) -> Instant {
        self.sim.instant_from_ns(ns)
    }
}
