//go:build !linux || keeptime_fallback

package keeptime

// inspectClocks: off Linux (or in the portable build) only the clocks Go
// reads itself, without clock_getres.
func inspectClocks() []ClockInfo {
	mono := ClockInfo{Name: "MONOTONIC", Description: "Go's monotonic reading (time.Since): what keeptime waits on"}
	goMonotonic(&mono)
	real := ClockInfo{Name: "REALTIME", Description: "Go's wall-clock time (time.Now); may step"}
	goRealtime(&real)
	return []ClockInfo{mono, real}
}

func machineInfo([]ClockInfo) MachineInfo { return baseMachineInfo() }

// tscClocks: the TSC is read only on Linux.
func tscClocks(*MachineInfo, []ClockInfo) []ClockInfo { return nil }

// machineFingerprint: off Linux (or in the portable build) nothing is read.
func machineFingerprint() Fingerprint {
	return fingerprintOf([7]string{"-", "-", "-", "-", "-", "-", "-"})
}
