package main

import (
	"fmt"
	"strings"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

// A method is one way of waiting, named after what it is. Each waits for d
// from start (the deadline is start + d) and returns; the runner reads the
// clock right after.
type method struct {
	name           string
	description    string
	family         string // the "family" field of spec/bench-result.md
	mayReturnEarly bool
	// defaultSlack runs the cell with the thread's timer slack as found at
	// start-up (50 µs by default) instead of 1 ns.
	defaultSlack bool
	// learns: the method's sleeper learns from its own waits (the wake-up
	// model), so its cells warm up longer (defaultWarmup).
	learns bool
	// newWaiter returns the wait function of a fresh cell, and the
	// keeptime.Sleeper behind it (nil for the other methods), whose stats
	// the cell reports.
	newWaiter func(target keeptime.TailTarget) (waiter, *keeptime.Sleeper)
}

// waiter waits until deadline = start + d.
type waiter func(deadline time.Time, d time.Duration)

var allMethods = []method{
	{
		name:        "time-sleep",
		description: "time.Sleep(d): the Go runtime's timers",
		family:      "OS sleep", defaultSlack: true,
		newWaiter: plain(func(_ time.Time, d time.Duration) { time.Sleep(d) }),
	},
	{
		// The Rust bench's name for the same thing (spec/bench-result.md).
		name:        "sleep-default-slack",
		description: "syscall.Nanosleep(d) (unix.Nanosleep): a relative nanosleep with the default timer slack",
		family:      "OS sleep", defaultSlack: true,
		newWaiter: plain(nanosleepWaiter),
	},
	{
		name:        "busy-loop",
		description: "for time.Now().Before(deadline) {}: reads the clock in a tight loop (a pure spin); a whole core",
		family:      "busy loop",
		newWaiter: plain(func(deadline time.Time, _ time.Duration) {
			for time.Now().Before(deadline) {
			}
		}),
	},
	{
		name:        "keeptime",
		family:      "keeptime",
		learns:      true,
		description: "keeptime.Sleeper, Exact at the tail target (--tail-target, default 1 %): the cheapest plan of absolute OS waits then a spin whose predicted late share meets the target; never early",
		newWaiter:   sleeperWaiter(keeptime.Exact),
	},
	{
		name:        "keeptime-relaxed",
		family:      "keeptime",
		learns:      true,
		description: "keeptime.Sleeper, Exact at the tail target TailRelaxed (5 %, whatever --tail-target says); never early",
		newWaiter:   fixedTarget(keeptime.TailRelaxed),
	},
	{
		name:        "keeptime-strict",
		family:      "keeptime",
		learns:      true,
		description: "keeptime.Sleeper, Exact at the tail target TailStrict (0.1 %, whatever --tail-target says); never early",
		newWaiter:   fixedTarget(keeptime.TailStrict),
	},
	{
		name:           "keeptime-efficient",
		family:         "keeptime",
		learns:         true,
		description:    "keeptime.Sleeper, Efficient: one OS wait shortened by the learned median overshoot; may return early",
		mayReturnEarly: true,
		newWaiter:      sleeperWaiter(keeptime.Efficient),
	},
	{
		name:        "keeptime-spin",
		family:      "keeptime",
		description: "keeptime.Sleeper, Spin: pure spin with the pause hint, yielding after 50 µs while the deadline is more than 20 µs away",
		newWaiter:   sleeperWaiter(keeptime.Spin),
	},
}

// defaultMethods are the ones run without --methods.
var defaultMethods = []string{"time-sleep", "sleep-default-slack", "busy-loop", "keeptime", "keeptime-efficient"}

// plain is a method without a keeptime.Sleeper.
func plain(w waiter) func(keeptime.TailTarget) (waiter, *keeptime.Sleeper) {
	return func(keeptime.TailTarget) (waiter, *keeptime.Sleeper) { return w, nil }
}

// sleeperWaiter waits with one Sleeper per cell, so each cell learns from
// its own warm-up, as a program with one sleeper per loop would.
func sleeperWaiter(mode keeptime.Mode) func(keeptime.TailTarget) (waiter, *keeptime.Sleeper) {
	return func(target keeptime.TailTarget) (waiter, *keeptime.Sleeper) {
		s := keeptime.NewSleeper(mode)
		s.SetTailTarget(target)
		return func(deadline time.Time, _ time.Duration) { s.SleepUntil(deadline) }, s
	}
}

// fixedTarget is an Exact sleeper at a preset target, so that one run can
// compare targets against the same baselines.
func fixedTarget(target keeptime.TailTarget) func(keeptime.TailTarget) (waiter, *keeptime.Sleeper) {
	exact := sleeperWaiter(keeptime.Exact)
	return func(keeptime.TailTarget) (waiter, *keeptime.Sleeper) { return exact(target) }
}

func methodByName(name string) (method, error) {
	var names []string
	for _, m := range allMethods {
		if strings.EqualFold(m.name, strings.TrimSpace(name)) {
			return m, nil
		}
		names = append(names, m.name)
	}
	return method{}, fmt.Errorf("unknown method %q: accepted methods are %s", name, strings.Join(names, ", "))
}
