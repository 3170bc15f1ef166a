package keeptime

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"time"
)

// IdleHint is an opt-in idle-latency hint: the longest CPU wake-up latency,
// in whole microseconds, the kernel should allow while a Sleeper or Ticker
// that asked for it lives (until Close). keeptime holds it as a PM QoS CPU
// latency request on /dev/cpu_dma_latency (Linux), the request cyclictest
// holds at 0 for its whole run (spec/idle-hint.md in the repository).
//
// With a cpuidle driver that has deep or polling states (haltpoll,
// intel_idle, acpi_idle) OS waits then wake sooner and tighter, so the
// learned margins shrink and exact sleeps cost less CPU. Recorded on an AMD
// EPYC KVM guest with haltpoll: wake-ups 15 µs late at p50 instead of
// 26 µs, and the CPU the best plan (the repository's oracle) needs for 1 %
// late sleeps at 1 ms fell from 6.6 % to 2.15 %. With no cpuidle driver ("none") the CPUs already idle by
// polling or hlt, and the hint changes little.
//
// PRICE: idle CPUs poll instead of sleeping, on every CPU of the machine,
// for as long as the hint is held: more power and heat, and on a virtual
// machine the host sees the vCPUs as busy. Ask for it only for the time
// precise waits matter, and Close the sleeper after.
//
// The request is per process and reference-counted: the first live hint
// opens the device, the strictest (lowest) value among live hints is in
// force, and the last one released closes the device, which ends the
// kernel's request. Writing it needs root or write access to the device;
// when it is refused the sleeper works exactly as without it, the refusal
// is logged once per process with the standard log package, and
// Sleeper.IdleHintStatus says why.
//
// The zero IdleHint is 0 µs (IdleHintZero), the usual choice. Make others
// with NewIdleHint or IdleHintMicros, which reject what is out of range.
type IdleHint struct {
	us int32
}

// IdleHintZero asks for a wake-up latency of 0 µs, cyclictest's value: idle
// CPUs poll.
var IdleHintZero = IdleHint{}

// MaxIdleHintMicros is the largest hint, in µs: the kernel reads an s32.
const MaxIdleHintMicros = math.MaxInt32

// ErrInvalidIdleHint is returned (wrapped) for a negative hint or one past
// MaxIdleHintMicros.
var ErrInvalidIdleHint = errors.New("keeptime: idle-latency hint must be 0 to 2147483647 µs")

// NewIdleHint returns the hint for a wake-up latency of at most maxLatency,
// truncated to whole microseconds (a lower value is a stricter bound, so
// 1.9 µs asks for 1 µs). A negative maxLatency, or one of 2147483648 µs or
// more, returns an error wrapping ErrInvalidIdleHint that names the value.
func NewIdleHint(maxLatency time.Duration) (IdleHint, error) {
	us := maxLatency / time.Microsecond
	if maxLatency < 0 || us > MaxIdleHintMicros {
		return IdleHint{}, fmt.Errorf("%w (got %v)", ErrInvalidIdleHint, maxLatency)
	}
	return IdleHint{us: int32(us)}, nil
}

// IdleHintMicros returns the hint for a wake-up latency of at most us
// microseconds. A negative us, or one past MaxIdleHintMicros, returns an
// error wrapping ErrInvalidIdleHint that names the value.
func IdleHintMicros(us int64) (IdleHint, error) {
	if us < 0 || us > MaxIdleHintMicros {
		return IdleHint{}, fmt.Errorf("%w (got %d µs)", ErrInvalidIdleHint, us)
	}
	return IdleHint{us: int32(us)}, nil
}

// Micros returns the hint in microseconds.
func (h IdleHint) Micros() int32 { return h.us }

// Duration returns the hint as a duration.
func (h IdleHint) Duration() time.Duration { return time.Duration(h.us) * time.Microsecond }

// String returns the hint in microseconds, e.g. "0 µs".
func (h IdleHint) String() string { return strconv.Itoa(int(h.us)) + " µs" }

// IdleHintState says whether a sleeper's idle-latency hint is in force.
type IdleHintState int

const (
	// IdleHintNotAsked: no hint was set, or it was cleared or closed.
	IdleHintNotAsked IdleHintState = iota
	// IdleHintHeld: the process holds the request; IdleHintStatus.InForce is its value.
	IdleHintHeld
	// IdleHintRefused: the device could not be opened or written;
	// IdleHintStatus.Err says why. The sleeper works as without the hint.
	IdleHintRefused
)

// String returns "not asked", "held" or "refused".
func (s IdleHintState) String() string {
	switch s {
	case IdleHintNotAsked:
		return "not asked"
	case IdleHintHeld:
		return "held"
	case IdleHintRefused:
		return "refused"
	}
	return fmt.Sprintf("IdleHintState(%d)", int(s))
}

// IdleHintStatus is what became of a sleeper's idle-latency hint.
type IdleHintStatus struct {
	State IdleHintState
	// Asked is the hint the sleeper asked for (Held or Refused).
	Asked IdleHint
	// InForce is the value the process's request holds (Held): the
	// strictest live hint of the process, at most Asked.
	InForce IdleHint
	// Err says why the hint was refused (Refused): an *IdleHintError.
	Err error
}

// String says the state in one line, e.g. "held: 0 µs in force (asked 0 µs)".
func (st IdleHintStatus) String() string {
	switch st.State {
	case IdleHintHeld:
		return fmt.Sprintf("held: %v in force (asked %v)", st.InForce, st.Asked)
	case IdleHintRefused:
		return fmt.Sprintf("refused (asked %v): %v", st.Asked, st.Err)
	}
	return st.State.String()
}

// idleHintSlot is a sleeper's hint: what it asked for and what it holds.
type idleHintSlot struct {
	asked bool
	want  IdleHint
	hold  *idleHold
	err   error
	// holder is the PM QoS holder; nil means the process's (pmqos()).
	holder *pmqosHolder
}

func (sl *idleHintSlot) pmqos() *pmqosHolder {
	if sl.holder == nil {
		return pmqos()
	}
	return sl.holder
}

// set asks for h, holding it before letting go of the previous hint, so
// that the device is not closed and reopened in between.
func (sl *idleHintSlot) set(h IdleHint) {
	if sl.hold != nil && sl.want == h {
		return
	}
	hold, err := sl.pmqos().acquire(h.us)
	if hold != nil {
		// The backstop for a sleeper dropped without Close; not the
		// contract: a finalizer runs at some GC after, or never.
		runtime.SetFinalizer(hold, func(d *idleHold) { _ = d.release() })
	}
	old := sl.hold
	*sl = idleHintSlot{asked: true, want: h, hold: hold, err: err, holder: sl.holder}
	if old != nil {
		runtime.SetFinalizer(old, nil)
		_ = old.release()
	}
}

// clear releases the hint, if any; the error is that of closing the device
// when this was the process's last hint.
func (sl *idleHintSlot) clear() error {
	old := sl.hold
	*sl = idleHintSlot{holder: sl.holder}
	if old == nil {
		return nil
	}
	runtime.SetFinalizer(old, nil)
	return old.release()
}

func (sl *idleHintSlot) status() IdleHintStatus {
	switch {
	case !sl.asked:
		return IdleHintStatus{}
	case sl.hold == nil:
		return IdleHintStatus{State: IdleHintRefused, Asked: sl.want, Err: sl.err}
	}
	inForce := sl.want
	if us, ok := sl.hold.h.inForce(); ok && us <= sl.want.us {
		inForce = IdleHint{us: us}
	}
	return IdleHintStatus{State: IdleHintHeld, Asked: sl.want, InForce: inForce}
}

// SetIdleHint asks the kernel to keep CPU wake-up latency at most h while
// this sleeper holds the hint, that is until ClearIdleHint or Close (see
// IdleHint for what it does and its PRICE: idle CPUs poll, more power, and
// a VM's host sees its vCPUs as busy). It replaces a previous hint of this
// sleeper. The request is shared by the whole process: the strictest live
// hint is in force.
//
// It never fails the sleeper: when the device cannot be opened or written
// (no such device, not root) the sleeper works exactly as without the hint,
// the refusal is logged once per process with the standard log package,
// and IdleHintStatus reports it.
//
// Go has no destructors: the sleeper holds the hint until Close. A
// finalizer releases a hint whose sleeper was dropped without Close, at
// some later garbage collection; do not rely on it.
func (s *Sleeper) SetIdleHint(h IdleHint) { s.hint.set(h) }

// ClearIdleHint releases this sleeper's idle-latency hint, if any; the
// process's request ends with its last live hint.
func (s *Sleeper) ClearIdleHint() { _ = s.hint.clear() }

// IdleHintStatus reports this sleeper's idle-latency hint: not asked, held
// (and the value in force), or refused (and why).
func (s *Sleeper) IdleHintStatus() IdleHintStatus { return s.hint.status() }

// Close releases what the sleeper holds beyond memory: its idle-latency
// hint (see SetIdleHint), which it holds until Close. The sleeper can
// still sleep afterwards, without the hint. The error is that of closing
// /dev/cpu_dma_latency when this was the process's last hint; the kernel's
// request has ended either way. Closing twice is harmless.
func (s *Sleeper) Close() error { return s.hint.clear() }

// SetIdleHint asks for an idle-latency hint while the ticker holds it,
// until ClearIdleHint or Close (see Sleeper.SetIdleHint and IdleHint, with
// its PRICE: idle CPUs poll). Never fails the ticker.
func (t *Ticker) SetIdleHint(h IdleHint) { t.sleeper.SetIdleHint(h) }

// ClearIdleHint releases the ticker's idle-latency hint, if any.
func (t *Ticker) ClearIdleHint() { t.sleeper.ClearIdleHint() }

// IdleHintStatus reports the ticker's idle-latency hint: not asked, held
// (and the value in force), or refused (and why).
func (t *Ticker) IdleHintStatus() IdleHintStatus { return t.sleeper.IdleHintStatus() }

// Close releases the ticker's idle-latency hint, which it holds until
// Close (see Sleeper.Close). The ticker can still tick afterwards.
func (t *Ticker) Close() error { return t.sleeper.Close() }
