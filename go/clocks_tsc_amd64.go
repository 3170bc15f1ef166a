package keeptime

import "encoding/binary"

// cpuidLeaf executes CPUID with EAX = leaf, ECX = sub.
func cpuidLeaf(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// rdtsc reads the time-stamp counter (not ordered with earlier instructions).
func rdtsc() uint64

// rdtscp reads the time-stamp counter after earlier instructions complete;
// only call it when the CPU has rdtscp.
func rdtscp() uint64

// hypervisorBit: CPUID leaf 1, ECX bit 31, set under a hypervisor.
func hypervisorBit() bool {
	_, _, ecx, _ := cpuidLeaf(1, 0)
	return ecx&(1<<31) != 0
}

// cpuidHypervisor names the hypervisor from CPUID leaf 0x40000000
// ("unknown" for an unknown signature); "" when the CPU says there is none.
func cpuidHypervisor() string {
	if !hypervisorBit() {
		return ""
	}
	_, b, c, d := cpuidLeaf(0x4000_0000, 0)
	var sig [12]byte
	binary.LittleEndian.PutUint32(sig[0:], b)
	binary.LittleEndian.PutUint32(sig[4:], c)
	binary.LittleEndian.PutUint32(sig[8:], d)
	if name := hypervisorFromSignature(sig); name != "" {
		return name
	}
	return "unknown"
}

// statedTSCHz is the TSC frequency the CPU (leaf 0x15) or the hypervisor
// (leaf 0x40000010) states, with its source; 0 when neither does.
func statedTSCHz() (uint64, string) {
	if maxBasic, _, _, _ := cpuidLeaf(0, 0); maxBasic >= 0x15 {
		if hz := leaf15Hz(cpuidLeaf(0x15, 0)); hz > 0 {
			return hz, FrequencyCPUIDLeaf15
		}
	}
	if hypervisorBit() {
		maxHV, _, _, _ := cpuidLeaf(0x4000_0000, 0)
		if maxHV >= 0x4000_0010 {
			khz, _, _, _ := cpuidLeaf(0x4000_0010, 0)
			if hz := hypervisorLeafHz(maxHV, khz); hz > 0 {
				return hz, FrequencyHypervisorCPUID
			}
		}
	}
	return 0, ""
}

// cpuHasRDTSCP: CPUID leaf 0x80000001, EDX bit 27.
func cpuHasRDTSCP() bool {
	if maxExt, _, _, _ := cpuidLeaf(0x8000_0000, 0); maxExt < 0x8000_0001 {
		return false
	}
	_, _, _, edx := cpuidLeaf(0x8000_0001, 0)
	return edx&(1<<27) != 0
}
