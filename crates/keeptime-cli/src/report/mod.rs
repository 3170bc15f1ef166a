//! `keeptime report`: one self-contained HTML page drawn from bench result
//! files (`spec/bench-result.md`) of any runtime, and `keeptime bench
//! --report`, which writes the same page for the run it just made.
//!
//! * [`input`]: reading and checking result files (one-line errors, exit 2).
//! * [`chart`]: the error CDF and the p99-vs-CPU trade-off, plotters' SVG.
//! * [`page`]: the HTML around them: head, style, run headers and verdicts,
//!   footer; its sections are drawn by private modules: the figures of a
//!   duration (`figures`), the tables (`tables`), runtimes side by side
//!   (`compare`), with the colours (`palette`) and HTML escaping (`html`).
//!
//! The page is written to a temporary file in the output's directory and
//! renamed over the output, so a failed write leaves nothing behind.

pub mod chart;
mod compare;
mod figures;
mod html;
pub mod input;
pub mod page;
mod palette;
mod tables;

use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use input::Doc;

/// `keeptime report` options.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Bench result files (spec/bench-result.md) from any runtime; several
    /// are drawn side by side.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<std::path::PathBuf>,

    /// The HTML file to write.
    #[arg(short, long, value_name = "OUT.html")]
    pub output: std::path::PathBuf,
}

/// Runs `keeptime report FILE... -o OUT`.
pub fn run(files: &[PathBuf], out: &Path) -> Result<()> {
    let mut docs = Vec::with_capacity(files.len());
    for f in files {
        docs.push(input::load(f)?);
    }
    let html = page::render(&docs)?;
    write_atomic(out, html.as_bytes())
}

/// The temporary sibling of `path` the page is written to first.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "report".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Checks before a bench that the page can be written where asked, so a
/// typo fails before the measuring rather than after. Leaves nothing behind.
pub fn check_writable(path: &Path) -> Result<()> {
    write_atomic_inner(path, b"", true)
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename: `path` either gets the whole page or is left untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_inner(path, bytes, false)
}

fn write_atomic_inner(path: &Path, bytes: &[u8], dry_run: bool) -> Result<()> {
    let shown = path.display();
    if path.is_dir() {
        anyhow::bail!("cannot write report '{shown}': it is a directory");
    }
    let tmp = temp_path(path);
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        if dry_run {
            std::fs::remove_file(&tmp)
        } else {
            std::fs::rename(&tmp, path)
        }
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write report '{shown}'"));
    }
    Ok(())
}
