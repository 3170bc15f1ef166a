package keeptime

import (
	"fmt"
	"io"
	"os"
	"strings"
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

// SetDefaultProfile starts the sleepers behind Sleep and SleepUntil from
// the host profile p, as Sleeper.UseProfile starts a Sleeper of your own;
// nil starts them fresh again, as before any call. From then on each of
// them is replaced, at its next sleep and before planning it, by a new
// sleeper with the usual settings (Exact, the default tail target) that
// has not slept, started from p (or fresh). What the replaced sleepers
// learned, and their stats, are dropped; a sleep under way finishes with
// its old sleeper, which is then dropped. A Sleeper the program made
// itself is never touched.
//
// A Ticker made by NewTicker after the call waits with a sleeper started
// from p (or fresh) too; a Ticker that already exists keeps its sleeper
// and what it learned, and one made by NewTickerWith waits with the
// program's sleeper, as it is.
//
// It cannot fail: LoadProfile has already refused a bad profile, or one
// made on another machine unless IgnoreMachine was given. The model is
// loaded from p here, once, and a Profile is immutable, so p may be used
// again or dropped. Safe for concurrent use with Sleep and SleepUntil.
//
// Call it once, at start-up, before the first sleep: every later call
// throws away what Sleep and SleepUntil have learned since.
//
//	if p, err := keeptime.LoadProfile("host.profile"); err == nil {
//		keeptime.SetDefaultProfile(p)
//	} // else Sleep and SleepUntil start fresh
//
// Without a call, the default comes from the environment: KEEPTIME_PROFILE,
// when set and not empty, names a profile loaded as LoadProfile loads it
// (the machine checked). It is read once per process, when the first
// sleeper behind Sleep and SleepUntil, or of a Ticker from NewTicker, is
// made, and never if SetDefaultProfile (with a profile or nil) came first:
// the program's choice wins, and a later call replaces it. A file that
// cannot be loaded fails nothing: one line to standard error, "keeptime:
// KEEPTIME_PROFILE=PATH: MESSAGE; keeptime's own sleepers start fresh"
// (MESSAGE: LoadProfile's error, less its own "keeptime: "), and those sleepers start fresh. A
// Sleeper the program makes itself never reads it.
func SetDefaultProfile(p *Profile) {
	sharedSleepers.envOnce.Do(func() {}) // from now on KEEPTIME_PROFILE is never read
	sharedSleepers.setProfile(p)
}

// SharedProfile is what the sleepers behind Sleep and SleepUntil have
// learned, for the next run: the profile, made on this machine as
// Sleeper.Profile makes one, of the pooled sleeper that has made the most
// sleeps among those not in use at the call (of equal ones, the one a
// sleeping loop gets next). With none in the pool it is the profile of a
// sleeper as the pool would make it now: the default profile's wake-ups if
// one is in force (KEEPTIME_PROFILE's included, read here as the first new
// sleeper would if it has not been yet), else none. No sleeper is removed
// or reset. Safe for concurrent use with Sleep and SleepUntil.
//
// Save it at the end of a run, and start the next run from it:
//
//	err := keeptime.SharedProfile().WriteFile("app.profile")
//	// next run: KEEPTIME_PROFILE=app.profile ./app
//
// Such a profile carries the wake-ups of the program's own sleeps, in the
// order it makes its OS waits. A trace's (keeptime trace --profile) records
// each wait length in a block of its own, and on a host where a short wait
// right after a long one wakes later it underestimates the second wait of
// a two-wait plan.
func SharedProfile() *Profile {
	return profileOf(sharedSleepers.model(), MachineFingerprint())
}

// profileEnv names the default profile of a program that sets none
// (spec/estimator.md, "Default sleepers", "From the environment").
const profileEnv = "KEEPTIME_PROFILE"

// envProfileWarn is where the one line about a KEEPTIME_PROFILE that
// cannot be loaded goes (the tests swap it).
var envProfileWarn io.Writer = os.Stderr

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
//
// A default profile (SetDefaultProfile) is a new generation: the free list
// is dropped, a sleeper made when the list is empty starts from the
// profile's model, and a sleeper borrowed under an older generation is not
// taken back. NewTicker's sleeper is made the same way (newSleeper), but
// belongs to its ticker, never to the list.
//
// Before it makes its first sleeper (for Sleep or for NewTicker), the pool
// reads KEEPTIME_PROFILE, once, unless SetDefaultProfile came first; a
// sleeper taken from the list never waits for that.
var sharedSleepers = sleeperPool{readEnv: true}

// maxSharedSleepers bounds the free list (each sleeper is ~31 KiB); sleepers
// beyond it are left to the garbage collector.
const maxSharedSleepers = 64

type sleeperPool struct {
	mu   sync.Mutex
	free []*Sleeper // all of generation gen
	// gen counts the default profile's changes; a sleeper is of the
	// generation in force when it was borrowed.
	gen uint64
	// start is the default profile's model (spec/estimator.md, "Loading"),
	// made once and never written after; nil: sleepers start fresh.
	start *estimator
	// readEnv: the pool's default starts as the profile KEEPTIME_PROFILE
	// names, loaded by envOnce when the pool first makes a sleeper (only
	// sharedSleepers; SetDefaultProfile spends envOnce without loading).
	readEnv bool
	envOnce sync.Once
}

// setProfile makes p (nil: none) the model new sleepers start from, in a
// new generation: the free list is dropped, and a sleeper borrowed before
// is not taken back.
func (p *sleeperPool) setProfile(prof *Profile) {
	var start *estimator
	if prof != nil {
		start = prof.estimator() // outside the lock: it replays every sample
	}
	p.mu.Lock()
	p.start = start
	p.gen++
	p.free = nil
	p.mu.Unlock()
}

// model is what SharedProfile writes: a copy of the model of the sleeper in
// the free list that has made the most sleeps (of equal ones, the nearest
// the top: the next one get hands out), or, with the list empty, the model
// a new sleeper starts from now (fresh if none). Nothing in the pool
// changes. The lock is held to pick and copy; a sleeper in the list is
// used by no one.
func (p *sleeperPool) model() *estimator {
	// As starting: a new sleeper would load KEEPTIME_PROFILE first. Once
	// the list holds a sleeper, this has already been done.
	p.readEnvOnce()
	p.mu.Lock()
	defer p.mu.Unlock()
	var best *Sleeper
	for i := len(p.free) - 1; i >= 0; i-- {
		if s := p.free[i]; best == nil || s.stats.sleeps > best.stats.sleeps {
			best = s
		}
	}
	e := new(estimator)
	switch {
	case best != nil:
		*e = best.est
	case p.start != nil:
		*e = *p.start
	}
	return e
}

// get borrows a sleeper, the last one given back or a new one, and the
// generation to give it back under.
func (p *sleeperPool) get() (*Sleeper, uint64) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		gen := p.gen
		p.mu.Unlock()
		return s, gen
	}
	p.mu.Unlock()
	start, gen := p.starting()
	return sleeperFrom(start), gen
}

// newSleeper makes a sleeper the way the pool does, from the default
// profile in force now: the sleeper of a Ticker made by NewTicker.
func (p *sleeperPool) newSleeper() *Sleeper {
	start, _ := p.starting()
	return sleeperFrom(start)
}

// starting is the model a new sleeper starts from (nil: fresh) and its
// generation. The first call, if the pool reads the environment, loads
// KEEPTIME_PROFILE first; a concurrent one waits for that load.
func (p *sleeperPool) starting() (*estimator, uint64) {
	p.readEnvOnce()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.start, p.gen
}

// readEnvOnce loads KEEPTIME_PROFILE the first time it is called, if the
// pool reads the environment and SetDefaultProfile has not come first; a
// concurrent caller waits for that load.
func (p *sleeperPool) readEnvOnce() {
	if p.readEnv {
		p.envOnce.Do(p.loadEnvProfile)
	}
}

// loadEnvProfile makes the profile KEEPTIME_PROFILE names, when set and not
// empty, the default. One that LoadProfile refuses (missing, unreadable,
// malformed, another machine's) is one line on envProfileWarn, and the
// default stays none: sleepers start fresh.
func (p *sleeperPool) loadEnvProfile() {
	path := os.Getenv(profileEnv)
	if path == "" {
		return
	}
	prof, err := LoadProfile(path)
	if err != nil {
		// LoadProfile's messages start "keeptime: ", as this line does.
		msg := strings.TrimPrefix(err.Error(), "keeptime: ")
		fmt.Fprintf(envProfileWarn, "keeptime: %s=%s: %s; keeptime's own sleepers start fresh\n", profileEnv, path, msg)
		return
	}
	p.setProfile(prof)
}

// sleeperFrom is a default sleeper (Exact, the default tail target, not
// slept) started from the model start, or fresh if start is nil. The copy
// is made outside the pool's lock: start is never written after it is made.
func sleeperFrom(start *estimator) *Sleeper {
	s := NewSleeper(Exact)
	if start != nil {
		s.est = *start // as UseProfile: a copy of the loaded model
	}
	return s
}

// toHandoff is a sleep of a borrowed sleeper up to its hand-off: the
// sleeper is back in the list before the caller spins the last stretch.
func (p *sleeperPool) toHandoff(deadline uint64) handoff {
	s, gen := p.get()
	h := s.toHandoff(deadline)
	p.put(s, gen)
	return h
}

// put gives back a sleeper borrowed under generation gen; one from an
// older generation (the default profile changed during its sleep) is
// dropped.
func (p *sleeperPool) put(s *Sleeper, gen uint64) {
	p.mu.Lock()
	if gen == p.gen && len(p.free) < maxSharedSleepers {
		p.free = append(p.free, s)
	}
	p.mu.Unlock()
}
