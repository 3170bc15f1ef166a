//! Host profiles: what an earlier run on this machine learned, so that a new
//! [`Sleeper`](crate::Sleeper) starts from it instead of from nothing.
//!
//! A fresh sleeper needs hundreds to thousands of OS waits before its
//! windows are full, and until then one slow wake-up *is* its margin. A
//! profile is a small text file: a fingerprint of the machine, then per
//! OS-wait bucket its last (at most [`WINDOW`](crate::estimate::WINDOW))
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

use crate::estimate::{bin_lo, bucket_lo, bucket_of, MarginEstimator, BUCKETS, WINDOW};
use std::fmt;
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

/// Largest number a profile may hold: every runtime's signed 64-bit integer.
const MAX_NUMBER: u64 = i64::MAX as u64;

/// What identifies a machine to a wake-up model (`spec/estimator.md`,
/// *Machine fingerprint*): CPU vendor and model, online CPUs,
/// virtualisation, cpuidle driver, clocksource, kernel release. `"-"` stands
/// for a value that could not be read (for `virtualization`: no hypervisor).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    values: [String; 7],
}

impl Fingerprint {
    /// This machine's fingerprint, read from `/proc`, `/sys`, `uname` and
    /// CPUID as the clock report reads them (a few file reads; nothing is
    /// measured). Off Linux every value is `"-"` but the CPU count.
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

/// What went wrong reading a profile; [`ProfileError::code`] is the spec's
/// code (the vectors compare it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProfileErrorKind {
    /// The file could not be opened or read.
    Read,
    /// The file could not be created or written.
    Write,
    /// Not UTF-8.
    NotText,
    /// Line 1 is not a profile header.
    NotAProfile,
    /// A profile of a version this keeptime does not read.
    UnsupportedVersion,
    /// A line of the wrong shape.
    BadLine,
    /// A field that must be a number is not one, or is too large.
    BadNumber,
    /// A bucket out of range or order, a count out of range, or a wait
    /// outside its section's bucket.
    BadBucket,
    /// The text ends before `end`.
    Truncated,
    /// Something follows `end`.
    AfterEnd,
    /// Made on another machine.
    MachineMismatch,
}

impl ProfileErrorKind {
    /// The spec's code: `not_text`, `not_a_profile`, `unsupported_version`,
    /// `bad_line`, `bad_number`, `bad_bucket`, `truncated`, `after_end`,
    /// `machine_mismatch` (and `read`, `write` for the file itself).
    pub fn code(self) -> &'static str {
        match self {
            ProfileErrorKind::Read => "read",
            ProfileErrorKind::Write => "write",
            ProfileErrorKind::NotText => "not_text",
            ProfileErrorKind::NotAProfile => "not_a_profile",
            ProfileErrorKind::UnsupportedVersion => "unsupported_version",
            ProfileErrorKind::BadLine => "bad_line",
            ProfileErrorKind::BadNumber => "bad_number",
            ProfileErrorKind::BadBucket => "bad_bucket",
            ProfileErrorKind::Truncated => "truncated",
            ProfileErrorKind::AfterEnd => "after_end",
            ProfileErrorKind::MachineMismatch => "machine_mismatch",
        }
    }
}

/// Why a profile could not be read, checked or written: one line naming the
/// file (when there is one), the 1-based line and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    kind: ProfileErrorKind,
    file: Option<String>,
    line: u64,
    detail: String,
    mismatch: Option<Box<(String, String, String)>>,
}

impl ProfileError {
    fn at(kind: ProfileErrorKind, line: u64, detail: impl Into<String>) -> ProfileError {
        ProfileError {
            kind,
            file: None,
            line,
            detail: detail.into(),
            mismatch: None,
        }
    }

    fn in_file(mut self, file: &str) -> ProfileError {
        self.file = Some(file.to_string());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ProfileErrorKind {
        self.kind
    }

    /// The spec's code ([`ProfileErrorKind::code`]).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The 1-based line (0 for an error of the file itself).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The file, when the profile was read from one.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// For [`ProfileErrorKind::MachineMismatch`]: the key, the profile's
    /// value and this machine's.
    pub fn mismatch(&self) -> Option<(&str, &str, &str)> {
        self.mismatch
            .as_deref()
            .map(|(k, p, h)| (k.as_str(), p.as_str(), h.as_str()))
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        f.write_str(&self.detail)
    }
}

impl std::error::Error for ProfileError {}

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
                    ProfileErrorKind::NotAProfile => header.starts_with(last_line),
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
    /// lengths in file order (overshoot clamped to 0..=1 s), and the lower
    /// median of their thread CPU as the bucket's cost. Loaded, the
    /// estimator answers as one that observed exactly those OS waits.
    #[cfg(feature = "trace")]
    pub fn from_trace(trace: &crate::trace::Trace, machine: Fingerprint) -> Profile {
        use crate::estimate::MAX_SAMPLE_NS;
        let mut rows: Vec<Vec<(u64, u64, u64)>> = vec![Vec::new(); BUCKETS];
        for r in trace.rows() {
            rows[bucket_of(r.os_wait_ns)].push((
                r.os_wait_ns.min(MAX_NUMBER),
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
            let kept = &all[all.len().saturating_sub(WINDOW)..];
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

/// Reads a profile's lines in order (`spec/estimator.md`, *Format*).
struct Parser<'a> {
    lines: Vec<&'a str>,
    /// Index of the next line to read.
    at: usize,
}

/// Shows a line in an error, shortened.
fn shown(line: &str) -> String {
    let mut s: String = line.chars().take(60).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    format!("\"{}\"", s.escape_debug())
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let mut lines: Vec<&str> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        // A final line break ends the last line; it starts none.
        if text.ends_with('\n') {
            lines.pop();
        }
        if text.is_empty() {
            lines.clear();
        }
        Parser { lines, at: 0 }
    }

    /// The next line and its number, or `truncated` expecting `what`.
    fn next(&mut self, what: &str) -> Result<(u64, &'a str), ProfileError> {
        let n = self.at as u64 + 1;
        match self.lines.get(self.at) {
            Some(l) => {
                self.at += 1;
                Ok((n, l))
            }
            None => Err(ProfileError::at(
                ProfileErrorKind::Truncated,
                n,
                format!("the profile ends here, cut short: expected {what}"),
            )),
        }
    }

    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.at).copied()
    }

    fn profile(mut self) -> Result<Profile, ProfileError> {
        let header = format!("\"{PROFILE_MAGIC} {PROFILE_VERSION}\"");
        let (_, first) = self.next(&format!("the header {header}"))?;
        match first.strip_prefix(PROFILE_MAGIC).and_then(|r| r.strip_prefix(' ')) {
            None => {
                return Err(ProfileError::at(
                    ProfileErrorKind::NotAProfile,
                    1,
                    format!(
                        "not a keeptime profile: expected the header {header}, found {}",
                        shown(first)
                    ),
                ))
            }
            Some(v) if v != PROFILE_VERSION.to_string() => {
                return Err(ProfileError::at(
                    ProfileErrorKind::UnsupportedVersion,
                    1,
                    format!(
                        "a profile of version {}; this keeptime reads version {PROFILE_VERSION} (write it again with this keeptime's `keeptime trace --profile`)",
                        shown(v)
                    ),
                ))
            }
            Some(_) => {}
        }
        let mut values: [String; 7] = Default::default();
        for (i, key) in FINGERPRINT_KEYS.iter().enumerate() {
            let (n, line) = self.next(&format!("the machine's {key} line"))?;
            match line.strip_prefix(key).and_then(|r| r.strip_prefix(' ')) {
                Some(v) if !v.is_empty() => values[i] = v.to_string(),
                _ => {
                    return Err(ProfileError::at(
                        ProfileErrorKind::BadLine,
                        n,
                        format!(
                            "expected the machine's \"{key} VALUE\", found {}",
                            shown(line)
                        ),
                    ))
                }
            }
        }
        let machine = Fingerprint { values };
        let mut sections: Vec<Section> = Vec::new();
        let mut costs: Vec<(u64, u64)> = Vec::new();
        let mut last_cost_bucket: Option<usize> = None;
        loop {
            let expected = if !costs.is_empty() {
                "a \"cost WAIT_NS CPU_NS\" line or \"end\""
            } else {
                "a \"bucket B N\" section, a \"cost WAIT_NS CPU_NS\" line or \"end\""
            };
            let (n, line) = self.next(expected)?;
            let fields: Vec<&str> = line.split(' ').collect();
            match fields.as_slice() {
                ["end"] => break,
                ["bucket", b, count] if costs.is_empty() => {
                    let b = number(n, b, "a bucket")?;
                    let count = number(n, count, "a sample count")?;
                    if b >= BUCKETS as u64 {
                        return Err(bad_bucket(
                            n,
                            format!(
                                "bucket {b} does not exist: buckets are 0 to {}",
                                BUCKETS - 1
                            ),
                        ));
                    }
                    let b = b as usize;
                    if let Some(prev) = sections.last() {
                        if b <= prev.bucket {
                            return Err(bad_bucket(
                                n,
                                format!(
                                    "bucket {b} after bucket {}: sections go in ascending bucket order, each once",
                                    prev.bucket
                                ),
                            ));
                        }
                    }
                    if count == 0 || count > WINDOW as u64 {
                        return Err(bad_bucket(
                            n,
                            format!("bucket {b} with {count} samples: expected 1 to {WINDOW}"),
                        ));
                    }
                    let mut samples = Vec::with_capacity(count as usize);
                    for k in 0..count {
                        let what = format!(
                            "sample {} of {count} of bucket {b}, \"WAIT_NS OVERSHOOT_NS\"",
                            k + 1
                        );
                        let (m, line) = self.next(&what)?;
                        let f: Vec<&str> = line.split(' ').collect();
                        let [w, o] = f.as_slice() else {
                            return Err(ProfileError::at(
                                ProfileErrorKind::BadLine,
                                m,
                                format!("expected {what}, found {}", shown(line)),
                            ));
                        };
                        let w = number(m, w, "a wait in ns")?;
                        let o = number(m, o, "an overshoot in ns")?;
                        if bucket_of(w) != b {
                            return Err(bad_bucket(
                                m,
                                format!(
                                    "a wait of {w} ns is in bucket {}, not in this section's bucket {b}",
                                    bucket_of(w)
                                ),
                            ));
                        }
                        samples.push((w, o));
                    }
                    sections.push(Section { bucket: b, samples });
                }
                ["cost", w, c] => {
                    let w = number(n, w, "a wait in ns")?;
                    let c = number(n, c, "a CPU time in ns")?;
                    let b = bucket_of(w);
                    if last_cost_bucket.is_some_and(|p| b <= p) {
                        return Err(bad_bucket(
                            n,
                            format!(
                                "a cost for bucket {b} after one for bucket {}: cost lines go in ascending bucket order, one per bucket",
                                last_cost_bucket.unwrap_or(0)
                            ),
                        ));
                    }
                    last_cost_bucket = Some(b);
                    costs.push((w, c));
                }
                _ => {
                    return Err(ProfileError::at(
                        ProfileErrorKind::BadLine,
                        n,
                        format!("expected {expected}, found {}", shown(line)),
                    ))
                }
            }
        }
        if let Some(extra) = self.peek() {
            let n = self.at as u64 + 1;
            return Err(ProfileError::at(
                ProfileErrorKind::AfterEnd,
                n,
                format!("nothing may follow \"end\", found {}", shown(extra)),
            ));
        }
        Ok(Profile {
            machine,
            sections,
            costs,
        })
    }
}

fn bad_bucket(line: u64, detail: String) -> ProfileError {
    ProfileError::at(ProfileErrorKind::BadBucket, line, detail)
}

/// A field that must be a number: ASCII digits, at most 2^63 − 1.
fn number(line: u64, field: &str, what: &str) -> Result<u64, ProfileError> {
    let bad = |why: &str| {
        ProfileError::at(
            ProfileErrorKind::BadNumber,
            line,
            format!(
                "expected {what} (a whole number{why}), found {}",
                shown(field)
            ),
        )
    };
    if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(""));
    }
    match field.parse::<u64>() {
        Ok(v) if v <= MAX_NUMBER => Ok(v),
        _ => Err(bad(" at most 9223372036854775807")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() -> Fingerprint {
        Fingerprint::from_parts(
            Some("AuthenticAMD".into()),
            Some("AMD EPYC".into()),
            Some(2),
            Some("KVM".into()),
            Some("haltpoll".into()),
            Some("tsc".into()),
            Some("6.18.44".into()),
        )
    }

    #[test]
    fn an_estimators_profile_answers_as_it_did() {
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        for i in 0..1500u64 {
            e.observe(900_000, 20_000 + (i * 7_919) % 30_000);
            e.observe(120_000, 15_000 + (i * 104_729) % 9_000);
        }
        e.observe(40_000, 300_000);
        e.observe_cost(900_000, 9_000);
        e.observe_cost(20_000_000, 12_000);
        let p = Profile::from_estimator(&e, here());
        let back = Profile::parse(&p.to_text()).unwrap();
        assert_eq!(back, p);
        let f = back.estimator();
        for b in 0..BUCKETS {
            assert_eq!(f.live_samples(b), e.live_samples(b), "bucket {b}");
            assert_eq!(f.cost(b), e.cost(b));
            assert_eq!(f.compensation(b), e.compensation(b));
            for share in [50_000, 10_000, 5_000, 1_000] {
                assert_eq!(
                    f.margin(b, share),
                    e.margin(b, share),
                    "bucket {b} at {share}"
                );
                assert_eq!(f.tail(b, share, 40_000), e.tail(b, share, 40_000));
            }
        }
    }

    #[test]
    fn a_machine_mismatch_names_the_field_and_both_values() {
        let p = Profile::from_estimator(&MarginEstimator::new(), here());
        assert_eq!(p.check_machine(&here()), Ok(()));
        let other = Fingerprint::from_parts(
            Some("AuthenticAMD".into()),
            Some("AMD EPYC".into()),
            Some(4),
            Some("KVM".into()),
            Some("none".into()),
            Some("tsc".into()),
            Some("6.18.44".into()),
        );
        let e = p.check_machine(&other).unwrap_err();
        assert_eq!(e.kind(), ProfileErrorKind::MachineMismatch);
        assert_eq!(e.line(), 4);
        assert_eq!(e.mismatch(), Some(("cpus_online", "2", "4")));
        assert_eq!(
            e.to_string(),
            "line 4: made on another machine: cpus_online is \"2\" in the profile, \"4\" here (load it anyway with ignore_machine)"
        );
    }

    #[test]
    fn values_no_line_can_hold_are_unknown() {
        let f = Fingerprint::from_parts(
            Some(" x".into()),
            Some("a\nb".into()),
            None,
            Some(String::new()),
            None,
            None,
            None,
        );
        assert!(f.fields().all(|(_, v)| v == "-"));
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let text = Profile::from_estimator(&MarginEstimator::new(), here()).to_text();
        let e = Profile::parse(&text.replace("end\n", "bucket 6 2\n640000 5000\n")).unwrap_err();
        assert_eq!((e.code(), e.line()), ("truncated", 11));
        assert!(e.to_string().contains("sample 2 of 2 of bucket 6"), "{e}");
        let e =
            Profile::parse(&text.replace("end\n", "bucket 6 1\n640000 5e3\nend\n")).unwrap_err();
        assert_eq!((e.code(), e.line()), ("bad_number", 10));
        let e = Profile::parse_bytes(b"keeptime-profile 1\n\xff\n").unwrap_err();
        assert_eq!((e.code(), e.line()), ("not_text", 2));
        let e = Profile::parse("").unwrap_err();
        assert_eq!((e.code(), e.line()), ("truncated", 1));
        let e = Profile::parse("keeptime-prof").unwrap_err();
        assert_eq!((e.code(), e.line()), ("truncated", 1));
        let e = Profile::parse("hello").unwrap_err();
        assert_eq!((e.code(), e.line()), ("not_a_profile", 1));
        let cut = text.replace("end\n", "bucket 6 1\n64");
        let e = Profile::parse(&cut).unwrap_err();
        assert_eq!((e.code(), e.line()), ("truncated", 10));
        assert!(e.to_string().contains("cut short"), "{e}");
    }
}
