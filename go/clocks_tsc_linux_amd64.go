//go:build !keeptime_fallback

package keeptime

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	tscDescription    = "the CPU's time-stamp counter read with rdtsc: ticks, not ns; not ordered with earlier instructions"
	rdtscpDescription = "the time-stamp counter read with rdtscp: waits for earlier instructions"
	// tscCalibration is how long the TSC is counted against CLOCK_MONOTONIC_RAW.
	tscCalibration = 20 * time.Millisecond
)

// tscClocks measures the TSC through rdtsc and rdtscp, calibrated against
// MONOTONIC_RAW when that clock works, and records its frequencies in m.TSC.
func tscClocks(m *MachineInfo, posix []ClockInfo) []ClockInfo {
	tsc := ClockInfo{Name: "TSC", Description: tscDescription, Reader: "rdtsc (Go assembly)"}
	tscp := ClockInfo{Name: "RDTSCP", Description: rdtscpDescription, Reader: "rdtscp (Go assembly)"}
	var mode int32
	if err := unix.Prctl(unix.PR_GET_TSC, uintptr(unsafe.Pointer(&mode)), 0, 0, 0); err == nil && mode == unix.PR_TSC_SIGSEGV {
		tsc.Error = "rdtsc is disabled for this process (prctl PR_SET_TSC)"
		tscp.Error = tsc.Error
		return []ClockInfo{tsc, tscp}
	}
	stated, statedSource := statedTSCHz()
	var measured uint64
	for _, c := range posix {
		if c.Name == "MONOTONIC_RAW" && c.Available {
			measured = calibrateTSC(monotonicRawNs, rdtsc, func() { time.Sleep(tscCalibration) })
		}
	}
	if m.TSC != nil {
		if stated > 0 {
			m.TSC.ReportedFrequencyHz = &stated
		}
		if measured > 0 {
			m.TSC.MeasuredFrequencyHz = &measured
		}
	}
	hz, source := chooseTSCFrequency(stated, statedSource, measured)

	fillCounter(&tsc, measureReads(rdtsc), hz, source)
	hasRDTSCP := cpuHasRDTSCP()
	if m.TSC != nil {
		hasRDTSCP = m.TSC.RDTSCP
	}
	if hasRDTSCP {
		fillCounter(&tscp, measureReads(rdtscp), hz, source)
	} else {
		tscp.Error = "the CPU (or the kernel, in /proc/cpuinfo) does not offer rdtscp"
	}
	return []ClockInfo{tsc, tscp}
}

// fillCounter records a tick counter's measurement: its step in ticks and,
// with a frequency, in ns (rounded up).
func fillCounter(c *ClockInfo, m readMeasurement, hz uint64, source string) {
	c.fill(m)
	if c.GranularityNs != nil { // fill stored the step in ticks
		ticks := *c.GranularityNs
		c.GranularityTicks, c.GranularityNs = &ticks, nil
		if ns, ok := ticksToNsCeil(ticks, hz); ok {
			c.GranularityNs = &ns
		}
	}
	if hz > 0 {
		c.FrequencyHz, c.FrequencySource = &hz, source
	}
}

func monotonicRawNs() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts)
	return uint64(ts.Nano())
}
