//go:build !linux || keeptime_fallback

package keeptime

import (
	"errors"
	"runtime"
	"time"
)

// Other operating systems: the documented fallback (also built on Linux
// with -tags keeptime_fallback, so that its tests run there too). The clock is Go's
// monotonic reading (nanoseconds since the package's first use), the OS wait
// is time.Sleep of the remaining time (relative: it never returns early,
// but how late it wakes is the Go runtime's timer granularity, about 1 ms,
// and up to 15.6 ms on Windows without a raised timer resolution), then the
// spin finishes the sleep as on Linux. There is no timer slack to set; the
// estimator learns the larger overshoot and spins for it, so waits stay
// never-early and precise at a higher CPU cost than on Linux.

// hasAbsoluteWait reports whether OS waits take an absolute deadline.
const hasAbsoluteWait = false

func monotonicOffset(time.Time) (uint64, bool) { return 0, false }

func osWaitUntil(target uint64, _ bool) osWake { return relativeWaitUntil(target) }

// osWaitUntilCtx is osWaitUntil for a sleep under a context: the relative
// wait raced against the context's Done channel.
func osWaitUntilCtx(target uint64, _ bool, ic *interruptCheck) osWake {
	return relativeWaitUntilCtx(target, ic)
}

// osYield lets other goroutines run on this P.
func osYield() { runtime.Gosched() }

var errNoTimerSlack = errors.New("keeptime: timer slack exists only on Linux")

func timerSlackNs() (uint64, error) { return 0, errNoTimerSlack }

// threadCPUNs reports that the fallback cannot read a thread CPU clock:
// the sleeper then skips cost sampling and plans with the default cost of
// an OS wait (5 µs, spec/estimator.md).
func threadCPUNs() (uint64, bool) { return 0, false }
