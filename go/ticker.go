package keeptime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MissedTicks is what a Ticker does when Wait is called after the next
// deadline already passed (the loop body overran). The zero value is Skip.
//
// The timeline of each policy on one overrun is drawn in the ticker spec
// (spec/ticker.md, "Missed ticks at a glance").
//
// Precisely, with slot k due at d_k and Wait called at now > d_k:
//   - Skip delivers at once the latest slot j with d_j <= now, reports
//     Skipped = j - k slots that were never delivered, and continues with
//     d_{j+1}: the schedule keeps its phase and there is never more than one
//     late tick in a row. The default, because a control, audio or game loop
//     that fell behind wants the current slot, not a burst of stale ones,
//     and must not drift.
//   - Burst delivers slot k at once and keeps every later deadline: Wait
//     returns immediately until the ticker is back on time. For loops that
//     must process every slot (counting, sampling).
//   - Delay delivers slot k at once and restarts the schedule from now:
//     d_{k+1} = now + period. The rate is kept, the phase is not.
type MissedTicks int

const (
	// Skip delivers the latest passed slot now and drops the ones before it
	// (the default).
	Skip MissedTicks = iota
	// Burst delivers missed slots immediately, one per Wait, until caught up.
	Burst
	// Delay delivers the late slot now and restarts the schedule from now.
	Delay
)

// String returns "skip", "burst" or "delay".
func (m MissedTicks) String() string {
	switch m {
	case Skip:
		return "skip"
	case Burst:
		return "burst"
	case Delay:
		return "delay"
	}
	return fmt.Sprintf("MissedTicks(%d)", int(m))
}

// ParseMissedTicks parses "skip", "burst" or "delay" (any case).
func ParseMissedTicks(s string) (MissedTicks, error) {
	for _, m := range []MissedTicks{Skip, Burst, Delay} {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return Skip, fmt.Errorf("keeptime: unknown missed-tick policy %q (want skip, burst or delay)", s)
}

// ErrInvalidPeriod is returned (wrapped) for a zero or negative ticker period.
var ErrInvalidPeriod = errors.New("keeptime: ticker period must be positive")

// Tick describes one slot delivered by Ticker.Wait.
type Tick struct {
	// Index is the slot number k (the first tick is 1), due at
	// start + k·period (for Delay, counted from the latest restart).
	Index uint64
	// Scheduled is when the slot was due.
	Scheduled time.Time
	// Lateness is how long after Scheduled the slot was delivered (0 if
	// earlier, which only Efficient mode can do).
	Lateness time.Duration
	// Skipped is the number of slots dropped just before this one (Skip only).
	Skipped uint64
}

// TickerStats are a Ticker's counters since it was created.
type TickerStats struct {
	// Ticks is the number of slots delivered.
	Ticks uint64 `json:"ticks"`
	// Missed counts deadlines that had passed when Wait was called: late
	// deliveries plus skipped slots.
	Missed uint64 `json:"missed"`
	// Skipped counts slots dropped by Skip.
	Skipped uint64 `json:"skipped"`
	// WorstLateness is the largest Lateness of any delivered tick.
	WorstLateness time.Duration `json:"worst_lateness_ns"`
}

// A Ticker delivers slots on a fixed-rate, absolute schedule: slot k
// (k = 1, 2, …) is due at start + k·period, where start is when the ticker
// was created (or last Reset). Deadlines are computed from the start, never
// accumulated from "now", so the loop does not drift however late its body
// runs.
//
// Unlike time.Ticker there is no channel and no background timer: Wait
// blocks the calling goroutine with a precise sleep (an Exact Sleeper of the
// ticker's own) until the next slot, and returns what happened. When the
// loop body overran a deadline, the MissedTicks policy decides.
//
// Cost per tick: one clock read plus one precise sleep (see Sleeper).
// A Ticker asked for the idle-latency hint (SetIdleHint) holds it until
// Close. A Ticker is not safe for concurrent use.
type Ticker struct {
	sleeper *Sleeper
	sched   schedule
}

// NewTicker returns a ticker with the given period and missed-tick policy,
// starting now. A zero or negative period returns an error wrapping
// ErrInvalidPeriod.
//
// The ticker waits with a new Exact sleeper of its own (the default tail
// target), started from the default profile in force now (SetDefaultProfile
// or KEEPTIME_PROFILE, as Sleeper.UseProfile would), or fresh if none is
// set. A later SetDefaultProfile does not touch the ticker. For other
// settings, or a profile of its own, give the ticker a sleeper:
// NewTickerWith.
func NewTicker(period time.Duration, policy MissedTicks) (*Ticker, error) {
	return newTickerOn(sharedSleepers.newSleeper(), period, policy)
}

// NewTickerWith returns a ticker that waits with s, starting now: the
// sleeper's mode, tail target, min spin, timer slack, idle-latency hint and
// what it has learned carry over. The ticker uses s from then on; do not
// sleep with s elsewhere while the ticker lives. A nil sleeper or a zero or
// negative period returns an error (ErrInvalidPeriod for the period).
//
//	s := keeptime.NewSleeper(keeptime.Exact)
//	s.SetTailTarget(keeptime.TailStrict)
//	t, err := keeptime.NewTickerWith(s, time.Millisecond, keeptime.Skip)
func NewTickerWith(s *Sleeper, period time.Duration, policy MissedTicks) (*Ticker, error) {
	if s == nil {
		return nil, errors.New("keeptime: NewTickerWith needs a sleeper (got nil)")
	}
	return newTickerOn(s, period, policy)
}

func newTickerOn(s *Sleeper, period time.Duration, policy MissedTicks) (*Ticker, error) {
	if period <= 0 {
		return nil, fmt.Errorf("%w (got %v)", ErrInvalidPeriod, period)
	}
	start := s.platform().now()
	return &Ticker{sleeper: s, sched: newSchedule(start, uint64(period), policy)}, nil
}

// Wait blocks until the next slot is due (or returns at once if it already
// passed) and describes the slot delivered.
//
// The slot is recorded before the last few µs of the final spin
// (spec/ticker.md): a wait that ends in a spin is recorded at its deadline,
// and the Tick returned carries the lateness of the spin's last reading.
// That spin is the last thing Wait does.
func (t *Ticker) Wait() Tick {
	p := t.sleeper.platform()
	tk, deadline, wait := t.sched.poll(p.now())
	if !wait {
		return t.tickOf(tk)
	}
	h := t.sleeper.toHandoff(deadline)
	tk = t.sched.woke(max(h.now, h.until))
	tick := t.tickOf(tk)
	if h.until <= h.now {
		return tick
	}
	now := h.finish(p)
	tick.Lateness = durationOf(now - h.until)
	return tick
}

// WaitContext is Wait that ctx can cut short: it delivers the next slot as
// Wait does, with a nil error, or returns ctx.Err() as soon as ctx is done
// before the slot is due (as promptly as Sleeper.SleepUntilContext). A
// cancelled wait consumes no slot and changes no ticker stats: the next
// Wait or WaitContext delivers the slot this one would have (spec/ticker.md,
// "The driver"). A ctx already done returns its error at once, even when a
// slot is already due, which then stays due. A nil ctx counts as
// context.Background(), and a ctx that can never be done (Done returns nil)
// waits as Wait does, at its cost. The ticker's sleeper counts a cancelled
// wait as Sleeper.SleepUntilContext says.
func (t *Ticker) WaitContext(ctx context.Context) (Tick, error) {
	ic, err := interruptCheckOf(ctx)
	if ic == nil {
		if err != nil {
			return Tick{}, err
		}
		return t.Wait(), nil
	}
	p := t.sleeper.platform()
	tk, deadline, wait := t.sched.poll(p.now())
	if !wait {
		return t.tickOf(tk), nil
	}
	// The slot is recorded only after the wait reached its deadline: a
	// cancelled one leaves the schedule as it was.
	h, err := t.sleeper.toHandoffCtx(deadline, ic)
	if err != nil {
		return Tick{}, err
	}
	tk = t.sched.woke(max(h.now, h.until))
	tick := t.tickOf(tk)
	if h.until <= h.now {
		return tick, nil
	}
	now := h.finish(p)
	tick.Lateness = durationOf(now - h.until)
	return tick, nil
}

func (t *Ticker) tickOf(tk tickNs) Tick {
	return Tick{
		Index:     tk.index,
		Scheduled: t.timeOf(tk.scheduledNs),
		Lateness:  durationOf(tk.latenessNs),
		Skipped:   tk.skipped,
	}
}

func (t *Ticker) timeOf(ns uint64) time.Time {
	return t.sleeper.platform().timeOf(ns)
}

// Stats returns the counters since the ticker was created.
func (t *Ticker) Stats() TickerStats {
	st := t.sched.stats
	return TickerStats{
		Ticks:         st.ticks,
		Missed:        st.missed,
		Skipped:       st.skipped,
		WorstLateness: durationOf(st.worstLatenessNs),
	}
}

// Reset restarts the schedule from now: the next slot is due one period
// from now. Slot numbers continue.
func (t *Ticker) Reset() {
	t.sched.reset(t.sleeper.platform().now())
}

// SetPeriod changes the period: the next slot is due one new period after
// the last delivered slot's deadline (or after the start if none was
// delivered). A zero or negative period returns an error wrapping
// ErrInvalidPeriod and leaves the ticker unchanged.
func (t *Ticker) SetPeriod(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%w (got %v)", ErrInvalidPeriod, d)
	}
	t.sched.setPeriod(uint64(d))
	return nil
}

// Period returns the current period.
func (t *Ticker) Period() time.Duration { return durationOf(t.sched.periodNs) }

// Policy returns the missed-tick policy.
func (t *Ticker) Policy() MissedTicks { return t.sched.policy }

// NextDeadline returns when the next slot is due.
func (t *Ticker) NextDeadline() time.Time { return t.timeOf(t.sched.nextDeadline()) }

// SetMode switches the mode of the ticker's sleeper (default Exact);
// Efficient ticks cost almost no CPU and may be delivered a few µs early.
func (t *Ticker) SetMode(m Mode) { t.sleeper.SetMode(m) }

// SetTailTarget sets the tail target of the ticker's sleeper (default
// TailBalanced): the share of its waits allowed to end late because the OS
// woke the goroutine after the deadline (see Sleeper.SetTailTarget).
func (t *Ticker) SetTailTarget(target TailTarget) { t.sleeper.SetTailTarget(target) }

// SetMinSpin sets the shortest spin that finishes each of the ticker's
// waits (see Sleeper.SetMinSpin; a negative d counts as 0).
func (t *Ticker) SetMinSpin(d time.Duration) { t.sleeper.SetMinSpin(d) }

// SleeperStats returns the stats of the ticker's sleeper: its waits, late
// waits, OS waits, spin time and CPU estimate (see Sleeper.Stats).
func (t *Ticker) SleeperStats() SleeperStats { return t.sleeper.Stats() }

// schedule is the pure state machine of spec/ticker.md: deadlines, policies
// and stats, with no clock of its own (spec/vectors/ticker.json drives it).
type schedule struct {
	periodNs  uint64
	policy    MissedTicks
	baseNs    uint64
	baseIndex uint64
	nextIndex uint64
	stats     scheduleStats
}

type scheduleStats struct {
	ticks, missed, skipped, worstLatenessNs uint64
}

type tickNs struct {
	index, scheduledNs, latenessNs, skipped uint64
}

// newSchedule: slot k due at startNs + k·periodNs; periodNs must be > 0.
func newSchedule(startNs, periodNs uint64, policy MissedTicks) schedule {
	return schedule{periodNs: periodNs, policy: policy, baseNs: startNs, nextIndex: 1}
}

func (s *schedule) deadline(index uint64) uint64 {
	return satAdd(satMul(index-s.baseIndex, s.periodNs), s.baseNs)
}

func (s *schedule) nextDeadline() uint64 { return s.deadline(s.nextIndex) }

// poll is Wait called at now: either wait until deadline (wait == true, then
// call woke), or a tick delivered at once.
func (s *schedule) poll(now uint64) (t tickNs, deadline uint64, wait bool) {
	due := s.nextDeadline()
	if now < due {
		return tickNs{}, due, true
	}
	index, skipped := s.nextIndex, uint64(0)
	scheduled := due
	switch s.policy {
	case Delay:
		s.baseNs, s.baseIndex = now, index
	case Burst:
	default: // Skip, and any out-of-range value
		skipped = (now - due) / s.periodNs
		index = satAdd(index, skipped)
		scheduled = s.deadline(index)
	}
	s.nextIndex = satAdd(index, 1)
	if now > due {
		s.stats.missed = satAdd(s.stats.missed, satAdd(1, skipped))
		s.stats.skipped = satAdd(s.stats.skipped, skipped)
	}
	return s.record(index, scheduled, now, skipped), 0, false
}

// woke: the wait asked for by poll ended at wokeNs.
func (s *schedule) woke(wokeNs uint64) tickNs {
	index, scheduled := s.nextIndex, s.nextDeadline()
	s.nextIndex = satAdd(index, 1)
	return s.record(index, scheduled, wokeNs, 0)
}

func (s *schedule) record(index, scheduled, at, skipped uint64) tickNs {
	late := satSub(at, scheduled)
	s.stats.ticks = satAdd(s.stats.ticks, 1)
	s.stats.worstLatenessNs = max(s.stats.worstLatenessNs, late)
	return tickNs{index: index, scheduledNs: scheduled, latenessNs: late, skipped: skipped}
}

// reset: the next slot is due one period after now.
func (s *schedule) reset(now uint64) {
	s.baseNs, s.baseIndex = now, s.nextIndex-1
}

// setPeriod: the next slot is due one new period after the last delivered
// slot's deadline. p == 0 is rejected (the schedule is unchanged).
func (s *schedule) setPeriod(p uint64) bool {
	if p == 0 {
		return false
	}
	last := s.nextIndex - 1
	s.baseNs, s.baseIndex, s.periodNs = s.deadline(last), last, p
	return true
}
