//! The two charts, drawn with plotters' SVG backend (text is emitted as SVG
//! `<text>`, so no font is needed at build or run time).
//!
//! * The error CDF on a **symmetric log** axis: `sign(x)·log10(1 + |x|/1 ns)`.
//!   Zero sits in the middle of the axis, lateness grows to the right in
//!   decades, and early returns land left of zero in a shaded band, mirrored
//!   decades and all. A plain log axis cannot show a negative error at all, and
//!   a separate "n early" marker would hide how early; the symlog axis shows
//!   both sides of the deadline on one scale.
//! * The trade-off: p99 error against CPU %, both log, with the Pareto
//!   frontier (no other point is both more accurate and cheaper).

use crate::output::format;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use std::ops::Range;

/// Chart size in SVG user units; the page scales it to its width.
const W: u32 = 800;
const H: u32 = 500;
const FONT: &str = "sans-serif";

/// A colour as plotters writes it into SVG (`#RRGGBB`).
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// One line of the CDF chart.
pub struct CdfSeries<'a> {
    /// Its colour.
    pub color: RGBColor,
    /// Drawn dashed (a baseline in the runtime comparison).
    pub dashed: bool,
    /// Drawn thicker (keeptime).
    pub bold: bool,
    /// The buckets (`gt_ns < error <= le_ns`), increasing.
    pub histogram: &'a [crate::bench::stats::Bucket],
}

/// One point of the trade-off chart.
pub struct TradeoffPoint {
    /// Its colour.
    pub color: RGBColor,
    /// CPU %.
    pub cpu_percent: f64,
    /// p99 error, ns.
    pub p99_ns: i64,
    /// A label drawn beside the point (keeptime, the pure spin).
    pub tag: Option<String>,
    /// Hollow marker (a baseline in the runtime comparison).
    pub hollow: bool,
}

/// Axis descriptions, also used by the page and its browser test.
pub const CDF_X: &str = "wait error (woke − deadline), symlog: ← early | late →";
/// See [`CDF_X`].
pub const CDF_Y: &str = "share of waits with error ≤ x";
/// See [`CDF_X`].
pub const TRADE_X: &str = "CPU % of one core while waiting (log)";
/// See [`CDF_X`].
pub const TRADE_Y: &str = "p99 error (log)";

/// `sign(x)·log10(1 + |x|)`, x in ns.
fn symlog(x: f64) -> f64 {
    x.signum() * (1.0 + x.abs()).log10()
}

/// A symmetric-log axis over nanoseconds.
struct SymLog {
    lo: f64,
    hi: f64,
}

impl Ranged for SymLog {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let (a, b) = (symlog(self.lo), symlog(self.hi));
        let t = (symlog(*v) - a) / (b - a);
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Zero and the decades from 10 ns: ±1 ns would crowd zero's label.
        let mut all = vec![0.0];
        let mut p = 10.0;
        while p <= self.hi.max(-self.lo) * 1.0001 {
            if p <= self.hi {
                all.push(p);
            }
            if -p >= self.lo {
                all.push(-p);
            }
            p *= 10.0;
        }
        all.sort_by(f64::total_cmp);
        let max = hint.max_num_points().max(1);
        let mut step = 1;
        while all.len().div_ceil(step) > max {
            step += 1;
        }
        // Keep zero and every step-th decade away from it on both sides.
        all.into_iter()
            .filter(|x| {
                let d = if *x == 0.0 {
                    0
                } else {
                    x.abs().log10().round() as usize
                };
                d % step == 0
            })
            .collect()
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for SymLog {
    fn format(v: &f64) -> String {
        axis_ns(*v)
    }
}

fn axis_ns(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        // "10.0 ms" → "10 ms", "2.50 µs" → "2.5 µs": ticks are round values.
        let text = format::ns(v.round() as i64);
        match text.split_once(' ') {
            Some((num, unit)) if num.contains('.') => {
                format!("{} {unit}", num.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => text,
        }
    }
}

fn percent_label(v: f64) -> String {
    format!("{}%", (v * 100.0).round())
}

fn cpu_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}%")
    } else {
        let digits = (-v.log10()).ceil() as usize;
        format!("{v:.digits$}%")
    }
}

/// Makes the SVG scale with the page: width 100 %, height from the viewBox.
fn responsive(svg: String) -> String {
    svg.replacen(
        &format!("<svg width=\"{W}\" height=\"{H}\""),
        "<svg width=\"100%\" preserveAspectRatio=\"xMidYMid meet\"",
        1,
    )
}

/// The error CDF of every series. Returns the SVG text.
pub fn cdf(series: &[CdfSeries<'_>]) -> Result<String, String> {
    let mut lo = -10.0f64;
    let mut hi = 100.0f64;
    for s in series {
        if let (Some(f), Some(l)) = (s.histogram.first(), s.histogram.last()) {
            lo = lo.min(f.gt_ns as f64);
            hi = hi.max(l.le_ns as f64);
        }
    }
    let (lo, hi) = (lo * 1.5, hi * 1.5);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .x_label_area_size(72)
            .y_label_area_size(96)
            .build_cartesian_2d(SymLog { lo, hi }, 0.0f64..1.0f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(CDF_X)
            .y_desc(CDF_Y)
            .x_labels(10)
            .y_labels(6)
            .x_label_formatter(&|v| axis_ns(*v))
            .y_label_formatter(&|v| percent_label(*v))
            .label_style((FONT, 23))
            .axis_desc_style((FONT, 25))
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(|e| e.to_string())?;
        // The early side: shaded, with the deadline drawn at zero.
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(lo, 0.0), (0.0, 1.0)],
                RGBColor(214, 39, 40).mix(0.07).filled(),
            )))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, 0.0), (0.0, 1.0)],
                BLACK.stroke_width(2),
            )))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(std::iter::once(Text::new(
                "early ←",
                (lo * 0.5, 0.95),
                (FONT, 23).into_font().color(&RGBColor(160, 20, 20)),
            )))
            .map_err(|e| e.to_string())?;
        for s in series {
            let n: u64 = s.histogram.iter().map(|b| b.count).sum();
            if n == 0 {
                continue;
            }
            let mut points = Vec::with_capacity(s.histogram.len() + 1);
            let mut cum = 0u64;
            if let Some(f) = s.histogram.first() {
                points.push((f.gt_ns as f64, 0.0));
            }
            for b in s.histogram {
                cum += b.count;
                points.push((b.le_ns as f64, cum as f64 / n as f64));
            }
            let style = s.color.stroke_width(if s.bold { 4 } else { 2 });
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(points, 10, 6, style))
                    .map_err(|e| e.to_string())?;
            } else {
                chart
                    .draw_series(LineSeries::new(points, style))
                    .map_err(|e| e.to_string())?;
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(responsive(svg))
}

/// The indices of the Pareto frontier of `(cpu, p99)`, by increasing CPU.
pub fn frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len()).collect();
    idx.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    let mut best = f64::INFINITY;
    idx.into_iter()
        .filter(|&i| {
            if points[i].1 < best {
                best = points[i].1;
                true
            } else {
                false
            }
        })
        .collect()
}

/// The smallest CPU % and p99 drawn: lower values sit on the axis floor.
pub const CPU_FLOOR: f64 = 0.001;
/// See [`CPU_FLOOR`].
pub const P99_FLOOR_NS: f64 = 1.0;

/// A log axis range around `lo..=hi` with some room, at least two decades
/// wide so that it carries decade ticks, and not below `floor`.
fn log_span(lo: f64, hi: f64, floor: f64) -> Range<f64> {
    let (mut a, mut b) = (lo / 2.5, hi * 2.5);
    if b / a < 100.0 {
        let grow = (100.0 / (b / a)).sqrt();
        a /= grow;
        b *= grow;
    }
    if a < floor {
        b *= floor / a;
        a = floor;
    }
    a..b
}

/// The trade-off scatter. Returns the SVG text.
pub fn tradeoff(points: &[TradeoffPoint]) -> Result<String, String> {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            (
                p.cpu_percent.max(CPU_FLOOR),
                (p.p99_ns as f64).max(P99_FLOOR_NS),
            )
        })
        .collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &xy {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if xy.is_empty() {
        (x0, x1, y0, y1) = (0.01, 100.0, 1.0, 1000.0);
    }
    let xr = log_span(x0, x1, CPU_FLOOR / 2.0);
    let yr = log_span(y0, y1, P99_FLOOR_NS / 2.0);
    let front = frontier(&xy);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .x_label_area_size(72)
            .y_label_area_size(104)
            .build_cartesian_2d(xr.clone().log_scale(), yr.clone().log_scale())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(TRADE_X)
            .y_desc(TRADE_Y)
            .x_labels(6)
            .y_labels(6)
            .x_label_formatter(&|v| cpu_label(*v))
            .y_label_formatter(&|v| axis_ns(*v))
            .label_style((FONT, 23))
            .axis_desc_style((FONT, 25))
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(|e| e.to_string())?;
        // The frontier as a staircase: cheaper-and-better corners only.
        let mut stairs = Vec::new();
        for (k, &i) in front.iter().enumerate() {
            if k > 0 {
                stairs.push((xy[i].0, xy[front[k - 1]].1));
            }
            stairs.push(xy[i]);
        }
        if let Some(&last) = front.last() {
            stairs.push((xr.end, xy[last].1));
        }
        if let Some(&first) = front.first() {
            stairs.insert(0, (xy[first].0, yr.end));
        }
        chart
            .draw_series(DashedLineSeries::new(
                stairs,
                8,
                6,
                RGBColor(90, 90, 90).stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        for (p, &(x, y)) in points.iter().zip(&xy) {
            let style = if p.hollow {
                p.color.stroke_width(3)
            } else {
                p.color.filled()
            };
            chart
                .draw_series(std::iter::once(Circle::new((x, y), 10, style)))
                .map_err(|e| e.to_string())?;
        }
        let (lx0, lx1) = (xr.start.ln(), xr.end.ln());
        let mut tagged = 0;
        for (p, &(x, y)) in points.iter().zip(&xy) {
            if let Some(tag) = &p.tag {
                // Alternate above and below, so two close points' labels do not collide.
                let dy = if tagged % 2 == 0 { -46 } else { 22 };
                tagged += 1;
                // Right of the point, or left of it near the right edge.
                let right_side = (x.ln() - lx0) / (lx1 - lx0) < 0.6;
                let dx = if right_side {
                    18
                } else {
                    -18 - (tag.chars().count() as i32) * 11
                };
                // A short leader from the point towards its label.
                let lead_x = if right_side { 14 } else { -14 };
                let lead_y = if dy < 0 { dy + 22 } else { dy + 2 };
                let label = EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (lead_x, lead_y)], BLACK.stroke_width(2))
                    + Text::new(tag.clone(), (dx, dy), (FONT, 24).into_font().color(&BLACK));
                chart
                    .draw_series(std::iter::once(label))
                    .map_err(|e| e.to_string())?;
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(responsive(svg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_keeps_only_undominated_points() {
        let pts = [(100.0, 50.0), (1.0, 300.0), (0.1, 60_000.0), (50.0, 400.0)];
        assert_eq!(frontier(&pts), vec![2, 1, 0]);
        assert_eq!(frontier(&[]), Vec::<usize>::new());
    }

    #[test]
    fn symlog_is_odd_and_monotone() {
        assert_eq!(symlog(0.0), 0.0);
        assert_eq!(symlog(-99.0), -symlog(99.0));
        assert!(symlog(10.0) < symlog(11.0));
        let axis = SymLog {
            lo: -1000.0,
            hi: 1e6,
        };
        assert_eq!(axis.map(&-1000.0, (0, 900)), 0);
        assert_eq!(axis.map(&1e6, (0, 900)), 900);
        let keys = axis.key_points(20usize);
        assert!(
            keys.contains(&0.0)
                && keys.contains(&-100.0)
                && keys.contains(&1e6)
                && !keys.contains(&1.0)
        );
    }
}
