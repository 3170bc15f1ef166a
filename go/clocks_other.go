//go:build !linux || keeptime_fallback

package keeptime

// osClocks: off Linux only Go's own readers are measured.
func osClocks() []ClockInfo { return nil }

func machineInfo() MachineInfo { return baseMachineInfo() }
