package keeptime

import (
	"fmt"
	"strings"
)

// The modes: how a Sleeper finishes a wait, the trade between accuracy and
// CPU.

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
