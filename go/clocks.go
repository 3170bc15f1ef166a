package keeptime

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// ClockReport is what InspectClocks found: one entry per clock, the
// machine's timing-relevant configuration, the idle-latency state and
// findings in plain words. It follows the clock report of spec/clocks.md:
// its JSON form has the field names of spec/clocks.schema.json (snake_case,
// the unit in the name), plus a few Go-only machine fields.
type ClockReport struct {
	// Clocks are read in a fixed order: MONOTONIC, MONOTONIC_RAW,
	// MONOTONIC_COARSE, REALTIME, REALTIME_COARSE, BOOTTIME, TAI,
	// PROCESS_CPUTIME_ID and THREAD_CPUTIME_ID, then TSC and RDTSCP on
	// x86-64 (Linux); off Linux only MONOTONIC and REALTIME, through Go's
	// own readers.
	Clocks []ClockInfo `json:"clocks"`
	// Machine is the configuration that decides how precisely anything here
	// can wait.
	Machine MachineInfo `json:"machine"`
	// IdleLatency is the cpuidle driver and governor, the PM QoS CPU
	// latency value in force and whether this process may hold a request
	// (the idle-latency hint, see IdleHint).
	IdleLatency IdleLatencyReport `json:"idle_latency"`
	// Findings say what the numbers mean for precise waiting: warnings
	// first, the idle-latency finding last (ClockFindings).
	Findings []Finding `json:"findings"`
}

// Clock returns the entry named name, ignoring ASCII case ("MONOTONIC"
// and "monotonic" find the same clock), if the report has it.
func (r *ClockReport) Clock(name string) (ClockInfo, bool) {
	for _, c := range r.Clocks {
		if equalFoldASCII(c.Name, name) {
			return c, true
		}
	}
	return ClockInfo{}, false
}

// equalFoldASCII compares a and b ignoring the case of ASCII letters only.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// ClockInfo is what one clock is and how it behaved when read back to back.
// A clock that could not be read has Available false, zero measurements and
// the reason in Error.
type ClockInfo struct {
	// Name is the clock's upper-case short name: "MONOTONIC", "REALTIME", ….
	Name string `json:"name"`
	// Description says what the clock counts.
	Description string `json:"description"`
	// Reader is how Go read it: "Go runtime (vDSO)" for MONOTONIC
	// (time.Since, the reading keeptime waits on) and REALTIME (time.Now),
	// "unix.ClockGettime (system call)" for the others, whose read costs are
	// therefore system-call costs.
	Reader string `json:"reader"`
	// ClockID is the clockid_t of clock_gettime; nil off Linux.
	ClockID *int `json:"id"`
	// ResolutionNs is what clock_getres reports; nil off Linux.
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
	// GranularityTicks is, for the TSC, the smallest non-zero step in ticks.
	GranularityTicks *uint64 `json:"granularity_ticks,omitempty"`
	// MonotonicViolations counts reads lower than the read before: always 0
	// for a working monotonic clock; REALTIME and TAI may step back; for the
	// TSC it means CPUs whose counters disagree.
	MonotonicViolations uint64 `json:"monotonic_violations"`
	// FrequencyHz is, for the TSC, its ticks per second, as FrequencySource
	// says.
	FrequencyHz *uint64 `json:"frequency_hz,omitempty"`
	// FrequencySource is where FrequencyHz came from: FrequencyCPUIDLeaf15,
	// FrequencyHypervisorCPUID or FrequencyMeasured.
	FrequencySource string `json:"frequency_source,omitempty"`
	// Available says whether the clock could be read at all.
	Available bool `json:"available"`
	// Error says why not.
	Error string `json:"error,omitempty"`
}

// MachineInfo is the machine's timing-relevant configuration. Anything that
// could not be read is empty, nil or false: unknown, never a guess.
type MachineInfo struct {
	// OS is runtime.GOOS ("linux", "darwin", "windows", …).
	OS string `json:"os"`
	// Arch is runtime.GOARCH ("amd64", "arm64", …).
	Arch string `json:"arch"`
	// KernelRelease is `uname -r`.
	KernelRelease string `json:"kernel_release,omitempty"`
	// KernelVersion is `uname -v`; it names the preemption model (PREEMPT,
	// PREEMPT_DYNAMIC, PREEMPT_RT).
	KernelVersion string `json:"kernel_version,omitempty"`
	// CPUModel is the first processor's model name in /proc/cpuinfo.
	CPUModel string `json:"cpu_model,omitempty"`
	// CPUsOnline is the count in /sys/devices/system/cpu/online.
	CPUsOnline *int `json:"cpus_online"`
	// CPUsAvailable is runtime.NumCPU(): the CPUs this process may run on.
	CPUsAvailable *int `json:"cpus_available"`
	// Clocksource is the kernel's current clocksource: "tsc" is read in user
	// space through the vDSO; "hpet", "acpi_pm", "jiffies",
	// "refined-jiffies" and "pit" make every read a system call.
	Clocksource string `json:"clocksource,omitempty"`
	// AvailableClocksources are those the kernel considers usable.
	AvailableClocksources []string `json:"available_clocksources,omitempty"`
	// TSC is the time-stamp counter's flags from /proc/cpuinfo and its
	// frequencies; nil without a TSC or without /proc/cpuinfo.
	TSC *TSCInfo `json:"tsc"`
	// TimerSlackNs is the inspecting OS thread's timer slack
	// (PR_GET_TIMERSLACK): how late the kernel may fire its timers. Linux
	// default 50 000; 1 on a thread keeptime has already waited on.
	TimerSlackNs *uint64 `json:"timer_slack_ns"`
	// TickHz is the kernel tick rate (CONFIG_HZ) from
	// clock_getres(CLOCK_MONOTONIC_COARSE).
	TickHz *uint64 `json:"tick_hz"`
	// HighResolutionTimers says whether high-resolution timers are active;
	// without them every timed wait is rounded up to the next tick.
	HighResolutionTimers *bool `json:"high_resolution_timers"`
	// HighResolutionTimersSource says where that came from:
	// "/proc/timer_list" or "clock_getres(CLOCK_MONOTONIC)".
	HighResolutionTimersSource string `json:"high_resolution_timers_source,omitempty"`
	// IdleDriver is the cpuidle driver ("intel_idle", "haltpoll", "none", …).
	IdleDriver string `json:"idle_driver,omitempty"`
	// IdleStates are CPU 0's idle states, shallowest first.
	IdleStates []IdleState `json:"idle_states,omitempty"`
	// CPUFreqDriver is CPU 0's cpufreq driver ("intel_pstate", …).
	CPUFreqDriver string `json:"cpufreq_driver,omitempty"`
	// CPUFreqGovernor is CPU 0's cpufreq governor ("performance",
	// "powersave", "schedutil", …).
	CPUFreqGovernor string `json:"cpufreq_governor,omitempty"`
	// Virtualization is the hypervisor this runs under; nil when there is no
	// sign of one.
	Virtualization *Virtualization `json:"virtualization"`
	// StealFraction is the share (0–1) of CPU time the hypervisor took since
	// boot (steal in /proc/stat).
	StealFraction *float64 `json:"steal_fraction"`
	// Preemption is the kernel's preemption model.
	Preemption Preemption `json:"preemption"`
	// PreemptionMode is, for PreemptionDynamic, the mode chosen at boot
	// ("none", "voluntary", "full", "lazy") when it can be read.
	PreemptionMode string `json:"preemption_mode,omitempty"`
	// TAIOffsetS is CLOCK_TAI − CLOCK_REALTIME in whole seconds (37 when NTP
	// has set it, 0 when nobody has).
	TAIOffsetS *int64 `json:"tai_offset_s"`

	// GoVersion is runtime.Version().
	GoVersion string `json:"go_version,omitempty"`
	// GOMAXPROCS is how many goroutines run at once; a precise wake-up needs
	// one of them free.
	GOMAXPROCS int `json:"gomaxprocs,omitempty"`
	// SpinSlots is how many goroutines keeptime lets spin at once.
	SpinSlots int `json:"spin_slots,omitempty"`
	// AbsoluteWait says whether keeptime's OS waits take an absolute
	// deadline (clock_nanosleep TIMER_ABSTIME) or fall back to time.Sleep.
	AbsoluteWait bool `json:"absolute_wait"`
}

// TSCInfo is the time-stamp counter as /proc/cpuinfo describes it.
type TSCInfo struct {
	// ConstantTSC: it ticks at a fixed rate whatever the CPU frequency.
	ConstantTSC bool `json:"constant_tsc"`
	// NonstopTSC: it keeps ticking in deep idle states.
	NonstopTSC bool `json:"nonstop_tsc"`
	// TSCKnownFreq: the kernel got its frequency from the CPU or hypervisor.
	TSCKnownFreq bool `json:"tsc_known_freq"`
	// TSCReliable: the kernel trusts it without watchdog checks.
	TSCReliable bool `json:"tsc_reliable"`
	// RDTSCP: the rdtscp instruction is available.
	RDTSCP bool `json:"rdtscp"`
	// ReportedFrequencyHz is the frequency the CPU or hypervisor states
	// through CPUID; nil when neither does.
	ReportedFrequencyHz *uint64 `json:"reported_frequency_hz"`
	// MeasuredFrequencyHz is the frequency counted against
	// CLOCK_MONOTONIC_RAW; nil when not measured.
	MeasuredFrequencyHz *uint64 `json:"measured_frequency_hz"`
}

// Invariant reports a constant rate that never stops: ticks convert to time.
func (t TSCInfo) Invariant() bool { return t.ConstantTSC && t.NonstopTSC }

// IdleState is one CPU idle state (C-state) and what waking from it costs.
type IdleState struct {
	// Name is the state's name ("POLL", "C1", "C6", …).
	Name string `json:"name"`
	// ExitLatencyUs is the worst-case time to wake from it, µs.
	ExitLatencyUs uint64 `json:"exit_latency_us"`
	// TargetResidencyUs is the shortest idle period for which the kernel
	// chooses it, µs.
	TargetResidencyUs *uint64 `json:"target_residency_us"`
	// Disabled says whether the state is disabled (for CPU 0).
	Disabled bool `json:"disabled"`
}

// Virtualization names the hypervisor a machine runs under.
type Virtualization struct {
	// Hypervisor is "KVM", "Xen", "VMware", …; "unknown" when only the CPU's
	// hypervisor flag says so.
	Hypervisor string `json:"hypervisor"`
	// Source is where that came from: "/sys/hypervisor/type",
	// "/sys/class/dmi/id" or "/proc/cpuinfo".
	Source string `json:"source"`
}

// Preemption is how the kernel was built to preempt running kernel code.
type Preemption string

// The preemption models; the zero value is unknown.
const (
	PreemptionRT              Preemption = "rt"                // PREEMPT_RT
	PreemptionFull            Preemption = "full"              // PREEMPT
	PreemptionDynamic         Preemption = "dynamic"           // PREEMPT_DYNAMIC: chosen at boot, see PreemptionMode
	PreemptionNoneOrVoluntary Preemption = "none_or_voluntary" // no PREEMPT flag
	PreemptionUnknown         Preemption = "unknown"
)

// MarshalText writes the zero value as "unknown".
func (p Preemption) MarshalText() ([]byte, error) {
	if p == "" {
		return []byte(PreemptionUnknown), nil
	}
	return []byte(p), nil
}

// Severity is how much a finding matters.
type Severity string

// The severities, in report order.
const (
	// SeverityWarning changes how precisely anything here can wait or measure.
	SeverityWarning Severity = "warning"
	// SeverityInfo is worth knowing when reading measurements.
	SeverityInfo Severity = "info"
)

// Finding is one observation about the machine, in plain words, backed by
// something the inspection read or measured.
type Finding struct {
	// Severity is how much it matters.
	Severity Severity `json:"severity"`
	// Code is a stable identifier such as "timer_slack_default" (the list is
	// in spec/clocks.md).
	Code string `json:"code"`
	// Message is one or two sentences for a person.
	Message string `json:"message"`
}

func (f Finding) String() string { return string(f.Severity) + ": " + f.Message }

// InspectClocks reads every clock back to back and reports its resolution,
// smallest step, read cost and monotonicity, with the machine's
// configuration, the idle-latency state and findings. It takes about 0.1 s
// (longer on a machine whose clock reads are system calls) and returns an
// error only if nothing could be measured; clocks that cannot be read are
// listed with Available false and the reason.
func InspectClocks() (*ClockReport, error) {
	// One OS thread for the whole inspection: the timer slack read is the
	// thread's, and CPU-time clocks should count one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	r := &ClockReport{}
	r.Clocks = inspectClocks()
	r.Machine = machineInfo(r.Clocks)
	r.Clocks = append(r.Clocks, tscClocks(&r.Machine, r.Clocks)...)
	if slack, err := timerSlackNs(); err == nil {
		r.Machine.TimerSlackNs = &slack
	}
	r.IdleLatency = InspectIdleLatency()
	r.Findings = ClockFindings(r.Clocks, r.Machine, &r.IdleLatency)
	for _, c := range r.Clocks {
		if c.Available {
			return r, nil
		}
	}
	return r, fmt.Errorf("keeptime: no clock could be read")
}

// goMonotonic measures CLOCK_MONOTONIC as Go reads it: time.Since of a Time
// with a monotonic reading is one vDSO read, the one keeptime waits on.
func goMonotonic(c *ClockInfo) {
	c.Reader = "Go runtime (vDSO)"
	anchor := time.Now()
	c.fill(measureReads(func() uint64 { return uint64(time.Since(anchor)) }))
}

// goRealtime measures CLOCK_REALTIME as Go reads it: time.Now, which reads
// the wall clock and the monotonic clock (two vDSO reads).
func goRealtime(c *ClockInfo) {
	c.Reader = "Go runtime (vDSO, time.Now: wall and monotonic reading)"
	c.fill(measureReads(func() uint64 { return uint64(time.Now().UnixNano()) }))
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
	n := runtime.NumCPU()
	return MachineInfo{
		OS:            runtime.GOOS,
		Arch:          runtime.GOARCH,
		CPUsAvailable: &n,
		Preemption:    PreemptionUnknown,
		GoVersion:     runtime.Version(),
		GOMAXPROCS:    runtime.GOMAXPROCS(0),
		SpinSlots:     int(spinSlots),
		AbsoluteWait:  clk().absolute,
	}
}
