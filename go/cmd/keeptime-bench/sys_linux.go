//go:build linux

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUNs is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID);
// the runner holds runtime.LockOSThread, so it is the waiting thread's.
func threadCPUNs() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano())
}

func timerSlackNs() (uint64, bool) {
	n, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	return uint64(n), err == nil
}

func setTimerSlackNs(ns uint64) {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(ns), 0, 0, 0)
}

// nanosleepWaiter is a relative nanosleep, resumed with the remainder after
// a signal, as syscall.Nanosleep users write it.
func nanosleepWaiter(_ time.Time, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// processCPUNs is the whole process's CPU time, user + system, every
// thread (getrusage RUSAGE_SELF).
func processCPUNs() (uint64, bool) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return uint64(ru.Utime.Nano() + ru.Stime.Nano()), true
}
