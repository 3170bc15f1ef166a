//go:build linux && !keeptime_fallback

package keeptime

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// linuxClocks are the clocks InspectClocks reads with unix.ClockGettime.
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

// osClocks measures every clock_gettime clock through unix.ClockGettime,
// which is a real system call in x/sys/unix (no vDSO), so the read costs
// here are system-call costs; compare time.Since for the vDSO cost.
func osClocks() []ClockInfo {
	var out []ClockInfo
	for _, lc := range linuxClocks {
		id := lc.id
		c := ClockInfo{
			Name:        lc.name,
			Description: lc.description,
			Reader:      "unix.ClockGettime (system call)",
			ClockID:     &id,
		}
		var ts unix.Timespec
		if err := unix.ClockGetres(int32(id), &ts); err == nil {
			res := uint64(ts.Nano())
			c.ResolutionNs = &res
		}
		if err := unix.ClockGettime(int32(id), &ts); err != nil {
			c.Error = "clock_gettime: " + err.Error()
			out = append(out, c)
			continue
		}
		c.fill(measureReads(func() uint64 {
			var ts unix.Timespec
			_ = unix.ClockGettime(int32(id), &ts)
			return uint64(ts.Nano())
		}))
		out = append(out, c)
	}
	return out
}

func machineInfo() MachineInfo {
	m := baseMachineInfo()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.KernelRelease = unix.ByteSliceToString(u.Release[:])
		m.KernelVersion = unix.ByteSliceToString(u.Version[:])
	}
	const dir = "/sys/devices/system/clocksource/clocksource0/"
	if b, err := os.ReadFile(dir + "current_clocksource"); err == nil {
		m.Clocksource = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(dir + "available_clocksource"); err == nil {
		m.AvailableClocksources = strings.Fields(string(b))
	}
	return m
}
