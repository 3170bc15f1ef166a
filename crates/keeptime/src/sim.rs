//! Simulated time for testing code that waits: a clock that moves only when
//! the algorithm waits or spins, OS waits that overshoot by scripted amounts,
//! and a record of every OS wait. Use it to test your own fixed-rate loops
//! without real time.
//!
//! ```
//! use keeptime::sim::SimPlatform;
//! use keeptime::{Mode, Sleeper};
//!
//! let sim = SimPlatform::new(1_000_000);          // the clock starts at 1 ms
//! sim.script_overshoots([4_000, 4_000]);          // the OS wakes 4 µs late
//! let mut s = Sleeper::builder().mode(Mode::Exact).build_with(sim.clone());
//! let woke = s.sleep_until_ns(1_100_000);          // sleep until 1.1 ms
//! assert!(woke >= 1_100_000);                      // never early
//! assert!(woke - 1_100_000 < 1_000);               // the spin finished it
//! assert_eq!(sim.waits().len(), 2);                // two OS waits, then a spin
//! ```

use crate::platform::Platform;
use crate::sys::OsWake;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// One OS wait the algorithm made on a [`SimPlatform`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimWait {
    /// When the wait was issued.
    pub issued_ns: u64,
    /// The absolute target it asked for.
    pub target_ns: u64,
    /// When it woke.
    pub woke_ns: u64,
    /// Whether it was reported as interrupted by a signal.
    pub interrupted: bool,
}

/// Where OS waits' overshoots come from once the script is exhausted: a
/// function of the wait's length returning (overshoot, thread CPU).
struct WakeSource(Box<dyn FnMut(u64) -> (u64, u64)>);

impl std::fmt::Debug for WakeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WakeSource(..)")
    }
}

#[derive(Debug)]
struct State {
    now: u64,
    overshoots: VecDeque<u64>,
    default_overshoot: u64,
    interrupts: VecDeque<u64>,
    spin_step: u64,
    yield_step: u64,
    spin_slots_free: bool,
    spinning: bool,
    cpus: usize,
    other_sleepers: usize,
    sleepers: usize,
    wait_cost: u64,
    thread_cpu: u64,
    source: Option<WakeSource>,
    waits: Vec<SimWait>,
    relaxes: u64,
    yields: u64,
    released_at: Option<(u64, u64)>,
    origin: Instant,
}

/// A simulated [`Platform`]. Cheap to clone; clones share one simulated world.
///
/// Time moves only through the platform: an OS wait to `t` wakes at
/// `max(now, t) + overshoot` (the next scripted overshoot, else the default),
/// a spin iteration advances the clock by the spin step (default 100 ns), a
/// yield by the yield step (default 1 µs). Reading the clock costs nothing.
#[derive(Clone, Debug)]
pub struct SimPlatform {
    state: Rc<RefCell<State>>,
}

impl SimPlatform {
    /// A simulated world whose clock reads `start_ns`.
    pub fn new(start_ns: u64) -> Self {
        SimPlatform {
            state: Rc::new(RefCell::new(State {
                now: start_ns,
                overshoots: VecDeque::new(),
                default_overshoot: 0,
                interrupts: VecDeque::new(),
                spin_step: 100,
                yield_step: 1_000,
                spin_slots_free: true,
                spinning: false,
                cpus: usize::MAX,
                other_sleepers: 0,
                sleepers: 0,
                wait_cost: 0,
                thread_cpu: 0,
                source: None,
                waits: Vec::new(),
                relaxes: 0,
                yields: 0,
                released_at: None,
                origin: Instant::now(),
            })),
        }
    }

    /// When the spin slot was last given back: the clock and the count of
    /// [`relax`](Platform::relax) steps at that moment (`None` before the
    /// first). A sleep's hand-off gives it back before its last steps.
    pub fn spin_slot_released_at(&self) -> Option<(u64, u64)> {
        self.state.borrow().released_at
    }

    /// The simulated clock.
    pub fn now(&self) -> u64 {
        self.state.borrow().now
    }

    /// Moves the clock forward by `ns` (the program "did work").
    pub fn advance(&self, ns: u64) {
        let mut s = self.state.borrow_mut();
        s.now = s.now.saturating_add(ns);
    }

    /// Sets the clock to `ns` if that is not in the past.
    pub fn advance_to(&self, ns: u64) {
        let mut s = self.state.borrow_mut();
        s.now = s.now.max(ns);
    }

    /// Queues overshoots for the next OS waits, in order.
    pub fn script_overshoots(&self, overshoots: impl IntoIterator<Item = u64>) {
        self.state.borrow_mut().overshoots.extend(overshoots);
    }

    /// The overshoot used once the script is exhausted (default 0).
    pub fn set_default_overshoot(&self, ns: u64) {
        self.state.borrow_mut().default_overshoot = ns;
    }

    /// Queues signal interruptions: the next OS waits return
    /// [`OsWake::Interrupted`] after the given number of nanoseconds (if that is
    /// before their target), in order.
    pub fn script_interrupts(&self, after_ns: impl IntoIterator<Item = u64>) {
        self.state.borrow_mut().interrupts.extend(after_ns);
    }

    /// Nanoseconds one spin iteration takes.
    pub fn set_spin_step(&self, ns: u64) {
        self.state.borrow_mut().spin_step = ns.max(1);
    }

    /// Nanoseconds one yield takes.
    pub fn set_yield_step(&self, ns: u64) {
        self.state.borrow_mut().yield_step = ns.max(1);
    }

    /// Thread CPU time each OS wait costs (default 0); spins cost their steps.
    pub fn set_wait_cost(&self, ns: u64) {
        self.state.borrow_mut().wait_cost = ns;
    }

    /// Replaces the default overshoot and the per-wait cost with `source`:
    /// called with the length of each OS wait (`target − now`, 0 for a past
    /// target) once the scripted overshoots are used up, it returns that
    /// wait's (overshoot, thread CPU). `trace::TracePlatform` (feature
    /// `trace`) replays a recorded trace this way.
    pub fn set_wake_source(&self, source: impl FnMut(u64) -> (u64, u64) + 'static) {
        self.state.borrow_mut().source = Some(WakeSource(Box::new(source)));
    }

    /// The simulated thread CPU clock: OS-wait costs plus spin and yield steps.
    pub fn thread_cpu(&self) -> u64 {
        self.state.borrow().thread_cpu
    }

    /// Whether a spin slot is available (`false` simulates all CPUs busy spinning).
    pub fn set_spin_slots_free(&self, free: bool) {
        self.state.borrow_mut().spin_slots_free = free;
    }

    /// CPUs the simulated process may use (default: no limit, never a crowd).
    pub fn set_cpus(&self, cpus: usize) {
        self.state.borrow_mut().cpus = cpus;
    }

    /// Sleepers of other threads that the simulation says are inside a sleep
    /// (default 0): with the sleepers of this world's own sleepers, the
    /// count [`Platform::enter_sleep`] reports.
    pub fn set_other_sleepers(&self, n: usize) {
        self.state.borrow_mut().other_sleepers = n;
    }

    /// Sleepers of this simulated world inside a sleep right now.
    pub fn sleepers(&self) -> usize {
        self.state.borrow().sleepers
    }

    /// Every OS wait so far.
    pub fn waits(&self) -> Vec<SimWait> {
        self.state.borrow().waits.clone()
    }

    /// Forgets the recorded OS waits.
    pub fn clear_waits(&self) {
        self.state.borrow_mut().waits.clear();
    }

    /// Spin iterations so far.
    pub fn relaxes(&self) -> u64 {
        self.state.borrow().relaxes
    }

    /// Yields so far.
    pub fn yields(&self) -> u64 {
        self.state.borrow().yields
    }

    /// Whether a spin slot is currently held.
    pub fn is_spinning(&self) -> bool {
        self.state.borrow().spinning
    }
}

impl Platform for SimPlatform {
    fn now_ns(&self) -> u64 {
        self.now()
    }

    fn os_wait_until(&self, target_ns: u64) -> OsWake {
        let mut s = self.state.borrow_mut();
        let issued = s.now;
        if let Some(after) = s.interrupts.pop_front() {
            let at = issued.saturating_add(after);
            if at < target_ns {
                s.now = at;
                s.waits.push(SimWait {
                    issued_ns: issued,
                    target_ns,
                    woke_ns: at,
                    interrupted: true,
                });
                return OsWake::Interrupted;
            }
        }
        let (overshoot, cost) = match s.overshoots.pop_front() {
            Some(o) => (o, s.wait_cost),
            None => match s.source.as_mut() {
                Some(src) => (src.0)(target_ns.saturating_sub(issued)),
                None => (s.default_overshoot, s.wait_cost),
            },
        };
        s.thread_cpu = s.thread_cpu.saturating_add(cost);
        let woke = issued.max(target_ns).saturating_add(overshoot);
        s.now = woke;
        s.waits.push(SimWait {
            issued_ns: issued,
            target_ns,
            woke_ns: woke,
            interrupted: false,
        });
        OsWake::Completed
    }

    fn relax(&self) {
        let mut s = self.state.borrow_mut();
        s.now = s.now.saturating_add(s.spin_step);
        s.thread_cpu = s.thread_cpu.saturating_add(s.spin_step);
        s.relaxes += 1;
    }

    fn yield_now(&self) {
        let mut s = self.state.borrow_mut();
        s.now = s.now.saturating_add(s.yield_step);
        s.thread_cpu = s.thread_cpu.saturating_add(s.yield_step);
        s.yields += 1;
    }

    fn thread_cpu_ns(&self) -> Option<u64> {
        Some(self.thread_cpu())
    }

    fn try_begin_spin(&self) -> bool {
        let mut s = self.state.borrow_mut();
        if s.spin_slots_free {
            s.spinning = true;
        }
        s.spin_slots_free
    }

    fn end_spin(&self) {
        let mut s = self.state.borrow_mut();
        s.spinning = false;
        s.released_at = Some((s.now, s.relaxes));
    }

    fn enter_sleep(&self) -> usize {
        let mut s = self.state.borrow_mut();
        s.sleepers += 1;
        s.sleepers.saturating_add(s.other_sleepers)
    }

    fn leave_sleep(&self) {
        let mut s = self.state.borrow_mut();
        s.sleepers = s.sleepers.saturating_sub(1);
    }

    fn cpus(&self) -> usize {
        self.state.borrow().cpus
    }

    fn prepare_thread(&self) {}

    fn ns_from_instant(&self, instant: Instant) -> u64 {
        let origin = self.state.borrow().origin;
        crate::platform::duration_ns(instant.saturating_duration_since(origin))
    }

    fn instant_from_ns(&self, ns: u64) -> Instant {
        let origin = self.state.borrow().origin;
        origin
            .checked_add(Duration::from_nanos(ns))
            .unwrap_or(origin)
    }
}
