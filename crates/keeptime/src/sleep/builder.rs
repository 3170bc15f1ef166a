//! Configuring a [`Sleeper`]: mode and knobs.

use super::{Mode, Sleeper, SleeperStats, TailTarget};
use crate::estimate::MarginEstimator;
use crate::idle_hint::{IdleHint, IdleHintHolder};
use crate::platform::{duration_ns, Platform, System};
use crate::profile::Profile;
use std::time::Duration;

/// Configures a [`Sleeper`]: mode and knobs.
#[derive(Clone, Debug)]
#[must_use = "call .build() to get a Sleeper"]
pub struct SleeperBuilder {
    /// The model a [`profile`](Self::profile) loaded; a fresh one if none.
    estimator: Option<MarginEstimator>,
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
            estimator: None,
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

    /// Starts the sleeper from a host [`Profile`]: its model answers as it
    /// would after the profile's wake-ups (`spec/estimator.md`, *Profile*),
    /// then learns and forgets as any sleeper's. [`Profile::load`] has
    /// already refused a profile made on another machine.
    ///
    /// A fresh sleeper needs hundreds to thousands of sleeps before its
    /// margins settle (until then one slow wake-up *is* the margin, and the
    /// sleep spins it); a profile written by an earlier run on this machine
    /// (`keeptime trace --profile FILE`, or [`Sleeper::profile`]) skips that.
    ///
    /// ```
    /// use keeptime::{profile::{Fingerprint, Profile}, Sleeper};
    /// use std::time::Duration;
    ///
    /// let mut first = Sleeper::new();
    /// for _ in 0..20 {
    ///     first.sleep(Duration::from_micros(300));
    /// }
    /// let profile = first.profile(); // or Profile::load("host.profile")?
    /// profile.check_machine(&Fingerprint::this_machine())?;
    /// let mut next = Sleeper::builder().profile(&profile).build();
    /// for b in 0..keeptime::estimate::BUCKETS {
    ///     assert_eq!(next.estimator().live_samples(b), first.estimator().live_samples(b));
    /// }
    /// next.sleep(Duration::from_micros(300));
    /// # Ok::<(), keeptime::profile::ProfileError>(())
    /// ```
    pub fn profile(mut self, profile: &Profile) -> Self {
        self.estimator = Some(profile.estimator());
        self
    }

    /// Starts from this model (the default profile's, already loaded).
    pub(crate) fn estimator(mut self, estimator: crate::estimate::MarginEstimator) -> Self {
        self.estimator = Some(estimator);
        self
    }

    /// Starts the sleeper from the default profile in force
    /// ([`set_default_profile`](crate::set_default_profile)), if one is set
    /// (and from nothing otherwise): what a ticker made without a sleeper of
    /// the program's does ([`Ticker::new`](crate::Ticker::new)). The profile
    /// in force when the sleeper is built counts; a later change does not
    /// touch it.
    pub fn with_default_profile(self) -> Self {
        crate::default_profile::starting(self).0
    }

    /// A sleeper on the real clock.
    pub fn build(self) -> Sleeper {
        let platform = System::new(self.timer_slack);
        self.build_with(platform)
    }

    /// A sleeper on another [`Platform`], e.g. a
    /// [`SimPlatform`](crate::sim::SimPlatform) in tests. An
    /// [`idle_hint`](Self::idle_hint) is requested here as in [`build`](Self::build).
    pub fn build_with<P: Platform>(self, platform: P) -> Sleeper<P> {
        Sleeper {
            platform,
            mode: self.mode,
            min_spin_ns: self.min_spin_ns,
            lead_ns: 0,
            target: self.target,
            estimator: self.estimator.unwrap_or_default(),
            waits_planned: 0,
            stats: SleeperStats::default(),
            idle_hint: IdleHintHolder::request_warning(self.idle_hint, self.warn_refused_hint),
            warn_refused_hint: self.warn_refused_hint,
        }
    }
}
