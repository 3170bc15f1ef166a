package keeptime

import (
	"context"
	"sync/atomic"
	"time"
)

// Sleeps that a context.Context can end early: the interrupt check of
// spec/sleep.md ("Signals", "spin") for Go. The check is "is the context
// done?"; it runs whenever an OS wait reports interrupted and every
// interruptPollNs while a long spin yields. What makes it prompt is the OS
// wait: with a context it is one that a done context wakes (sys_linux.go:
// a futex wait with the same absolute deadline, woken by context.AfterFunc;
// off Linux, a timer raced against ctx.Done()).
//
// The rules every context-taking wait shares (each one's doc says them):
//
//   - ctx is looked at first: a ctx already done returns ctx.Err() at once,
//     without waiting and without touching the sleeper, whatever the
//     duration or deadline (a non-positive d and a past t included), as
//     golang.org/x/time/rate.Limiter.Wait does.
//   - nil is returned only once the deadline has been reached (Exact and
//     Spin mode; Efficient mode may end a few µs early, as always). A
//     context done about when the deadline passes may give either answer.
//   - a nil ctx counts as context.Background(): nothing in the package
//     panics on bad input (go vet and staticcheck still advise passing
//     context.TODO() instead of nil).

// interruptCheck is the interrupt check of one sleep under a context. The
// plain calls (Sleep, SleepUntil, Wait) have none: a nil *interruptCheck.
type interruptCheck struct {
	ctx  context.Context
	done <-chan struct{} // ctx.Done(), never nil here
	// woken is the futex word the Linux OS wait sleeps on: 0 until the
	// context is done, then 1 (wake sets it). It is on the heap, one per
	// sleep, and a sleep's interruptCheck is never reused: a wake that
	// runs after the sleep ended touches only memory of its own.
	woken uint32
	// stop is context.AfterFunc's stop function, once an OS wait armed the
	// wake (nil before; only a sleep that makes a cancellable OS wait on
	// Linux pays for the registration). Used by the sleeping goroutine only.
	stop func() bool
}

// interruptCheckOf is the check for a sleep under ctx: nil when ctx can
// never be done (a nil ctx, which counts as context.Background, or one whose
// Done is nil: context.Background, context.TODO, context.WithoutCancel), so
// that such a sleep is the plain one at the plain one's cost; an error when
// ctx is done already (the sleep then does not begin).
func interruptCheckOf(ctx context.Context) (*interruptCheck, error) {
	if ctx == nil {
		return nil, nil
	}
	d := ctx.Done()
	if d == nil {
		return nil, nil
	}
	ic := &interruptCheck{ctx: ctx, done: d}
	if err := ic.check(); err != nil {
		return nil, err
	}
	return ic, nil
}

// check is the interrupt check: the context's error once it is done, else
// nil. A non-blocking receive: a few ns.
func (ic *interruptCheck) check() error {
	select {
	case <-ic.done:
		if err := ic.ctx.Err(); err != nil {
			return err
		}
		// A Context whose Done is closed must report an error; one that
		// does not still asked for the sleep to end, and nil here would
		// be a sleep that returns early "successfully".
		return context.Canceled
	default:
		return nil
	}
}

// arm registers wake with context.AfterFunc: wake then runs (in a goroutine
// of its own) as soon as the context is done, at once if it already is.
// Called once per sleep (while stop is nil) by the OS wait that wake wakes,
// before it waits.
func (ic *interruptCheck) arm(wake func()) {
	ic.stop = context.AfterFunc(ic.ctx, wake)
}

// setWoken marks the futex word: from now on an OS wait on it does not
// block, and one that is blocked is woken by the caller's futex wake.
func (ic *interruptCheck) setWoken() { atomic.StoreUint32(&ic.woken, 1) }

// release unregisters the wake, if armed: the context no longer refers to
// the sleep. A wake already started finishes on its own (it only touches
// ic.woken). Safe on a nil check and twice.
func (ic *interruptCheck) release() {
	if ic != nil && ic.stop != nil {
		ic.stop()
		ic.stop = nil
	}
}

// SleepContext is Sleep that ctx can cut short: it returns nil after at
// least d, or ctx.Err() as soon as ctx is done before that (see
// SleepUntilContext for how soon). A ctx that is already done returns its
// error at once, even with a non-positive d; otherwise a non-positive d
// returns nil at once, like Sleep. A nil ctx counts as
// context.Background(), and a ctx that can never be done (Done returns nil)
// sleeps as Sleep does, at its cost. Safe for concurrent use.
func SleepContext(ctx context.Context, d time.Duration) error {
	ic, err := interruptCheckOf(ctx)
	if ic == nil {
		if err == nil {
			Sleep(d)
		}
		return err
	}
	if d <= 0 {
		return nil
	}
	c := clk()
	return sleepShared(c, satAdd(c.nowNs(), durationNs(d)), ic)
}

// SleepUntilContext is SleepUntil that ctx can cut short: it returns nil
// once time.Now() has reached t by its monotonic reading, never before, or
// ctx.Err() as soon as ctx is done before that: a done context wakes the
// goroutine out of its OS wait, and a long spin notices it within 10 ms
// (see Sleeper.SleepUntilContext). A ctx that is already done returns its
// error at once, without waiting, even for a t in the past; otherwise a t in
// the past returns nil at once. A nil ctx counts as context.Background(),
// and a ctx that can never be done (Done returns nil) sleeps as SleepUntil
// does, at its cost. Safe for concurrent use.
func SleepUntilContext(ctx context.Context, t time.Time) error {
	ic, err := interruptCheckOf(ctx)
	if ic == nil {
		if err == nil {
			SleepUntil(t)
		}
		return err
	}
	c := clk()
	return sleepShared(c, c.deadlineNs(t), ic)
}

// sleepShared is a sleep of a borrowed shared sleeper until deadline under
// the check ic; the last stretch is spun here, after the sleeper is back.
func sleepShared(c *clock, deadline uint64, ic *interruptCheck) error {
	h, err := sharedSleepers.toHandoffCtx(deadline, ic)
	if err != nil {
		return err
	}
	for now := h.now; now < h.until; now = c.nowNs() {
		cpuRelax()
	}
	return nil
}

// SleepContext is Sleeper.Sleep that ctx can cut short: nil after at least
// d, or ctx.Err() as soon as ctx is done before that. The rules for a done
// or nil ctx and a non-positive d are SleepContext's (the package
// function's); the rest is SleepUntilContext's.
func (s *Sleeper) SleepContext(ctx context.Context, d time.Duration) error {
	ic, err := interruptCheckOf(ctx)
	if ic == nil {
		if err == nil {
			s.Sleep(d)
		}
		return err
	}
	if d <= 0 {
		return nil
	}
	_, err = s.sleepUntilNsCtx(satAdd(s.platform().now(), durationNs(d)), ic)
	return err
}

// SleepUntilContext is Sleeper.SleepUntil that ctx can cut short. It
// returns nil once time.Now() has reached t by its monotonic reading (in
// Exact and Spin mode never before; Efficient mode may end a few µs early,
// as always), or ctx.Err() as soon as ctx is done before that:
//
//   - during an OS wait, the done context wakes the goroutine at once (on
//     Linux a futex wait to the same absolute deadline, woken by
//     context.AfterFunc: 60–70 µs from cancel to return at the median on
//     the project's 2-vCPU VM, a few ms at worst, see the README; off
//     Linux, the timer of the wait races ctx.Done());
//   - while a long spin yields (Spin mode, a sleep whose spin outlasts its
//     plan), the context is checked every 10 ms, so up to 10 ms late;
//   - during the spin the plan wanted (the learned margin, typically tens
//     of µs, or the SetMinSpin floor), spun with the pause hint, it is not
//     checked: a cancellation then returns nil at the deadline.
//
// A ctx that is already done returns its error at once, without waiting and
// without counting a sleep, even for a t in the past (the context is looked
// at first, as golang.org/x/time/rate.Limiter.Wait does); otherwise a t in
// the past returns nil at once. A nil ctx counts as context.Background(),
// and a ctx that can never be done (Done returns nil: context.Background,
// context.TODO) takes SleepUntil's path at its cost. Other contexts pay a
// context.AfterFunc registration per sleep that makes an OS wait.
//
// Stats: a cancelled sleep counts in Sleeps (it had to wait) and never in
// Late (it did not reach its deadline). The OS waits that ran to their
// target before the cancellation count in OSWaits and CPUEstimate and are
// learned from as always, and the spin until the check counts in Spin; the
// OS wait the cancellation cut short counts nowhere and teaches nothing (an
// interrupted wait records no sample, spec/sleep.md).
func (s *Sleeper) SleepUntilContext(ctx context.Context, t time.Time) error {
	ic, err := interruptCheckOf(ctx)
	if ic == nil {
		if err == nil {
			s.SleepUntil(t)
		}
		return err
	}
	_, err = s.sleepUntilNsCtx(s.platform().deadlineOf(t), ic)
	return err
}

// toHandoffCtx is sleeperPool.toHandoff under the check ic: a cancelled
// sleep gives its sleeper back too.
func (p *sleeperPool) toHandoffCtx(deadline uint64, ic *interruptCheck) (handoff, error) {
	s, gen := p.get()
	h, err := s.toHandoffCtx(deadline, ic)
	p.put(s, gen)
	return h, err
}
