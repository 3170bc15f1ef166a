package main

import "encoding/binary"

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// hypervisorFromCPUID names the hypervisor from CPUID leaf 0x40000000, if
// the CPU says it runs under one (leaf 1, ECX bit 31).
func hypervisorFromCPUID() string {
	if _, _, ecx, _ := cpuid(1, 0); ecx&(1<<31) == 0 {
		return ""
	}
	_, b, c, d := cpuid(0x4000_0000, 0)
	var sig [12]byte
	binary.LittleEndian.PutUint32(sig[0:], b)
	binary.LittleEndian.PutUint32(sig[4:], c)
	binary.LittleEndian.PutUint32(sig[8:], d)
	switch string(sig[:]) {
	case "KVMKVMKVM\x00\x00\x00":
		return "KVM"
	case "Microsoft Hv":
		return "Hyper-V"
	case "VMwareVMware":
		return "VMware"
	case "XenVMMXenVMM":
		return "Xen"
	case "TCGTCGTCGTCG":
		return "QEMU (TCG)"
	case "bhyve bhyve ":
		return "bhyve"
	case " lrpepyh  vr":
		return "Parallels"
	case "ACRNACRNACRN":
		return "ACRN"
	}
	return "unknown"
}
