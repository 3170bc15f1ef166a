//! Runtimes side by side: each file's keeptime and plain OS sleep at the
//! durations every file has.

use super::figures::charts;
use super::html::esc;
use super::input::Doc;
use super::palette::{Named, RUNTIME};
use crate::bench::{CellResult, Family};
use crate::output::format;
use anyhow::Result;
use std::fmt::Write as _;

/// A runtime's plain OS sleep among `cells`: its first method of the OS
/// sleep family, in run order (each runtime's bench runs its language's own
/// sleep first).
fn os_sleep<'a>(cells: &[&'a CellResult]) -> Option<&'a CellResult> {
    cells
        .iter()
        .copied()
        .find(|c| c.family == Some(Family::OsSleep))
}

/// `names` made unique: a name that repeats gets its file's name, and
/// what still repeats (the same file twice) its position.
fn unique(names: Vec<String>, docs: &[Doc]) -> Vec<String> {
    let base = |d: &Doc| {
        std::path::Path::new(&d.file)
            .file_name()
            .map_or_else(|| d.file.clone(), |n| n.to_string_lossy().into_owned())
    };
    let mut out: Vec<String> = names
        .iter()
        .zip(docs)
        .map(|(n, d)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                format!("{n} ({})", base(d))
            } else {
                n.clone()
            }
        })
        .collect();
    for i in 0..out.len() {
        if out[..i].contains(&out[i]) {
            out[i] = format!("{} #{}", out[i], i + 1);
        }
    }
    out
}

/// The runtimes-side-by-side part: durations per file, then the shared ones.
pub(super) fn compare(h: &mut String, docs: &[Doc]) -> Result<()> {
    let labels = unique(docs.iter().map(Doc::runtime_label).collect(), docs);
    let short = unique(
        docs.iter().map(|d| d.runtime.language.clone()).collect(),
        docs,
    );
    let shared: Vec<u64> = docs[0]
        .durations()
        .into_iter()
        .filter(|x| docs.iter().all(|d| d.durations().contains(x)))
        .collect();
    h.push_str(
        "<section class=\"durations\"><h2>Runtimes side by side</h2>\
         <p>Each runtime's <b>keeptime</b> (solid) and its plain OS sleep (dashed, hollow) \
         at the durations every file has.</p>",
    );
    let all_same = docs.iter().all(|d| d.durations() == docs[0].durations());
    if !all_same {
        h.push_str(
            "<p class=\"warn\">The files measured different durations; only the shared ones \
             are drawn side by side.</p>",
        );
    }
    h.push_str(
        "<div class=\"scroll\"><table class=\"durations\"><thead><tr><th>file</th>\
         <th>runtime</th><th>durations</th></tr></thead><tbody>",
    );
    for (d, l) in docs.iter().zip(&labels) {
        let ds: Vec<String> = d.durations().into_iter().map(format::duration).collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.file),
            esc(l),
            esc(&ds.join(", "))
        );
    }
    let sh: Vec<String> = shared.iter().copied().map(format::duration).collect();
    let _ = write!(
        h,
        "</tbody></table></div><p>Drawn side by side: <b class=\"shared\">{}</b></p></section>",
        if sh.is_empty() {
            "none (no duration is in every file)".to_string()
        } else {
            esc(&sh.join(", "))
        }
    );
    for dur in shared {
        let _ = write!(
            h,
            "<section class=\"duration compare\"><h2>{}: runtimes side by side</h2>",
            esc(&format::duration(dur))
        );
        let mut rows: Vec<(Named, &CellResult)> = Vec::new();
        let mut tags = Vec::new();
        for (i, (d, l)) in docs.iter().zip(&labels).enumerate() {
            let color = RUNTIME[i % RUNTIME.len()];
            let cells = d.cells_at(dur);
            if let Some(k) = cells.iter().copied().find(|c| c.method == "keeptime") {
                tags.push((rows.len(), format!("{} keeptime", short[i])));
                rows.push((
                    Named {
                        name: format!("{l}: keeptime"),
                        color,
                        hollow: false,
                    },
                    k,
                ));
            }
            if let Some(o) = os_sleep(&cells) {
                rows.push((
                    Named {
                        name: format!("{l}: {}", o.method),
                        color,
                        hollow: true,
                    },
                    o,
                ));
            }
        }
        if rows.is_empty() {
            h.push_str(
                "<p class=\"note\">No file has a keeptime or OS-sleep cell at this duration.</p>",
            );
        } else {
            charts(h, dur, &rows, &tags)?;
        }
        h.push_str("</section>\n");
    }
    Ok(())
}
