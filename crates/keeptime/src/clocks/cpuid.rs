//! What the x86 CPU (or the hypervisor posing as one) says about itself through
//! CPUID: the hypervisor's name, the stated TSC frequency, and `rdtscp`.
//!
//! The decoders are plain functions of register values, tested with fixture
//! values; compiled on x86_64 Linux only.

use super::FrequencySource;

/// CPUID leaf 0x15: TSC frequency = crystal Hz (ECX) × EBX / EAX. Any zero
/// register means the CPU doesn't state it (common under hypervisors).
pub(crate) fn leaf15_hz(eax: u32, ebx: u32, ecx: u32) -> Option<u64> {
    if eax == 0 || ebx == 0 || ecx == 0 {
        return None;
    }
    Some(u64::from(ecx) * u64::from(ebx) / u64::from(eax))
}

/// Hypervisor timing leaf 0x40000010 (VMware's, also offered by KVM/QEMU):
/// EAX is the TSC frequency in kHz. Only valid when the hypervisor's maximum
/// leaf (EAX of 0x40000000) reaches it; otherwise the CPU returns another
/// leaf's data.
pub(crate) fn hypervisor_leaf_hz(max_hypervisor_leaf: u32, eax_khz: u32) -> Option<u64> {
    if max_hypervisor_leaf < 0x4000_0010 || eax_khz == 0 {
        return None;
    }
    Some(u64::from(eax_khz) * 1000)
}

/// The hypervisor's name from the 12-byte vendor signature of leaf 0x40000000
/// (EBX, ECX, EDX as little-endian bytes).
pub(crate) fn hypervisor_from_signature(ebx: u32, ecx: u32, edx: u32) -> Option<String> {
    let mut bytes = Vec::with_capacity(12);
    for reg in [ebx, ecx, edx] {
        bytes.extend_from_slice(&reg.to_le_bytes());
    }
    let known = match &bytes[..] {
        b"KVMKVMKVM\0\0\0" => "KVM",
        b"Microsoft Hv" => "Hyper-V",
        b"VMwareVMware" => "VMware",
        b"XenVMMXenVMM" => "Xen",
        b"TCGTCGTCGTCG" => "QEMU (TCG emulation)",
        b"ACRNACRNACRN" => "ACRN",
        b"bhyve bhyve " => "bhyve",
        b" lrpepyh  vr" => "Parallels",
        b"VBoxVBoxVBox" => "VirtualBox",
        b"QNXQVMBSQG\0\0" => "QNX",
        b"Linux KVM Hv" => "KVM",
        _ => "",
    };
    if !known.is_empty() {
        return Some(known.to_string());
    }
    let text: String = String::from_utf8_lossy(&bytes)
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The TSC frequency CPUID states, preferring the CPU's own leaf 0x15 over
/// the hypervisor's leaf 0x40000010.
pub(crate) fn stated_tsc_hz() -> Option<(u64, FrequencySource)> {
    let max_basic = cpuid(0).0;
    if max_basic >= 0x15 {
        let (eax, ebx, ecx, _) = cpuid(0x15);
        if let Some(hz) = leaf15_hz(eax, ebx, ecx) {
            return Some((hz, FrequencySource::CpuidLeaf15));
        }
    }
    if hypervisor_bit() {
        let max_hv = cpuid(0x4000_0000).0;
        if max_hv >= 0x4000_0010 {
            let eax = cpuid(0x4000_0010).0;
            if let Some(hz) = hypervisor_leaf_hz(max_hv, eax) {
                return Some((hz, FrequencySource::HypervisorCpuid));
            }
        }
    }
    None
}

/// The hypervisor's name from CPUID, if the CPU says it runs under one.
pub(crate) fn hypervisor() -> Option<String> {
    if !hypervisor_bit() {
        return None;
    }
    let (_, ebx, ecx, edx) = cpuid(0x4000_0000);
    hypervisor_from_signature(ebx, ecx, edx).or_else(|| Some("unknown".to_string()))
}

/// Whether the CPU implements `rdtscp` (leaf 0x80000001, EDX bit 27).
pub(crate) fn has_rdtscp() -> bool {
    cpuid(0x8000_0000).0 >= 0x8000_0001 && cpuid(0x8000_0001).3 & (1 << 27) != 0
}

/// Leaf 1, ECX bit 31: "running under a hypervisor".
fn hypervisor_bit() -> bool {
    cpuid(1).2 & (1 << 31) != 0
}

fn cpuid(leaf: u32) -> (u32, u32, u32, u32) {
    // `__cpuid` is safe on newer toolchains and `unsafe` on the MSRV.
    #[allow(unused_unsafe)]
    // SAFETY: every x86_64 CPU implements CPUID; an unsupported leaf returns
    // some other leaf's data, never faults, and callers check the maximum leaf.
    let r = unsafe { core::arch::x86_64::__cpuid(leaf) };
    (r.eax, r.ebx, r.ecx, r.edx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs(sig: &[u8; 12]) -> (u32, u32, u32) {
        let word = |i: usize| u32::from_le_bytes([sig[i], sig[i + 1], sig[i + 2], sig[i + 3]]);
        (word(0), word(4), word(8))
    }

    #[test]
    fn leaf15_frequency() {
        // A 24 MHz crystal with ratio 225/2: 2.7 GHz.
        assert_eq!(leaf15_hz(2, 225, 24_000_000), Some(2_700_000_000));
        // Crystal frequency not enumerated.
        assert_eq!(leaf15_hz(2, 225, 0), None);
        assert_eq!(leaf15_hz(0, 0, 0), None);
    }

    #[test]
    fn hypervisor_timing_leaf() {
        assert_eq!(
            hypervisor_leaf_hz(0x4000_0010, 2_700_000),
            Some(2_700_000_000)
        );
        // Max leaf too low: EAX belongs to another leaf.
        assert_eq!(hypervisor_leaf_hz(0x4000_0001, 2_700_000), None);
        assert_eq!(hypervisor_leaf_hz(0x4000_0010, 0), None);
    }

    #[test]
    fn hypervisor_signatures() {
        let (b, c, d) = regs(b"KVMKVMKVM\0\0\0");
        assert_eq!(hypervisor_from_signature(b, c, d).as_deref(), Some("KVM"));
        let (b, c, d) = regs(b"Microsoft Hv");
        assert_eq!(
            hypervisor_from_signature(b, c, d).as_deref(),
            Some("Hyper-V")
        );
        let (b, c, d) = regs(b"NewVisor\0\0\0\0");
        assert_eq!(
            hypervisor_from_signature(b, c, d).as_deref(),
            Some("NewVisor")
        );
        assert_eq!(hypervisor_from_signature(0, 0, 0), None);
    }
}
