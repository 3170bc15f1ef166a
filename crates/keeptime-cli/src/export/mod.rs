//! Result exporters, one file per format behind [`Exporter`] (hyperfine's
//! conventions: `--export-json FILE`, `-` for stdout).

mod csv;
mod json;
mod markdown;

use crate::bench::BenchReport;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

pub use self::csv::CsvExporter;
pub use self::json::JsonExporter;
pub use self::markdown::MarkdownExporter;

/// Turns a finished bench run into the bytes of one file format.
pub trait Exporter {
    /// The document for `report`.
    fn serialize(&self, report: &BenchReport) -> Result<Vec<u8>>;
}

/// Where an export goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Standard output (`-`).
    Stdout,
    /// A file, created or truncated.
    File(PathBuf),
}

impl Target {
    /// `-` is stdout, anything else a path.
    pub fn parse(s: &str) -> Target {
        if s == "-" {
            Target::Stdout
        } else {
            Target::File(PathBuf::from(s))
        }
    }
}

/// The exports asked for on the command line.
#[derive(Default)]
pub struct ExportManager {
    exports: Vec<(Box<dyn Exporter>, Target)>,
}

impl ExportManager {
    /// Adds an export.
    pub fn add(&mut self, exporter: Box<dyn Exporter>, target: Target) {
        self.exports.push((exporter, target));
    }

    /// Whether any export writes to stdout (the tables then go to stderr).
    pub fn uses_stdout(&self) -> bool {
        self.exports.iter().any(|(_, t)| *t == Target::Stdout)
    }

    /// Whether nothing is to be exported.
    pub fn is_empty(&self) -> bool {
        self.exports.is_empty()
    }

    /// Checks up front that every file target can be written, so a typo in a
    /// path fails before a minute of measuring rather than after.
    pub fn check_targets(&self) -> Result<()> {
        for (_, target) in &self.exports {
            if let Target::File(path) = target {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("cannot write export file '{}'", path.display()))?;
            }
        }
        Ok(())
    }

    /// Writes every export.
    pub fn write_all(&self, report: &BenchReport) -> Result<()> {
        for (exporter, target) in &self.exports {
            let bytes = exporter.serialize(report)?;
            match target {
                Target::Stdout => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(&bytes)?;
                    out.flush()?;
                }
                Target::File(path) => std::fs::write(path, &bytes)
                    .with_context(|| format!("cannot write export file '{}'", path.display()))?,
            }
        }
        Ok(())
    }
}
