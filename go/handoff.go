package keeptime

// The hand-off of spec/sleep.md, "Hand-off": the last stretch of a
// spin-finished sleep, spun by the outermost call after the sleep has done
// all its bookkeeping.

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
