package keeptime

import (
	"fmt"
	"strings"
	"time"
)

// Constants of the waiting algorithm, spec/sleep.md.
const (
	// minOsWaitNs: shorter OS waits are not worth a system call; spin instead.
	minOsWaitNs = 5_000
	// splitNs: a long OS wait stops this much earlier than its margin, and a
	// short OS wait covers the rest: long waits have long-tailed wake-ups,
	// short ones wake within a few µs, so the tail costs no CPU.
	splitNs = 200_000
	// longBucket is the first bucket whose waits are long (262.144 µs and up).
	longBucket = 5
	// spinYieldAfterNs: a spin this old yields on every further iteration.
	spinYieldAfterNs = 50_000
)

// Mode is how a Sleeper finishes a wait: the trade between accuracy and CPU.
// The zero value is Exact.
type Mode int

const (
	// Exact (the default) is spin-finished: OS waits with an absolute
	// deadline end a learned margin before it, and a spin on the clock
	// finishes the sleep. Never returns early; typically well under a
	// microsecond late, for the CPU time of the margin (a few µs) per sleep.
	Exact Mode = iota
	// Efficient is seed 001's compensated sleep: one OS wait that ends the
	// learned median overshoot before the deadline, and no spin. Almost no
	// CPU, but it MAY RETURN BEFORE THE DEADLINE (about half the time, by a
	// few µs) and cannot wait less than the OS's wake-up latency. The one
	// documented exception to "never early".
	Efficient
	// Spin is a pure spin on the clock with the CPU's pause hint: the most
	// accurate, and a whole core for the whole wait (it yields after 50 µs so
	// that a crowd of spinners does not starve other goroutines and
	// threads). Never returns early.
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
// late the OS wakes it.
//
// Every wait goes: OS waits with an absolute deadline (clock_nanosleep
// TIMER_ABSTIME on CLOCK_MONOTONIC, on Linux), each ending a learned margin
// before the deadline (a wait of 262 µs or more also leaves 200 µs for a
// short one, whose wake-up is tighter), then a spin on the clock with the
// CPU's pause hint. The margins are learned online (spec/estimator.md), so
// they follow the machine's load: the margin is about the 90th percentile of
// the last 32 overshoots of that wait length plus twice their spread, so a
// lasting rise in wake-up latency is followed within 4 samples, up to 3
// outliers in a full window change nothing, a large but steady overshoot
// costs only its spread, and every sample is forgotten after 32 waits of its
// length or 128 sleeps. On Linux the OS thread that does each OS wait gets a
// 1 ns timer slack (see SetTimerSlack).
//
// Guarantees in Exact and Spin mode: never returns before the deadline by
// time.Now's monotonic reading; a signal (EINTR) resumes the OS wait toward
// the same absolute deadline; a deadline in the past or a non-positive
// duration returns at once. At most max(1, runtime.NumCPU()-1) goroutines of
// the process spin at once; a sleeper that finds every spin slot taken ends
// with an OS wait straight to the deadline (late by the wake-up latency,
// never early).
//
// Cost: one clock read (~28 ns) for a past deadline; otherwise one or two OS
// waits plus a spin of the learned margin, typically a few µs of CPU per
// sleep.
//
// A Sleeper is not safe for concurrent use, like bufio.Reader: give each
// goroutine its own (the package functions Sleep and SleepUntil share a pool
// of them). The zero value is an Exact sleeper ready to use.
type Sleeper struct {
	p         platform
	mode      Mode
	keepSlack bool
	minSpinNs uint64
	est       estimator
}

// NewSleeper returns a sleeper in the given mode on the real clock.
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

// SetMode switches the mode; the learned margins are kept.
func (s *Sleeper) SetMode(m Mode) { s.mode = m }

// SetTimerSlack says whether the OS thread that does each OS wait gets a
// 1 ns Linux timer slack (the default, true). Timer slack is per thread and
// Go runs goroutines on a pool of threads: a thread keeps the 1 ns slack
// after keeptime set it, which makes other timed waits on that thread
// (including the Go runtime's own) wake more punctually, nothing else. With
// false the kernel's default (50 µs) stays, and the estimator learns the
// larger overshoot and spins for it. Ignored off Linux.
func (s *Sleeper) SetTimerSlack(set1ns bool) {
	s.keepSlack = !set1ns
	if sys, ok := s.p.(*system); ok {
		sys.keepSlack = s.keepSlack
	}
}

// SetMinSpin sets the shortest spin that finishes an Exact sleep (default 0:
// only the learned margin); the last OS wait then ends at least d before the
// deadline. The learned margin covers roughly the 97th percentile of the
// OS's wake-up overshoot for a spin of a few µs; on virtual machines the
// rarest wake-ups come tens of µs late, and a spin that covers them gives
// spin-level p99 accuracy at a fixed CPU price of d ÷ the sleep's length.
// A negative d counts as 0.
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
	s.sleepUntilNs(satAdd(p.now(), durationNs(d)))
}

// SleepUntil pauses the calling goroutine until t: in Exact and Spin mode it
// never returns before time.Now() reaches t by its monotonic reading. A t in
// the past returns at once. A t without a monotonic reading (time.Date,
// time.Unix, t.Round(0)) is placed by the wall clock as it reads at the
// call.
func (s *Sleeper) SleepUntil(t time.Time) {
	p := s.platform()
	if sys, ok := p.(*system); ok {
		s.sleepUntilNs(sys.c.deadlineNs(t))
		return
	}
	// Simulated platforms have their own clock: t is taken relative to the
	// real clock and placed on theirs.
	s.sleepUntilNs(satAdd(p.now(), durationNs(time.Until(t))))
}

// sleepUntilNs is the algorithm of spec/sleep.md: it sleeps until deadline on
// the platform's clock and returns the first clock reading after the wait.
func (s *Sleeper) sleepUntilNs(deadline uint64) uint64 {
	p := s.platform()
	now := p.now()
	if now >= deadline {
		return now
	}
	p.prepareThread()
	s.est.beginSleep()
	switch s.mode {
	case Spin:
		return spinUntil(p, deadline, now, 0)
	case Efficient:
		if wait, ok := planEfficient(&s.est, deadline-now); ok {
			now = s.osWait(p, now, wait)
		}
		return now
	default: // Exact, and any out-of-range Mode value
		for {
			wait, ok := planExact(&s.est, deadline-now, s.minSpinNs)
			if !ok {
				return finish(p, deadline, now, s.minSpinNs)
			}
			now = s.osWait(p, now, wait)
			if now >= deadline {
				return now // overslept: late, nothing left to do
			}
		}
	}
}

// osWait is one planned OS wait of waitNs from now, resumed toward the same
// absolute target after signals; it records the overshoot (an interrupted
// attempt records nothing) and returns the clock reading after it.
func (s *Sleeper) osWait(p platform, now, waitNs uint64) uint64 {
	target := satAdd(now, waitNs)
	waitThroughSignals(p, target)
	woke := p.now()
	s.est.observe(waitNs, satSub(woke, target))
	return woke
}

func waitThroughSignals(p platform, target uint64) {
	for p.osWaitUntil(target) == waitInterrupted {
	}
}

// finish is the last phase of an Exact sleep: spin if a spin slot is free,
// else an OS wait straight to the deadline (late, never early).
func finish(p platform, deadline, now, minSpin uint64) uint64 {
	if p.tryBeginSpin() {
		defer p.endSpin()
		return spinUntil(p, deadline, now, minSpin)
	}
	for now < deadline {
		waitThroughSignals(p, deadline)
		now = p.now()
	}
	return now
}

// spinUntil spins on the clock until deadline: the pause hint for the
// planned length of a spin, max(50 µs, minSpin), then a yield on every
// iteration. (The spec's interrupt check every 10 ms of yielding has nothing
// to check in Go: there is no way to stop a Sleep early.)
func spinUntil(p platform, deadline, start, minSpin uint64) uint64 {
	pauseFor := max(spinYieldAfterNs, minSpin)
	now := start
	for now < deadline {
		if now-start < pauseFor {
			p.relax()
		} else {
			p.yield()
		}
		now = p.now()
	}
	return now
}

// planExact is the next OS wait of an Exact sleep with remaining ns to go:
// the longest wait L >= minOsWaitNs whose own bucket's gap (the larger of its
// margin and minSpin, plus splitNs for long waits) still fits before the
// deadline, searching buckets from bucketOf(remaining) down. ok == false
// means spin.
func planExact(e *estimator, remaining, minSpin uint64) (wait uint64, ok bool) {
	if remaining < minOsWaitNs {
		return 0, false
	}
	for b := bucketOf(remaining); b >= 0; b-- {
		gap := max(e.margin(b), minSpin)
		if b >= longBucket {
			gap = satAdd(gap, splitNs)
		}
		if remaining < gap {
			continue
		}
		l := min(remaining-gap, bucketHi(b))
		if l >= bucketLo(b) && l >= minOsWaitNs {
			return l, true
		}
	}
	return 0, false
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
