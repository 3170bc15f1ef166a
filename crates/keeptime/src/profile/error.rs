//! What can go wrong reading a profile: the spec's codes, the line, the message.

use std::fmt;

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
    pub(super) kind: ProfileErrorKind,
    pub(super) file: Option<String>,
    pub(super) line: u64,
    pub(super) detail: String,
    pub(super) mismatch: Option<Box<(String, String, String)>>,
}

impl ProfileError {
    pub(super) fn at(kind: ProfileErrorKind, line: u64, detail: impl Into<String>) -> ProfileError {
        ProfileError {
            kind,
            file: None,
            line,
            detail: detail.into(),
            mismatch: None,
        }
    }

    pub(super) fn in_file(mut self, file: &str) -> ProfileError {
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
