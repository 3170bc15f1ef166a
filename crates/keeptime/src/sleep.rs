//! The waiting algorithm: an absolute OS wait until a learned margin before the
//! deadline, then a spin on the clock. Specified in `spec/sleep.md`.

use crate::estimate::{
    bucket_hi, bucket_lo, bucket_of, MarginEstimator, COST_SAMPLE_EVERY, DEFAULT_MARGIN_NS, PPM,
};
use crate::idle_hint::{IdleHint, IdleHintHolder, IdleHintStatus};
use crate::platform::{duration_ns, Platform, System};
use crate::sys::OsWake;
use std::fmt;
use std::time::{Duration, Instant};

/// OS waits shorter than this are not worth a system call; spin instead.
pub const MIN_OS_WAIT_NS: u64 = 5_000;
/// The lengths of the short second OS wait that a two-wait plan leaves after
/// its long first one ([`plan_exact`]).
pub const SPLITS_NS: [u64; 4] = [50_000, 100_000, 200_000, 400_000];
/// Every this many sleeps, the first plan of a sleep prefers a two-wait plan
/// whose short wait's bucket is not yet established (exploration), so short
/// buckets get the samples that let two-wait plans compete on their merit.
pub const EXPLORE_EVERY: u64 = 8;
/// The first this many sleeps of a sleeper all explore (when a two-wait plan
/// with a young short bucket meets the budget): a fresh sleeper learns its
/// short waits in a few hundred sleeps instead of a few thousand.
pub const EXPLORE_YOUNG_SLEEPS: u64 = 256;
/// An exploring plan is taken only when its expected CPU exceeds the
/// one-wait plan's (or the pure spin's) by at most `1 / EXPLORE_COST_DIV` of
/// the time left: exploring costs at most 6.25 % of a sleep in CPU, and a
/// short bucket whose cautious margin is huge is not explored.
pub const EXPLORE_COST_DIV: u64 = 16;
/// A spin that has run this long (or the sleeper's `min_spin`, if longer)
/// yields the CPU on further iterations while the deadline is far.
pub const SPIN_YIELD_AFTER_NS: u64 = 50_000;
/// Within this much of the deadline a spin only pauses, never yields: the
/// last stretch is polled at the clock's own speed.
pub const SPIN_NEAR_NS: u64 = 20_000;
/// While yielding in a long spin, the interrupt check runs this often.
pub const INTERRUPT_POLL_NS: u64 = 10_000_000;
/// In a crowd (more sleepers in a sleep than CPUs), the sleepers' spins may
/// take at most `1 / CROWD_SPIN_DIVISOR` of the CPUs' time, less their OS
/// waits' cost (`spec/sleep.md`, *Crowds*).
pub const CROWD_SPIN_DIVISOR: u64 = 2;
/// In a crowd, the spin-slot holder pauses only within this much of its
/// deadline and yields before it, like the sleepers without a slot: a
/// pausing spinner holds a CPU that other sleepers' wake-ups need.
pub const CROWD_PAUSE_NS: u64 = 5_000;
/// The last stretch of a spin-finished sleep runs in the outermost call, the
/// one that returns to the caller: within this much of the deadline the spin
/// *hands off* (`spec/sleep.md`, *Hand-off*). Every piece of bookkeeping
/// (stats, the spin slot, the crowd count, the thread's sleeper) is done
/// before it, so the loop's exit is the return, and what the return path
/// touches is touched a few µs before the deadline, not after it. At most
/// [`CROWD_PAUSE_NS`], so the hand-off never changes whether a step pauses
/// or yields.
pub const HANDOFF_NS: u64 = 5_000;

/// Where a sleep stands when it hands off to its outermost call: the last
/// clock reading, and the deadline still to spin to (`until <= now` when
/// nothing is left: the deadline passed, or the mode ends without a spin).
///
/// A language binding that must do something of its own between the
/// sleeper's work and the return (Python re-acquires its interpreter lock)
/// does it first and then calls [`finish`](Handoff::finish) last, so the
/// spin's exit is still the return (`spec/sleep.md`, *Hand-off*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handoff {
    /// The sleep's last clock reading (platform nanoseconds).
    pub now: u64,
    /// Where the last stretch ends: the deadline, or `<= now` when nothing
    /// is left to spin.
    pub until: u64,
}

impl Handoff {
    /// Nothing left to spin: the sleep ends at `now`.
    pub fn done(now: u64) -> Self {
        Handoff { now, until: now }
    }

    /// The final spin, in the caller's outermost frame: pauses until the
    /// clock reads `until` and returns that reading (the sleep's value).
    #[inline(always)]
    pub fn finish<P: Platform + ?Sized>(self, platform: &P) -> u64 {
        let mut now = self.now;
        while now < self.until {
            platform.relax();
            now = platform.now_ns();
        }
        now
    }
}

/// The share of sleeps a [`Sleeper`] in [`Mode::Exact`] lets end late because
/// the OS woke the thread after the deadline. keeptime picks, per sleep, the
/// plan with the least expected CPU whose predicted late share meets it.
///
/// Held in parts per million: shares must lie strictly between 0 and 1 and
/// be at least 10⁻⁶; anything else is an error, never clamped.
///
/// ```
/// use keeptime::TailTarget;
///
/// assert_eq!(TailTarget::default(), TailTarget::BALANCED);     // 1 %
/// let t = TailTarget::new(0.002)?;                             // 0.2 %
/// assert_eq!(t.ppm(), 2_000);
/// assert!(TailTarget::new(1.5).is_err());
/// assert!(TailTarget::new(5e-7).is_err()); // below the resolution: an error, not rounded
/// assert_eq!("strict".parse::<TailTarget>()?, TailTarget::STRICT);
/// # Ok::<(), keeptime::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TailTarget {
    ppm: u32,
}

impl TailTarget {
    /// 5 % of sleeps may end late: the cheapest preset.
    pub const RELAXED: TailTarget = TailTarget { ppm: 50_000 };
    /// 1 % of sleeps may end late (the default): a spin-level p99.
    pub const BALANCED: TailTarget = TailTarget { ppm: 10_000 };
    /// 0.1 % of sleeps may end late: a spin-level p99.9, at a higher CPU price.
    pub const STRICT: TailTarget = TailTarget { ppm: 1_000 };

    /// A target from a share in `(0, 1)`, e.g. `0.01` for 1 %. NaN, shares
    /// outside `(0, 1)` and shares below 10⁻⁶ (the resolution) are errors.
    pub fn new(share: f64) -> Result<Self, crate::Error> {
        let bad = || crate::Error::InvalidTailTarget(format!("{share}"));
        if !(1e-6..1.0).contains(&share) {
            return Err(bad());
        }
        let ppm = (share * 1e6).round();
        if !(1.0..=999_999.0).contains(&ppm) {
            return Err(bad());
        }
        Ok(TailTarget { ppm: ppm as u32 })
    }

    /// A target in parts per million (`1..=999_999`).
    pub fn from_ppm(ppm: u32) -> Result<Self, crate::Error> {
        if (1..=999_999).contains(&ppm) {
            Ok(TailTarget { ppm })
        } else {
            Err(crate::Error::InvalidTailTarget(format!("{ppm} ppm")))
        }
    }

    /// The share, e.g. `0.01`.
    pub fn share(self) -> f64 {
        f64::from(self.ppm) / 1e6
    }

    /// The share in parts per million.
    pub fn ppm(self) -> u32 {
        self.ppm
    }
}

impl Default for TailTarget {
    fn default() -> Self {
        TailTarget::BALANCED
    }
}

impl fmt::Display for TailTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} %", f64::from(self.ppm) / 1e4)
    }
}

impl std::str::FromStr for TailTarget {
    type Err = crate::Error;
    /// `relaxed`, `balanced`, `strict`, a share (`0.01`) or a percentage (`1%`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        match t.to_ascii_lowercase().as_str() {
            "relaxed" => return Ok(TailTarget::RELAXED),
            "balanced" | "default" => return Ok(TailTarget::BALANCED),
            "strict" => return Ok(TailTarget::STRICT),
            _ => {}
        }
        let bad = || crate::Error::InvalidTailTarget(s.to_owned());
        let share = match t.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
            None => t.parse::<f64>().map_err(|_| bad())?,
        };
        TailTarget::new(share).map_err(|_| bad())
    }
}

/// What a [`Sleeper`] has spent so far: see [`Sleeper::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SleeperStats {
    /// Sleeps that had to wait (deadline not yet passed when called).
    pub sleeps: u64,
    /// Sleeps that ended after their deadline because an OS wait woke the
    /// thread late (a spin-finished sleep is never counted here).
    pub late: u64,
    /// OS waits issued (a wait resumed after a signal counts once).
    pub os_waits: u64,
    /// Time spent spinning, in nanoseconds.
    pub spin_ns: u64,
    /// Estimated thread CPU: the learned cost of each OS wait plus the spin.
    pub cpu_estimate_ns: u64,
    /// Sleeps whose OS waits ended at a margin learned from fewer samples
    /// than the tail target needs (`(n + 1) · target < 1`,
    /// `spec/sleep.md`, *Unproven sleeps*): for these the sleeper cannot
    /// promise the target, only its most cautious margin (the latest wake-up
    /// it has seen of that length or longer). A young sleeper at a strict
    /// target has many; the late share of the other sleeps is what the
    /// target governs.
    pub unproven_sleeps: u64,
}

impl SleeperStats {
    /// `late / sleeps` (0 before the first sleep).
    pub fn late_share(&self) -> f64 {
        if self.sleeps == 0 {
            0.0
        } else {
            self.late as f64 / self.sleeps as f64
        }
    }
}

/// Where in a sleep [`plan_exact`] is asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanStep {
    /// The first plan of a sleep (no OS wait taken yet): only then may a
    /// wait cut short to its bucket's longest (a *chunk*) be taken.
    pub first: bool,
    /// The first plan of a sleep that [`explores`]: each of a sleeper's
    /// first [`EXPLORE_YOUNG_SLEEPS`], then every [`EXPLORE_EVERY`]-th.
    pub explore: bool,
    /// A two-wait plan's first wait has been taken: only its short wait (one
    /// OS wait, then a spin) or a spin may follow, no further split or chunk.
    pub after_split: bool,
}

/// The next OS wait [`plan_exact`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OsWaitPlan {
    /// Length of the OS wait, from now.
    pub wait_ns: u64,
    /// Whether it is the long first wait of a two-wait plan.
    pub split: bool,
    /// The late-share budget (ppm) the rest of the sleep plans with: half
    /// the budget (the short wait's share) for a two-wait plan, else the
    /// budget unchanged.
    pub rest_budget_ppm: u64,
    /// Whether every margin the plan rests on is established at the share
    /// it is planned at ([`MarginEstimator::established`]); an unproven
    /// plan counts the sleep in [`SleeperStats::unproven_sleeps`].
    pub proven: bool,
}

/// Whether the first plan of the sleep numbered `seq` (counted after its
/// `begin_sleep`) explores: each of the first [`EXPLORE_YOUNG_SLEEPS`], then
/// every [`EXPLORE_EVERY`]-th.
pub fn explores(seq: u64) -> bool {
    seq <= EXPLORE_YOUNG_SLEEPS || seq % EXPLORE_EVERY == 0
}

/// How a [`Sleeper`] finishes a wait: the trade between accuracy and CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Mode {
    /// Spin-finished (the default): OS waits end a learned margin before the
    /// deadline, a spin on the clock finishes the sleep. Never returns early;
    /// typically within a fraction of a microsecond after the deadline, at a
    /// CPU cost of the margin (a few µs) per sleep.
    #[default]
    Exact,
    /// OS-only, compensated: one OS wait that ends the
    /// learned *median* overshoot before the deadline, no spin. Uses almost no
    /// CPU, but **may return before the deadline** (about half of the time by
    /// a few µs) and cannot wait less than the OS's minimum wake-up latency.
    /// The one documented exception to "never early".
    Efficient,
    /// Pure spin on the clock with the CPU's pause hint: the most accurate and
    /// a whole core for the whole wait (yielding after 50 µs, so a crowd of
    /// spinners does not starve other threads). Never returns early.
    Spin,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Exact => "exact",
            Mode::Efficient => "efficient",
            Mode::Spin => "spin",
        })
    }
}

impl std::str::FromStr for Mode {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "exact" => Ok(Mode::Exact),
            "efficient" => Ok(Mode::Efficient),
            "spin" => Ok(Mode::Spin),
            _ => Err(crate::Error::UnknownMode(s.to_owned())),
        }
    }
}

/// A sleep ended early because the interrupt check asked it to (see
/// [`Sleeper::sleep_until_ns_interruptible`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted {
    /// Clock reading when the sleep gave up.
    pub at_ns: u64,
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sleep interrupted at {} ns", self.at_ns)
    }
}

impl std::error::Error for Interrupted {}

/// A precise sleeper with its own learned margins.
///
/// Every wait goes: OS waits with an **absolute** deadline (`clock_nanosleep`
/// `TIMER_ABSTIME` on Linux), each ending a learned margin before the deadline
/// (a long wait also leaves 200 µs for a short one), then a spin on the clock
/// with the CPU's pause hint. The margins come from the overshoots this
/// sleeper has observed ([`MarginEstimator`]), so they follow the machine's
/// load. On Linux the waiting thread's timer slack is set to 1 ns on first use
/// (opt out with [`SleeperBuilder::timer_slack`]).
///
/// Guarantees (in [`Mode::Exact`] and [`Mode::Spin`]): never returns before
/// the deadline on the monotonic clock; a signal (EINTR) resumes toward the
/// same deadline; a deadline in the past returns at once.
///
/// Cost: one clock read for a past deadline; otherwise one or two OS waits
/// plus a spin of the learned margin (typically a few µs) per sleep.
///
/// Use one `Sleeper` per thread (it is `Send` but not `Sync`); the free
/// functions [`sleep`](crate::sleep) and [`sleep_until`](crate::sleep_until)
/// keep one per thread for you.
///
/// ```
/// use keeptime::{Mode, Sleeper};
/// use std::time::{Duration, Instant};
///
/// let mut s = Sleeper::builder().mode(Mode::Exact).build();
/// let deadline = Instant::now() + Duration::from_micros(250);
/// s.sleep_until(deadline);
/// assert!(Instant::now() >= deadline);
/// ```
#[derive(Clone, Debug)]
pub struct Sleeper<P: Platform = System> {
    platform: P,
    mode: Mode,
    min_spin_ns: u64,
    /// How far before the deadline the spin hands off: [`HANDOFF_NS`], or a
    /// binding's longer lead during one sleep.
    handoff_ns: u64,
    target: TailTarget,
    estimator: MarginEstimator,
    waits_planned: u64,
    stats: SleeperStats,
    /// The idle-latency request, shared by clones ([`SleeperBuilder::idle_hint`]).
    idle_hint: IdleHintHolder,
    warn_refused_hint: bool,
}

/// Configures a [`Sleeper`]: mode and knobs.
#[derive(Clone, Copy, Debug)]
#[must_use = "call .build() to get a Sleeper"]
pub struct SleeperBuilder {
    mode: Mode,
    timer_slack: bool,
    min_spin_ns: u64,
    target: TailTarget,
    idle_hint: Option<IdleHint>,
    warn_refused_hint: bool,
}

impl Default for SleeperBuilder {
    fn default() -> Self {
        SleeperBuilder {
            mode: Mode::Exact,
            timer_slack: true,
            min_spin_ns: 0,
            target: TailTarget::BALANCED,
            idle_hint: None,
            warn_refused_hint: true,
        }
    }
}

impl SleeperBuilder {
    /// Accuracy/CPU preset (default [`Mode::Exact`]).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether to set the waiting thread's Linux timer slack to 1 ns
    /// (default `true`). Timer slack is per thread: once any keeptime sleep
    /// with this on has run on a thread, the thread keeps the 1 ns slack.
    /// keeptime sets it once per thread (a `prctl` per sleep would cost more
    /// than the clock reads); if other code on that thread resets the slack
    /// later, keeptime does not notice, and its margins learn the larger
    /// overshoot instead.
    /// Turning it off leaves the kernel's default (50 µs) in place; the
    /// estimator then learns the larger overshoot and spins for it.
    pub fn timer_slack(mut self, set_1ns: bool) -> Self {
        self.timer_slack = set_1ns;
        self
    }

    /// The shortest spin that finishes an [`Mode::Exact`] sleep (default 0:
    /// only the learned margin). The last OS wait then ends at least this
    /// long before the deadline.
    ///
    /// The learned margin covers roughly the 97th percentile of the OS's
    /// wake-up overshoot, for a spin of a few µs. On virtual machines the
    /// rarest wake-ups come tens of µs late (the host schedules the halted
    /// vCPU); a spin that covers them gives spin-level p99 accuracy at a
    /// fixed CPU price: `min_spin` ÷ the sleep's length. `keeptime bench`
    /// shows this machine's tail (the p99 of `clock-nanosleep-abs`).
    /// Durations past `u64::MAX` ns saturate, so a huge value is a pure spin.
    ///
    /// ```
    /// use keeptime::Sleeper;
    /// use std::time::Duration;
    ///
    /// // A 1 kHz control loop on a VM: spin the last 60 µs of every period (~6 % CPU).
    /// let mut s = Sleeper::builder().min_spin(Duration::from_micros(60)).build();
    /// s.sleep(Duration::from_micros(200));
    /// ```
    pub fn min_spin(mut self, min_spin: Duration) -> Self {
        self.min_spin_ns = duration_ns(min_spin);
        self
    }

    /// The share of [`Mode::Exact`] sleeps allowed to end late because the OS
    /// woke the thread after the deadline (default [`TailTarget::BALANCED`],
    /// 1 %). A stricter target spins longer, on the machine's learned tail.
    ///
    /// ```
    /// use keeptime::{Sleeper, TailTarget};
    ///
    /// let mut s = Sleeper::builder().tail_target(TailTarget::new(0.001)?).build();
    /// s.sleep(std::time::Duration::from_micros(300));
    /// # Ok::<(), keeptime::Error>(())
    /// ```
    pub fn tail_target(mut self, target: TailTarget) -> Self {
        self.target = target;
        self
    }

    /// Asks the kernel to keep CPU wake-up latency at most `hint` while the
    /// sleeper lives (default: not asked): a PM QoS CPU latency request on
    /// `/dev/cpu_dma_latency`, the one cyclictest holds at 0
    /// (`spec/idle-hint.md`).
    ///
    /// With a cpuidle driver that has deep or polling idle states
    /// (`haltpoll`, `intel_idle`, `acpi_idle`) OS waits then wake sooner and
    /// tighter, so the learned margins shrink and exact sleeps cost less CPU.
    /// On an AMD EPYC KVM guest with `haltpoll`, holding it at 0 brought the
    /// wake-ups from 26 µs to 15 µs late at p50, and the least CPU for 1 %
    /// late 1 ms sleeps from 6.6 % to 2.15 % (two recorded traces and
    /// `keeptime trace --oracle`). With no cpuidle driver (`none`) it changes
    /// little.
    ///
    /// **Price.** Idle CPUs poll instead of sleeping: more power, and on a
    /// virtual machine the host sees the vCPU as busy.
    ///
    /// The request is per process and reference-counted: every sleeper (and
    /// ticker) built with a hint holds a share until it, and every clone of
    /// it, is dropped; the strictest live value is in force; the last one to
    /// go closes the device, which ends the request. [`build_with`](Self::build_with)
    /// requests it too, on a simulated platform as well: it is a resource of
    /// the process, not of the clock.
    ///
    /// If the device cannot be opened or written (not root, no such
    /// device), the hint is *refused*: building never fails, the sleeper
    /// works exactly as without it, and the process warns once on stderr
    /// (see [`warn_refused_hint`](Self::warn_refused_hint)).
    /// [`Sleeper::idle_hint_status`] says which.
    ///
    /// ```
    /// use keeptime::{IdleHint, IdleHintStatus, Sleeper};
    ///
    /// let mut s = Sleeper::builder().idle_hint(IdleHint::ZERO).build();
    /// match s.idle_hint_status() {
    ///     IdleHintStatus::Held { in_force_us, .. } => assert_eq!(in_force_us, 0),
    ///     IdleHintStatus::Refused { error, .. } => println!("without the hint: {error}"),
    ///     IdleHintStatus::NotAsked => unreachable!("asked for above"),
    /// }
    /// s.sleep(std::time::Duration::from_micros(200)); // the same either way
    /// ```
    pub fn idle_hint(mut self, hint: IdleHint) -> Self {
        self.idle_hint = Some(hint);
        self
    }

    /// Whether a refused idle-latency hint prints the process's one warning
    /// on stderr (default `true`): one line,
    /// `keeptime: warning: <reason>; sleeping without the idle-latency hint`,
    /// for the first refusal in the process only
    /// ([`pmqos::claim_refusal_warning`](crate::pmqos::claim_refusal_warning)).
    /// Runtimes with a warning idiom of their own turn it off and warn in
    /// theirs after claiming the same once-per-process right.
    pub fn warn_refused_hint(mut self, warn: bool) -> Self {
        self.warn_refused_hint = warn;
        self
    }

    /// A sleeper on the real clock.
    pub fn build(self) -> Sleeper {
        self.build_with(System::new(self.timer_slack))
    }

    /// A sleeper on another [`Platform`], e.g. a
    /// [`SimPlatform`](crate::sim::SimPlatform) in tests. An
    /// [`idle_hint`](Self::idle_hint) is requested here as in [`build`](Self::build).
    pub fn build_with<P: Platform>(self, platform: P) -> Sleeper<P> {
        Sleeper {
            platform,
            mode: self.mode,
            min_spin_ns: self.min_spin_ns,
            handoff_ns: HANDOFF_NS,
            target: self.target,
            estimator: MarginEstimator::new(),
            waits_planned: 0,
            stats: SleeperStats::default(),
            idle_hint: IdleHintHolder::request_warning(self.idle_hint, self.warn_refused_hint),
            warn_refused_hint: self.warn_refused_hint,
        }
    }
}

impl Default for Sleeper {
    fn default() -> Self {
        Self::new()
    }
}

impl Sleeper {
    /// A sleeper in [`Mode::Exact`] on the real clock, timer slack 1 ns.
    pub fn new() -> Self {
        SleeperBuilder::default().build()
    }
}

impl Sleeper<System> {
    /// Starts configuring a sleeper.
    pub fn builder() -> SleeperBuilder {
        SleeperBuilder::default()
    }
}

impl<P: Platform> Sleeper<P> {
    /// This sleeper's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches the mode; the learned margins are kept.
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// The shortest spin that finishes an exact sleep ([`SleeperBuilder::min_spin`]).
    pub fn min_spin(&self) -> Duration {
        Duration::from_nanos(self.min_spin_ns)
    }

    /// Changes the shortest spin; see [`SleeperBuilder::min_spin`].
    pub fn set_min_spin(&mut self, min_spin: Duration) {
        self.min_spin_ns = duration_ns(min_spin);
    }

    /// The share of sleeps allowed to end late ([`SleeperBuilder::tail_target`]).
    pub fn tail_target(&self) -> TailTarget {
        self.target
    }

    /// Changes the tail target; what was learned is kept.
    pub fn set_tail_target(&mut self, target: TailTarget) {
        self.target = target;
    }

    /// What this sleeper has spent so far: sleeps, late sleeps, OS waits,
    /// spin time and the estimated thread CPU.
    ///
    /// ```
    /// let mut s = keeptime::Sleeper::new();
    /// s.sleep(std::time::Duration::from_micros(200));
    /// let st = s.stats();
    /// assert_eq!(st.sleeps, 1);
    /// assert!(st.late <= st.sleeps);
    /// ```
    pub fn stats(&self) -> SleeperStats {
        self.stats
    }

    /// Starts the stats afresh (what was learned is kept).
    pub fn reset_stats(&mut self) {
        self.stats = SleeperStats::default();
    }

    /// Whether this sleeper's idle-latency hint is held (and the value in
    /// force for the process), was refused (and why), or was not asked for
    /// ([`SleeperBuilder::idle_hint`]).
    pub fn idle_hint_status(&self) -> IdleHintStatus {
        self.idle_hint.status()
    }

    /// Asks for another idle-latency hint (`None`: gives this sleeper's up).
    /// The new request is made before the old one is released, so the
    /// device is not closed in between. Clones made earlier keep the old
    /// request. A refusal warns as [`SleeperBuilder::warn_refused_hint`] says.
    pub fn set_idle_hint(&mut self, hint: Option<IdleHint>) {
        self.idle_hint = IdleHintHolder::request_warning(hint, self.warn_refused_hint);
    }

    /// The learned wake-up model.
    pub fn estimator(&self) -> &MarginEstimator {
        &self.estimator
    }

    /// The platform this sleeper waits on.
    pub fn platform(&self) -> &P {
        &self.platform
    }

    /// Sleeps until `deadline`; never returns before it (except
    /// [`Mode::Efficient`]). A past deadline returns at once.
    #[inline]
    pub fn sleep_until(&mut self, deadline: Instant) {
        let ns = self.platform.ns_from_instant(deadline);
        self.sleep_until_ns(ns);
    }

    /// Sleeps for `duration` from now. `Duration::MAX` and other durations
    /// past the clock's range saturate to an effectively unbounded wait
    /// (until `u64::MAX` ns, 584 years after boot); they never panic.
    #[inline]
    pub fn sleep(&mut self, duration: Duration) {
        let deadline = self.platform.now_ns().saturating_add(duration_ns(duration));
        self.sleep_until_ns(deadline);
    }

    /// Sleeps until `deadline_ns` on the platform's monotonic clock
    /// (`CLOCK_MONOTONIC` nanoseconds on Linux, see
    /// [`os::monotonic_ns`](crate::os::monotonic_ns)) and returns the first clock
    /// reading taken after the wait: `>= deadline_ns` except in
    /// [`Mode::Efficient`].
    #[inline]
    pub fn sleep_until_ns(&mut self, deadline_ns: u64) -> u64 {
        self.sleep_to_handoff(deadline_ns).finish(&self.platform)
    }

    /// Everything of a sleep but its last [`HANDOFF_NS`]: the caller spins
    /// the rest with [`Handoff::finish`], outside any borrow of the sleeper.
    pub fn sleep_to_handoff(&mut self, deadline_ns: u64) -> Handoff {
        match self.run(deadline_ns, &mut || true) {
            Ok(handoff) => handoff,
            Err(Interrupted { at_ns }) => Handoff::done(at_ns), // unreachable: the check never stops
        }
    }

    /// Like [`sleep_until_ns`](Self::sleep_until_ns), but calls `keep_going`
    /// whenever a signal interrupts the OS wait (EINTR), and every 10 ms of a
    /// long spin; when it returns `false` the sleep ends with
    /// [`Interrupted`]. This is how a language runtime lets a signal handler
    /// run during a long wait (Python's Ctrl-C).
    #[inline]
    pub fn sleep_until_ns_interruptible(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        Ok(self.run(deadline_ns, keep_going)?.finish(&self.platform))
    }

    /// An interruptible sleep up to its hand-off (the ticker's wait records
    /// the tick before the final spin; a binding re-acquires its runtime
    /// before it). The caller spins the rest with [`Handoff::finish`].
    pub fn sleep_until_ns_to_handoff(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        self.run(deadline_ns, keep_going)
    }

    /// [`sleep_until_ns_to_handoff`](Self::sleep_until_ns_to_handoff) with a
    /// last stretch of at least `lead_ns` for a binding that has work of its
    /// own to do before the return (Python re-attaches to its interpreter and
    /// warms its way back): the sleep plans as if [`min_spin`] were at least
    /// `lead_ns`, and hands off `max(lead_ns, HANDOFF_NS)` before the
    /// deadline (`spec/sleep.md`, *Hand-off*). Stats, the late count and the
    /// spin are the sleep's own, against the real deadline.
    ///
    /// [`min_spin`]: SleeperBuilder::min_spin
    pub fn sleep_until_ns_to_handoff_with_lead(
        &mut self,
        deadline_ns: u64,
        lead_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let (min_spin, handoff) = (self.min_spin_ns, self.handoff_ns);
        self.min_spin_ns = min_spin.max(lead_ns);
        self.handoff_ns = HANDOFF_NS.max(lead_ns);
        let result = self.run(deadline_ns, keep_going);
        self.min_spin_ns = min_spin;
        self.handoff_ns = handoff;
        result
    }

    fn run(
        &mut self,
        deadline: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let mut now = self.platform.now_ns();
        if now >= deadline {
            return Ok(Handoff::done(now));
        }
        self.platform.prepare_thread();
        self.estimator.begin_sleep();
        self.stats.sleeps += 1;
        match self.mode {
            Mode::Spin => self.spin(deadline, now, SPIN_YIELD_AFTER_NS, SPIN_NEAR_NS, keep_going),
            Mode::Efficient => {
                if let Some(wait) = plan_efficient(&self.estimator, deadline - now) {
                    now = self.os_wait(now, wait, keep_going)?;
                }
                Ok(Handoff::done(now))
            }
            Mode::Exact => {
                let n = self.platform.enter_sleep();
                let result = if n > self.platform.cpus() {
                    self.crowd_sleep(deadline, now, n, keep_going)
                } else {
                    self.planned_sleep(deadline, now, keep_going)
                };
                self.platform.leave_sleep();
                result
            }
        }
    }

    /// An exact sleep with a CPU to itself: the cheapest plan that meets the
    /// tail target (`spec/sleep.md`, *planned_sleep*).
    fn planned_sleep(
        &mut self,
        deadline: u64,
        mut now: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let mut budget = u64::from(self.target.ppm());
        let mut unproven = false;
        let mut step = PlanStep {
            first: true,
            explore: explores(self.estimator.sleeps()),
            after_split: false,
        };
        loop {
            let plan = plan_exact(
                &self.estimator,
                deadline - now,
                budget,
                self.min_spin_ns,
                step,
            );
            step.first = false;
            step.explore = false;
            match plan {
                Some(plan) => {
                    if !plan.proven && !unproven {
                        unproven = true;
                        self.stats.unproven_sleeps += 1;
                    }
                    now = self.os_wait(now, plan.wait_ns, keep_going)?;
                    if now >= deadline {
                        if now > deadline {
                            self.stats.late += 1;
                        }
                        return Ok(Handoff::done(now));
                    }
                    budget = plan.rest_budget_ppm;
                    if plan.split {
                        step.after_split = true;
                    }
                }
                None => {
                    let pause_for = SPIN_YIELD_AFTER_NS.max(self.min_spin_ns);
                    return self.finish(deadline, now, pause_for, SPIN_NEAR_NS, keep_going);
                }
            }
        }
    }

    /// An exact sleep in a crowd of `n` sleepers: one OS wait ending the
    /// learned margin before the deadline, the margin capped by
    /// [`crowd_spin_cap`], then a spin (`spec/sleep.md`, *Crowds*).
    fn crowd_sleep(
        &mut self,
        deadline: u64,
        mut now: u64,
        n: usize,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let length = deadline - now;
        let cap = crowd_spin_cap(
            self.platform.cpus(),
            n,
            length,
            self.estimator.cost(bucket_of(length)),
        );
        let budget = u64::from(self.target.ppm());
        loop {
            let rest = deadline - now;
            let g = self
                .estimator
                .margin(bucket_of(rest), budget)
                .min(cap)
                .max(self.min_spin_ns);
            if rest > g && rest - g >= MIN_OS_WAIT_NS {
                now = self.os_wait(now, rest - g, keep_going)?;
                if now >= deadline {
                    if now > deadline {
                        self.stats.late += 1;
                    }
                    return Ok(Handoff::done(now));
                }
            } else {
                return self.finish(deadline, now, self.min_spin_ns, CROWD_PAUSE_NS, keep_going);
            }
        }
    }

    /// Only the last phase of an exact sleep, planned by the caller: spin from
    /// now until `deadline_ns` if a process-wide spin slot is free (the whole
    /// spin counts as planned, so it does not yield), else an OS wait straight
    /// to the deadline. No OS wait is planned and nothing is learned.
    ///
    /// For runtimes that end a wait in steps of their own: Python's binding
    /// stops the sleep a few µs early to warm the interpreter, then finishes
    /// with this, keeping the spin-slot guarantee. `keep_going` runs as in
    /// [`sleep_until_ns_interruptible`](Self::sleep_until_ns_interruptible).
    /// Never returns before the deadline unless `keep_going` stops it.
    pub fn finish_until_ns_interruptible(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let now = self.platform.now_ns();
        if now >= deadline_ns {
            return Ok(now);
        }
        let pause_for = SPIN_YIELD_AFTER_NS.max(deadline_ns - now);
        Ok(self
            .finish(deadline_ns, now, pause_for, SPIN_NEAR_NS, keep_going)?
            .finish(&self.platform))
    }

    /// One planned OS wait of `wait_ns` from `now`, resumed toward the same
    /// absolute target after signals; records its overshoot, and its thread
    /// CPU on every [`COST_SAMPLE_EVERY`](crate::estimate::COST_SAMPLE_EVERY)-th wait.
    fn os_wait(
        &mut self,
        now: u64,
        wait_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let target = now.saturating_add(wait_ns);
        let sample = self.waits_planned % COST_SAMPLE_EVERY == 0;
        self.waits_planned = self.waits_planned.wrapping_add(1);
        let cpu_before = if sample {
            self.platform.thread_cpu_ns()
        } else {
            None
        };
        self.wait_through_signals(target, keep_going)?;
        let woke = self.platform.now_ns();
        if let Some(before) = cpu_before {
            if let Some(after) = self.platform.thread_cpu_ns() {
                self.estimator
                    .observe_cost(wait_ns, after.saturating_sub(before));
            }
        }
        self.count_os_wait(bucket_of(wait_ns));
        self.estimator.observe(wait_ns, woke.saturating_sub(target));
        Ok(woke)
    }

    fn count_os_wait(&mut self, bucket: usize) {
        self.stats.os_waits += 1;
        self.stats.cpu_estimate_ns = self
            .stats
            .cpu_estimate_ns
            .saturating_add(self.estimator.cost(bucket));
    }

    fn wait_through_signals(
        &self,
        target: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<(), Interrupted> {
        while self.platform.os_wait_until(target) == OsWake::Interrupted {
            if !keep_going() {
                return Err(Interrupted {
                    at_ns: self.platform.now_ns(),
                });
            }
        }
        Ok(())
    }

    /// The last phase of an exact sleep: a spin. With a process-wide spin slot
    /// it pauses ([`spin`](Self::spin)); without one it *follows*: a yield on
    /// every iteration, never late by an OS wake-up and never holding a CPU
    /// that a woken thread needs.
    fn finish(
        &mut self,
        deadline: u64,
        now: u64,
        pause_for: u64,
        near: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        if self.platform.try_begin_spin() {
            let result = self.spin(deadline, now, pause_for, near, keep_going);
            self.platform.end_spin();
            return result;
        }
        self.follow(deadline, now, keep_going)
    }

    /// A spin without a spin slot: yields on every iteration until `deadline`.
    fn follow(
        &mut self,
        deadline: u64,
        start: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        // No pause at all (`pause_for` and `near` 0): a yield per iteration.
        self.spin(deadline, start, 0, 0, keep_going)
    }

    /// Spins until `deadline`: the pause hint for `pause_for` (the planned
    /// length of the spin) and always within `near` of the deadline
    /// ([`SPIN_NEAR_NS`]; [`CROWD_PAUSE_NS`] in a crowd); a yield per
    /// iteration in between. A spin that pauses near the deadline (`near >=`
    /// [`HANDOFF_NS`]) hands off its last [`HANDOFF_NS`] to the outermost
    /// call, counted as spin time to the deadline; one that yields to the
    /// end (a follower) spins to the deadline here.
    fn spin(
        &mut self,
        deadline: u64,
        start: u64,
        pause_for: u64,
        near: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let mut now = start;
        let mut next_poll = start
            .saturating_add(pause_for)
            .saturating_add(INTERRUPT_POLL_NS);
        let handoff_at = if near >= HANDOFF_NS {
            deadline.saturating_sub(self.handoff_ns)
        } else {
            deadline
        };
        while now < handoff_at {
            if now - start < pause_for || deadline - now <= near {
                self.platform.relax();
            } else {
                self.platform.yield_now();
                if now >= next_poll {
                    if !keep_going() {
                        self.add_spin(now - start);
                        return Err(Interrupted { at_ns: now });
                    }
                    next_poll = now.saturating_add(INTERRUPT_POLL_NS);
                }
            }
            now = self.platform.now_ns();
        }
        if now < deadline {
            self.add_spin(deadline - start);
            return Ok(Handoff {
                now,
                until: deadline,
            });
        }
        self.add_spin(now - start);
        Ok(Handoff::done(now))
    }

    fn add_spin(&mut self, ns: u64) {
        self.stats.spin_ns = self.stats.spin_ns.saturating_add(ns);
        self.stats.cpu_estimate_ns = self.stats.cpu_estimate_ns.saturating_add(ns);
    }
}

/// The longest spin a sleeper in a crowd of `sleepers` (more than `cpus`)
/// may plan for a sleep of `length_ns`: its share of `1 /`
/// [`CROWD_SPIN_DIVISOR`] of the CPUs' time, less `wait_cost_ns` (the
/// learned cost of its OS wait). Exact, saturating at 0 and at `u64::MAX`.
///
/// ```
/// // 64 threads sleeping 1 ms on 2 CPUs, OS waits costing 5 µs: 10.6 µs of spin each.
/// assert_eq!(keeptime::crowd_spin_cap(2, 64, 1_000_000, 5_000), 10_625);
/// ```
pub fn crowd_spin_cap(cpus: usize, sleepers: usize, length_ns: u64, wait_cost_ns: u64) -> u64 {
    let share = u128::from(length_ns) * cpus as u128
        / (u128::from(CROWD_SPIN_DIVISOR) * (sleepers.max(1) as u128));
    u64::try_from(share)
        .unwrap_or(u64::MAX)
        .saturating_sub(wait_cost_ns)
}

/// The next OS wait of a spin-finished sleep with `remaining_ns` to go, or
/// `None` to spin the rest: the plan with the least expected thread CPU whose
/// predicted share of late sleeps is at most `budget_ppm` parts per million
/// (`spec/sleep.md`, *Planning*). Candidates:
///
/// * **one OS wait** ending the bucket's margin at `budget_ppm` (at least
///   `min_spin_ns`) before the deadline, then a spin: its learned cost plus
///   the expected spin;
/// * **two OS waits** for each split `S` of [`SPLITS_NS`]: a long wait ending
///   `S` plus the short wait's margin (at half the budget) before the
///   deadline, then a short wait of about `S`, then a spin; taken only if the
///   long wait's own late share plus the short one's fit the budget;
/// * **a pure spin** of `remaining_ns`.
///
/// After a two-wait plan's first wait (`step.after_split`) only the one-wait
/// candidate or a spin is considered; a chunk only as a sleep's first plan. With `step.explore` (the first plan of
/// every [`EXPLORE_EVERY`]-th sleep), a
/// two-wait plan that meets the budget and whose short wait's bucket is not
/// yet established at half the budget is taken even if it costs more: the one
/// whose short bucket has the most samples (finishing one bucket at a time).
///
/// Before anything is learned: one OS wait ending
/// [`DEFAULT_MARGIN_NS`](crate::estimate::DEFAULT_MARGIN_NS) (or `min_spin_ns`)
/// before the deadline.
pub fn plan_exact(
    est: &MarginEstimator,
    remaining_ns: u64,
    budget_ppm: u64,
    min_spin_ns: u64,
    step: PlanStep,
) -> Option<OsWaitPlan> {
    let PlanStep {
        first,
        explore,
        after_split,
    } = step;
    let r = remaining_ns;
    if r < MIN_OS_WAIT_NS {
        return None;
    }
    let one = |wait_ns, proven| OsWaitPlan {
        wait_ns,
        split: false,
        rest_budget_ppm: budget_ppm,
        proven,
    };
    if est.is_empty() {
        let wait = r.checked_sub(DEFAULT_MARGIN_NS.max(min_spin_ns))?;
        return (wait >= MIN_OS_WAIT_NS).then(|| one(wait, false));
    }
    let mut best = None;
    let mut best_cost = r; // a pure spin
                           // A wait cut to its bucket's longest (its own margin would allow a longer
                           // one, the longer bucket's does not) is not the last OS wait: its cost is
                           // not known here, so it is only a fallback when no complete plan fits.
    let mut chunk = None;
    for b in (0..=bucket_of(r)).rev() {
        let g = est.margin(b, budget_ppm).max(min_spin_ns);
        let Some(wait) = r.checked_sub(g) else {
            continue;
        };
        if wait > bucket_hi(b) {
            if bucket_hi(b) >= MIN_OS_WAIT_NS && first {
                chunk = Some((
                    one(bucket_hi(b), est.established(b, budget_ppm)),
                    est.cost(b),
                ));
            }
            break;
        }
        if wait >= bucket_lo(b) && wait >= MIN_OS_WAIT_NS {
            let t = est.tail(b, budget_ppm, g);
            let cost = est.cost(b).saturating_add(t.spin_sum_ns / t.samples);
            if cost < best_cost {
                best = Some(one(wait, est.established(b, budget_ppm)));
                best_cost = cost;
            }
            break;
        }
    }
    let one_cost = best_cost; // the cheapest one-wait plan's, or a pure spin's
    let mut explored: Option<(OsWaitPlan, u64)> = None;
    let q = budget_ppm / 2;
    for s in SPLITS_NS.into_iter().filter(|_| q > 0 && !after_split) {
        let bs = bucket_of(s);
        let gs = est.margin(bs, q).max(min_spin_ns);
        let g = s.saturating_add(gs);
        let Some(wait) = r.checked_sub(g) else {
            continue;
        };
        if wait < MIN_OS_WAIT_NS {
            continue;
        }
        let b1 = bucket_of(wait);
        let t1 = est.tail(b1, budget_ppm, g);
        let (room, rest_spin) = est.split_counts(b1, budget_ppm, s - MIN_OS_WAIT_NS, g);
        let ts = est.tail(bs, q, gs);
        let late = (t1.late * ts.samples + room * ts.late).saturating_mul(PPM);
        if late > budget_ppm.saturating_mul(t1.samples * ts.samples) {
            continue;
        }
        let second = est.cost(bs).saturating_add(ts.spin_sum_ns / ts.samples);
        let cost = est
            .cost(b1)
            .saturating_add(room.saturating_mul(second).saturating_add(rest_spin) / t1.samples);
        let short_established = est.established(bs, q);
        let plan = OsWaitPlan {
            wait_ns: wait,
            split: true,
            rest_budget_ppm: q,
            proven: short_established && est.established(b1, budget_ppm),
        };
        if explore && !short_established && cost <= one_cost.saturating_add(r / EXPLORE_COST_DIV) {
            let n = est.samples(bs, q);
            if explored.map_or(true, |(_, m)| n > m) {
                explored = Some((plan, n));
            }
        }
        if cost < best_cost {
            best = Some(plan);
            best_cost = cost;
        }
    }
    if let Some((plan, _)) = explored {
        return Some(plan);
    }
    match (best, chunk) {
        (None, Some((plan, cost))) if cost < r => Some(plan),
        _ => best,
    }
}

/// The single OS wait of an [`Mode::Efficient`] sleep: the longest wait `L >= 1`
/// with `L + compensation(bucket(L)) <= remaining_ns`; `None` means return at once.
pub fn plan_efficient(est: &MarginEstimator, remaining_ns: u64) -> Option<u64> {
    (0..=bucket_of(remaining_ns)).rev().find_map(|b| {
        let wait = remaining_ns
            .checked_sub(est.compensation(b))?
            .min(bucket_hi(b));
        (wait >= bucket_lo(b).max(1)).then_some(wait)
    })
}
