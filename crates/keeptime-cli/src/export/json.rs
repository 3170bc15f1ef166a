//! The project's bench result format (`spec/bench-result.md`), pretty-printed.

use super::Exporter;
use crate::bench::BenchReport;
use anyhow::Result;

/// Writes the bench result document as JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, report: &BenchReport) -> Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(report)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}
