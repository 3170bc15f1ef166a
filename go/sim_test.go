package keeptime

import (
	"math"
	"time"
)

// simPlatform is simulated time, with the semantics of spec/sleep.md
// "Vectors" and the Rust core's SimPlatform (crates/keeptime/src/sim.rs): the
// clock moves only when the algorithm acts. An OS wait issued at now toward t
// wakes at max(now, t) + o, o the next scripted overshoot (else the default),
// unless the next scripted interrupt i satisfies now + i < t: then the clock
// becomes now + i and the wait reports interrupted. relax() advances the
// clock by spinStep, yield() by yieldStep, reading it costs nothing,
// tryBeginSpin answers slotsFree, cpus() answers cpuCount (default: no
// limit, never a crowd) and enterSleep() counts this world's sleepers inside
// a sleep plus otherSleepers (the other threads the simulation says are
// sleeping). The simulated thread CPU clock advances by
// waitCost per completed OS wait (an interrupted one costs nothing) and by
// every relax and yield step.
//
// A sleep under a context makes its OS waits through osWaitCancellable,
// which here is osWaitUntil: the scripted interrupts stand for the wake-up
// a done context sends (and for signals). The hooks atWait and atYield let
// a test cancel the context at a chosen point of a sleep.
type simPlatform struct {
	clock            uint64
	overshoots       []uint64
	defaultOvershoot uint64
	interrupts       []uint64
	spinStep         uint64
	yieldStep        uint64
	slotsFree        bool
	spinning         bool
	cpuCount         int
	otherSleepers    int
	sleepers         int // this world's sleepers inside an Exact sleep
	// panicAtWait, when set, makes the next OS wait panic (a way out of a
	// sleep other than returning).
	panicAtWait     bool
	waits           []simWait
	relaxes, yields uint64
	prepares        int
	waitCost        uint64
	cpu             uint64
	locked          int // lockThread depth
	cpuReads        int
	// released, releasedAt and relaxesAtRelease: whether the spin slot was
	// given back, and the clock and the count of relax steps when it last
	// was (a sleep's hand-off gives it back before its last steps).
	released                     bool
	releasedAt, relaxesAtRelease uint64
	// cancellableWaits counts the OS waits made through osWaitCancellable.
	cancellableWaits int
	// atWait, when set, runs as each OS wait is issued (before it waits);
	// atYield after each yield step.
	atWait, atYield func()
}

// deadlineOf places t relative to the real clock on the simulated one.
func (s *simPlatform) deadlineOf(t time.Time) uint64 {
	return satAdd(s.clock, durationNs(time.Until(t)))
}

// timeOf is ns since an arbitrary origin.
func (s *simPlatform) timeOf(ns uint64) time.Time { return time.Unix(0, 0).Add(durationOf(ns)) }

func (s *simPlatform) setKeepSlack(bool) {}

// simWait is one OS wait: [issued, target, woke, interrupted] in the vectors.
type simWait struct {
	issued, target, woke uint64
	interrupted          bool
}

func newSim(start uint64) *simPlatform {
	return &simPlatform{clock: start, spinStep: 100, yieldStep: 1_000, slotsFree: true, cpuCount: math.MaxInt}
}

func (s *simPlatform) now() uint64 { return s.clock }

func (s *simPlatform) advanceTo(t uint64) { s.clock = max(s.clock, t) }

func (s *simPlatform) osWaitCancellable(target uint64, _ *interruptCheck) osWake {
	s.cancellableWaits++
	return s.osWaitUntil(target)
}

func (s *simPlatform) osWaitUntil(target uint64) osWake {
	if s.atWait != nil {
		s.atWait()
	}
	issued := s.clock
	if s.panicAtWait {
		s.panicAtWait = false
		panic("simulated: the OS wait panicked")
	}
	if len(s.interrupts) > 0 {
		after := s.interrupts[0]
		s.interrupts = s.interrupts[1:]
		if at := satAdd(issued, after); at < target {
			s.clock = at
			s.waits = append(s.waits, simWait{issued, target, at, true})
			return waitInterrupted
		}
	}
	s.cpu = satAdd(s.cpu, s.waitCost)
	over := s.defaultOvershoot
	if len(s.overshoots) > 0 {
		over, s.overshoots = s.overshoots[0], s.overshoots[1:]
	}
	s.clock = satAdd(max(issued, target), over)
	s.waits = append(s.waits, simWait{issued, target, s.clock, false})
	return waitCompleted
}

func (s *simPlatform) relax() {
	s.clock = satAdd(s.clock, s.spinStep)
	s.cpu = satAdd(s.cpu, s.spinStep)
	s.relaxes++
}

func (s *simPlatform) yield() {
	s.clock = satAdd(s.clock, s.yieldStep)
	s.cpu = satAdd(s.cpu, s.yieldStep)
	s.yields++
	if s.atYield != nil {
		s.atYield()
	}
}

func (s *simPlatform) tryBeginSpin() bool {
	if s.slotsFree {
		s.spinning = true
	}
	return s.slotsFree
}

func (s *simPlatform) endSpin() {
	s.spinning = false
	s.released, s.releasedAt, s.relaxesAtRelease = true, s.clock, s.relaxes
}

func (s *simPlatform) enterSleep() int {
	s.sleepers++
	return s.sleepers + s.otherSleepers
}

func (s *simPlatform) leaveSleep() { s.sleepers = max(s.sleepers-1, 0) }

func (s *simPlatform) cpus() int { return s.cpuCount }

func (s *simPlatform) prepareThread() { s.prepares++ }

func (s *simPlatform) threadCPU() (uint64, bool) {
	s.cpuReads++
	return s.cpu, true
}

func (s *simPlatform) lockThread() { s.locked++ }

func (s *simPlatform) unlockThread() { s.locked-- }
