//go:build !amd64

package keeptime

// No TSC off x86-64.
func cpuidHypervisor() string { return "" }
