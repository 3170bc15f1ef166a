package keeptime

import (
	"slices"
	"strconv"
	"strings"
)

// The parsers of the machine's /proc and /sys files: each takes the file's
// text, so tests feed it fixtures; clocks_linux.go does the reading.

// cpuInfo is the first processor's entry in /proc/cpuinfo.
type cpuInfo struct {
	// vendor: vendor_id on x86 ("GenuineIntel", "AuthenticAMD"), else the
	// "CPU implementer" ("0x41"); "" when there is neither.
	vendor string
	model  string
	flags  []string
}

// parseCPUInfo reads the first processor block of /proc/cpuinfo: the model
// name ("model name" on x86, "Model" or "cpu model" elsewhere) and the
// flags ("flags" on x86, "Features" on Arm).
func parseCPUInfo(text string) cpuInfo {
	var info cpuInfo
	seen := false
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			if seen {
				break
			}
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "processor":
			seen = true
		case "vendor_id":
			if value != "" {
				info.vendor = value
			}
		case "CPU implementer":
			if info.vendor == "" {
				info.vendor = value
			}
		case "model name", "Model", "cpu model":
			if info.model == "" {
				info.model = value
			}
		case "flags", "Features":
			if info.flags == nil {
				info.flags = strings.Fields(value)
			}
		}
	}
	return info
}

// parseCPUVendor is the CPU's vendor from the first processor block of
// /proc/cpuinfo (see cpuInfo.vendor).
func parseCPUVendor(text string) string { return parseCPUInfo(text).vendor }

// tscFlags is the TSC's flags when the CPU has one (the "tsc" flag).
func tscFlags(c cpuInfo) *TSCInfo {
	if !slices.Contains(c.flags, "tsc") {
		return nil
	}
	return &TSCInfo{
		ConstantTSC:  slices.Contains(c.flags, "constant_tsc"),
		NonstopTSC:   slices.Contains(c.flags, "nonstop_tsc"),
		TSCKnownFreq: slices.Contains(c.flags, "tsc_known_freq"),
		TSCReliable:  slices.Contains(c.flags, "tsc_reliable"),
		RDTSCP:       slices.Contains(c.flags, "rdtscp"),
	}
}

// parseCPUList counts the CPUs in a kernel CPU list such as "0-3,6,8-9";
// false when it is empty or malformed.
func parseCPUList(text string) (int, bool) {
	count := 0
	for _, part := range strings.Split(strings.TrimSpace(text), ",") {
		if part == "" {
			continue
		}
		a, b, isRange := strings.Cut(part, "-")
		lo, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil || lo < 0 {
			return 0, false
		}
		if !isRange {
			count++
			continue
		}
		hi, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || hi < lo {
			return 0, false
		}
		count += hi - lo + 1
	}
	return count, count > 0
}

// parseTimerList says whether every CPU in /proc/timer_list has
// "hres_active : 1"; false in ok when the text has no such line.
func parseTimerList(text string) (active, ok bool) {
	for _, line := range strings.Split(text, "\n") {
		key, value, found := strings.Cut(line, ":")
		if !found || strings.TrimLeft(strings.TrimSpace(key), ".") != "hres_active" {
			continue
		}
		if strings.TrimSpace(value) != "1" {
			return false, true
		}
		ok = true
	}
	return ok, ok
}

// parsePreemption is the preemption model from `uname -v` ("#1 SMP
// PREEMPT_DYNAMIC …") and /sys/kernel/realtime ("1" on RT kernels; "" when
// absent).
func parsePreemption(unameVersion, realtime string) Preemption {
	if strings.TrimSpace(realtime) == "1" {
		return PreemptionRT
	}
	words := strings.Fields(unameVersion)
	switch {
	case slices.Contains(words, "PREEMPT_RT"):
		return PreemptionRT
	case slices.Contains(words, "PREEMPT_DYNAMIC"):
		return PreemptionDynamic
	case slices.Contains(words, "PREEMPT"):
		return PreemptionFull
	case slices.Contains(words, "SMP") || len(words) > 0 && strings.HasPrefix(words[0], "#"):
		return PreemptionNoneOrVoluntary
	}
	return PreemptionUnknown
}

// parseDebugfsPreempt is the current mode in /sys/kernel/debug/sched/preempt:
// the parenthesised word of "none voluntary (full) lazy".
func parseDebugfsPreempt(text string) string {
	for _, w := range strings.Fields(text) {
		if len(w) > 2 && w[0] == '(' && w[len(w)-1] == ')' {
			return w[1 : len(w)-1]
		}
	}
	return ""
}

// parseCmdlinePreempt is the preempt= boot parameter in /proc/cmdline
// (before any "--", after which arguments are init's).
func parseCmdlinePreempt(cmdline string) string {
	for _, w := range strings.Fields(cmdline) {
		if w == "--" {
			break
		}
		if v, ok := strings.CutPrefix(w, "preempt="); ok && v != "" {
			return v
		}
	}
	return ""
}

// parseStealFraction is the share of CPU time stolen since boot from the
// "cpu " line of /proc/stat: steal / (user + nice + system + idle + iowait
// + irq + softirq + steal).
func parseStealFraction(procStat string) (float64, bool) {
	for _, line := range strings.Split(procStat, "\n") {
		if !strings.HasPrefix(line, "cpu ") {
			continue
		}
		fields := strings.Fields(line)[1:]
		if len(fields) < 8 {
			return 0, false
		}
		var total, steal uint64
		for i, f := range fields[:8] {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return 0, false
			}
			total += v
			if i == 7 {
				steal = v
			}
		}
		if total == 0 {
			return 0, false
		}
		return float64(steal) / float64(total), true
	}
	return 0, false
}

// hypervisorFromDMI names the hypervisor from DMI sys_vendor and
// product_name, for vendors that only make virtual machines; "" otherwise.
func hypervisorFromDMI(vendor, product string) string {
	vendor, product = strings.TrimSpace(vendor), strings.TrimSpace(product)
	switch {
	case vendor == "QEMU":
		return "QEMU/KVM"
	case product == "KVM" || strings.HasPrefix(product, "KVM "):
		return "KVM"
	case strings.HasPrefix(vendor, "VMware"):
		return "VMware"
	case vendor == "Xen":
		return "Xen"
	case vendor == "innotek GmbH" || product == "VirtualBox":
		return "VirtualBox"
	case strings.HasPrefix(vendor, "Parallels"):
		return "Parallels"
	case vendor == "Microsoft Corporation" && product == "Virtual Machine":
		return "Hyper-V"
	case vendor == "Google" && product == "Google Compute Engine":
		return "KVM (Google Compute Engine)"
	}
	return ""
}

// parseIdleState is one idle state from its name, latency, residency and
// disable files (residency and disable "" when absent); false when the
// name is empty or the latency unreadable.
func parseIdleState(name, latencyUs, residencyUs, disable string) (IdleState, bool) {
	name = strings.TrimSpace(name)
	lat, err := strconv.ParseUint(strings.TrimSpace(latencyUs), 10, 64)
	if name == "" || err != nil {
		return IdleState{}, false
	}
	s := IdleState{Name: name, ExitLatencyUs: lat}
	if r, err := strconv.ParseUint(strings.TrimSpace(residencyUs), 10, 64); err == nil {
		s.TargetResidencyUs = &r
	}
	s.Disabled = strings.TrimSpace(disable) != "" && strings.TrimSpace(disable) != "0"
	return s, true
}

// tickHzFromResolution is CONFIG_HZ from the coarse clocks' resolution (one
// tick, TICK_NSEC = 1e9/HZ rounded to nearest, so rounding back recovers
// HZ); false below 1 µs.
func tickHzFromResolution(resolutionNs uint64) (uint64, bool) {
	if resolutionNs < 1000 {
		return 0, false
	}
	return (1_000_000_000 + resolutionNs/2) / resolutionNs, true
}

// virtualizationFromHints: a paravirtual clocksource names the hypervisor;
// the CPU's hypervisor flag says only that there is one.
func virtualizationFromHints(cpu cpuInfo, clocksources []string) *Virtualization {
	const source = "/sys/devices/system/clocksource"
	switch {
	case slices.Contains(clocksources, "kvm-clock"):
		return &Virtualization{"KVM", source}
	case slices.Contains(clocksources, "hyperv_clocksource_tsc_page"):
		return &Virtualization{"Hyper-V", source}
	case slices.Contains(clocksources, "xen"):
		return &Virtualization{"Xen", source}
	case slices.Contains(cpu.flags, "hypervisor"):
		return &Virtualization{"unknown", "/proc/cpuinfo"}
	}
	return nil
}
