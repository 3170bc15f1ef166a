//! The machine fingerprint a profile carries and is checked against.

use super::FINGERPRINT_KEYS;

/// What identifies a machine to a wake-up model (`spec/estimator.md`,
/// *Machine fingerprint*): CPU vendor and model, online CPUs,
/// virtualisation, cpuidle driver, clocksource, kernel release. `"-"` stands
/// for a value that could not be read (for `virtualization`: no hypervisor).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    pub(super) values: [String; 7],
}

impl Fingerprint {
    /// This machine's fingerprint, read from `/proc`, `/sys` and `uname` as
    /// `spec/estimator.md` (*Machine fingerprint*) says, the hypervisor
    /// without CPUID so that every runtime reads the same (a few file reads;
    /// nothing is measured). Off Linux every value is `"-"`.
    pub fn this_machine() -> Fingerprint {
        #[cfg(target_os = "linux")]
        {
            crate::clocks::machine_fingerprint()
        }
        #[cfg(not(target_os = "linux"))]
        {
            Fingerprint::from_parts(None, None, None, None, None, None, None)
        }
    }

    /// A fingerprint from the seven values, each in its key's order
    /// ([`FINGERPRINT_KEYS`]); `None` (or a value no profile line can hold:
    /// empty, with a line break or surrounding blanks) is written `"-"`.
    pub fn from_parts(
        cpu_vendor: Option<String>,
        cpu_model: Option<String>,
        cpus_online: Option<usize>,
        virtualization: Option<String>,
        cpuidle_driver: Option<String>,
        clocksource: Option<String>,
        kernel_release: Option<String>,
    ) -> Fingerprint {
        let clean = |v: Option<String>| match v {
            Some(v) if !v.is_empty() && v.trim() == v && !v.contains(['\n', '\r']) => v,
            _ => "-".to_string(),
        };
        Fingerprint {
            values: [
                clean(cpu_vendor),
                clean(cpu_model),
                clean(cpus_online.map(|n| n.to_string())),
                clean(virtualization),
                clean(cpuidle_driver),
                clean(clocksource),
                clean(kernel_release),
            ],
        }
    }

    /// The value of `key` (one of [`FINGERPRINT_KEYS`]), or `None` for
    /// another key.
    pub fn get(&self, key: &str) -> Option<&str> {
        FINGERPRINT_KEYS
            .iter()
            .position(|k| *k == key)
            .map(|i| self.values[i].as_str())
    }

    /// `(key, value)` pairs in file order.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, &str)> {
        FINGERPRINT_KEYS
            .iter()
            .zip(self.values.iter())
            .map(|(k, v)| (*k, v.as_str()))
    }

    /// The first field (in file order) whose value differs from `other`'s:
    /// `(key, self's value, other's value)`.
    pub fn first_difference<'a>(
        &'a self,
        other: &'a Fingerprint,
    ) -> Option<(&'static str, &'a str, &'a str)> {
        self.fields()
            .zip(other.values.iter())
            .find(|((_, a), b)| a != b)
            .map(|((k, a), b)| (k, a, b.as_str()))
    }
}
