//! Host profiles: what an earlier run on this machine learned, so that a new
//! [`Sleeper`](crate::Sleeper) starts from it instead of from nothing.
//!
//! A fresh sleeper needs hundreds to thousands of OS waits before its
//! windows are full, and until then one slow wake-up *is* its margin. A
//! profile is a small text file: a fingerprint of the machine, then per
//! OS-wait bucket its last (at most [`WINDOW`])
//! wake-ups and the cost of an OS wait. Loaded, the sleeper's model answers
//! as it would after those wake-ups; from then on it learns and forgets as
//! any sleeper does. The format, the loading rule and the errors are
//! specified in `spec/estimator.md` (*Profile*) and pinned by
//! `spec/vectors/profile.json`.
//!
//! Write one with `keeptime trace --profile FILE` (from a recording or an
//! existing trace) or [`Sleeper::profile`](crate::Sleeper::profile), then:
//!
//! ```no_run
//! use keeptime::{profile::Profile, Sleeper};
//! use std::time::Duration;
//!
//! // Refused, with the differing field named, if it was made on another machine.
//! let profile = Profile::load("host.profile")?;
//! let mut s = Sleeper::builder().profile(&profile).build();
//! s.sleep(Duration::from_millis(1));
//! # Ok::<(), keeptime::profile::ProfileError>(())
//! ```

mod error;
mod fingerprint;
mod parse;
#[cfg(test)]
mod tests;

pub use error::{ProfileError, ProfileErrorKind};
pub use fingerprint::Fingerprint;

use crate::estimate::{bin_lo, bucket_lo, bucket_of, MarginEstimator, BUCKETS, WINDOW};
use parse::Parser;
use std::path::Path;

/// The format's version this keeptime reads and writes.
pub const PROFILE_VERSION: u32 = 1;
/// The first word of a profile's first line.
pub const PROFILE_MAGIC: &str = "keeptime-profile";

/// The fingerprint's keys, in file order.
pub const FINGERPRINT_KEYS: [&str; 7] = [
    "cpu_vendor",
    "cpu_model",
    "cpus_online",
    "virtualization",
    "cpuidle_driver",
    "clocksource",
    "kernel_release",
];

/// One bucket's remembered wake-ups, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Section {
    bucket: usize,
    /// `(wait_ns, overshoot_ns)`.
    samples: Vec<(u64, u64)>,
}

/// A host profile: the machine's [`Fingerprint`], per bucket its last
/// wake-ups, and per bucket the cost of an OS wait (`spec/estimator.md`,
/// *Profile*). See the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    machine: Fingerprint,
    sections: Vec<Section>,
    /// `(wait_ns, cpu_ns)`, buckets ascending.
    costs: Vec<(u64, u64)>,
}

impl Profile {
    /// Reads the profile at `path` and checks that it was made on this
    /// machine ([`Fingerprint::this_machine`]): a profile from another
    /// machine is refused with a [`ProfileErrorKind::MachineMismatch`]
    /// naming the first field that differs and both values.
    pub fn load(path: impl AsRef<Path>) -> Result<Profile, ProfileError> {
        Self::load_checked(path.as_ref(), false)
    }

    /// Reads the profile at `path` whichever machine made it (the spec's
    /// `ignore_machine`): every other check still applies.
    pub fn load_ignoring_machine(path: impl AsRef<Path>) -> Result<Profile, ProfileError> {
        Self::load_checked(path.as_ref(), true)
    }

    fn load_checked(path: &Path, ignore_machine: bool) -> Result<Profile, ProfileError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| {
            ProfileError::at(
                ProfileErrorKind::Read,
                0,
                format!("cannot read the profile: {e}"),
            )
            .in_file(&file)
        })?;
        let profile = Self::parse_bytes(&bytes).map_err(|e| e.in_file(&file))?;
        if !ignore_machine {
            profile
                .check_machine(&Fingerprint::this_machine())
                .map_err(|e| e.in_file(&file))?;
        }
        Ok(profile)
    }

    /// Parses a profile's bytes (UTF-8 text); checks everything but the
    /// machine ([`check_machine`](Self::check_machine)).
    pub fn parse_bytes(bytes: &[u8]) -> Result<Profile, ProfileError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::parse(text),
            Err(e) => {
                let line = bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count() as u64
                    + 1;
                Err(ProfileError::at(
                    ProfileErrorKind::NotText,
                    line,
                    "not a profile: the text is not UTF-8",
                ))
            }
        }
    }

    /// Parses a profile's text; checks everything but the machine
    /// ([`check_machine`](Self::check_machine)). Nothing is loaded anywhere.
    pub fn parse(text: &str) -> Result<Profile, ProfileError> {
        let parser = Parser::new(text);
        let last = parser.lines.len() as u64;
        let last_line = parser.lines.last().copied().unwrap_or("");
        let header = format!("{PROFILE_MAGIC} {PROFILE_VERSION}");
        parser.profile().map_err(|e| {
            // A last line with no line break after it that does not read
            // as a whole line was cut inside (`spec/estimator.md`, *Errors*).
            let cut = !text.ends_with('\n')
                && e.line == last
                && match e.kind {
                    ProfileErrorKind::BadLine
                    | ProfileErrorKind::BadNumber
                    | ProfileErrorKind::BadBucket => true,
                    ProfileErrorKind::NotAProfile | ProfileErrorKind::UnsupportedVersion => {
                        header.starts_with(last_line)
                    }
                    _ => false,
                };
            if cut {
                ProfileError::at(
                    ProfileErrorKind::Truncated,
                    e.line,
                    format!("the profile ends inside this line, cut short: {}", e.detail),
                )
            } else {
                e
            }
        })
    }

    /// Checks that this profile was made on the machine `here`: the first
    /// fingerprint field that differs is a
    /// [`ProfileErrorKind::MachineMismatch`] naming it and both values.
    pub fn check_machine(&self, here: &Fingerprint) -> Result<(), ProfileError> {
        match self.machine.first_difference(here) {
            None => Ok(()),
            Some((key, mine, theirs)) => {
                let line = 2 + FINGERPRINT_KEYS.iter().position(|k| *k == key).unwrap_or(0) as u64;
                let mut e = ProfileError::at(
                    ProfileErrorKind::MachineMismatch,
                    line,
                    format!(
                        "made on another machine: {key} is \"{mine}\" in the profile, \"{theirs}\" here (load it anyway with ignore_machine)"
                    ),
                );
                e.mismatch = Some(Box::new((
                    key.to_string(),
                    mine.to_string(),
                    theirs.to_string(),
                )));
                Err(e)
            }
        }
    }

    /// The machine the profile was made on.
    pub fn machine(&self) -> &Fingerprint {
        &self.machine
    }

    /// Samples per bucket (0 for a bucket the profile has none of).
    pub fn samples(&self) -> [usize; BUCKETS] {
        let mut n = [0; BUCKETS];
        for s in &self.sections {
            n[s.bucket] = s.samples.len();
        }
        n
    }

    /// Loads the profile into a fresh estimator (`spec/estimator.md`,
    /// *Loading*): each section's samples through
    /// [`observe`](MarginEstimator::observe), then each cost through
    /// [`observe_cost`](MarginEstimator::observe_cost), with no sleep begun.
    pub fn estimator(&self) -> MarginEstimator {
        let mut e = MarginEstimator::new();
        for s in &self.sections {
            for &(w, o) in &s.samples {
                e.observe(w, o);
            }
        }
        for &(w, c) in &self.costs {
            e.observe_cost(w, c);
        }
        e.mark_loaded();
        e
    }

    /// The profile of what `estimator` remembers, made on `machine`
    /// (`spec/estimator.md`, *Writing*, from a sleeper): each live bucket's
    /// samples oldest first as its shortest wait and its bin's lower edge,
    /// and each learned cost. Loaded, every query answers as `estimator`'s.
    pub fn from_estimator(estimator: &MarginEstimator, machine: Fingerprint) -> Profile {
        let mut sections = Vec::new();
        let mut costs = Vec::new();
        for b in 0..BUCKETS {
            if estimator.live_samples(b) > 0 {
                let w = bucket_lo(b);
                sections.push(Section {
                    bucket: b,
                    samples: estimator
                        .remembered_bins(b)
                        .map(|bin| (w, bin_lo(bin)))
                        .collect(),
                });
            }
            if let Some(c) = estimator.own_cost(b) {
                costs.push((bucket_lo(b), c));
            }
        }
        Profile {
            machine,
            sections,
            costs,
        }
    }

    /// The profile of a trace, made on `machine` (`spec/estimator.md`,
    /// *Writing*, from a trace): per bucket the last [`WINDOW`] rows of its
    /// lengths, the blocks' in file order then the
    /// [after rows](crate::trace::Trace::after_rows) (overshoot clamped to
    /// 0..=1 s), and the lower median of their thread CPU as the bucket's
    /// cost. Loaded, the
    /// estimator answers as one that observed exactly those OS waits.
    #[cfg(feature = "trace")]
    pub fn from_trace(trace: &crate::trace::Trace, machine: Fingerprint) -> Profile {
        Self::from_trace_keeping(trace, machine, WINDOW)
    }

    /// [`from_trace`](Self::from_trace) keeping at most `keep` (1 to
    /// [`WINDOW`]; clamped into that range) rows per bucket: a smaller
    /// profile weighs less against the sleeper's own first wake-ups, so a
    /// host whose tail has shifted since the recording is followed sooner.
    #[cfg(feature = "trace")]
    pub fn from_trace_keeping(
        trace: &crate::trace::Trace,
        machine: Fingerprint,
        keep: usize,
    ) -> Profile {
        let keep = keep.clamp(1, WINDOW);
        use crate::estimate::MAX_SAMPLE_NS;
        let mut rows: Vec<Vec<(u64, u64, u64)>> = vec![Vec::new(); BUCKETS];
        // The blocks' rows, then those recorded right after a long wait:
        // kept last, the few such short waits are always in their bucket.
        let after = trace.after_rows().iter().map(|a| &a.row);
        for r in trace.rows().iter().chain(after) {
            rows[bucket_of(r.os_wait_ns)].push((
                r.os_wait_ns.min(parse::MAX_NUMBER),
                (r.overshoot_ns.max(0) as u64).min(MAX_SAMPLE_NS),
                r.thread_cpu_ns,
            ));
        }
        let mut sections = Vec::new();
        let mut costs = Vec::new();
        for (b, all) in rows.iter().enumerate() {
            if all.is_empty() {
                continue;
            }
            let kept = &all[all.len().saturating_sub(keep)..];
            sections.push(Section {
                bucket: b,
                samples: kept.iter().map(|&(w, o, _)| (w, o)).collect(),
            });
            let mut cpu: Vec<u64> = kept.iter().map(|r| r.2).collect();
            cpu.sort_unstable();
            let median = cpu[(cpu.len() - 1) / 2].min(MAX_SAMPLE_NS);
            costs.push((kept[kept.len() - 1].0, median));
        }
        Profile {
            machine,
            sections,
            costs,
        }
    }

    /// The profile's text (`spec/estimator.md`, *Format*), ending in a
    /// line break.
    pub fn to_text(&self) -> String {
        let mut s = format!("{PROFILE_MAGIC} {PROFILE_VERSION}\n");
        for (k, v) in self.machine.fields() {
            s.push_str(&format!("{k} {v}\n"));
        }
        for sec in &self.sections {
            s.push_str(&format!("bucket {} {}\n", sec.bucket, sec.samples.len()));
            for (w, o) in &sec.samples {
                s.push_str(&format!("{w} {o}\n"));
            }
        }
        for (w, c) in &self.costs {
            s.push_str(&format!("cost {w} {c}\n"));
        }
        s.push_str("end\n");
        s
    }

    /// Writes the profile to `path`.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ProfileError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_text()).map_err(|e| {
            ProfileError::at(
                ProfileErrorKind::Write,
                0,
                format!("cannot write the profile: {e}"),
            )
            .in_file(&path.display().to_string())
        })
    }
}
