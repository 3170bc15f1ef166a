package keeptime

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

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
)

// handoff is where a sleep stands when it hands off to its outermost call:
// the last clock reading, and the deadline still to spin to (until <= now
// when nothing is left: the deadline passed, or the sleep ended without a
// spin).
type handoff struct {
	now, until uint64
}

// done is a hand-off with nothing left to spin: the sleep ends at now.
func done(now uint64) handoff { return handoff{now: now, until: now} }

// finish is the last stretch on platform p: the pause hint until the clock
// reads until; it returns that reading (the sleep's value). On the real
// clock the exported waits write this loop out themselves (cpuRelax and
// clock.nowNs, no interface calls), so that its exit is their return.
func (h handoff) finish(p platform) uint64 {
	now := h.now
	for now < h.until {
		p.relax()
		now = p.now()
	}
	return now
}

// splitsNs are the lengths of the short second OS wait that a two-wait plan
// leaves after its long first one (planExact), in the order tried.
var splitsNs = [...]uint64{50_000, 100_000, 200_000, 400_000}

// TailTarget is the share of Exact sleeps a Sleeper lets end late because
// the OS woke the thread after the deadline. For each sleep keeptime picks
// the plan with the least expected CPU (one OS wait then a spin, a long
// wait plus a short one then a spin, or a pure spin) whose late share,
// predicted from this machine's learned wake-ups, meets the target. A
// stricter target spins longer; see the README for what each preset costs.
//
// It is held in parts per million. The presets are TailRelaxed (5 %),
// TailBalanced (1 %, the default) and TailStrict (0.1 %); NewTailTarget and
// ParseTailTarget make others and reject what is out of range, never
// clamping. The zero TailTarget stands for TailBalanced.
type TailTarget struct {
	ppm uint32
}

var (
	// TailRelaxed lets 5 % of sleeps end late: the cheapest preset.
	TailRelaxed = TailTarget{ppm: 50_000}
	// TailBalanced lets 1 % of sleeps end late (the default): a spin-level p99.
	TailBalanced = TailTarget{ppm: 10_000}
	// TailStrict lets 0.1 % of sleeps end late: a spin-level p99.9, at a
	// higher CPU price.
	TailStrict = TailTarget{ppm: 1_000}
)

// ErrInvalidTailTarget is returned (wrapped) for a tail target outside
// (0, 1), NaN, or below the resolution of 10⁻⁶ (an error, not rounded up).
var ErrInvalidTailTarget = errors.New("keeptime: tail target must be a share strictly between 0 and 1, at least 0.000001")

// NewTailTarget returns the target for a share in [10⁻⁶, 1), e.g. 0.01 for
// 1 %; the share is rounded to parts per million. NaN, shares below 10⁻⁶
// (the resolution: an error, never rounded up) or >= 1, and shares that
// round above 1 − 10⁻⁶ return an error wrapping ErrInvalidTailTarget.
func NewTailTarget(share float64) (TailTarget, error) {
	if !(share >= 1e-6 && share < 1) {
		return TailTarget{}, fmt.Errorf("%w (got %v)", ErrInvalidTailTarget, share)
	}
	p := math.Round(share * 1e6)
	if p < 1 || p > 999_999 {
		return TailTarget{}, fmt.Errorf("%w (got %v)", ErrInvalidTailTarget, share)
	}
	return TailTarget{ppm: uint32(p)}, nil
}

// ParseTailTarget parses "relaxed", "balanced" (or "default"), "strict"
// (any case), a share such as "0.01", or a percentage such as "1%". Anything
// else, and shares NewTailTarget rejects, return an error wrapping
// ErrInvalidTailTarget.
func ParseTailTarget(s string) (TailTarget, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "relaxed":
		return TailRelaxed, nil
	case "balanced", "default":
		return TailBalanced, nil
	case "strict":
		return TailStrict, nil
	}
	scale := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(p), 100
	}
	share, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return TailTarget{}, fmt.Errorf("%w (got %q; or relaxed, balanced, strict)", ErrInvalidTailTarget, s)
	}
	target, err := NewTailTarget(share / scale)
	if err != nil {
		return TailTarget{}, fmt.Errorf("%w (got %q)", ErrInvalidTailTarget, s)
	}
	return target, nil
}

// Share returns the target as a share, e.g. 0.01.
func (t TailTarget) Share() float64 { return float64(t.PPM()) / 1e6 }

// PPM returns the target in parts per million (1 to 999 999).
func (t TailTarget) PPM() uint32 {
	if t.ppm == 0 {
		return TailBalanced.ppm
	}
	return t.ppm
}

// String returns the target as a percentage, e.g. "1%".
func (t TailTarget) String() string {
	return strconv.FormatFloat(float64(t.PPM())/1e4, 'f', -1, 64) + "%"
}

// SleeperStats is what a Sleeper has spent since it was made or its stats
// were last reset (see Sleeper.Stats).
type SleeperStats struct {
	// Sleeps counts the sleeps that had to wait (deadline not yet passed).
	Sleeps uint64 `json:"sleeps"`
	// Late counts the sleeps that ended after their deadline because an OS
	// wait woke the goroutine late; a spin-finished sleep is never counted.
	Late uint64 `json:"late"`
	// OSWaits counts the OS waits issued (one resumed after a signal counts once).
	OSWaits uint64 `json:"os_waits"`
	// Spin is the time spent spinning.
	Spin time.Duration `json:"spin_ns"`
	// CPUEstimate is the estimated CPU time of the waiting: the learned cost
	// of each OS wait when it was made, plus Spin.
	CPUEstimate time.Duration `json:"cpu_estimate_ns"`
	// UnprovenSleeps counts the sleeps planned on margins not yet
	// established at their share (learned from fewer samples than the tail
	// target needs, (n + 1) · target < 1, even pooled): the target is not
	// proven for them, only the sleeper's most cautious margin (the latest
	// wake-up it has seen of that length or longer). A young sleeper at a
	// strict target has many; the late share of the other sleeps is what
	// the target governs.
	UnprovenSleeps uint64 `json:"unproven_sleeps"`
}

// LateShare is Late / Sleeps (0 before the first sleep).
func (st SleeperStats) LateShare() float64 {
	if st.Sleeps == 0 {
		return 0
	}
	return float64(st.Late) / float64(st.Sleeps)
}

// sleepStats are the counters of spec/sleep.md "Stats", in nanoseconds.
type sleepStats struct {
	sleeps, late, osWaits, spinNs, cpuEstimateNs, unprovenSleeps uint64
}

// Mode is how a Sleeper finishes a wait: the trade between accuracy and CPU.
// The zero value is Exact.
type Mode int

const (
	// Exact (the default) is spin-finished: one or two OS waits with an
	// absolute deadline end a learned margin before it, and a spin on the
	// clock finishes the sleep; the plan is the cheapest that meets the
	// sleeper's TailTarget. Never returns early; all but the target's share
	// of sleeps end within a fraction of a microsecond of the deadline.
	Exact Mode = iota
	// Efficient is the compensated sleep: one OS wait that ends the
	// learned median overshoot before the deadline, and no spin. Almost no
	// CPU, but it MAY RETURN BEFORE THE DEADLINE (about half the time, by a
	// few µs) and cannot wait less than the OS's wake-up latency. The one
	// documented exception to "never early".
	Efficient
	// Spin is a pure spin on the clock with the CPU's pause hint: the most
	// accurate, and a whole core for the whole wait. After 50 µs it yields
	// on each iteration while the deadline is more than 20 µs away, so that
	// a crowd of spinners does not starve other goroutines and threads; the
	// last 20 µs are polled with the pause hint alone. Never returns early.
	Spin
)

// String returns "exact", "efficient" or "spin".
func (m Mode) String() string {
	switch m {
	case Exact:
		return "exact"
	case Efficient:
		return "efficient"
	case Spin:
		return "spin"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "exact", "efficient" or "spin" (any case).
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Exact, Efficient, Spin} {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return Exact, fmt.Errorf("keeptime: unknown mode %q (want exact, efficient or spin)", s)
}

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
// even so are never trusted to wake earlier than any longer wait length,
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

// Stats returns what this sleeper has spent since it was made or since
// ResetStats: sleeps, late sleeps, OS waits, spin time, its CPU estimate
// and the sleeps planned on unproven margins.
func (s *Sleeper) Stats() SleeperStats {
	return SleeperStats{
		Sleeps:         s.stats.sleeps,
		Late:           s.stats.late,
		OSWaits:        s.stats.osWaits,
		Spin:           durationOf(s.stats.spinNs),
		CPUEstimate:    durationOf(s.stats.cpuEstimateNs),
		UnprovenSleeps: s.stats.unprovenSleeps,
	}
}

// ResetStats starts the stats afresh; what was learned is kept.
func (s *Sleeper) ResetStats() { s.stats = sleepStats{} }

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

// toHandoff is everything of a sleep but its last handoffNs: the caller
// spins the rest with handoff.finish (spec/sleep.md, "Hand-off").
func (s *Sleeper) toHandoff(deadline uint64) handoff {
	p := s.platform()
	now := p.now()
	if now >= deadline {
		return done(now)
	}
	p.prepareThread()
	s.est.beginSleep()
	s.stats.sleeps++
	switch s.mode {
	case Spin:
		// The caller asked for a core: no spin slot, not in the crowd count.
		return s.spin(p, deadline, now, spinYieldAfterNs, spinNearNs)
	case Efficient:
		if wait, ok := planEfficient(&s.est, deadline-now); ok {
			now = s.osWait(p, now, wait)
		}
		return done(now)
	default: // Exact, and any out-of-range Mode value
		return s.exactSleep(p, deadline, now)
	}
}

// exactSleep is an Exact sleep once the deadline is known to be ahead: the
// sleeper enters the process-wide count of sleepers (leaving it on every way
// out, a panic or runtime.Goexit included), and a crowd's sleep (more
// sleepers than CPUs) is capped, any other planned.
func (s *Sleeper) exactSleep(p platform, deadline, now uint64) handoff {
	n := p.enterSleep()
	defer p.leaveSleep()
	// cpus() >= 1: a sleeper alone is never a crowd, and the real
	// platform's CPU count (GOMAXPROCS) is read only when others sleep too.
	if n > 1 {
		if c := p.cpus(); n > c {
			return s.crowdSleep(p, deadline, now, n, c)
		}
	}
	return s.plannedSleep(p, deadline, now)
}

// plannedSleep is the sleep of a sleeper with a CPU to itself: the cheapest
// plan that meets the tail target (spec/sleep.md, "planned_sleep").
func (s *Sleeper) plannedSleep(p platform, deadline, now uint64) handoff {
	budget := uint64(s.target.PPM())
	unproven := false
	step := planStep{first: true, explore: explores(s.est.seq)}
	for {
		plan, ok := planExact(&s.est, deadline-now, budget, s.minSpinNs, step)
		step.first, step.explore = false, false
		if !ok {
			return s.finish(p, deadline, now, max(spinYieldAfterNs, s.minSpinNs), spinNearNs)
		}
		if !plan.proven && !unproven { // counted once per sleep
			unproven = true
			s.stats.unprovenSleeps = satAdd(s.stats.unprovenSleeps, 1)
		}
		now = s.osWait(p, now, plan.waitNs)
		if now >= deadline { // overslept: nothing to do
			if now > deadline {
				s.stats.late++
			}
			return done(now)
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
func (s *Sleeper) crowdSleep(p platform, deadline, now uint64, n, cpus int) handoff {
	length := deadline - now
	capNs := crowdSpinCap(uint64(cpus), uint64(n), length, s.est.cost(bucketOf(length)))
	budget := uint64(s.target.PPM())
	for {
		rest := deadline - now
		g := max(min(s.est.margin(bucketOf(rest), budget), capNs), s.minSpinNs)
		if rest <= g || rest-g < minOsWaitNs {
			return s.finish(p, deadline, now, s.minSpinNs, crowdPauseNs)
		}
		now = s.osWait(p, now, rest-g)
		if now >= deadline {
			if now > deadline {
				s.stats.late++
			}
			return done(now)
		}
	}
}

// crowdSpinCap is the longest spin a sleeper in a crowd of sleepers (more
// than cpus) may plan for a sleep of lengthNs: its share of
// 1/crowdSpinDivisor of the CPUs' time, cpus·lengthNs / (crowdSpinDivisor ·
// sleepers), less waitCostNs (the learned cost of its OS wait). Exact
// (128-bit), saturating at 0 and at 2⁶⁴ − 1; 0 sleepers count as 1.
func crowdSpinCap(cpus, sleepers, lengthNs, waitCostNs uint64) uint64 {
	hi, lo := bits.Mul64(cpus, lengthNs)
	// x / (2n) == (x / 2) / n for whole numbers: halve the 128-bit product
	// first, so the divisor fits in 64 bits whatever n is.
	lo = lo>>1 | hi<<63
	hi >>= 1
	n := max(sleepers, 1)
	share := uint64(math.MaxUint64)
	if hi < n { // the quotient fits in 64 bits
		share, _ = bits.Div64(hi, lo, n)
	}
	return satSub(share, waitCostNs)
}

// osWait is one planned OS wait of waitNs from now, resumed toward the same
// absolute target after signals; it records the overshoot (an interrupted
// attempt records nothing) and, around every costSampleEvery-th planned
// wait, the thread CPU time the wait cost; it returns the clock reading
// after it.
//
// The thread CPU clock is per OS thread and a goroutine may move between
// threads at any point where it could be descheduled, so a sampled wait
// holds its thread (runtime.LockOSThread, via lockThread) from the first
// reading to the second; the other seven waits of eight run unlocked.
func (s *Sleeper) osWait(p platform, now, waitNs uint64) uint64 {
	target := satAdd(now, waitNs)
	sample := s.waitsPlanned%costSampleEvery == 0
	s.waitsPlanned++
	var cpu0 uint64
	var haveCPU bool
	if sample {
		p.lockThread()
		cpu0, haveCPU = p.threadCPU()
	}
	waitThroughSignals(p, target)
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
	return woke
}

// countWait counts one OS wait of bucket b in the stats, at its learned cost.
func (s *Sleeper) countWait(b int) {
	s.stats.osWaits++
	s.stats.cpuEstimateNs = satAdd(s.stats.cpuEstimateNs, s.est.cost(b))
}

func waitThroughSignals(p platform, target uint64) {
	for p.osWaitUntil(target) == waitInterrupted {
	}
}

// finish is the last phase of an Exact sleep, a spin: with a process-wide
// spin slot it pauses (spin); without one it follows, a yield on every
// iteration, never late by an OS wake-up and never holding a CPU that a
// woken goroutine needs.
func (s *Sleeper) finish(p platform, deadline, now, pauseFor, near uint64) handoff {
	if p.tryBeginSpin() {
		defer p.endSpin()
		return s.spin(p, deadline, now, pauseFor, near)
	}
	return s.follow(p, deadline, now)
}

// follow is a spin without a spin slot: a yield (the one spin uses) on
// every iteration until deadline. (As in spin, the spec's interrupt check
// every 10 ms has nothing to check in Go.)
func (s *Sleeper) follow(p platform, deadline, start uint64) handoff {
	return s.spin(p, deadline, start, 0, 0) // no pause at all: a yield per iteration
}

// spin spins on the clock until deadline: the pause hint for pauseFor (the
// planned length of the spin) and always within near of the deadline
// (spinNearNs; crowdPauseNs in a crowd), a yield on each iteration in
// between. A spin that pauses near the deadline (near >= handoffNs) hands
// off its last handoffNs to the outermost call, counted as spin time to the
// deadline; one that yields to the end (a follower) spins to the deadline
// here. (The spec's interrupt check every 10 ms of yielding has nothing to
// check in Go: there is no way to stop a Sleep early.)
func (s *Sleeper) spin(p platform, deadline, start, pauseFor, near uint64) handoff {
	now := start
	handoffAt := deadline
	if near >= handoffNs {
		handoffAt = satSub(deadline, handoffNs)
	}
	for now < handoffAt {
		if now-start < pauseFor || deadline-now <= near {
			p.relax()
		} else {
			p.yield()
		}
		now = p.now()
	}
	if now < deadline {
		s.addSpin(deadline - start)
		return handoff{now: now, until: deadline}
	}
	s.addSpin(now - start)
	return done(now)
}

// addSpin counts a spin of ns in the stats.
func (s *Sleeper) addSpin(ns uint64) {
	s.stats.spinNs = satAdd(s.stats.spinNs, ns)
	s.stats.cpuEstimateNs = satAdd(s.stats.cpuEstimateNs, ns)
}

// planStep says where in a sleep planExact is asked.
type planStep struct {
	// first: the first plan of a sleep (no OS wait taken yet); only then may
	// a wait cut short to its bucket's longest (a chunk) be taken.
	first bool
	// explore: the first plan of a sleep that explores (see explores).
	explore bool
	// afterSplit: a two-wait plan's first wait has been taken; only its
	// short wait (one OS wait, then a spin) or a spin may follow, no further
	// split or chunk.
	afterSplit bool
}

// osWaitPlan is the next OS wait planExact chose.
type osWaitPlan struct {
	waitNs uint64
	// split: the long first wait of a two-wait plan.
	split bool
	// restBudgetPpm is the late-share budget the rest of the sleep plans
	// with: half the budget (the short wait's share) after a two-wait plan's
	// first wait, else the budget unchanged.
	restBudgetPpm uint64
	// proven: every margin the plan rests on is established at the share
	// it is planned at; an unproven plan counts its sleep in
	// sleepStats.unprovenSleeps.
	proven bool
}

// explores reports whether the first plan of the sleep numbered seq
// (counted after its beginSleep) explores: each of a sleeper's first
// exploreYoungSleeps, then every exploreEvery-th.
func explores(seq uint64) bool {
	return seq <= exploreYoungSleeps || seq%exploreEvery == 0
}

// planExact is the next OS wait of an Exact sleep with remaining ns to go,
// or ok == false to spin the rest: the plan with the least expected thread
// CPU whose predicted share of late sleeps is at most budget ppm
// (spec/sleep.md, "Planning"). Candidates, ties keeping the earlier:
//
//   - one OS wait ending the bucket's margin at budget (at least minSpin)
//     before the deadline, then a spin: its learned cost plus the expected
//     spin;
//   - for each S of splitsNs, a long wait ending S plus the short wait's
//     margin (at half the budget) before the deadline, a short wait of
//     about S, then a spin; taken only if the long wait's own late share
//     plus the short one's fit the budget;
//   - a pure spin of remaining.
//
// When only a wait cut short to its bucket's longest fits (its own bucket's
// margin would allow a longer one, the longer bucket's does not), that
// chunk is not the last OS wait and its full cost is unknown: it is taken
// only as a sleep's first plan (step.first), when no complete plan meets the
// budget and one wait costs less than spinning the rest. After a two-wait
// plan's first wait (step.afterSplit) only the one-wait candidate or a spin
// is considered. With step.explore (the first plan of a sleep that
// explores), a two-wait plan that meets the budget and whose short wait's
// bucket is not yet established at half the budget is taken even if it
// costs more, by at most remaining/exploreCostDiv over the one-wait plan
// (or the pure spin): the one whose short bucket has the most samples
// standing for it (ties: the smaller S), finishing one pool at a time.
//
// A plan is proven when every margin it rests on is established at the
// share it is planned at: the one wait's or the chunk's bucket at budget;
// for a two-wait plan the short bucket at half the budget and the long one
// at budget. The plan before anything is learned is not.
//
// Before anything is learned: one OS wait ending defaultMarginNs (or
// minSpin) before the deadline.
func planExact(e *estimator, remaining, budget, minSpin uint64, step planStep) (osWaitPlan, bool) {
	r := remaining
	if r < minOsWaitNs {
		return osWaitPlan{}, false
	}
	one := func(waitNs uint64, proven bool) osWaitPlan {
		return osWaitPlan{waitNs: waitNs, restBudgetPpm: budget, proven: proven}
	}
	if e.empty() {
		g := max(defaultMarginNs, minSpin)
		if r >= g && r-g >= minOsWaitNs {
			return one(r-g, false), true
		}
		return osWaitPlan{}, false
	}
	var best osWaitPlan
	found := false
	bestCost := r // a pure spin
	// A wait cut to its bucket's longest is not the last OS wait: its cost
	// is not known here, so it is only a fallback when no complete plan fits.
	var chunk osWaitPlan
	var chunkCost uint64
	haveChunk := false
	for b := bucketOf(r); b >= 0; b-- {
		g := max(e.margin(b, budget), minSpin)
		if r < g {
			continue
		}
		l := r - g
		if l > bucketHi(b) {
			if bucketHi(b) >= minOsWaitNs && step.first {
				chunk, chunkCost, haveChunk = one(bucketHi(b), e.established(b, budget)), e.cost(b), true
			}
			break
		}
		if l >= bucketLo(b) && l >= minOsWaitNs {
			t := e.tail(b, budget, g)
			cost := satAdd(e.cost(b), t.spinSum/t.samples)
			if cost < bestCost {
				best, found, bestCost = one(l, e.established(b, budget)), true, cost
			}
			break
		}
	}
	oneCost := bestCost // the cheapest one-wait plan's, or a pure spin's
	var explored osWaitPlan
	var exploredN uint64
	haveExplored := false
	q := budget / 2
	for _, sNs := range splitsNs {
		if q == 0 || step.afterSplit {
			break
		}
		bs := bucketOf(sNs)
		gs := max(e.margin(bs, q), minSpin)
		g := satAdd(sNs, gs)
		if r < g || r-g < minOsWaitNs {
			continue
		}
		l1 := r - g
		b1 := bucketOf(l1)
		t1 := e.tail(b1, budget, g)
		room, restSpin := e.splitCounts(b1, budget, sNs-minOsWaitNs, g)
		ts := e.tail(bs, q, gs)
		late := satMul(t1.late*ts.samples+room*ts.late, ppm)
		if late > satMul(budget, t1.samples*ts.samples) {
			continue
		}
		second := satAdd(e.cost(bs), ts.spinSum/ts.samples)
		cost := satAdd(e.cost(b1), satAdd(satMul(room, second), restSpin)/t1.samples)
		shortEstablished := e.established(bs, q)
		plan := osWaitPlan{waitNs: l1, split: true, restBudgetPpm: q,
			proven: shortEstablished && e.established(b1, budget)}
		if step.explore && !shortEstablished && cost <= satAdd(oneCost, r/exploreCostDiv) {
			if n := e.samples(bs, q); !haveExplored || n > exploredN {
				explored, exploredN, haveExplored = plan, n, true
			}
		}
		if cost < bestCost {
			best, found, bestCost = plan, true, cost
		}
	}
	if haveExplored {
		return explored, true
	}
	if !found && haveChunk && chunkCost < r {
		return chunk, true
	}
	return best, found
}

// planEfficient is the single OS wait of an Efficient sleep: the longest
// wait L >= 1 with L + compensation(bucket(L)) <= remaining. ok == false
// means return at once.
func planEfficient(e *estimator, remaining uint64) (wait uint64, ok bool) {
	for b := bucketOf(remaining); b >= 0; b-- {
		c := e.compensation(b)
		if remaining < c {
			continue
		}
		l := min(remaining-c, bucketHi(b))
		if l >= max(bucketLo(b), 1) {
			return l, true
		}
	}
	return 0, false
}
