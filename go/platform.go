package keeptime

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// osWake is the result of one OS wait.
type osWake int

const (
	// waitCompleted: the wait ran to its target (possibly late, never early).
	waitCompleted osWake = iota
	// waitInterrupted: a signal handler ran before the target (EINTR).
	waitInterrupted
)

// platform is everything the waiting algorithm needs from the world: a
// clock, an absolute OS wait, the spin's pause hint and yield, and the
// process-wide spin slots. The algorithm (sleep.go) talks only to this, so
// the simulated platform of the tests replays spec/vectors/sleep.json
// exactly as the Rust core's SimPlatform does.
//
// Times are nanoseconds on one monotonic clock. osWaitUntil must be honest:
// after waitCompleted, now() >= target.
type platform interface {
	now() uint64
	// deadlineOf places t on this clock; timeOf is the inverse, for the
	// times a ticker reports.
	deadlineOf(t time.Time) uint64
	timeOf(ns uint64) time.Time
	// setKeepSlack says whether OS waits leave the thread's timer slack
	// alone (SetTimerSlack).
	setKeepSlack(keep bool)
	osWaitUntil(target uint64) osWake
	// osWaitCancellable is osWaitUntil for a sleep under a context: it
	// also reports waitInterrupted, at once or without waiting at all, once
	// ic's context is done (and may report it spuriously); the caller then
	// runs the interrupt check. Its wake-ups are osWaitUntil's, so the
	// estimator learns them alike.
	osWaitCancellable(target uint64, ic *interruptCheck) osWake
	relax()
	yield()
	tryBeginSpin() bool
	endSpin()
	// enterSleep counts the calling sleeper as inside an Exact sleep,
	// process-wide, and returns how many are (this one included); more
	// than cpus() makes the sleep a crowd's (spec/sleep.md, "Crowds").
	// leaveSleep undoes one enterSleep.
	enterSleep() int
	leaveSleep()
	// cpus is the number of CPUs the process may use (at least 1).
	cpus() int
	// prepareThread readies the calling thread for precise waits; called
	// once per sleep that waits, before its first OS wait.
	prepareThread()
	// threadCPU reads the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID
	// on Linux); ok is false where it cannot be read.
	threadCPU() (ns uint64, ok bool)
	// lockThread and unlockThread bracket an OS wait whose thread CPU time
	// is sampled: the goroutine must stay on one OS thread in between.
	lockThread()
	unlockThread()
}

// system is the real clock and OS of the running machine.
type system struct {
	c *clock
	// keepSlack leaves the OS thread's timer slack alone (the zero value
	// sets it to 1 ns, see osWaitUntil).
	keepSlack bool
}

func newSystem(keepSlack bool) *system {
	return &system{c: clk(), keepSlack: keepSlack}
}

func (s *system) now() uint64 { return s.c.nowNs() }

func (s *system) deadlineOf(t time.Time) uint64 { return s.c.deadlineNs(t) }

func (s *system) timeOf(ns uint64) time.Time { return s.c.timeOf(ns) }

func (s *system) setKeepSlack(keep bool) { s.keepSlack = keep }

func (s *system) osWaitUntil(target uint64) osWake { return osWaitUntil(target, !s.keepSlack) }

func (s *system) osWaitCancellable(target uint64, ic *interruptCheck) osWake {
	return osWaitUntilCtx(target, !s.keepSlack, ic)
}

func (s *system) relax() { cpuRelax() }

func (s *system) yield() { osYield() }

func (s *system) tryBeginSpin() bool { return tryBeginSpin() }

func (s *system) endSpin() { endSpin() }

func (s *system) enterSleep() int { return int(sleepers.Add(1)) }

func (s *system) leaveSleep() { sleepers.Add(-1) }

func (s *system) cpus() int { return availableCPUs() }

// prepareThread does nothing here: in Go the goroutine may run on another
// OS thread at every OS wait, so the timer slack is checked inside each OS
// wait, on the thread that makes it (see osWaitUntil).
func (s *system) prepareThread() {}

func (s *system) threadCPU() (uint64, bool) { return threadCPUNs() }

// lockThread wires the goroutine to its OS thread (runtime.LockOSThread;
// nested locks, such as the one osWaitUntil takes, are counted by Go), so
// that the two thread-CPU readings around a sampled wait read one thread.
func (s *system) lockThread() { runtime.LockOSThread() }

func (s *system) unlockThread() { runtime.UnlockOSThread() }

// spinSlots is the process-wide cap on goroutines spinning with the pause
// hint at once: max(1, CPUs - 1), CPUs being those this process may use
// (runtime.NumCPU honours the affinity mask), so a goroutine woken from its
// OS wait always finds a CPU that no pausing spinner holds. A sleeper that
// finds every slot taken follows instead (a yield on every iteration, see
// Sleeper.follow); how long the spins of a crowd may be is bounded by
// crowdSpinCap.
var spinSlots = int32(max(1, min(runtime.NumCPU()-1, math.MaxInt32)))

// spinners counts the goroutines holding a spin slot.
var spinners atomic.Int32

func tryBeginSpin() bool {
	if spinners.Add(1) > spinSlots {
		spinners.Add(-1)
		return false
	}
	return true
}

func endSpin() { spinners.Add(-1) }

// sleepers counts the goroutines of the process inside an Exact sleep
// (spec/sleep.md, enter_sleep/leave_sleep); Spin mode does not enter it.
var sleepers atomic.Int64

// numCPU is runtime.NumCPU(), read once: the CPUs of the affinity mask at
// start-up, which the Go runtime itself does not re-read.
var numCPU = max(1, runtime.NumCPU())

// availableCPUs is the number of CPUs the process may use for its
// goroutines: min(runtime.NumCPU(), runtime.GOMAXPROCS(0)). GOMAXPROCS is
// read on each call (a program may change it, and since Go 1.25 the runtime
// follows a container's CPU limit), so it is called only for a sleep that
// another sleeper shares the process with (a single sleeper is never a
// crowd).
func availableCPUs() int {
	return max(1, min(numCPU, runtime.GOMAXPROCS(0)))
}

// sleepersMayHoldEveryP reports whether the goroutines inside an Exact sleep
// are at least as many as the CPUs available (availableCPUs): their OS waits
// could then hold every P, so an OS wait hands its P off (sys_linux.go).
// GOMAXPROCS is read only when the count is below NumCPU.
func sleepersMayHoldEveryP() bool {
	n := sleepers.Load()
	return n > 0 && (n >= int64(numCPU) || n >= int64(runtime.GOMAXPROCS(0)))
}

// relativeWaitUntil is the OS wait without an absolute deadline: time.Sleep
// of what remains. time.Sleep never returns early on the monotonic clock, so
// this keeps osWaitUntil's contract; it wakes later than clock_nanosleep
// would (Go's timers have ~1 ms granularity on Linux, more elsewhere), which
// the estimator learns.
func relativeWaitUntil(target uint64) osWake {
	if now := clk().nowNs(); target > now {
		time.Sleep(durationOf(target - now))
	}
	return waitCompleted
}

// relativeWaitUntilCtx is relativeWaitUntil that ic's context cuts short:
// a timer of what remains (the same runtime timers as time.Sleep, so never
// early either) raced against the context's Done channel; a done context
// reports waitInterrupted.
func relativeWaitUntilCtx(target uint64, ic *interruptCheck) osWake {
	now := clk().nowNs()
	if target <= now {
		return waitCompleted
	}
	t := time.NewTimer(durationOf(target - now))
	select {
	case <-t.C:
		return waitCompleted
	case <-ic.done:
		t.Stop()
		return waitInterrupted
	}
}
