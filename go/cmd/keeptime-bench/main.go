// Command keeptime-bench compares ways of waiting on this machine, in Go:
// time.Sleep, syscall.Nanosleep, a busy loop on time.Now, and keeptime
// (Exact and Efficient), at 10 µs, 100 µs, 250 µs, 1 ms, 2.5 ms and 10 ms
// by default.
//
// Usage:
//
//	go run ./cmd/keeptime-bench [--durations 10us,100us,250us,1ms,2.5ms,10ms]
//	    [--methods time-sleep,sleep-default-slack,busy-loop,keeptime,keeptime-efficient]
//	    [--samples N] [--warmup N] [--tail-target balanced] [--export-json FILE]
//	    [--crowd 16] [--crowd-wait 1ms] [--crowd-for 2s] [--crowd-only] [--idle-hint US]
//
// The error of one wait is the caller's first clock reading after the call
// returns minus its deadline (start + d, start read just before the call,
// on the same monotonic clock), for every method alike: no method's own
// last reading is used, so every method pays the same one read (time.Since,
// ~28 ns) after returning, and what its return path costs after the
// deadline counts. (No Go method here returns its own reading, so there is
// no separate "return" column.) CPU % is the
// waiting thread's CPU time (CLOCK_THREAD_CPUTIME_ID, the goroutine locked to
// its thread) over wall time. It prints a table, and for the keeptime rows
// the tail target and the sleeper's own stats over the measured samples
// (late share, OS waits per sleep, CPU estimate); --export-json writes the
// project's bench result format (spec/bench-result.md), the sleeper stats
// in each spin-finished keeptime cell's "sleeper" field (tail_target_ppm,
// sleeps, late, os_waits, spin_ns, cpu_estimate_ns).
//
// Then the targets, at the durations of 250 µs, 1 ms, 2.5 ms and 10 ms that
// the run has, each met or MISSED: keeptime's p50 at most the busy loop's
// (a pure spin, the same run) + 150 ns, its share of waits more than 2 µs
// late at most the busy loop's + 1.5 points (at the default 1 % tail
// target), and no early return.
//
// Then the crowd rows (--crowd 0 turns them off): --crowd N
// goroutines at once (default 16), each sleeping --crowd-wait (1 ms) in a
// loop for --crowd-for (2 s, after as many warm-up sleeps as a keeptime
// cell at that length gets, 943 at 1 ms, or --warmup N), with
// time.Sleep as the baseline, then one keeptime Exact sleeper per
// goroutine, then (with --idle-hint US) keeptime sleepers holding the
// idle-latency hint; p50, p99, max, early, the share of sleeps more than
// 2 µs late and the whole process's CPU time (getrusage) over wall time.
// The crowd rows are printed only, not exported.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "keeptime-bench:", err)
		os.Exit(2)
	}
}

type options struct {
	durations  []time.Duration
	methods    []method
	samples    *uint64
	warmup     *uint64
	exportJSON string
	target     keeptime.TailTarget
	crowd      crowdPlan // goroutines == 0: no crowd rows
	crowdOnly  bool
	idleHint   *keeptime.IdleHint // the crowd's idle-hint row, when asked
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("keeptime-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	durations := fs.String("durations", "10us,100us,250us,1ms,2.5ms,10ms", "comma-separated wait durations")
	methods := fs.String("methods", strings.Join(defaultMethods, ","), "comma-separated methods: "+methodNames())
	samples := fs.Uint64("samples", 0, "measured waits per cell (default: 2000 below 500 µs, 1000 below 5 ms, 200 above)")
	warmup := fs.Uint64("warmup", 0, "warm-up waits per cell (default: ~50 ms worth, 10 to 1000; ~1 s worth but at least 300 where they fit in 5 s, 10 to 3000, for keeptime's Exact and Efficient sleepers, which learn)")
	tail := fs.String("tail-target", "balanced", "keeptime's tail target: relaxed (5 %), balanced (1 %), strict (0.1 %), a share (0.002) or a percentage (0.2%)")
	export := fs.String("export-json", "", "write the results in the bench result format (spec/bench-result.md) to `FILE`")
	crowd := fs.Int("crowd", 16, "crowd rows: `N` goroutines sleeping at once with keeptime, then with time.Sleep (0 = off, at most 4096)")
	crowdWait := fs.Duration("crowd-wait", time.Millisecond, "each crowd sleep")
	crowdFor := fs.Duration("crowd-for", 2*time.Second, "how long each crowd row is measured (after the warm-up: as many sleeps as a keeptime cell at --crowd-wait gets, or --warmup)")
	crowdOnly := fs.Bool("crowd-only", false, "run the crowd rows only, not the per-duration table")
	idleHint := fs.String("idle-hint", "", "add a crowd row of keeptime sleepers holding the idle-latency hint of `US` µs (0 to 2147483647; idle CPUs poll while it is held)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var o options
	for _, s := range strings.Split(*durations, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return o, fmt.Errorf("--durations: %v", err)
		}
		if d <= 0 || d > time.Hour {
			return o, fmt.Errorf("--durations: %v is not between 1ns and 1h", d)
		}
		o.durations = append(o.durations, d)
	}
	for _, s := range strings.Split(*methods, ",") {
		m, err := methodByName(s)
		if err != nil {
			return o, err
		}
		o.methods = append(o.methods, m)
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "samples":
			o.samples = samples
		case "warmup":
			o.warmup = warmup
		}
	})
	if o.samples != nil && *o.samples == 0 {
		return o, errors.New("--samples must be at least 1")
	}
	o.exportJSON = *export
	t, err := keeptime.ParseTailTarget(*tail)
	if err != nil {
		return o, fmt.Errorf("--tail-target: %v", err)
	}
	o.target = t
	if *crowd < 0 || *crowd > 4096 {
		return o, fmt.Errorf("--crowd: %d is not a goroutine count: 0 (off) to 4096", *crowd)
	}
	if *crowdWait <= 0 || *crowdWait > time.Second {
		return o, fmt.Errorf("--crowd-wait: %v is not between 1ns and 1s", *crowdWait)
	}
	if *crowdFor < *crowdWait || *crowdFor > 10*time.Minute {
		return o, fmt.Errorf("--crowd-for: %v is not between --crowd-wait (%v) and 10m", *crowdFor, *crowdWait)
	}
	if *crowdOnly && *crowd == 0 {
		return o, errors.New("--crowd-only with --crowd 0 runs nothing")
	}
	// Every method's goroutines warm up as long as keeptime's cells do at
	// that length: its sleepers learn, and the others lose nothing by it.
	crowdWarmup := defaultWarmup(method{learns: true}, *crowdWait)
	if o.warmup != nil {
		crowdWarmup = *o.warmup
	}
	o.crowd = crowdPlan{goroutines: *crowd, wait: *crowdWait, warmup: crowdWarmup, measure: *crowdFor}
	o.crowdOnly = *crowdOnly
	if *idleHint != "" {
		us, err := strconv.ParseInt(strings.TrimSpace(*idleHint), 10, 64)
		if err != nil {
			return o, fmt.Errorf("--idle-hint: %q is not a whole number of µs (0 to 2147483647)", *idleHint)
		}
		h, err := keeptime.IdleHintMicros(us)
		if err != nil {
			return o, fmt.Errorf("--idle-hint: %v", err)
		}
		if *crowd == 0 {
			return o, errors.New("--idle-hint applies to the crowd rows, which --crowd 0 turns off")
		}
		o.idleHint = &h
	}
	return o, nil
}

func methodNames() string {
	var n []string
	for _, m := range allMethods {
		n = append(n, m.name)
	}
	return strings.Join(n, ", ")
}

// plan: durations outer, methods inner, as the Rust bench.
func plan(o options) []cellPlan {
	var cells []cellPlan
	for _, d := range o.durations {
		for _, m := range o.methods {
			c := cellPlan{method: m, duration: d, samples: defaultSamples(d), warmup: defaultWarmup(m, d), target: o.target}
			if o.samples != nil {
				c.samples = *o.samples
			}
			if o.warmup != nil {
				c.warmup = *o.warmup
			}
			cells = append(cells, c)
		}
	}
	return cells
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	// Every cell runs on this one OS thread: the thread CPU clock then counts
	// the waiting goroutine, and the timer slack set per cell is the slack of
	// the thread that waits.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	created := time.Now()
	var startSlack *uint64
	if s, ok := timerSlackNs(); ok {
		startSlack = &s
	}
	m := thisMachine(startSlack)
	c := clock{anchor: time.Now()}
	var cells []cellPlan
	if !o.crowdOnly {
		cells = plan(o)
	}
	fmt.Fprintf(stderr, "keeptime-bench (Go %s): %d cells on %s/%s, %d CPUs\n",
		runtime.Version(), len(cells), m.OS, m.Arch, runtime.NumCPU())

	var results []cellResult
	for i, cell := range cells {
		fmt.Fprintf(stderr, "  [%d/%d] %s at %s\n", i+1, len(cells), cell.method.name, fmtDuration(cell.duration))
		slack := applySlack(cell.method, startSlack)
		stats, late, sleeper := runCell(c, cell)
		results = append(results, cellResult{
			Method: cell.method.name, DurationNs: uint64(cell.duration), Warmup: cell.warmup,
			TimerSlackNs: slack, Stats: stats, Sleeper: sleeper, late: late,
		})
	}
	if startSlack != nil {
		setTimerSlackNs(*startSlack) // leave the thread as it was found
	}
	if len(results) > 0 {
		printTable(stdout, results)
		printSleeperStats(stdout, results)
		printTargets(stdout, results, o.target)
	}
	if o.crowd.goroutines > 0 {
		runCrowdRows(stdout, stderr, c, o)
	}

	if o.exportJSON != "" {
		// The goroutine is locked to its thread, so one thread's CPU time is
		// the waiting goroutine's: "thread", not the "process" fallback.
		p := parameters{Schedule: "sleep", CPUClock: "thread", Samples: o.samples, Warmup: o.warmup}
		for _, d := range o.durations {
			p.DurationsNs = append(p.DurationsNs, uint64(d))
		}
		for _, mt := range o.methods {
			p.Methods = append(p.Methods, mt.name)
		}
		if err := writeJSON(o.exportJSON, newReport(created, m, p, o.methods, results)); err != nil {
			return fmt.Errorf("--export-json: %v", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", o.exportJSON)
	}
	return nil
}

// runCrowdRows measures the crowd with time.Sleep, keeptime and, when
// asked, keeptime holding the idle-latency hint, one after the other in
// this process, and prints them. (Not in the JSON: the bench result format
// has no crowd cells.)
func runCrowdRows(stdout, stderr io.Writer, c clock, o options) {
	methods := []crowdMethod{timeSleepCrowd(), keeptimeCrowd(o.target, nil)}
	if o.idleHint != nil {
		methods = append(methods, keeptimeCrowd(o.target, o.idleHint))
	}
	idle := keeptime.InspectIdleLatency()
	var rows []crowdRow
	for _, m := range methods {
		fmt.Fprintf(stderr, "  crowd: %d goroutines, %s\n", o.crowd.goroutines, m.name)
		rows = append(rows, runCrowd(c, o.crowd, m))
	}
	printCrowd(stdout, o.crowd, idle, rows)
}

// applySlack sets the waiting thread's timer slack for the method's cell and
// returns the slack now in force: the start-up slack for the OS sleeps that
// users call as they are, 1 ns for the rest (keeptime sets 1 ns itself).
func applySlack(m method, startSlack *uint64) *uint64 {
	if startSlack == nil {
		return nil
	}
	want := uint64(1)
	if m.defaultSlack {
		want = *startSlack
	}
	setTimerSlackNs(want)
	if s, ok := timerSlackNs(); ok {
		return &s
	}
	return nil
}
