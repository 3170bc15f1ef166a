package keeptime

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// ClockReport is what InspectClocks found: one entry per clock and reader,
// the machine's timing-relevant settings, and notes in plain words. Field
// names in JSON are snake_case with the unit in the name.
type ClockReport struct {
	// Clocks: CLOCK_MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, REALTIME,
	// REALTIME_COARSE, BOOTTIME, TAI, PROCESS_CPUTIME_ID and
	// THREAD_CPUTIME_ID read with unix.ClockGettime (Linux only), then Go's
	// own readers: time.Now and time.Since (the one keeptime waits on).
	Clocks []ClockInfo `json:"clocks"`
	// Machine is the configuration that decides how precisely anything here
	// can wait.
	Machine MachineInfo `json:"machine"`
	// IdleLatency is the cpuidle driver and governor, the PM QoS CPU
	// latency value in force and whether this process may hold a request
	// (the idle-latency hint, see IdleHint).
	IdleLatency IdleLatencyReport `json:"idle_latency"`
	// Notes says what the numbers mean for precise waiting.
	Notes []string `json:"notes"`
}

// Clock returns the entry named name ("MONOTONIC", "time.Now", …), if any.
func (r *ClockReport) Clock(name string) (ClockInfo, bool) {
	for _, c := range r.Clocks {
		if c.Name == name {
			return c, true
		}
	}
	return ClockInfo{}, false
}

// ClockInfo is what one clock is and how it behaved when read back to back.
type ClockInfo struct {
	// Name is the clock's short name: "MONOTONIC", "REALTIME", …, or the Go
	// function that reads it: "time.Now", "time.Since".
	Name string `json:"name"`
	// Description says what the clock counts.
	Description string `json:"description"`
	// Reader is how it was read: "unix.ClockGettime (system call)" or
	// "Go runtime (vDSO)".
	Reader string `json:"reader"`
	// ClockID is the clockid_t passed to clock_gettime; nil for Go's readers.
	ClockID *int `json:"clock_id"`
	// ResolutionNs is what clock_getres reports; nil for Go's readers.
	ResolutionNs *uint64 `json:"resolution_ns"`
	// GranularityNs is the smallest non-zero step seen between two
	// successive reads. For a fine clock it is bounded below by the read
	// cost, so it is an upper bound on the real step; for a coarse clock it
	// is the real step (the kernel tick). Nil if the clock never stepped.
	GranularityNs *uint64 `json:"granularity_ns"`
	// RepeatFraction is the share (0–1) of successive reads that returned
	// the same value: near 1 for a coarse clock, near 0 for a fine one.
	RepeatFraction float64 `json:"repeat_fraction"`
	// Samples is the number of successive reads examined.
	Samples uint64 `json:"samples"`
	// ReadCostNs is the cost of one read in ns: the median over batches of
	// batch time divided by reads per batch.
	ReadCostNs float64 `json:"read_cost_ns"`
	// MonotonicViolations counts reads lower than the read before: always 0
	// for a working monotonic clock; REALTIME and TAI may step back.
	MonotonicViolations uint64 `json:"monotonic_violations"`
	// Available says whether the clock could be read at all.
	Available bool `json:"available"`
	// Error says why not.
	Error string `json:"error,omitempty"`
}

// MachineInfo is the machine's timing-relevant configuration. Anything that
// could not be read is empty or nil.
type MachineInfo struct {
	// OS is runtime.GOOS ("linux", "darwin", "windows", …).
	OS string `json:"os"`
	// Arch is runtime.GOARCH ("amd64", "arm64", …).
	Arch string `json:"arch"`
	// GoVersion is runtime.Version().
	GoVersion string `json:"go_version"`
	// NumCPU is runtime.NumCPU(): the CPUs this process may run on.
	NumCPU int `json:"num_cpu"`
	// GOMAXPROCS is how many goroutines run at once; a precise wake-up needs
	// one of them free.
	GOMAXPROCS int `json:"gomaxprocs"`
	// SpinSlots is how many goroutines keeptime lets spin at once.
	SpinSlots int `json:"spin_slots"`
	// KernelRelease is `uname -r`.
	KernelRelease string `json:"kernel_release,omitempty"`
	// KernelVersion is `uname -v`; it names the preemption model (PREEMPT,
	// PREEMPT_DYNAMIC, PREEMPT_RT).
	KernelVersion string `json:"kernel_version,omitempty"`
	// Clocksource is the kernel's current clocksource: "tsc" is read in user
	// space through the vDSO; "hpet" and "acpi_pm" make every read a system
	// call.
	Clocksource string `json:"clocksource,omitempty"`
	// AvailableClocksources are those the kernel considers usable.
	AvailableClocksources []string `json:"available_clocksources,omitempty"`
	// TimerSlackNs is the inspecting OS thread's timer slack
	// (PR_GET_TIMERSLACK): how late the kernel may fire its timers. Linux
	// default 50 000; 1 on a thread keeptime has already waited on.
	TimerSlackNs *uint64 `json:"timer_slack_ns"`
	// AbsoluteWait says whether keeptime's OS waits take an absolute
	// deadline (clock_nanosleep TIMER_ABSTIME) or fall back to time.Sleep.
	AbsoluteWait bool `json:"absolute_wait"`
}

// InspectClocks reads every clock back to back and reports its resolution,
// smallest step, read cost and monotonicity, with the machine's clocksource,
// timer slack and CPU counts. It takes about 0.1 s (longer on a machine
// whose clock reads are system calls) and returns an error only if nothing
// could be measured; clocks that cannot be read are listed with Available
// false and the reason.
func InspectClocks() (*ClockReport, error) {
	// One OS thread for the whole inspection: the timer slack read is the
	// thread's, and CPU-time clocks should count one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	r := &ClockReport{}
	r.Clocks = append(r.Clocks, osClocks()...)
	r.Clocks = append(r.Clocks, goClocks()...)
	r.Machine = machineInfo()
	if slack, err := timerSlackNs(); err == nil {
		r.Machine.TimerSlackNs = &slack
	}
	r.IdleLatency = InspectIdleLatency()
	r.Notes = notes(r)
	for _, c := range r.Clocks {
		if c.Available {
			return r, nil
		}
	}
	return r, fmt.Errorf("keeptime: no clock could be read")
}

// goClocks measures Go's own clock readers.
func goClocks() []ClockInfo {
	now := ClockInfo{
		Name:        "time.Now",
		Description: "Go's current time: wall clock and monotonic reading in one (two clock reads); stepped values here are its monotonic reading",
		Reader:      "Go runtime (vDSO)",
	}
	base := time.Now()
	// Sub of two Times with monotonic readings uses only those.
	now.fill(measureReads(func() uint64 { return uint64(time.Now().Sub(base)) }))

	anchor := time.Now()
	since := ClockInfo{
		Name:        "time.Since",
		Description: "Go's monotonic reading alone (time.Since of a Time that has one): one CLOCK_MONOTONIC read; the clock keeptime waits on",
		Reader:      "Go runtime (vDSO)",
	}
	since.fill(measureReads(func() uint64 { return uint64(time.Since(anchor)) }))
	return []ClockInfo{now, since}
}

func (c *ClockInfo) fill(m readMeasurement) {
	c.Available = true
	c.ReadCostNs = m.readCostNs
	c.Samples = m.steps.pairs
	c.RepeatFraction = m.steps.repeatFraction()
	c.MonotonicViolations = m.steps.violations
	if m.steps.steps > 0 {
		g := m.steps.minStep
		c.GranularityNs = &g
	}
}

// Measurement limits: a whole inspection stays around 0.1 s on a machine
// with vDSO clocks, and bounded on one without.
const (
	readsPerBatch    = 1000
	readCostBatches  = 15
	granularityReads = 20_000
	minSteps         = 3 // a clock must step this often before its granularity is trusted
	perClockLimit    = 50 * time.Millisecond
	readChunk        = 256
)

// stepCounter is online statistics over successive readings.
type stepCounter struct {
	prev                              uint64
	started                           bool
	pairs, repeats, steps, violations uint64
	minStep                           uint64
}

func (s *stepCounter) push(v uint64) {
	if s.started {
		s.pairs++
		switch {
		case v == s.prev:
			s.repeats++
		case v > s.prev:
			if step := v - s.prev; s.steps == 0 || step < s.minStep {
				s.minStep = step
			}
			s.steps++
		default:
			s.violations++
		}
	}
	s.prev, s.started = v, true
}

func (s *stepCounter) repeatFraction() float64 {
	if s.pairs == 0 {
		return 0
	}
	return float64(s.repeats) / float64(s.pairs)
}

type readMeasurement struct {
	readCostNs float64
	steps      stepCounter
}

// measureReads times read in batches (median ns per read), then reads it
// back to back for granularity, repeats and monotonicity, within
// perClockLimit; a coarse clock is read until it stepped minSteps times.
func measureReads(read func() uint64) readMeasurement {
	start := time.Now()
	for i := 0; i < 64; i++ { // warm up: fault in the vDSO page, fill caches
		read()
	}
	var costs []float64
	for len(costs) < readCostBatches {
		t0 := time.Now()
		for i := 0; i < readsPerBatch; i++ {
			read()
		}
		costs = append(costs, float64(time.Since(t0).Nanoseconds())/readsPerBatch)
		if time.Since(start) > perClockLimit/2 {
			break
		}
	}
	var m readMeasurement
	m.readCostNs = median(costs)
	done := 0
	for {
		for i := 0; i < readChunk; i++ {
			m.steps.push(read())
		}
		done += readChunk
		// A coarse clock steps every few ms and one descheduling can hide a
		// step, so it gets more time (up to 4 limits) to show minSteps steps.
		enough := done >= granularityReads && m.steps.steps >= minSteps
		elapsed := time.Since(start)
		if enough || elapsed > perClockLimit && m.steps.steps >= minSteps || elapsed > 4*perClockLimit {
			return m
		}
	}
}

// median of xs (mean of the middle two for an even count); 0 when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func baseMachineInfo() MachineInfo {
	return MachineInfo{
		OS:           runtime.GOOS,
		Arch:         runtime.GOARCH,
		GoVersion:    runtime.Version(),
		NumCPU:       runtime.NumCPU(),
		GOMAXPROCS:   runtime.GOMAXPROCS(0),
		SpinSlots:    int(spinSlots),
		AbsoluteWait: clk().absolute,
	}
}

// notes turns the report into plain-language observations.
func notes(r *ClockReport) []string {
	var out []string
	m := r.Machine
	switch m.Clocksource {
	case "", "tsc", "arch_sys_counter":
	default:
		out = append(out, fmt.Sprintf("The clocksource is %q, not the TSC: every clock read may be a system call, which makes spinning coarse and expensive.", m.Clocksource))
	}
	if m.TimerSlackNs != nil && *m.TimerSlackNs > 1 {
		out = append(out, fmt.Sprintf("This thread's timer slack is %d ns: a plain sleep on it wakes up to that much late. keeptime sets 1 ns on each thread it waits on.", *m.TimerSlackNs))
	}
	if !m.AbsoluteWait {
		out = append(out, "OS waits fall back to time.Sleep (relative, ~1 ms granularity): keeptime's spin finishes every wait, at a higher CPU cost.")
	}
	if m.GOMAXPROCS < 2 {
		out = append(out, "GOMAXPROCS is 1: a goroutine woken from its OS wait must wait for the running goroutine to yield; precise waits need a free P.")
	}
	if c, ok := r.Clock("MONOTONIC_COARSE"); ok && c.ResolutionNs != nil && *c.ResolutionNs > 0 {
		out = append(out, fmt.Sprintf("The kernel tick is %s (CLOCK_MONOTONIC_COARSE resolution, i.e. CONFIG_HZ=%d): coarse clocks step by that much.", time.Duration(*c.ResolutionNs), time.Second/time.Duration(*c.ResolutionNs)))
	}
	out = append(out, idleNotes(r.IdleLatency)...)
	now, ok1 := r.Clock("time.Now")
	since, ok2 := r.Clock("time.Since")
	sys, ok3 := r.Clock("MONOTONIC")
	if ok1 && ok2 && ok3 && sys.Available {
		out = append(out, fmt.Sprintf("Reading CLOCK_MONOTONIC costs %.0f ns through time.Since (vDSO), %.0f ns through time.Now (wall + monotonic) and %.0f ns through unix.ClockGettime (a system call); keeptime spins on time.Since.", since.ReadCostNs, now.ReadCostNs, sys.ReadCostNs))
	}
	return out
}
