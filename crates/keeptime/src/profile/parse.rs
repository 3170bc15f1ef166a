//! Reading a profile's text, line by line, with every error of the spec.

use super::*;

/// Largest number a profile may hold: every runtime's signed 64-bit integer.
pub(super) const MAX_NUMBER: u64 = i64::MAX as u64;

/// Reads a profile's lines in order (`spec/estimator.md`, *Format*).
pub(super) struct Parser<'a> {
    pub(super) lines: Vec<&'a str>,
    /// Index of the next line to read.
    pub(super) at: usize,
}

/// Shows a line in an error, shortened.
pub(super) fn shown(line: &str) -> String {
    let mut s: String = line.chars().take(60).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    format!("\"{}\"", s.escape_debug())
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str) -> Parser<'a> {
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
    pub(super) fn next(&mut self, what: &str) -> Result<(u64, &'a str), ProfileError> {
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

    pub(super) fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.at).copied()
    }

    pub(super) fn profile(mut self) -> Result<Profile, ProfileError> {
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

pub(super) fn bad_bucket(line: u64, detail: String) -> ProfileError {
    ProfileError::at(ProfileErrorKind::BadBucket, line, detail)
}

/// A field that must be a number: ASCII digits, at most 2^63 − 1.
pub(super) fn number(line: u64, field: &str, what: &str) -> Result<u64, ProfileError> {
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
