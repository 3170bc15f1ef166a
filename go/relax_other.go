//go:build !amd64 && !arm64

package keeptime

// cpuRelax is one iteration of a spin loop. On architectures without an
// assembly pause hint here it does nothing; the clock read between
// iterations paces the loop.
func cpuRelax() {}
