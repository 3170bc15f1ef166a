package keeptime

import (
	"math"
	"math/bits"
	"strings"
)

// Where a TSC frequency came from (ClockInfo.FrequencySource).
const (
	// FrequencyCPUIDLeaf15 is crystal frequency × TSC/crystal ratio, as the
	// CPU states it in CPUID leaf 0x15.
	FrequencyCPUIDLeaf15 = "cpuid_leaf15"
	// FrequencyHypervisorCPUID is the frequency the hypervisor states in
	// CPUID leaf 0x40000010.
	FrequencyHypervisorCPUID = "hypervisor_cpuid"
	// FrequencyMeasured is TSC ticks counted against CLOCK_MONOTONIC_RAW.
	FrequencyMeasured = "measured_against_monotonic_raw"
)

// leaf15Hz is the TSC frequency from CPUID leaf 0x15 (EAX denominator, EBX
// numerator, ECX crystal Hz); 0 when any is 0.
func leaf15Hz(eax, ebx, ecx, _ uint32) uint64 {
	if eax == 0 || ebx == 0 || ecx == 0 {
		return 0
	}
	return uint64(ecx) * uint64(ebx) / uint64(eax)
}

// hypervisorLeafHz is the TSC frequency from leaf 0x40000010 (EAX in kHz),
// when the hypervisor's highest leaf reaches it; 0 otherwise.
func hypervisorLeafHz(maxHypervisorLeaf, eaxKHz uint32) uint64 {
	if maxHypervisorLeaf < 0x4000_0010 || eaxKHz == 0 {
		return 0
	}
	return uint64(eaxKHz) * 1000
}

// hypervisorFromSignature names a hypervisor from its 12-byte CPUID
// signature; the printable signature itself when unknown, "" when empty.
func hypervisorFromSignature(sig [12]byte) string {
	switch string(sig[:]) {
	case "KVMKVMKVM\x00\x00\x00", "Linux KVM Hv":
		return "KVM"
	case "Microsoft Hv":
		return "Hyper-V"
	case "VMwareVMware":
		return "VMware"
	case "XenVMMXenVMM":
		return "Xen"
	case "TCGTCGTCGTCG":
		return "QEMU (TCG emulation)"
	case "ACRNACRNACRN":
		return "ACRN"
	case "bhyve bhyve ":
		return "bhyve"
	case " lrpepyh  vr":
		return "Parallels"
	case "VBoxVBoxVBox":
		return "VirtualBox"
	case "QNXQVMBSQG\x00\x00":
		return "QNX"
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 {
			return -1
		}
		return r
	}, string(sig[:])))
}

// chooseTSCFrequency is the stated frequency when it agrees with the
// measured one (or nothing was measured), the measured one when they
// disagree: that is the rate the TSC advances against the kernel's clock.
// 0 when neither is known.
func chooseTSCFrequency(stated uint64, statedSource string, measured uint64) (uint64, string) {
	switch {
	case stated > 0 && measured > 0 && ppmApart(stated, measured) > tscMismatchPpm:
		return measured, FrequencyMeasured
	case stated > 0:
		return stated, statedSource
	case measured > 0:
		return measured, FrequencyMeasured
	}
	return 0, ""
}

// ticksToNsCeil is ticks of a clock running at hz, in ns, rounded up (a
// real step is never 0 ns); false when hz is 0 or the result overflows.
func ticksToNsCeil(ticks, hz uint64) (uint64, bool) {
	if hz == 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(ticks, 1_000_000_000)
	lo, carry := bits.Add64(lo, hz-1, 0)
	hi += carry
	if hi >= hz {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, hz)
	return q, true
}

// calibrateTSC counts ticks against referenceNs across wait. Each end pairs
// a tick read with the midpoint of the tightest of five bracketing
// reference reads, so a preemption costs accuracy only if it hits all five.
// 0 when the reference did not advance or the ticks went back.
func calibrateTSC(referenceNs, ticks func() uint64, wait func()) uint64 {
	pair := func() (t, r uint64) {
		best := uint64(math.MaxUint64)
		for i := 0; i < 5; i++ {
			r0 := referenceNs()
			tt := ticks()
			r1 := referenceNs()
			if r1 >= r0 && r1-r0 < best {
				best, t, r = r1-r0, tt, r0/2+r1/2
			}
		}
		return t, r
	}
	t0, r0 := pair()
	wait()
	t1, r1 := pair()
	if r1 <= r0 || t1 < t0 {
		return 0
	}
	hi, lo := bits.Mul64(t1-t0, 1_000_000_000)
	if hi >= r1-r0 {
		return 0
	}
	hz, _ := bits.Div64(hi, lo, r1-r0)
	return hz
}
