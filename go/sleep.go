package keeptime

import "time"

// Constants of the waiting algorithm, spec/sleep.md.
const (
	// minOsWaitNs: shorter OS waits are not worth a system call; spin instead.
	minOsWaitNs = 5_000
	// spinYieldAfterNs: a spin this old (or minSpin, if longer) may yield
	// while the deadline is far.
	spinYieldAfterNs = 50_000
	// spinNearNs: within this much of the deadline a spin only pauses,
	// never yields, so the last stretch is polled at the clock's own speed.
	spinNearNs = 20_000
	// exploreEvery: after a sleeper's first exploreYoungSleeps, the first
	// plan of every this many sleeps prefers a two-wait plan whose short
	// wait's bucket is not yet established (exploration), so short buckets
	// get the samples that let two-wait plans compete on their merit.
	exploreEvery = 8
	// exploreYoungSleeps: the first this many sleeps of a sleeper all
	// explore (when a two-wait plan with a young short bucket meets the
	// budget): a fresh sleeper learns its short waits in a few hundred
	// sleeps instead of a few thousand.
	exploreYoungSleeps = 256
	// exploreCostDiv: an exploring plan is taken only when its expected CPU
	// exceeds the one-wait plan's (or the pure spin's) by at most
	// 1/exploreCostDiv of the time left: exploring costs at most 6.25 % of a
	// sleep in CPU, and a short bucket whose cautious margin is huge is not
	// explored.
	exploreCostDiv = 16
	// crowdSpinDivisor: in a crowd (more sleepers inside an Exact sleep
	// than CPUs), the sleepers' spins may take at most 1/crowdSpinDivisor
	// of the CPUs' time, less their OS waits' cost (spec/sleep.md, "Crowds").
	crowdSpinDivisor = 2
	// crowdPauseNs: in a crowd, the spin-slot holder pauses only within
	// this much of its deadline and yields before it, like the sleepers
	// without a slot: a pausing spinner holds a CPU that other sleepers'
	// wake-ups need.
	crowdPauseNs = 5_000
	// handoffNs: the last stretch of a spin-finished sleep runs in the
	// outermost call, the one that returns to the caller (spec/sleep.md,
	// "Hand-off"). All the bookkeeping (stats, the spin slot, the crowd
	// count, the shared sleeper) is done before it, so the loop's exit is
	// the return, and what the return path touches is touched a few µs
	// before the deadline, not after it. At most crowdPauseNs, so the
	// hand-off never changes whether a step pauses or yields.
	handoffNs = 5_000
	// interruptPollNs: while a long spin yields, the interrupt check (is the
	// sleep's context done?) runs this often; a sleep without a context has
	// no check.
	interruptPollNs = 10_000_000
)

// A Sleeper waits precisely and learns, from every OS wait it makes, how
// late the OS wakes it and what a wait costs.
//
// Every Exact wait goes: OS waits with an absolute deadline (clock_nanosleep
// TIMER_ABSTIME on CLOCK_MONOTONIC, on Linux), then a spin on the clock
// with the CPU's pause hint. For each sleep the planner (spec/sleep.md)
// takes the cheapest of one OS wait then a spin, a long wait plus a short
// one then a spin, or a pure spin, whose predicted share of late sleeps
// meets the sleeper's TailTarget (default 1 %). The predictions come from
// the wake-ups of the last 1024 OS waits of each length, kept as histograms
// (spec/estimator.md): one outlier counts for at most 1024 waits of its
// length and, once 199 samples are in, moves the 1 % margin by one rank at
// most; a lasting rise is followed after 10 late wake-ups at 1 % (with a
// full window, at once in one under 99 samples); a wait length unused for
// 256 sleeps is forgotten and tried afresh. A short wait length (below
// 524 µs) too young for the share it is planned at is answered by its
// neighbours' samples pooled (half and twice its length); samples too few
// even so are never trusted to wake earlier than any longer wait length
// (once half grown, than any longer one established at the share),
// and a sleep planned on them counts in Stats as unproven. The first plan
// of each of a sleeper's first 256 sleeps, then of every 8th, explores a
// two-wait plan through a short wait length not yet established (at that
// conservative margin: one extra OS wait, at most 1/16 of the sleep's
// length in CPU), so it gathers samples. A wait cut short to its length's
// longest is only a sleep's first plan, and only when no complete plan
// meets the target. What an OS
// wait costs is learned by reading the thread CPU clock around every 8th
// one. On Linux the OS thread that does each OS wait gets a 1 ns timer
// slack (see SetTimerSlack).
//
// Guarantees in Exact and Spin mode: never returns before the deadline by
// time.Now's monotonic reading; a signal (EINTR) resumes the OS wait toward
// the same absolute deadline; a deadline in the past or a non-positive
// duration returns at once. At most max(1, runtime.NumCPU()-1) goroutines of
// the process spin with the pause hint at once; a sleeper that finds every
// spin slot taken follows instead: it spins with a yield on every iteration
// (never an OS wait to the deadline, so never late by a wake-up).
//
// SleepContext and SleepUntilContext are the same sleeps, ended early with
// the context's error once the context is done (see SleepUntilContext).
//
// Crowds: when more goroutines are inside an Exact sleep than the process
// has CPUs (min(runtime.NumCPU(), GOMAXPROCS)), each sleep of length D is
// one OS wait, then a spin capped at cpus·D / (2·sleepers) less the learned
// cost of an OS wait, so the crowd spins at most half the CPUs whatever the
// learned margins say; the slot's spinner then pauses only in the last
// 5 µs. A sleeper whose OS wait wakes later than its capped margin is late
// (counted in Stats): in a crowd the cap overrides the tail target.
//
// Cost: one clock read (~28 ns) for a past deadline; otherwise one or two
// OS waits plus a spin of the learned margin. Stats reports what this
// sleeper spent.
//
// SetIdleHint (opt-in) asks the kernel to keep CPU wake-up latency low
// while the sleeper holds it, at a power price (see IdleHint); the sleeper
// holds it until Close.
//
// A Sleeper is not safe for concurrent use, like bufio.Reader: give each
// goroutine its own (the package functions Sleep and SleepUntil share a pool
// of them). The zero value is an Exact sleeper with TailBalanced, ready to use.
type Sleeper struct {
	p            platform
	mode         Mode
	keepSlack    bool
	minSpinNs    uint64
	target       TailTarget
	est          estimator
	waitsPlanned uint64
	stats        sleepStats
	// hint is the opt-in idle-latency hint (idlehint.go), held until Close.
	hint idleHintSlot
}

// NewSleeper returns a sleeper in the given mode on the real clock, with
// the default tail target (TailBalanced).
func NewSleeper(mode Mode) *Sleeper {
	return &Sleeper{mode: mode}
}

// newSleeperOn is a sleeper on another platform (the tests' simulated one).
func newSleeperOn(p platform, mode Mode) *Sleeper {
	return &Sleeper{p: p, mode: mode}
}

func (s *Sleeper) platform() platform {
	if s.p == nil {
		s.p = newSystem(s.keepSlack)
	}
	return s.p
}

// Mode returns the sleeper's mode.
func (s *Sleeper) Mode() Mode { return s.mode }

// SetMode switches the mode; what was learned is kept.
func (s *Sleeper) SetMode(m Mode) { s.mode = m }

// TailTarget returns the share of Exact sleeps allowed to end late.
func (s *Sleeper) TailTarget() TailTarget { return TailTarget{ppm: s.target.PPM()} }

// SetTailTarget sets the share of Exact sleeps allowed to end late because
// the OS woke the goroutine after the deadline (default TailBalanced, 1 %);
// what was learned is kept. A stricter target spins longer, on this
// machine's learned tail. Make targets other than the presets with
// NewTailTarget, which rejects invalid shares.
func (s *Sleeper) SetTailTarget(t TailTarget) { s.target = t }

// SetTimerSlack says whether the OS thread that does each OS wait gets a
// 1 ns Linux timer slack (the default, true). Timer slack is per thread and
// Go runs goroutines on a pool of threads: a thread keeps the 1 ns slack
// after keeptime set it, which makes other timed waits on that thread
// (including the Go runtime's own) wake more punctually, nothing else. With
// false the kernel's default (50 µs) stays, and the estimator learns the
// larger overshoot and plans for it. Ignored off Linux.
func (s *Sleeper) SetTimerSlack(set1ns bool) {
	s.keepSlack = !set1ns
	if s.p != nil {
		s.p.setKeepSlack(s.keepSlack)
	}
}

// SetMinSpin sets the shortest spin that finishes an Exact sleep (default
// 0: the planner decides); the last OS wait then ends at least d before the
// deadline, whatever the tail target allows. It is a floor for users who
// want a fixed spin on top of the target, at a CPU price of d ÷ the sleep's
// length. A negative d counts as 0.
func (s *Sleeper) SetMinSpin(d time.Duration) { s.minSpinNs = durationNs(d) }

// MinSpin reports the shortest spin set by SetMinSpin.
func (s *Sleeper) MinSpin() time.Duration { return durationOf(s.minSpinNs) }

// Sleep pauses the calling goroutine for at least d (in Exact and Spin mode),
// typically a fraction of a microsecond more. A negative or zero d returns
// at once, like time.Sleep. Durations too long for the clock saturate to a
// wait that never ends.
func (s *Sleeper) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	p := s.platform()
	s.toHandoff(satAdd(p.now(), durationNs(d))).finish(p)
}

// SleepUntil pauses the calling goroutine until t: in Exact and Spin mode it
// never returns before time.Now() reaches t by its monotonic reading. A t in
// the past returns at once. A t without a monotonic reading (time.Date,
// time.Unix, t.Round(0)) is placed by the wall clock as it reads at the
// call.
func (s *Sleeper) SleepUntil(t time.Time) {
	p := s.platform()
	s.toHandoff(p.deadlineOf(t)).finish(p)
}

// sleepUntilNs is the algorithm of spec/sleep.md: it sleeps until deadline on
// the platform's clock and returns the first clock reading after the wait.
func (s *Sleeper) sleepUntilNs(deadline uint64) uint64 {
	return s.toHandoff(deadline).finish(s.platform())
}

// sleepUntilNsCtx is sleepUntilNs with the interrupt check ic (nil: none):
// a sleep the check stops returns its last clock reading and the context's
// error.
func (s *Sleeper) sleepUntilNsCtx(deadline uint64, ic *interruptCheck) (uint64, error) {
	h, err := s.toHandoffCtx(deadline, ic)
	if err != nil {
		return h.now, err
	}
	return h.finish(s.platform()), nil
}

// toHandoff is everything of a sleep but its last handoffNs: the caller
// spins the rest with handoff.finish (spec/sleep.md, "Hand-off").
func (s *Sleeper) toHandoff(deadline uint64) handoff {
	h, _ := s.run(deadline, nil) // no check: nothing can stop the sleep
	return h
}

// toHandoffCtx is toHandoff with the interrupt check ic (nil: none); a sleep
// it stops returns done(its last reading) and the context's error. The
// check's wake-up (context.AfterFunc) is released here, before the caller
// spins the last stretch, so nothing of it runs after the deadline.
func (s *Sleeper) toHandoffCtx(deadline uint64, ic *interruptCheck) (handoff, error) {
	defer ic.release()
	return s.run(deadline, ic)
}

// run is a sleep up to its hand-off. ic is the interrupt check of a sleep
// under a context, nil for the plain calls, which then pay nothing for it
// but a nil test where a check would run; with a check, a done context
// stops the sleep with its error (spec/sleep.md, "Signals" and "spin").
func (s *Sleeper) run(deadline uint64, ic *interruptCheck) (handoff, error) {
	p := s.platform()
	now := p.now()
	if now >= deadline {
		return done(now), nil
	}
	p.prepareThread()
	s.est.beginSleep()
	s.stats.sleeps++
	switch s.mode {
	case Spin:
		// The caller asked for a core: no spin slot, not in the crowd count.
		return s.spin(p, deadline, now, spinYieldAfterNs, spinNearNs, ic)
	case Efficient:
		if wait, ok := planEfficient(&s.est, deadline-now); ok {
			var err error
			if now, err = s.osWait(p, now, wait, ic); err != nil {
				return done(now), err
			}
		}
		return done(now), nil
	default: // Exact, and any out-of-range Mode value
		return s.exactSleep(p, deadline, now, ic)
	}
}

// exactSleep is an Exact sleep once the deadline is known to be ahead: the
// sleeper enters the process-wide count of sleepers (leaving it on every way
// out, a panic or runtime.Goexit included), and a crowd's sleep (more
// sleepers than CPUs) is capped, any other planned.
func (s *Sleeper) exactSleep(p platform, deadline, now uint64, ic *interruptCheck) (handoff, error) {
	n := p.enterSleep()
	defer p.leaveSleep()
	// cpus() >= 1: a sleeper alone is never a crowd, and the real
	// platform's CPU count (GOMAXPROCS) is read only when others sleep too.
	if n > 1 {
		if c := p.cpus(); n > c {
			return s.crowdSleep(p, deadline, now, n, c, ic)
		}
	}
	return s.plannedSleep(p, deadline, now, ic)
}

// plannedSleep is the sleep of a sleeper with a CPU to itself: the cheapest
// plan that meets the tail target (spec/sleep.md, "planned_sleep").
func (s *Sleeper) plannedSleep(p platform, deadline, now uint64, ic *interruptCheck) (handoff, error) {
	budget := uint64(s.target.PPM())
	unproven := false
	step := planStep{first: true, explore: explores(s.est.seq)}
	for {
		plan, ok := planExact(&s.est, deadline-now, budget, s.minSpinNs, step)
		step.first, step.explore = false, false
		if !ok {
			return s.finish(p, deadline, now, max(spinYieldAfterNs, s.minSpinNs), spinNearNs, ic)
		}
		if !plan.proven && !unproven { // counted once per sleep
			unproven = true
			s.stats.unprovenSleeps = satAdd(s.stats.unprovenSleeps, 1)
		}
		var err error
		if now, err = s.osWait(p, now, plan.waitNs, ic); err != nil {
			return done(now), err
		}
		if now >= deadline { // overslept: nothing to do
			if now > deadline {
				s.stats.late++
			}
			return done(now), nil
		}
		budget = plan.restBudgetPpm
		if plan.split {
			step.afterSplit = true
		}
	}
}

// crowdSleep is an Exact sleep in a crowd of n sleepers on cpus CPUs
// (n > cpus): one OS wait ending
// the learned margin before the deadline, the margin capped by crowdSpinCap
// (kept at least minSpin), then a spin that pauses only in the last
// crowdPauseNs (spec/sleep.md, "Crowds"). No two-wait plans, chunks or
// exploration; the wake-ups are learned as always.
func (s *Sleeper) crowdSleep(p platform, deadline, now uint64, n, cpus int, ic *interruptCheck) (handoff, error) {
	length := deadline - now
	capNs := crowdSpinCap(uint64(cpus), uint64(n), length, s.est.cost(bucketOf(length)))
	budget := uint64(s.target.PPM())
	for {
		rest := deadline - now
		g := max(min(s.est.margin(bucketOf(rest), budget), capNs), s.minSpinNs)
		if rest <= g || rest-g < minOsWaitNs {
			return s.finish(p, deadline, now, s.minSpinNs, crowdPauseNs, ic)
		}
		var err error
		if now, err = s.osWait(p, now, rest-g, ic); err != nil {
			return done(now), err
		}
		if now >= deadline {
			if now > deadline {
				s.stats.late++
			}
			return done(now), nil
		}
	}
}

// osWait is one planned OS wait of waitNs from now, resumed toward the same
// absolute target after signals; it records the overshoot (an interrupted
// attempt records nothing) and, around every costSampleEvery-th planned
// wait, the thread CPU time the wait cost; it returns the clock reading
// after it. A wait the interrupt check ic stops returns the reading then
// and the context's error, and is neither counted nor learned from (as the
// Rust core's interrupt check): only a wait that ran to its target says
// how late the OS wakes.
//
// The thread CPU clock is per OS thread and a goroutine may move between
// threads at any point where it could be descheduled, so a sampled wait
// holds its thread (runtime.LockOSThread, via lockThread) from the first
// reading to the second; the other seven waits of eight run unlocked.
func (s *Sleeper) osWait(p platform, now, waitNs uint64, ic *interruptCheck) (uint64, error) {
	target := satAdd(now, waitNs)
	sample := s.waitsPlanned%costSampleEvery == 0
	s.waitsPlanned++
	var cpu0 uint64
	var haveCPU bool
	if sample {
		p.lockThread()
		cpu0, haveCPU = p.threadCPU()
	}
	if err := waitThroughSignals(p, target, ic); err != nil {
		if sample {
			p.unlockThread()
		}
		return p.now(), err
	}
	woke := p.now()
	if sample {
		if haveCPU {
			if cpu1, ok := p.threadCPU(); ok {
				s.est.observeCost(waitNs, satSub(cpu1, cpu0))
			}
		}
		p.unlockThread()
	}
	s.countWait(bucketOf(waitNs))
	s.est.observe(waitNs, satSub(woke, target))
	return woke, nil
}

// waitThroughSignals is os_wait(target) of spec/sleep.md, "Signals": the OS
// wait repeated toward the same absolute target while it reports
// interrupted, each time first running the interrupt check if the sleep has
// one (ic non-nil: is its context done?). With a check the OS wait is the
// cancellable one, which a done context wakes (or does not enter) and
// reports interrupted, so the check runs at once.
func waitThroughSignals(p platform, target uint64, ic *interruptCheck) error {
	if ic == nil {
		for p.osWaitUntil(target) == waitInterrupted {
		}
		return nil
	}
	for p.osWaitCancellable(target, ic) == waitInterrupted {
		if err := ic.check(); err != nil {
			return err
		}
	}
	return nil
}

// finish is the last phase of an Exact sleep, a spin: with a process-wide
// spin slot it pauses (spin); without one it follows, a yield on every
// iteration, never late by an OS wake-up and never holding a CPU that a
// woken goroutine needs.
func (s *Sleeper) finish(p platform, deadline, now, pauseFor, near uint64, ic *interruptCheck) (handoff, error) {
	if p.tryBeginSpin() {
		defer p.endSpin()
		return s.spin(p, deadline, now, pauseFor, near, ic)
	}
	return s.follow(p, deadline, now, ic)
}

// follow is a spin without a spin slot: a yield (the one spin uses) on
// every iteration until deadline, the interrupt check (if any) every
// interruptPollNs.
func (s *Sleeper) follow(p platform, deadline, start uint64, ic *interruptCheck) (handoff, error) {
	return s.spin(p, deadline, start, 0, 0, ic) // no pause at all: a yield per iteration
}

// spin spins on the clock until deadline: the pause hint for pauseFor (the
// planned length of the spin) and always within near of the deadline
// (spinNearNs; crowdPauseNs in a crowd), a yield on each iteration in
// between. A spin that pauses near the deadline (near >= handoffNs) hands
// off its last handoffNs to the outermost call, counted as spin time to the
// deadline; one that yields to the end (a follower) spins to the deadline
// here.
//
// While it yields, a sleep under a context (ic non-nil) runs the interrupt
// check every interruptPollNs, from pauseFor on: a non-blocking receive on
// the context's Done channel, so a long spin (Spin mode, a long follow)
// notices a cancellation within 10 ms and a yield. The planned pause (the
// spin the plan wanted, the learned margin or the min spin asked for) and
// the near window never check, as in the spec: a cancellation then returns
// nil at the deadline. A stopped spin counts its time until the check in
// the stats.
func (s *Sleeper) spin(p platform, deadline, start, pauseFor, near uint64, ic *interruptCheck) (handoff, error) {
	now := start
	nextPoll := satAdd(satAdd(start, pauseFor), interruptPollNs)
	handoffAt := deadline
	if near >= handoffNs {
		handoffAt = satSub(deadline, handoffNs)
	}
	for now < handoffAt {
		if now-start < pauseFor || deadline-now <= near {
			p.relax()
		} else {
			p.yield()
			if ic != nil && now >= nextPoll {
				if err := ic.check(); err != nil {
					s.addSpin(now - start)
					return done(now), err
				}
				nextPoll = satAdd(now, interruptPollNs)
			}
		}
		now = p.now()
	}
	if now < deadline {
		s.addSpin(deadline - start)
		return handoff{now: now, until: deadline}, nil
	}
	s.addSpin(now - start)
	return done(now), nil
}
