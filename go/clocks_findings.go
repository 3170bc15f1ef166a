package keeptime

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// The rules' thresholds and tables (spec/clocks.md, Findings).
const (
	// defaultTimerSlackNs is the Linux default timer slack.
	defaultTimerSlackNs = 50_000
	// largeTimerSlackNs: a slack above this is worth a finding.
	largeTimerSlackNs = 1_000
	// deepIdleUs: idle states slower than this to exit are worth a warning.
	deepIdleUs = 50
	// slowReadNs: a vDSO CLOCK_MONOTONIC read on a TSC clocksource costs
	// ~20–30 ns; beyond this, something is in the way.
	slowReadNs = 150.0
	// coarseClockNs: a MONOTONIC_COARSE resolution from this up is a tick.
	coarseClockNs = 1_000
	// tscMismatchPpm: stated and measured TSC frequencies further apart than
	// this are worth a finding.
	tscMismatchPpm = 1_000
	// fewCPUs: this many CPUs or fewer are worth a finding.
	fewCPUs = 2
)

// syscallClocksources are the clocksources the vDSO cannot read: with one
// of them current, every clock read is a system call.
var syscallClocksources = []string{"hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"}

// mustBeMonotonic are the clocks that never go back (REALTIME and TAI may
// be set back).
var mustBeMonotonic = []string{
	"MONOTONIC", "MONOTONIC_RAW", "MONOTONIC_COARSE", "BOOTTIME",
	"PROCESS_CPUTIME_ID", "THREAD_CPUTIME_ID", "TSC", "RDTSCP",
}

// hintableIdleDrivers are the cpuidle drivers whose idle states have an
// exit latency the idle-latency hint caps.
var hintableIdleDrivers = []string{"haltpoll", "intel_idle", "acpi_idle"}

// findingInputs is what the rules read.
type findingInputs struct {
	clocks []ClockInfo
	m      *MachineInfo
}

// clock is the available clock named name (exact name), if any.
func (in findingInputs) clock(name string) (ClockInfo, bool) {
	for _, c := range in.clocks {
		if c.Name == name && c.Available {
			return c, true
		}
	}
	return ClockInfo{}, false
}

// clockRules are the rules in report order within a severity.
var clockRules = []func(findingInputs) []Finding{
	ruleHighResolutionTimers,
	ruleClockReadCost,
	ruleTSCInvariance,
	ruleNonMonotonicReads,
	ruleVirtualized,
	ruleDeepIdleStates,
	ruleTimerSlack,
	ruleCoarseClocks,
	ruleTSCFrequency,
	ruleCPUFreqPowersave,
	rulePreemption,
	ruleFewCPUs,
	ruleTAIOffset,
}

// ClockFindings decides a clock report's findings from its clocks, machine
// and idle-latency parts alone (idle may be nil), by the rules of
// spec/clocks.md: warnings first, each severity in the rules' order, the
// idle-latency finding last. It reads nothing else, so the same inputs
// always give the same findings.
func ClockFindings(clocks []ClockInfo, m MachineInfo, idle *IdleLatencyReport) []Finding {
	in := findingInputs{clocks: clocks, m: &m}
	out := []Finding{} // never nil: an empty list, not null, in JSON
	for _, rule := range clockRules {
		out = append(out, rule(in)...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return severityRank(a.Severity) - severityRank(b.Severity)
	})
	if idle != nil {
		if f, ok := idleFinding(*idle, m); ok {
			out = append(out, f)
		}
	}
	return out
}

func severityRank(s Severity) int {
	if s == SeverityWarning {
		return 0
	}
	return 1
}

func warning(code, format string, args ...any) []Finding {
	return []Finding{{SeverityWarning, code, fmt.Sprintf(format, args...)}}
}

func info(code, format string, args ...any) []Finding {
	return []Finding{{SeverityInfo, code, fmt.Sprintf(format, args...)}}
}

func ruleHighResolutionTimers(in findingInputs) []Finding {
	if in.m.HighResolutionTimers == nil || *in.m.HighResolutionTimers {
		return nil
	}
	tick := "the next kernel tick"
	if in.m.TickHz != nil && *in.m.TickHz > 0 {
		tick = fmt.Sprintf("the next kernel tick (%s)", humanNs(1e9/float64(*in.m.TickHz)))
	}
	return warning("high_resolution_timers_inactive",
		"High-resolution timers are off: every timed wait ends at %s, so no OS wait is finer than that.", tick)
}

func ruleClockReadCost(in findingInputs) []Finding {
	mono, haveMono := in.clock("MONOTONIC")
	if cs := in.m.Clocksource; slices.Contains(syscallClocksources, cs) {
		cost := ""
		if haveMono {
			cost = fmt.Sprintf(" (CLOCK_MONOTONIC: %s per read)", humanNs(mono.ReadCostNs))
		}
		switchTo := ""
		if slices.Contains(in.m.AvailableClocksources, "tsc") {
			switchTo = "; tsc is available as a clocksource"
		}
		return warning("clocksource_syscall",
			"The clocksource is %s: every clock read is a system call%s, not a ~25 ns vDSO read%s.", cs, cost, switchTo)
	}
	if !haveMono || !(mono.ReadCostNs > slowReadNs) {
		return nil
	}
	cs := ""
	if in.m.Clocksource != "" {
		cs = " on clocksource " + in.m.Clocksource
	}
	return warning("clock_read_slow",
		"A CLOCK_MONOTONIC read costs %s here%s (a vDSO read of the TSC takes ~25 ns): spins see the time less often.",
		humanNs(mono.ReadCostNs), cs)
}

func ruleTSCInvariance(in findingInputs) []Finding {
	t := in.m.TSC
	if t == nil || t.Invariant() {
		return nil
	}
	var missing []string
	if !t.ConstantTSC {
		missing = append(missing, "constant_tsc")
	}
	if !t.NonstopTSC {
		missing = append(missing, "nonstop_tsc")
	}
	return warning("tsc_not_invariant",
		"The TSC lacks %s: its rate may follow the CPU frequency or stop in deep idle, so TSC ticks do not convert to time.",
		strings.Join(missing, " and "))
}

func ruleNonMonotonicReads(in findingInputs) []Finding {
	var out []Finding
	for _, c := range in.clocks {
		if !c.Available || c.MonotonicViolations == 0 || !slices.Contains(mustBeMonotonic, c.Name) {
			continue
		}
		out = append(out, warning("non_monotonic_reads",
			"%s went backwards %d times in %d successive reads; it never should, so its timestamps cannot order events.",
			c.Name, c.MonotonicViolations, c.Samples)...)
	}
	return out
}

func ruleVirtualized(in findingInputs) []Finding {
	v := in.m.Virtualization
	if v == nil {
		return nil
	}
	under := v.Hypervisor
	if under == "unknown" {
		under = "a hypervisor"
	}
	steal := ""
	if f := in.m.StealFraction; f != nil && *f > 0 {
		steal = fmt.Sprintf(" (steal so far: %.2f%% of CPU time)", *f*100)
	}
	return warning("virtualized",
		"Running under %s: wake-ups and spins depend on the host's scheduling%s.", under, steal)
}

func ruleDeepIdleStates(in findingInputs) []Finding {
	var names []string
	var worst uint64
	for _, s := range in.m.IdleStates {
		if !s.Disabled && s.ExitLatencyUs > deepIdleUs {
			names = append(names, fmt.Sprintf("%s (%d µs)", s.Name, s.ExitLatencyUs))
			worst = max(worst, s.ExitLatencyUs)
		}
	}
	if names == nil {
		return nil
	}
	return warning("deep_idle_states",
		"Idle states %s take over %d µs to exit: a wake-up on a sleeping CPU may be up to %d µs late; keeptime's learned margin spins through it.",
		strings.Join(names, ", "), deepIdleUs, worst)
}

func ruleTimerSlack(in findingInputs) []Finding {
	s := in.m.TimerSlackNs
	switch {
	case s == nil:
		return nil
	case *s == defaultTimerSlackNs:
		return info("timer_slack_default",
			"This thread's timer slack is the Linux default, 50 µs: a plain sleep wakes up to that much late; keeptime sets 1 ns on the threads it waits on.")
	case *s > largeTimerSlackNs:
		return info("timer_slack_large",
			"This thread's timer slack is %s: a plain sleep wakes up to that much late; keeptime sets 1 ns on the threads it waits on.",
			humanNs(float64(*s)))
	}
	return nil
}

func ruleCoarseClocks(in findingInputs) []Finding {
	c, ok := in.clock("MONOTONIC_COARSE")
	if !ok || c.ResolutionNs == nil || *c.ResolutionNs < coarseClockNs {
		return nil
	}
	return info("coarse_clocks",
		"MONOTONIC_COARSE and REALTIME_COARSE step every %s (the kernel tick): too coarse to time waits (a read costs %s here).",
		humanNs(float64(*c.ResolutionNs)), humanNs(c.ReadCostNs))
}

func ruleTSCFrequency(in findingInputs) []Finding {
	t := in.m.TSC
	if t == nil || t.ReportedFrequencyHz == nil || t.MeasuredFrequencyHz == nil {
		return nil
	}
	stated, measured := *t.ReportedFrequencyHz, *t.MeasuredFrequencyHz
	ppm := ppmApart(stated, measured)
	if ppm <= tscMismatchPpm {
		return nil
	}
	return info("tsc_frequency_mismatch",
		"The stated TSC frequency is %s, the measured one %s (%d ppm apart).",
		formatHz(stated), formatHz(measured), ppm)
}

func ruleCPUFreqPowersave(in findingInputs) []Finding {
	if in.m.CPUFreqGovernor != "powersave" {
		return nil
	}
	driver := ""
	if in.m.CPUFreqDriver != "" {
		driver = " (driver " + in.m.CPUFreqDriver + ")"
	}
	return info("cpufreq_powersave",
		"The cpufreq governor is powersave%s: the CPU may run below full speed and ramp up after each wake-up.", driver)
}

func rulePreemption(in findingInputs) []Finding {
	p, mode := in.m.Preemption, in.m.PreemptionMode
	if p == PreemptionNoneOrVoluntary || p == PreemptionDynamic && (mode == "none" || mode == "voluntary") {
		return info("kernel_not_preemptible",
			"The kernel does not preempt kernel code (no PREEMPT build, or preempt=none/voluntary): a woken thread may wait for a long system call on its CPU.")
	}
	if p == PreemptionRT {
		return info("kernel_preempt_rt", "The kernel is PREEMPT_RT: wake-up latency is as low and bounded as Linux makes it.")
	}
	return nil
}

func ruleFewCPUs(in findingInputs) []Finding {
	n, which := in.m.CPUsOnline, "online"
	if n == nil {
		n, which = in.m.CPUsAvailable, "available to this process"
	}
	if n == nil || *n > fewCPUs {
		return nil
	}
	if *n == 1 {
		return warning("few_cpus",
			"Only 1 CPU %s: a spinning wait holds the whole machine while it spins, and every other thread waits behind it.", which)
	}
	return info("few_cpus",
		"Only %d CPUs %s: a spinning wait holds half the machine while it spins.", *n, which)
}

func ruleTAIOffset(in findingInputs) []Finding {
	if in.m.TAIOffsetS == nil || *in.m.TAIOffsetS != 0 {
		return nil
	}
	return info("tai_offset_unset",
		"CLOCK_TAI equals CLOCK_REALTIME: nobody has set the kernel's TAI offset (NTP sets 37 s), so TAI here is not TAI.")
}

// idleFinding is the finding on the idle-latency hint: worth it with a
// driver whose idle states have exit latency, little effect with driver
// "none", nothing when no driver is known.
func idleFinding(idle IdleLatencyReport, m MachineInfo) (Finding, bool) {
	driver := idle.Driver
	if driver == "" {
		driver = m.IdleDriver
	}
	if driver == "" {
		return Finding{}, false
	}
	if driver == "none" {
		return Finding{SeverityInfo, "idle_hint_little_effect",
			"The cpuidle driver is none: idle CPUs have no exit latency to cap, so the idle-latency hint (Sleeper.SetIdleHint) changes little here."}, true
	}
	var latent []string
	for _, s := range m.IdleStates {
		if !s.Disabled && s.ExitLatencyUs > 0 {
			latent = append(latent, fmt.Sprintf("%s %d µs", s.Name, s.ExitLatencyUs))
		}
	}
	if latent == nil && !slices.Contains(hintableIdleDrivers, driver) {
		return Finding{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The cpuidle driver %s has idle states with exit latency", driver)
	if latent != nil {
		fmt.Fprintf(&b, " (%s)", strings.Join(latent, ", "))
	}
	b.WriteString(": the idle-latency hint (Sleeper.SetIdleHint(keeptime.IdleHintZero), a PM QoS request on " +
		pmqosDevicePath + ") makes OS waits wake sooner, so exact sleeps spin less; its price is power, as idle CPUs poll.")
	if v := idle.InForceMicros; v != nil && *v < pmqosUnconstrainedMicros {
		fmt.Fprintf(&b, " A process already holds %d µs.", *v)
	}
	if !idle.MayRequest {
		b.WriteString(" This process may not hold it")
		if idle.RequestRefused != "" {
			b.WriteString(": " + idle.RequestRefused)
		}
		b.WriteString(".")
	}
	return Finding{SeverityInfo, "idle_hint_available", b.String()}, true
}

// ppmApart is |a − b| relative to b in parts per million, rounded down;
// the largest uint64 when b is 0.
func ppmApart(a, b uint64) uint64 {
	if b == 0 {
		return math.MaxUint64
	}
	diff := a - b
	if b > a {
		diff = b - a
	}
	hi, lo := bits.Mul64(diff, 1_000_000)
	if hi >= b { // the quotient does not fit 64 bits
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, b)
	return q
}

// humanNs is a duration in ns with the unit that suits it, to 0.1:
// "4 ms", "1.5 ms", "23.4 ns".
func humanNs(ns float64) string {
	value, unit := ns, "ns"
	switch {
	case ns >= 1e9:
		value, unit = ns/1e9, "s"
	case ns >= 1e6:
		value, unit = ns/1e6, "ms"
	case ns >= 1e3:
		value, unit = ns/1e3, "µs"
	}
	rounded := math.Round(value*10) / 10
	if rounded == math.Trunc(rounded) {
		return fmt.Sprintf("%.0f %s", rounded, unit)
	}
	return fmt.Sprintf("%.1f %s", rounded, unit)
}

// formatHz is a frequency to three decimals in GHz from 1 GHz up, else in
// MHz: "2.700 GHz", "24.000 MHz".
func formatHz(hz uint64) string {
	if hz >= 1_000_000_000 {
		return fmt.Sprintf("%.3f GHz", float64(hz)/1e9)
	}
	return fmt.Sprintf("%.3f MHz", float64(hz)/1e6)
}
