//go:build linux && !keeptime_fallback

package keeptime

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// linuxClocks are the clocks InspectClocks reads, in report order.
var linuxClocks = []struct {
	name, description string
	id                int
}{
	{"MONOTONIC", "time since boot, not counting suspend; slewed by NTP; what keeptime, Go, Rust and Java wait on", unix.CLOCK_MONOTONIC},
	{"MONOTONIC_RAW", "like MONOTONIC but never slewed by NTP: the hardware counter's own rate", unix.CLOCK_MONOTONIC_RAW},
	{"MONOTONIC_COARSE", "MONOTONIC as of the last kernel tick: cheap, coarse", unix.CLOCK_MONOTONIC_COARSE},
	{"REALTIME", "wall-clock time since 1970; may step (NTP, settimeofday)", unix.CLOCK_REALTIME},
	{"REALTIME_COARSE", "REALTIME as of the last kernel tick", unix.CLOCK_REALTIME_COARSE},
	{"BOOTTIME", "like MONOTONIC but counting time in suspend", unix.CLOCK_BOOTTIME},
	{"TAI", "International Atomic Time: REALTIME without leap seconds", unix.CLOCK_TAI},
	{"PROCESS_CPUTIME_ID", "CPU time consumed by this process", unix.CLOCK_PROCESS_CPUTIME_ID},
	{"THREAD_CPUTIME_ID", "CPU time consumed by the calling thread", unix.CLOCK_THREAD_CPUTIME_ID},
}

// inspectClocks measures every clock: MONOTONIC through time.Since and
// REALTIME through time.Now (Go's vDSO reads), the others through
// unix.ClockGettime, which is a real system call in x/sys/unix (no vDSO),
// so their read costs are system-call costs.
func inspectClocks() []ClockInfo {
	var out []ClockInfo
	for _, lc := range linuxClocks {
		id := lc.id
		c := ClockInfo{Name: lc.name, Description: lc.description, ClockID: &id}
		var ts unix.Timespec
		if err := unix.ClockGetres(int32(id), &ts); err != nil {
			c.Error = fmt.Sprintf("clock_getres(CLOCK_%s): %v", lc.name, err)
			out = append(out, c)
			continue
		}
		res := uint64(ts.Nano())
		c.ResolutionNs = &res
		if err := unix.ClockGettime(int32(id), &ts); err != nil {
			c.Error = fmt.Sprintf("clock_gettime(CLOCK_%s): %v", lc.name, err)
			out = append(out, c)
			continue
		}
		switch lc.name {
		case "MONOTONIC":
			goMonotonic(&c)
		case "REALTIME":
			goRealtime(&c)
		default:
			c.Reader = "unix.ClockGettime (system call)"
			c.fill(measureReads(func() uint64 {
				var ts unix.Timespec
				_ = unix.ClockGettime(int32(id), &ts)
				return uint64(ts.Nano())
			}))
		}
		out = append(out, c)
	}
	return out
}

// readText is a small file's content, trimmed; "" when unreadable.
func readText(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// machineInfo reads the machine's configuration from uname, /proc and
// /sys; the tick rate and, when /proc/timer_list is unreadable, whether
// high-resolution timers are on come from the clocks' resolutions.
func machineInfo(clocks []ClockInfo) MachineInfo {
	m := baseMachineInfo()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.KernelRelease = unix.ByteSliceToString(u.Release[:])
		m.KernelVersion = unix.ByteSliceToString(u.Version[:])
	}
	cpu := parseCPUInfo(readText("/proc/cpuinfo"))
	m.CPUModel = cpu.model
	m.TSC = tscFlags(cpu)
	if n, ok := parseCPUList(readText("/sys/devices/system/cpu/online")); ok {
		m.CPUsOnline = &n
	}
	const cs = "/sys/devices/system/clocksource/clocksource0/"
	m.Clocksource = readText(cs + "current_clocksource")
	m.AvailableClocksources = strings.Fields(readText(cs + "available_clocksource"))

	resolution := func(name string) *uint64 {
		for _, c := range clocks {
			if c.Name == name {
				return c.ResolutionNs
			}
		}
		return nil
	}
	if res := resolution("MONOTONIC_COARSE"); res != nil {
		if hz, ok := tickHzFromResolution(*res); ok {
			m.TickHz = &hz
		}
	}
	if active, ok := parseTimerList(readText("/proc/timer_list")); ok {
		m.HighResolutionTimers, m.HighResolutionTimersSource = &active, "/proc/timer_list"
	} else if res := resolution("MONOTONIC"); res != nil {
		// hrtimer_resolution is 1 ns exactly when high-resolution mode is on.
		active := *res == 1
		m.HighResolutionTimers, m.HighResolutionTimersSource = &active, "clock_getres(CLOCK_MONOTONIC)"
	}

	m.IdleDriver = readText("/sys/devices/system/cpu/cpuidle/current_driver")
	m.IdleStates = idleStates("/sys/devices/system/cpu/cpu0/cpuidle")
	m.CPUFreqDriver = readText("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver")
	m.CPUFreqGovernor = readText("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	m.Virtualization = virtualization(cpu, m.AvailableClocksources)
	if f, ok := parseStealFraction(readText("/proc/stat")); ok {
		m.StealFraction = &f
	}
	m.Preemption = parsePreemption(m.KernelVersion, readText("/sys/kernel/realtime"))
	if m.Preemption == PreemptionDynamic {
		m.PreemptionMode = parseDebugfsPreempt(readText("/sys/kernel/debug/sched/preempt"))
		if m.PreemptionMode == "" {
			m.PreemptionMode = parseCmdlinePreempt(readText("/proc/cmdline"))
		}
	}
	m.TAIOffsetS = taiOffsetS()
	return m
}

// idleStates are the idle states under dir (cpuN/cpuidle), up to the first gap.
func idleStates(dir string) []IdleState {
	var out []IdleState
	for n := 0; n < 16; n++ { // the kernel allows at most 10
		state := fmt.Sprintf("%s/state%d/", dir, n)
		name, latency := readText(state+"name"), readText(state+"latency")
		if name == "" || latency == "" {
			break
		}
		if s, ok := parseIdleState(name, latency, readText(state+"residency"), readText(state+"disable")); ok {
			out = append(out, s)
		}
	}
	return out
}

// virtualization names the hypervisor from CPUID, /sys/hypervisor/type, the DMI
// tables, a clocksource only a hypervisor offers, or (type unknown) the
// CPU's hypervisor flag.
func virtualization(cpu cpuInfo, clocksources []string) *Virtualization {
	if name := cpuidHypervisor(); name != "" {
		return &Virtualization{name, "cpuid"}
	}
	return virtualizationWithoutCPUID(cpu, clocksources)
}

// virtualizationWithoutCPUID is the hypervisor as every runtime can read it
// (Java cannot ask CPUID): what a profile's fingerprint holds
// (spec/estimator.md, Machine fingerprint).
func virtualizationWithoutCPUID(cpu cpuInfo, clocksources []string) *Virtualization {
	switch t := readText("/sys/hypervisor/type"); t {
	case "":
	case "xen":
		return &Virtualization{"Xen", "/sys/hypervisor/type"}
	default:
		return &Virtualization{t, "/sys/hypervisor/type"}
	}
	dmi := "/sys/class/dmi/id/"
	if name := hypervisorFromDMI(readText(dmi+"sys_vendor"), readText(dmi+"product_name")); name != "" {
		return &Virtualization{name, "/sys/class/dmi/id"}
	}
	return virtualizationFromHints(cpu, clocksources)
}

// taiOffsetS is CLOCK_TAI − CLOCK_REALTIME in whole seconds, rounded to
// the nearest (the two reads are nanoseconds apart).
func taiOffsetS() *int64 {
	var rt, tai unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME, &rt) != nil || unix.ClockGettime(unix.CLOCK_TAI, &tai) != nil {
		return nil
	}
	diff := tai.Nano() - rt.Nano()
	s := diff / 1e9
	if rem := diff % 1e9; rem >= 5e8 {
		s++
	} else if rem <= -5e8 {
		s--
	}
	return &s
}

// machineFingerprint is this machine's profile fingerprint: the fields of
// machineInfo a wake-up model depends on, read without measuring anything.
func machineFingerprint() Fingerprint {
	var f Fingerprint
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		f.KernelRelease = unix.ByteSliceToString(u.Release[:])
	}
	text := readText("/proc/cpuinfo")
	cpu := parseCPUInfo(text)
	f.CPUVendor, f.CPUModel = parseCPUVendor(text), cpu.model
	if n, ok := parseCPUList(readText("/sys/devices/system/cpu/online")); ok {
		f.CPUsOnline = strconv.Itoa(n)
	}
	const cs = "/sys/devices/system/clocksource/clocksource0/"
	if v := virtualizationWithoutCPUID(cpu, strings.Fields(readText(cs+"available_clocksource"))); v != nil {
		f.Virtualization = v.Hypervisor
	}
	f.CPUIdleDriver = readText("/sys/devices/system/cpu/cpuidle/current_driver")
	f.Clocksource = readText(cs + "current_clocksource")
	v := f.values()
	for i := range v {
		v[i] = fingerprintValue(v[i])
	}
	return fingerprintOf(v)
}
