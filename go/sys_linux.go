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
	ts := absTimespec(target)
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

// absTimespec is target (keeptime clock ns, which reads CLOCK_MONOTONIC
// plus the calibrated offset, see monotonicOffset) as an absolute
// CLOCK_MONOTONIC timespec. 2^31 - 1 s (68 years of uptime) fits every
// architecture's Timespec.Sec; a later target waits until then and the
// algorithm plans again.
func absTimespec(target uint64) unix.Timespec {
	const maxSec = 1<<31 - 1
	sec, nsec := target/1e9, target%1e9
	if sec > maxSec {
		sec, nsec = maxSec, 0
	}
	return unix.NsecToTimespec(int64(sec*1e9 + nsec))
}

// Futex operations (linux/futex.h), which golang.org/x/sys/unix does not
// name.
const (
	futexWake           = 1
	futexWaitBitset     = 9
	futexPrivateFlag    = 128
	futexBitsetMatchAny = 0xffffffff
)

// osWaitUntilCtx is osWaitUntil for a sleep under a context (ic): the same
// absolute CLOCK_MONOTONIC target, the same 1 ns timer slack, the same
// choice between keeping the P under a thread lock and handing it off, but
// the wait is futex(FUTEX_WAIT_BITSET) on ic.woken with the target as its
// absolute timeout, and context.AfterFunc wakes it: it sets the word and
// calls FUTEX_WAKE (ic.wakeFutex). It reports waitCompleted on ETIMEDOUT
// (the clock then reads at least the target, as after clock_nanosleep), and
// waitInterrupted when woken (0), when the word was already set (EAGAIN: the
// context was done before the wait began) or on a signal (EINTR, as for
// clock_nanosleep: a timed futex wait is not restarted after a handler).
//
// Why a futex and not clock_nanosleep woken by a signal (tgkill of SIGURG,
// the runtime's preemption signal, to the waiting thread):
//
//   - No lost wake-up, by construction. The kernel compares the word with 0
//     and queues the waiter atomically with respect to FUTEX_WAKE; the wake
//     sets the word before waking, so it either finds the waiter queued or
//     makes it return EAGAIN at once. A signal sent after the waiter
//     checked the context but before it entered clock_nanosleep is simply
//     lost, and must be re-sent in a loop until the wait is seen to end.
//   - Nothing per thread. The word belongs to the sleep (heap memory, which
//     Go never moves), not to the thread, so no thread id has to be
//     published and no thread has to be locked for it: the crowd's
//     nosplit, lock-free path (futexWaitHandingOffP) only changes the
//     system call, and a goroutine woken there may still run on any thread.
//   - No signal seen by anyone else: a program that listens for SIGURG
//     (signal.Notify) would receive each cancellation, and one whose Go
//     handler for SIGURG is not installed (a c-archive or c-shared library)
//     would never be interrupted.
//   - The same wake-ups: both are an hrtimer sleep of the calling thread
//     with its timer slack. Interleaved on host kind D (1 ns slack, 1 000
//     waits each, overshoot of an absolute target): 100 µs waits, p50
//     28.9 µs vs 29.9 µs, p99 79 vs 80 µs; 1 ms waits, p50 53.5 vs 52.7 µs,
//     p90 76 vs 75 µs, p99 194 vs 234 µs (the tail of 10 samples). So a
//     sleeper that sleeps with and without a context learns one
//     distribution.
//
// A futex answer other than those (ENOSYS under a seccomp filter, say)
// falls back to the plain clock_nanosleep wait: never early, only not
// cancellable, and the interrupt check still runs on EINTR.
func osWaitUntilCtx(target uint64, setSlack bool, ic *interruptCheck) osWake {
	if !clk().absolute {
		return relativeWaitUntilCtx(target, ic)
	}
	if ic.stop == nil { // once per sleep (the method value allocates)
		ic.arm(ic.wakeFutex)
	}
	ts := absTimespec(target)
	var errno syscall.Errno
	if sleepersMayHoldEveryP() {
		errno = futexWaitHandingOffP(&ic.woken, &ts, setSlack)
	} else {
		errno = futexWaitLocked(&ic.woken, &ts, setSlack)
	}
	switch errno {
	case unix.ETIMEDOUT:
		return waitCompleted
	case 0, unix.EAGAIN, unix.EINTR:
		return waitInterrupted
	}
	return osWaitUntil(target, setSlack)
}

// wakeFutex is what context.AfterFunc runs once the context of a sleep
// under osWaitUntilCtx is done: set the word, then wake every waiter on it
// (at most the one sleeping goroutine). A raw system call: FUTEX_WAKE never
// blocks. Run after the sleep ended (stop raced it), it finds no waiter.
func (ic *interruptCheck) wakeFutex() {
	ic.setWoken()
	_, _, _ = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&ic.woken)), futexWake|futexPrivateFlag, 1<<31-1, 0, 0, 0)
}

// futexWaitLocked is futex(word, FUTEX_WAIT_BITSET_PRIVATE, 0, ts) with an
// absolute CLOCK_MONOTONIC timeout, through syscall.Syscall6 under a thread
// lock, as clockNanosleepLocked.
func futexWaitLocked(word *uint32, ts *unix.Timespec, setSlack bool) syscall.Errno {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if setSlack {
		ensureTimerSlack1ns()
	}
	_, _, errno := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitset|futexPrivateFlag, 0, uintptr(unsafe.Pointer(ts)), 0, futexBitsetMatchAny)
	return errno
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
		ensureTimerSlack1nsNosplit()
	}
	entersyscallblock()
	_, _, errno := syscall.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	exitsyscall()
	return errno
}

// futexWaitHandingOffP is futexWaitLocked's wait entered as
// clockNanosleepHandingOffP enters its own, for the same reason and under
// the same rules (nosplit, no thread lock, nothing that grows the stack
// between entersyscallblock and exitsyscall). word is on the heap and kept
// alive by the caller's interruptCheck, ts is on the caller's stack, which
// cannot move while the goroutine is in a system call.
//
//go:nosplit
//go:norace
func futexWaitHandingOffP(word *uint32, ts *unix.Timespec, setSlack bool) syscall.Errno {
	if setSlack {
		ensureTimerSlack1nsNosplit()
	}
	entersyscallblock()
	_, _, errno := syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitBitset|futexPrivateFlag, 0, uintptr(unsafe.Pointer(ts)), 0, futexBitsetMatchAny)
	exitsyscall()
	return errno
}

// ensureTimerSlack1nsNosplit is ensureTimerSlack1ns for the nosplit waits:
// raw system calls only, so the check and the wait after it run on one
// thread with no preemption point in between.
//
//go:nosplit
//go:norace
func ensureTimerSlack1nsNosplit() {
	slack, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_GET_TIMERSLACK, 0, 0, 0, 0, 0)
	if e != 0 || slack != 1 {
		// Best effort, as in ensureTimerSlack1ns.
		_, _, _ = syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, 1, 0, 0, 0, 0)
	}
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
