//go:build linux && !keeptime_fallback

package keeptime

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux: OS waits are clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME), the
// waiting thread's timer slack is set to 1 ns, yields are runtime.Gosched
// plus sched_yield.

// hasAbsoluteWait reports whether OS waits take an absolute deadline
// (clock_nanosleep TIMER_ABSTIME) rather than a relative duration.
const hasAbsoluteWait = true

// clockMonotonicNs reads CLOCK_MONOTONIC through a real system call
// (x/sys/unix does not use the vDSO): ~150 ns here, against ~28 ns for
// time.Since. Only used to calibrate the clock offset and by InspectClocks.
func clockMonotonicNs() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, err
	}
	return uint64(ts.Nano()), nil
}

// monotonicOffset returns the CLOCK_MONOTONIC reading, in ns, that
// corresponds to anchor's monotonic reading, rounded up.
//
// Go's monotonic reading is CLOCK_MONOTONIC minus a constant the runtime
// keeps private, so the two clocks differ by a fixed offset that can only be
// bracketed: read CLOCK_MONOTONIC, time.Since(anchor), CLOCK_MONOTONIC, and
// keep the narrowest of a few dozen brackets (~170 ns wide on the project's
// VM). Taking its upper end makes keeptime's clock read at most that much
// ahead of CLOCK_MONOTONIC, never behind, so an absolute OS wait to t never
// wakes before t on keeptime's clock; it wakes up to ~170 ns later than
// planned, a constant the estimator learns like any other overshoot.
func monotonicOffset(anchor time.Time) (uint64, bool) {
	best, offset := ^uint64(0), uint64(0)
	for i := 0; i < 64; i++ {
		a, err := clockMonotonicNs()
		since := time.Since(anchor)
		b, err2 := clockMonotonicNs()
		if err != nil || err2 != nil || since < 0 || b < a || uint64(since) > b {
			return 0, false
		}
		if b-a < best {
			best, offset = b-a, b-uint64(since)
		}
	}
	return offset, true
}

// osWaitUntil blocks in clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until
// target (keeptime clock ns). It reports waitInterrupted when a signal
// handler ran (EINTR; Go's own SIGURG preemption and SIGPROF can do that).
//
// Timer slack is a property of the thread, not of the goroutine, so the
// slack is checked and the wait made on one thread: without care the Go
// scheduler may move the goroutine to another thread between setting the
// slack and sleeping, and the sleep would pay that thread's 50 µs default.
// A sleeper alone locks the goroutine to its thread for the call (the lock
// is held only here, not during the spin: a locked goroutine that yields
// costs a thread hand-off of several µs). While the Exact sleepers could
// hold every P, clockNanosleepHandingOffP does all of it in one nosplit
// function instead, which hands the P off for the wait and needs no lock.
func osWaitUntil(target uint64, setSlack bool) osWake {
	if !clk().absolute {
		return relativeWaitUntil(target)
	}
	// 2^31 - 1 s (68 years of uptime) fits every architecture's Timespec.Sec;
	// a later target waits until then and the algorithm plans again.
	const maxSec = 1<<31 - 1
	sec, nsec := target/1e9, target%1e9
	if sec > maxSec {
		sec, nsec = maxSec, 0
	}
	ts := unix.NsecToTimespec(int64(sec*1e9 + nsec))
	var interrupted bool
	if sleepersMayHoldEveryP() {
		interrupted = clockNanosleepHandingOffP(&ts, setSlack) == syscall.EINTR
	} else {
		interrupted = clockNanosleepLocked(&ts, setSlack) == unix.EINTR
	}
	if interrupted {
		return waitInterrupted
	}
	return waitCompleted
}

// clockNanosleepLocked is clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ts)
// through syscall.Syscall (the P stays attached to the sleeping thread
// until sysmon retakes it), the goroutine locked to its thread.
func clockNanosleepLocked(ts *unix.Timespec, setSlack bool) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if setSlack {
		ensureTimerSlack1ns()
	}
	return unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, ts, nil)
}

// clockNanosleepHandingOffP is clock_nanosleep(CLOCK_MONOTONIC,
// TIMER_ABSTIME, ts) entered the way the Go runtime enters a system call it
// knows will block (entersyscallblock): the goroutine's P is handed to
// another thread at once, not left attached to the sleeping thread until
// sysmon retakes it. osWaitUntil uses it while the goroutines inside an
// Exact sleep could hold every P (sleepersMayHoldEveryP).
//
// Why: syscall.Syscall (entersyscall) keeps the P attached for the whole
// wait. With as many sleeping goroutines as Ps, every P can then be held by
// a thread asleep in clock_nanosleep while woken goroutines wait in the run
// queue, and sysmon retakes a P only after seeing the same system call at
// two of its ticks, which back off to 10 ms: with OS waits of ~1 ms it never
// does. On the 2-vCPU test VM a crowd of 16 goroutines × 1 ms then ran one
// sleep per P per ms, every sleep ~7 ms late at ~3 % CPU (GODEBUG=schedtrace
// showed 2 Ps busy, ~10 goroutines queued, 16 threads idle), in two runs of
// six. A sleeper alone keeps syscall.Syscall: handing off costs its wake-up
// a lock to take a P back (~0.25 µs more at p50 in a quick look).
//
// No runtime.LockOSThread: a woken goroutine locked to its thread can only
// run on that thread, so with the Ps busy every wake-up would cost two
// thread hand-offs. The function is nosplit, which the compiler never
// preempts asynchronously and which has no other preemption point, so the
// slack check (raw system calls) and the wait run on one thread. Nothing
// may grow the stack between entersyscallblock and exitsyscall either, as in
// syscall.Syscall, which this is with the blocking hint; the runtime keeps
// both functions reachable for this use (go.dev/issue/67401).
//
//go:nosplit
//go:norace
func clockNanosleepHandingOffP(ts *unix.Timespec, setSlack bool) syscall.Errno {
	if setSlack {
		slack, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0, 0, 0, 0)
		if e != 0 || slack != 1 {
			// Best effort, as in ensureTimerSlack1ns.
			_, _, _ = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0, 0, 0, 0)
		}
	}
	entersyscallblock()
	_, _, errno := syscall.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	exitsyscall()
	return errno
}

//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// ensureTimerSlack1ns sets the calling thread's timer slack to 1 ns unless it
// already is; the caller holds runtime.LockOSThread.
//
// Once per thread, found out by asking the thread itself: telling Go's
// threads apart costs a system call anyway (gettid is not in the vDSO), and
// PR_GET_TIMERSLACK (~90 ns, a raw system call that cannot block) answers the
// real question, immune to thread-id reuse and to someone else resetting the
// slack. So each OS wait pays one cheap system call, and a thread's first one
// pays a second (PR_SET_TIMERSLACK).
func ensureTimerSlack1ns() {
	slack, _, errno := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0, 0, 0, 0)
	if errno == 0 && slack == 1 {
		return
	}
	// Best effort: if the kernel refuses, waits are still never early; the
	// estimator just learns the larger overshoot.
	_, _, _ = unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0, 0, 0, 0)
}

// osYield gives the processor away twice over: runtime.Gosched lets other
// goroutines of this process run on our P, sched_yield lets other threads
// (of any process) run on our CPU.
func osYield() {
	runtime.Gosched()
	_, _, _ = unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
}

// timerSlackNs is the calling thread's timer slack (PR_GET_TIMERSLACK).
func timerSlackNs() (uint64, error) {
	n, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return 0, err
	}
	return uint64(n), nil
}

// threadCPUNs reads the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID,
// a real system call here, ~150 ns: x/sys/unix does not use the vDSO). The
// sleeper reads it around one planned OS wait in eight, holding the
// goroutine on its thread in between.
func threadCPUNs() (uint64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return uint64(ts.Nano()), true
}
