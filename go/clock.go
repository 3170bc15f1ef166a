package keeptime

import (
	"math"
	"sync"
	"time"
)

// The clock keeptime waits on: Go's monotonic reading, read as
// time.Since(anchor), expressed in uint64 nanoseconds of CLOCK_MONOTONIC
// (on Linux; elsewhere nanoseconds since the anchor).
//
// Why time.Since and not unix.ClockGettime: on Linux both read
// CLOCK_MONOTONIC, but unix.ClockGettime is a real system call (~150 ns on
// the project's VM), while the Go runtime reads the clock through the vDSO.
// time.Now reads two clocks (wall and monotonic, ~49 ns); time.Since(t) of a
// Time with a monotonic reading reads only the monotonic one (~28 ns). The
// spin reads the clock in a tight loop, so its cost is the spin's resolution.
// And it is the clock users hold deadlines in: a time.Time's monotonic
// reading. Comparing readings of one clock is exact, which is how
// SleepUntil(t) guarantees never to return before t by time.Now().
//
// Absolute OS waits need CLOCK_MONOTONIC itself, so the clock carries the
// offset between the two (calibrated once, see monotonicOffset).
type clock struct {
	anchor time.Time // has a monotonic reading
	offset uint64    // keeptime ns at anchor
	// absolute says whether offset is CLOCK_MONOTONIC's reading at anchor,
	// so clock values can be handed to clock_nanosleep(TIMER_ABSTIME).
	absolute bool
}

// clk is the process-wide clock, calibrated on first use.
var clk = sync.OnceValue(func() *clock {
	c := &clock{anchor: time.Now()}
	if hasAbsoluteWait {
		c.offset, c.absolute = monotonicOffset(c.anchor)
	}
	return c
})

// nowNs is the current time in keeptime ns.
func (c *clock) nowNs() uint64 {
	return c.fromAnchor(time.Since(c.anchor))
}

// fromAnchor is the keeptime ns of the instant d after the anchor, saturating.
func (c *clock) fromAnchor(d time.Duration) uint64 {
	if d >= 0 {
		return satAdd(c.offset, uint64(d))
	}
	return satSub(c.offset, uint64(-(d+1))+1) // -d overflows for math.MinInt64
}

// deadlineNs converts t to keeptime ns. With a monotonic reading in t the
// result is exact: nowNs() >= deadlineNs(t) exactly when time.Now() is not
// before t. A Time without one (time.Date, time.Unix, t.Round(0)) is placed
// by the wall clock as it reads at the call; later wall-clock steps do not
// move the deadline.
func (c *clock) deadlineNs(t time.Time) uint64 {
	now := time.Now()
	// now.Sub(anchor) is monotonic; t.Sub(now) is monotonic when t has a
	// monotonic reading (then the sum is exactly t's reading minus the
	// anchor's), else wall. Both saturate rather than overflow.
	base := c.fromAnchor(now.Sub(c.anchor))
	d := t.Sub(now)
	if d >= 0 {
		return satAdd(base, uint64(d))
	}
	return satSub(base, uint64(-(d+1))+1)
}

// timeOf is the time.Time (with a monotonic reading) of keeptime ns, for
// reporting; values beyond time.Duration's range clamp to it.
func (c *clock) timeOf(ns uint64) time.Time {
	if ns >= c.offset {
		return c.anchor.Add(time.Duration(min(ns-c.offset, math.MaxInt64)))
	}
	return c.anchor.Add(-time.Duration(min(c.offset-ns, math.MaxInt64)))
}

// durationNs converts a non-negative duration to ns (negative gives 0).
func durationNs(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d)
}

// durationOf converts ns to a Duration, clamping at its maximum (292 years).
func durationOf(ns uint64) time.Duration {
	return time.Duration(min(ns, math.MaxInt64))
}
