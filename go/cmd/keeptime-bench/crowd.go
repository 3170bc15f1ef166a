package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	keeptime "github.com/keeptime/keeptime/go"
)

// The crowd rows: N goroutines, each sleeping 1 ms in a loop, at
// once, with keeptime and with time.Sleep as the baseline, in the same run.
//
// Goroutines are not OS threads: Go runs them on GOMAXPROCS Ps. A keeptime
// OS wait blocks its goroutine's thread in clock_nanosleep (while the
// sleepers are at least as many as the CPUs, keeptime hands the P to
// another thread at once; otherwise the runtime's sysmon retakes it), so
// the keeptime crowd runs on up to N threads; time.Sleep parks the
// goroutine on the runtime's timer heap and needs no thread while it
// waits. A woken sleeper of either kind then waits for a free P. The crowd
// goroutines are not locked to their threads: keeptime keeps a goroutine on
// its thread only for the OS wait itself, which is all it needs.

// lateThresholdNs is what the bench counts as late: more than 2 µs.
const lateThresholdNs = 2_000

// lateCount is the number of errors above lateThresholdNs.
func lateCount(errors []int64) uint64 {
	var n uint64
	for _, e := range errors {
		if e > lateThresholdNs {
			n++
		}
	}
	return n
}

// crowdPlan is one crowd measurement.
type crowdPlan struct {
	goroutines int
	wait       time.Duration // each sleep
	warmup     uint64        // sleeps per goroutine before the measurement, not measured
	measure    time.Duration // per goroutine, measured
}

// crowdMethod is one way the crowd sleeps.
type crowdMethod struct {
	name string
	// newSleeper returns one goroutine's wait (until deadline, d from its
	// start) and a release to call when it is done.
	newSleeper func() (wait func(deadline time.Time, d time.Duration), release func())
	// hint is the keeptime sleepers' idle-latency hint status (for the
	// idle-hint row), filled in by the run.
	hint *keeptime.IdleHintStatus
}

func timeSleepCrowd() crowdMethod {
	return crowdMethod{name: "time.Sleep", newSleeper: func() (func(time.Time, time.Duration), func()) {
		return func(_ time.Time, d time.Duration) { time.Sleep(d) }, func() {}
	}}
}

// keeptimeCrowd is one Exact sleeper per goroutine at the tail target, with
// the idle-latency hint when hint is not nil.
func keeptimeCrowd(target keeptime.TailTarget, hint *keeptime.IdleHint) crowdMethod {
	m := crowdMethod{name: "keeptime"}
	if hint != nil {
		m.name = "keeptime, idle hint " + hint.String()
		m.hint = &keeptime.IdleHintStatus{}
	}
	var once sync.Once
	m.newSleeper = func() (func(time.Time, time.Duration), func()) {
		s := keeptime.NewSleeper(keeptime.Exact)
		s.SetTailTarget(target)
		if hint != nil {
			s.SetIdleHint(*hint)
			once.Do(func() { *m.hint = s.IdleHintStatus() })
		}
		return func(deadline time.Time, _ time.Duration) { s.SleepUntil(deadline) }, func() { _ = s.Close() }
	}
	return m
}

// crowdRow is what one crowd method measured.
type crowdRow struct {
	method     string
	goroutines int
	stats      Stats
	late       uint64 // errors above lateThresholdNs
	cpuOK      bool   // process CPU could be read
	hint       *keeptime.IdleHintStatus
}

// runCrowd starts the goroutines, lets each warm up, then measures them all
// from one start signal to the last one's end. Process CPU (user + system,
// every thread) over that wall time is in percent of one CPU.
func runCrowd(c clock, p crowdPlan, m crowdMethod) crowdRow {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	errs := make([][]int64, p.goroutines)
	perGoroutine := int(p.measure/p.wait) + 16
	for g := 0; g < p.goroutines; g++ {
		ready.Add(1)
		done.Add(1)
		go func(g int) {
			defer done.Done()
			wait, release := m.newSleeper()
			defer release()
			sample := func() int64 {
				s := c.now()
				deadline := s + p.wait
				wait(c.anchor.Add(deadline), p.wait)
				return int64(c.now() - deadline)
			}
			for range p.warmup {
				sample()
			}
			mine := make([]int64, 0, perGoroutine)
			ready.Done()
			<-start
			for end := c.now() + p.measure; c.now() < end; {
				mine = append(mine, sample())
			}
			errs[g] = mine
		}(g)
	}
	ready.Wait()
	runtime.GC() // not during the measurement, if it can be helped
	cpu0, ok0 := processCPUNs()
	wall0 := c.now()
	close(start)
	done.Wait()
	wall := c.now() - wall0
	cpu1, ok1 := processCPUNs()
	all := slices.Concat(errs...)
	s, _ := statsOf(all, uint64(wall), cpu1-cpu0)
	return crowdRow{method: m.name, goroutines: p.goroutines, stats: s, late: lateCount(all), cpuOK: ok0 && ok1, hint: m.hint}
}

// printCrowd writes the crowd rows, the idle-latency state they ran under
// and what the columns mean.
func printCrowd(w io.Writer, p crowdPlan, idle keeptime.IdleLatencyReport, rows []crowdRow) {
	fmt.Fprintf(w, "\ncrowd: %d goroutines at once, each sleeping %s in a loop for %s after %d sleeps of warm-up; GOMAXPROCS %d, %d CPUs\n",
		p.goroutines, fmtDuration(p.wait), p.measure, p.warmup, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintln(w, "idle:", describeIdle(idle))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "goroutines\tmethod\tsamples\tp50\tp99\tmax\tearly\tlate > 2 µs\tprocess CPU %\t")
	for _, r := range rows {
		cpu := "-"
		if r.cpuOK {
			cpu = fmt.Sprintf("%.1f", r.stats.CPUPercent)
		}
		late := 0.0
		if r.stats.Samples > 0 {
			late = 100 * float64(r.late) / float64(r.stats.Samples)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%d\t%.1f %%\t%s\t\n", r.goroutines, r.method, r.stats.Samples,
			fmtNs(r.stats.P50Ns), fmtNs(r.stats.P99Ns), fmtNs(r.stats.MaxNs), r.stats.Early, late, cpu)
	}
	tw.Flush()
	for _, r := range rows {
		if r.hint != nil {
			fmt.Fprintf(w, "%s: the hint was %v\n", r.method, *r.hint)
		}
	}
	fmt.Fprintln(w, "error = first clock reading after the sleep - deadline, over every goroutine's sleeps; process CPU = user + system time of the whole process / wall time, in % of one CPU")
}

// describeIdle is the idle-latency state in one line.
func describeIdle(r keeptime.IdleLatencyReport) string {
	driver := r.Driver
	if driver == "" {
		driver = "(no cpuidle interface)"
	}
	s := "cpuidle driver " + driver
	if r.Governor != "" {
		s += ", governor " + r.Governor
	}
	switch {
	case r.InForceMicros == nil:
		s += "; PM QoS value in force unknown: " + r.ReadError
	case r.Unconstrained():
		s += fmt.Sprintf("; PM QoS CPU latency in force %d µs (unconstrained)", *r.InForceMicros)
	default:
		s += fmt.Sprintf("; PM QoS CPU latency in force %d µs (a process holds a request)", *r.InForceMicros)
	}
	if r.MayRequest {
		return s + "; this process may hold the idle-latency hint"
	}
	return s + "; this process may not hold the idle-latency hint: " + r.RequestRefused
}
