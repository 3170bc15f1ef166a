//! The accuracy/CPU presets.

use std::fmt;

/// How a [`Sleeper`](super::Sleeper) finishes a wait: the trade between accuracy and CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Mode {
    /// Spin-finished (the default): OS waits end a learned margin before the
    /// deadline, a spin on the clock finishes the sleep. Never returns early;
    /// typically within a fraction of a microsecond after the deadline, at a
    /// CPU cost of the margin (a few µs) per sleep.
    #[default]
    Exact,
    /// OS-only, compensated: one OS wait that ends the
    /// learned *median* overshoot before the deadline, no spin. Uses almost no
    /// CPU, but **may return before the deadline** (about half of the time by
    /// a few µs) and cannot wait less than the OS's minimum wake-up latency.
    /// The one documented exception to "never early".
    Efficient,
    /// Pure spin on the clock with the CPU's pause hint: the most accurate and
    /// a whole core for the whole wait (yielding after 50 µs, so a crowd of
    /// spinners does not starve other threads). Never returns early.
    Spin,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Exact => "exact",
            Mode::Efficient => "efficient",
            Mode::Spin => "spin",
        })
    }
}

impl std::str::FromStr for Mode {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "exact" => Ok(Mode::Exact),
            "efficient" => Ok(Mode::Efficient),
            "spin" => Ok(Mode::Spin),
            _ => Err(crate::Error::UnknownMode(s.to_owned())),
        }
    }
}
