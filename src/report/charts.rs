//! Slide-ready charts of a simulation run, rendered in memory to PNG and SVG.
//!
//! Each public function turns its input into a scene (what to draw, in data
//! coordinates) and hands it to the shared frame, which owns the look: 1600×900
//! pixels, large DejaVu Sans text, the Okabe–Ito palette by entity order, and a
//! legend right of the plot so that it never hides data. Non-finite values are
//! skipped (a line is broken there), and inputs without any usable value still give
//! a valid chart carrying a "no data" note.

use super::axis::{Axis, TickFormat, format_hours};
pub use super::frame::Rendered;
use super::frame::render;
use super::scene::{LegendEntry, MarkerKind, Sample, Scene, Shape};
pub use super::style::ChartError;
use super::style::NO_DATA;

/// One line of a time chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Line {
    /// Legend label.
    pub label: String,
    /// `(time in hours, value)`, in time order.
    pub points: Vec<(f64, f64)>,
}

/// Input of [`share_convergence`]: how each entity's share approaches its target.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShareConvergence {
    /// Chart title, e.g. "Share convergence — quickstart, seed 42".
    pub title: String,
    /// One line per entity; the order fixes the colours.
    pub entities: Vec<EntityShare>,
    /// End of the warm-up, shaded from 0 (0 or less: no shading).
    pub warmup_hours: f64,
    /// End of the time axis (extended if points go further).
    pub end_hours: f64,
    /// Y axis description, e.g. "running-job share".
    pub y_label: String,
}

/// One entity of a [`ShareConvergence`] chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntityShare {
    /// Legend label.
    pub label: String,
    /// Target share (fraction), drawn as a dashed line of the entity's colour.
    pub target: f64,
    /// `(time in hours, share as a fraction)`, in time order.
    pub points: Vec<(f64, f64)>,
}

/// Input of [`pilots_over_time`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PilotsOverTime {
    /// Chart title.
    pub title: String,
    /// End of the time axis (extended if points go further).
    pub end_hours: f64,
    /// Lines such as waiting, running and aborted (cumulative) pilots.
    pub lines: Vec<Line>,
}

/// Input of [`wait_time_distribution`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WaitTimes {
    /// Chart title.
    pub title: String,
    /// `(group label, waiting times in seconds, any order)`; negative and
    /// non-finite times are ignored.
    pub groups: Vec<(String, Vec<f64>)>,
    /// Colour and dashing of each group's curve, by position (a comparison draws a group's two
    /// sides in one colour, B dashed); groups beyond it get the colour of their position, solid.
    pub styles: Vec<(usize, bool)>,
}

const TIME_LABEL: &str = "simulated time [h]";
/// Above this many distinct values an ECDF is thinned to steps of 1/MAX_STEPS.
const MAX_STEPS: usize = 2000;
/// ECDF steps smaller than this fraction of the axis, both in height and in
/// width, are drawn as a slope rather than a corner: at slide size they are about
/// two line widths or less, and many tiny stairs draw a ragged line. The curve
/// still passes through every (thinned) ECDF point.
const VISIBLE_STEP: f64 = 0.01;
/// Lower limit of a logarithmic waiting-time axis: one second, in hours.
const MIN_LOG_HOURS: f64 = 1.0 / 3600.0;

/// Splits a series at non-finite points into drawable runs.
pub(super) fn runs(points: &[(f64, f64)]) -> Vec<Vec<(f64, f64)>> {
    points.split(|(x, y)| !x.is_finite() || !y.is_finite()).filter(|run| !run.is_empty()).map(<[_]>::to_vec).collect()
}

/// `(min, max)` of the finite values, if any.
/// The smallest and largest finite value.
pub(super) fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
    })
}

pub(super) fn finite_points<'a>(series: impl IntoIterator<Item = &'a [(f64, f64)]>) -> Vec<(f64, f64)> {
    series.into_iter().flatten().filter(|(x, y)| x.is_finite() && y.is_finite()).copied().collect()
}

/// Time axis from `min(0, first x)` to `max(end_hours, last x)`.
pub(super) fn time_axis(end_hours: f64, points: &[(f64, f64)]) -> Axis {
    let (lo, hi) = extent(points.iter().map(|p| p.0)).unwrap_or((0.0, 0.0));
    let end = if end_hours.is_finite() { end_hours } else { 0.0 };
    Axis::hours(TIME_LABEL, lo.min(0.0), hi.max(end))
}

fn note_if(empty: bool) -> Option<String> {
    empty.then(|| NO_DATA.to_owned())
}

/// Each entity's share over time (solid) against its target (dashed, same
/// colour), with the warm-up period shaded.
pub fn share_convergence(c: &ShareConvergence) -> Result<Rendered, ChartError> {
    let points = finite_points(c.entities.iter().map(|e| e.points.as_slice()));
    let mut x = time_axis(c.end_hours, &points);
    let warmup = c.warmup_hours.is_finite() && c.warmup_hours > 0.0;
    if warmup && c.warmup_hours > x.range.1 {
        x = Axis::hours(TIME_LABEL, x.range.0, c.warmup_hours);
    }
    let targets = c.entities.iter().map(|e| e.target);
    let (y_lo, y_hi) = extent(points.iter().map(|p| p.1).chain(targets)).unwrap_or((0.0, 1.0));
    let y_hi = if y_hi > 0.0 { y_hi } else { 1.0 };
    // Headroom above the top tick keeps the warm-up label clear of the data.
    let y = Axis::linear(&c.y_label, y_lo.min(0.0), y_hi, 0.08, TickFormat::Percent);

    let mut shapes = Vec::new();
    if warmup {
        let (x0, x1) = (x.range.0.max(0.0), c.warmup_hours.min(x.range.1));
        shapes.push(Shape::Band { x0, x1, label: "warm-up".to_owned() });
    }
    let mut legend = Vec::new();
    for (color, e) in c.entities.iter().enumerate() {
        for run in runs(&e.points) {
            shapes.push(Shape::Line { points: run, color });
        }
        legend.push(LegendEntry::new(&e.label, color, Sample::Solid));
        if e.target.is_finite() {
            let suffix = format!(" target ({})", percent(e.target));
            legend.push(LegendEntry { suffix, ..LegendEntry::new(&e.label, color, Sample::Dashed) });
        }
    }
    // Targets on top of all lines, so that no other entity's line hides them.
    for (color, e) in c.entities.iter().enumerate() {
        if e.target.is_finite() {
            shapes.push(Shape::DashedH { y: e.target, color });
        }
    }
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note: note_if(points.is_empty()), colorbar: None })
}

/// A share as a short percentage, e.g. `0.25` → `25 %`, `0.125` → `12.5 %`.
fn percent(v: f64) -> String {
    let p = v * 100.0;
    if (p - p.round()).abs() < 0.05 { format!("{:.0} %", p + 0.0) } else { format!("{p:.1} %") }
}

/// Pilot counts over time, one line per series.
pub fn pilots_over_time(c: &PilotsOverTime) -> Result<Rendered, ChartError> {
    let points = finite_points(c.lines.iter().map(|l| l.points.as_slice()));
    let x = time_axis(c.end_hours, &points);
    let (y_lo, y_hi) = extent(points.iter().map(|p| p.1)).unwrap_or((0.0, 0.0));
    let y_hi = if y_hi > 0.0 { y_hi } else { 10.0 };
    let y = Axis::linear("pilots", y_lo.min(0.0), y_hi, 0.04, TickFormat::Count);

    let mut shapes = Vec::new();
    let mut legend = Vec::new();
    for (color, line) in c.lines.iter().enumerate() {
        for run in runs(&line.points) {
            shapes.push(Shape::Line { points: run, color });
        }
        legend.push(LegendEntry::new(&line.label, color, Sample::Solid));
    }
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note: note_if(points.is_empty()), colorbar: None })
}

/// Nearest-rank percentile of sorted, non-empty `values`.
/// The same percentile as `summary.json` (linear interpolation), so legend and tables agree.
use crate::metrics::percentile;

/// ECDF corners `(value, fraction ≤ value)` at each distinct value, thinned to
/// steps of at least `1 / MAX_STEPS` for very large inputs.
fn ecdf(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut steps: Vec<(f64, f64)> = Vec::new();
    for (i, v) in sorted.iter().enumerate() {
        let is_last_of_value = sorted.get(i + 1) != Some(v);
        if !is_last_of_value {
            continue;
        }
        let frac = (i + 1) as f64 / n;
        let thin = steps.last().is_some_and(|last| frac - last.1 < 1.0 / MAX_STEPS as f64 && frac < 1.0);
        if !thin {
            steps.push((*v, frac));
        }
    }
    steps
}

/// Path of the ECDF of `sorted` from the left to the right end of the x range
/// (plotted coordinates): a staircase where its steps are visible.
fn ecdf_path(sorted: &[f64], to_x: impl Fn(f64) -> f64, (lo, hi): (f64, f64)) -> Vec<(f64, f64)> {
    let mut path = vec![(lo, 0.0)];
    let (mut prev_x, mut prev_frac) = (lo, 0.0);
    for (v, frac) in ecdf(sorted) {
        let x = to_x(v);
        if frac - prev_frac >= VISIBLE_STEP || x - prev_x >= VISIBLE_STEP * (hi - lo) {
            path.push((x, prev_frac));
        }
        path.push((x, frac));
        (prev_x, prev_frac) = (x, frac);
    }
    path.push((hi, prev_frac));
    path
}

/// Empirical CDF of the waiting time per group, in hours, with p50 (circle) and
/// p95 (diamond) marked; the x axis is logarithmic when the positive waiting
/// times span more than two decades.
pub fn wait_time_distribution(c: &WaitTimes) -> Result<Rendered, ChartError> {
    let groups: Vec<(&str, Vec<f64>)> = c
        .groups
        .iter()
        .map(|(label, secs)| {
            let mut hours: Vec<f64> = secs.iter().filter(|s| s.is_finite() && **s >= 0.0).map(|s| s / 3600.0).collect();
            hours.sort_by(f64::total_cmp);
            (label.as_str(), hours)
        })
        .collect();
    let all = groups.iter().flat_map(|g| g.1.iter().copied());
    let max = all.clone().fold(0.0, f64::max);
    let min_pos = all.clone().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let empty = all.clone().count() == 0;

    let log = min_pos.is_finite() && max / min_pos > 100.0;
    let x = if log {
        let x = Axis::log10("", min_pos.max(MIN_LOG_HOURS), max);
        let left_edge = 10f64.powf(x.range.0);
        let note = if all.clone().any(|v| v < left_edge) {
            format!(", waits under {} at left edge", format_hours(left_edge))
        } else {
            String::new()
        };
        Axis { label: format!("waiting time [h] (log scale{note})"), ..x }
    } else {
        Axis::linear("waiting time [h]", 0.0, max, 0.0, TickFormat::Plain)
    };
    let to_x = |h: f64| if log { h.log10().max(x.range.0) } else { h };
    let y = Axis::linear("jobs started within x", 0.0, 1.0, 0.04, TickFormat::Percent);

    // Percentile guides only with data: without, they would cross the note.
    let mut shapes = Vec::new();
    if !empty {
        shapes.push(Shape::Guide { y: 0.5, label: "p50".to_owned() });
        shapes.push(Shape::Guide { y: 0.95, label: "p95".to_owned() });
    }
    let mut markers = Vec::new();
    let mut legend = Vec::new();
    for (i, (label, hours)) in groups.iter().enumerate() {
        let (color, dashed) = c.styles.get(i).copied().unwrap_or((i, false));
        let detail = if hours.is_empty() {
            NO_DATA.to_owned()
        } else {
            let (p50, p95) = (percentile(hours, 0.5), percentile(hours, 0.95));
            markers.push(Shape::Marker { at: (to_x(p50), 0.5), color, kind: MarkerKind::Circle });
            markers.push(Shape::Marker { at: (to_x(p95), 0.95), color, kind: MarkerKind::Diamond });
            let points = ecdf_path(hours, to_x, x.range);
            shapes.push(if dashed { Shape::DashedLine { points, color } } else { Shape::Line { points, color } });
            let (p50, p95) = (format_hours(p50), format_hours(p95));
            format!("p50 {p50}, p95 {p95} (n = {})", hours.len())
        };
        let sample = if dashed { Sample::Dashed } else { Sample::Solid };
        legend.push(LegendEntry { detail: Some(detail), ..LegendEntry::new(*label, color, sample) });
    }
    shapes.extend(markers);
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note: note_if(empty), colorbar: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_break_at_non_finite_points() {
        let r = runs(&[(0.0, 1.0), (1.0, f64::NAN), (2.0, 2.0), (3.0, 3.0)]);
        assert_eq!(r, vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]);
    }

    #[test]
    fn percentiles_match_the_summary() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.5);
        assert!((percentile(&v, 0.95) - 95.05).abs() < 1e-9);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
    }

    #[test]
    fn ecdf_path_keeps_visible_corners_only() {
        let identity = |v: f64| v;
        // Few values: a true staircase.
        let path = ecdf_path(&[1.0, 3.0], identity, (0.0, 4.0));
        assert_eq!(path, vec![(0.0, 0.0), (1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0), (4.0, 1.0)]);
        // Many close values: one point per value after the first corner.
        let dense: Vec<f64> = (0..1000).map(|i| 10.0 + f64::from(i) * 1e-3).collect();
        let path = ecdf_path(&dense, identity, (0.0, 20.0));
        assert_eq!(path.len(), 1 + 1 + 1000 + 1);
        assert_eq!(path[1], (10.0, 0.0));
    }

    #[test]
    fn ecdf_merges_ties_and_thins_large_inputs() {
        assert_eq!(ecdf(&[0.0, 0.0, 1.0, 3.0]), vec![(0.0, 0.5), (1.0, 0.75), (3.0, 1.0)]);
        let big: Vec<f64> = (0..100_000).map(f64::from).collect();
        let steps = ecdf(&big);
        assert!(steps.len() <= MAX_STEPS + 1);
        assert_eq!(steps.last(), Some(&(99_999.0, 1.0)));
    }
}
