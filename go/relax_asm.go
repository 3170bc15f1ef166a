//go:build amd64 || arm64

package keeptime

// cpuRelax is one iteration of a spin loop: the CPU's pause hint (PAUSE on
// amd64, YIELD on arm64), in assembly because Go has no portable intrinsic
// for it. Assembly needs no cgo and cross-compiles like Go.
func cpuRelax()
