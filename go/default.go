package keeptime

import (
	"sync"
	"time"
)

// Sleep pauses the calling goroutine for at least d, typically a fraction of
// a microsecond more (Exact mode; see Sleeper). A negative or zero d returns
// at once, like time.Sleep. Safe for concurrent use. As in SleepUntil,
// the final few µs of the spin run after the borrowed sleeper is given back.
//
// It uses the default tail target (TailBalanced, 1 %); keep a Sleeper of
// your own for another target or for its Stats.
//
// Cost: one or two OS waits plus the spin the tail target needs, learned
// on this machine; see the README for measured figures.
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	c := clk()
	h := sharedSleepers.toHandoff(satAdd(c.nowNs(), durationNs(d)))
	for now := h.now; now < h.until; now = c.nowNs() {
		cpuRelax()
	}
}

// SleepUntil pauses the calling goroutine until t, never returning before
// time.Now() reaches t by its monotonic reading (Exact mode; see Sleeper). A
// t in the past returns at once. Safe for concurrent use.
//
// The borrowed sleeper does everything but the last few µs of the final
// spin: it is given back before that spin, which runs here, so the loop's
// exit is the return to the caller.
func SleepUntil(t time.Time) {
	c := clk()
	h := sharedSleepers.toHandoff(c.deadlineNs(t))
	for now := h.now; now < h.until; now = c.nowNs() {
		cpuRelax()
	}
}

// sharedSleepers are the Exact sleepers behind Sleep and SleepUntil.
//
// The Rust core keeps one estimator per thread; Go has no goroutine-local
// state, and goroutines move between threads anyway. One sleeper behind a
// mutex would serialise every sleeping goroutine, so each call borrows a
// sleeper from a free list for the duration of the sleep and gives it back:
// the lock is held for a push or a pop (tens of ns), never during a wait.
//
// Why a LIFO list and not a sync.Pool: a sync.Pool drops its items on every
// other garbage collection, and a fresh estimator starts at the 50 µs
// default margin, i.e. spins 50 µs until it has learned again; a loop that
// allocates would keep losing what it learned. The list keeps as many
// sleepers as goroutines have ever slept at once (up to maxSharedSleepers),
// and LIFO order hands the one goroutine that sleeps in a loop the same warm
// estimator every time. Concurrent sleepers learn from the same machine, so
// sharing estimators between them loses nothing.
var sharedSleepers sleeperPool

// maxSharedSleepers bounds the free list (each sleeper is ~31 KiB); sleepers
// beyond it are left to the garbage collector.
const maxSharedSleepers = 64

type sleeperPool struct {
	mu   sync.Mutex
	free []*Sleeper
}

func (p *sleeperPool) get() *Sleeper {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return s
	}
	p.mu.Unlock()
	return NewSleeper(Exact)
}

// toHandoff is a sleep of a borrowed sleeper up to its hand-off: the
// sleeper is back in the list before the caller spins the last stretch.
func (p *sleeperPool) toHandoff(deadline uint64) handoff {
	s := p.get()
	h := s.toHandoff(deadline)
	p.put(s)
	return h
}

func (p *sleeperPool) put(s *Sleeper) {
	p.mu.Lock()
	if len(p.free) < maxSharedSleepers {
		p.free = append(p.free, s)
	}
	p.mu.Unlock()
}
