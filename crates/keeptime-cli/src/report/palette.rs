//! The page's colours: a fixed one for each reference method, spares for
//! the others, and one per runtime in the side-by-side charts; a drawn
//! series is a name with its colour ([`Named`]).

use super::input::Doc;
use crate::bench::methods::METHODS;
use plotters::style::RGBColor;

/// One drawn series: its name on the page and its colour.
pub(super) struct Named {
    pub(super) name: String,
    pub(super) color: RGBColor,
    pub(super) hollow: bool,
}

/// Colours of the reference methods (`keeptime bench --list`), in the order
/// of their table, so a method looks the same on every page; other methods
/// take the spare colours in order of appearance.
const FIXED: [RGBColor; 11] = [
    RGBColor(23, 190, 207),  // busy-loop
    RGBColor(31, 119, 180),  // spin-pause
    RGBColor(127, 127, 127), // yield-loop
    RGBColor(44, 160, 44),   // sleep-default-slack
    RGBColor(188, 189, 34),  // sleep-slack-1ns
    RGBColor(148, 103, 189), // clock-nanosleep-abs
    RGBColor(227, 119, 194), // compensated
    RGBColor(57, 59, 121),   // hybrid-1ms
    RGBColor(214, 39, 40),   // keeptime
    RGBColor(255, 127, 14),  // keeptime-efficient
    RGBColor(140, 86, 75),   // keeptime-spin
];
const _: () = assert!(FIXED.len() == METHODS.len());
const SPARE: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(140, 109, 49),
    RGBColor(82, 84, 163),
    RGBColor(99, 121, 57),
    RGBColor(173, 73, 74),
    RGBColor(123, 65, 115),
    RGBColor(49, 130, 189),
    RGBColor(230, 85, 13),
];
/// Colours of the runtimes in the side-by-side charts.
pub(super) const RUNTIME: [RGBColor; 8] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Method name → colour for one page.
pub(super) struct Palette {
    names: Vec<(String, RGBColor)>,
}

impl Palette {
    pub(super) fn new(docs: &[Doc]) -> Self {
        let mut names: Vec<(String, RGBColor)> = Vec::new();
        let mut spare = 0;
        for d in docs {
            for c in &d.results {
                if names.iter().any(|(n, _)| *n == c.method) {
                    continue;
                }
                let reference = METHODS.iter().position(|m| m.name == c.method);
                let color = match reference.and_then(|i| FIXED.get(i)) {
                    Some(col) => *col,
                    None => {
                        spare += 1;
                        SPARE[(spare - 1) % SPARE.len()]
                    }
                };
                names.push((c.method.clone(), color));
            }
        }
        Palette { names }
    }

    pub(super) fn of(&self, method: &str) -> RGBColor {
        self.names
            .iter()
            .find(|(n, _)| n == method)
            .map_or(RGBColor(0, 0, 0), |(_, c)| *c)
    }
}
