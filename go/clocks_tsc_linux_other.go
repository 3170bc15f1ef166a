//go:build linux && !amd64 && !keeptime_fallback

package keeptime

// No TSC off x86-64.
func tscClocks(*MachineInfo, []ClockInfo) []ClockInfo { return nil }
