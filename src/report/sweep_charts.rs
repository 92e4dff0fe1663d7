//! Charts of a parameter sweep, in the look of the run charts ([`super::charts`]):
//! a metric against a varied parameter with confidence bands
//! ([`metric_vs_param`]), and a metric over a grid of two varied parameters
//! ([`heat_map`]).
//!
//! Non-finite values are skipped; inputs without any usable value still give a
//! valid chart carrying a "no data" note.

use super::axis::{Axis, TickFormat};
use super::charts::{ChartError, Rendered};
use super::colorbar::{text_color_on, viridis};
use super::frame::render;
use super::scene::{ColorBar, LegendEntry, MarkerKind, Sample, Scene, Shape};

/// One line of a sweep chart: the mean of a metric at each value of the varied
/// parameter, with its 95 % confidence interval as a shaded band of the same colour.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BandSeries {
    /// Legend label, e.g. "dirac.director.max_waiting = 50"; may be empty for
    /// the only series of a chart.
    pub label: String,
    /// The points, in any order; points with a non-finite `x` or `mean` are skipped.
    pub points: Vec<BandPoint>,
}

/// One point of a [`BandSeries`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BandPoint {
    /// Value of the varied parameter.
    pub x: f64,
    /// Mean of the metric over the replicas.
    pub mean: f64,
    /// Lower end of the 95 % confidence interval (non-finite: the mean).
    pub lo: f64,
    /// Upper end of the 95 % confidence interval (non-finite: the mean).
    pub hi: f64,
}

/// Input of [`metric_vs_param`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricVsParam {
    /// Chart title.
    pub title: String,
    /// X axis description: the parameter path, e.g. "dirac.director.extra_pilot_fraction".
    pub x_label: String,
    /// Y axis description: the metric, e.g. "pilot_efficiency".
    pub y_label: String,
    /// One series per value of a second varied parameter (legend
    /// "<param2> = <v>"), or a single unlabeled series (no legend). The order
    /// fixes the colours and marker shapes.
    pub series: Vec<BandSeries>,
    /// Horizontal dashed lines with a label right of the plot, e.g.
    /// `(0.8, "constraint ≥ 0.8")`.
    pub thresholds: Vec<(f64, String)>,
    /// A vertical dashed line at `x` labelled at its top, e.g. `(0.35, "chosen 0.35")`.
    pub marker: Option<(f64, String)>,
    /// Y values are fractions, shown as percentages.
    pub percent: bool,
}

/// Input of [`heat_map`]: a metric over a grid of two varied parameters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeatMap {
    /// Chart title.
    pub title: String,
    /// X axis description (the first parameter).
    pub x_label: String,
    /// Column labels, already formatted.
    pub x_values: Vec<String>,
    /// Y axis description (the second parameter).
    pub y_label: String,
    /// Row labels, already formatted, bottom to top.
    pub y_values: Vec<String>,
    /// `cells[row][col]` = mean of the metric; `None` (or a non-finite value,
    /// or a missing cell of a short row) = no data, drawn hatched.
    pub cells: Vec<Vec<Option<f64>>>,
    /// Colour-bar title: the metric name.
    pub value_label: String,
    /// Values are fractions, shown as percentages.
    pub percent: bool,
}

const NO_DATA: &str = "no data";
/// Marker shape of series `i` (redundant with its colour, for greyscale prints).
const MARKERS: [MarkerKind; 4] = [MarkerKind::Circle, MarkerKind::Square, MarkerKind::Diamond, MarkerKind::Triangle];
/// Largest grid whose cells are annotated with their values.
const MAX_ANNOTATED: usize = 12;

/// Finite points of a series sorted by x, with `lo ≤ mean ≤ hi`.
fn clean(points: &[BandPoint]) -> Vec<BandPoint> {
    let mut out: Vec<BandPoint> = points
        .iter()
        .filter(|p| p.x.is_finite() && p.mean.is_finite())
        .map(|p| {
            let or_mean = |v: f64| if v.is_finite() { v } else { p.mean };
            let (lo, hi) = (or_mean(p.lo), or_mean(p.hi));
            BandPoint { x: p.x, mean: p.mean, lo: lo.min(hi).min(p.mean), hi: hi.max(lo).max(p.mean) }
        })
        .collect();
    out.sort_by(|a, b| a.x.total_cmp(&b.x));
    out
}

/// `(min, max)` of the finite values, if any.
fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
    })
}

/// A range around a single value (or `(lo, hi)` itself if it is not empty).
fn widen((lo, hi): (f64, f64)) -> (f64, f64) {
    if hi > lo {
        return (lo, hi);
    }
    let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
    (lo - d, hi + d)
}

/// Axis over `data` rounded outward to ticks, with `pad` (fraction of the span)
/// added below and `pad_top` above when the data reach the rounded ends.
fn padded_axis(label: &str, data: (f64, f64), format: TickFormat, pad_top: f64) -> Axis {
    let (lo, hi) = widen(data);
    let axis = Axis::rounded(label, lo, hi, format);
    let (a, b) = axis.range;
    let span = b - a;
    let near = 0.015 * span;
    let below = if lo - a < near { 0.03 * span } else { 0.0 };
    let above = if b - hi < near { 0.03 * span } else { 0.0 };
    Axis { range: (a - below, b + above.max(pad_top * span)), ..axis }
}

/// The mean of a metric against a varied parameter: per series a line through
/// the means with a marker at each point and the 95 % confidence interval as a
/// translucent band (a single point: marker with error bar); thresholds as
/// dashed horizontal lines and the chosen value as a dashed vertical line.
pub fn metric_vs_param(c: &MetricVsParam) -> Result<Rendered, ChartError> {
    render(&band_scene(c))
}

/// The scene of [`metric_vs_param`].
fn band_scene(c: &MetricVsParam) -> Scene {
    let series: Vec<Vec<BandPoint>> = c.series.iter().map(|s| clean(&s.points)).collect();
    let points = series.iter().flatten();
    let empty = points.clone().next().is_none();
    let thresholds: Vec<&(f64, String)> = c.thresholds.iter().filter(|t| t.0.is_finite()).collect();
    let marker = c.marker.as_ref().filter(|m| m.0.is_finite());

    let xs = points.clone().map(|p| p.x).chain(marker.map(|m| m.0));
    let x = padded_axis(&c.x_label, extent(xs).unwrap_or((0.0, 1.0)), TickFormat::Plain, 0.0);
    let ys = points.flat_map(|p| [p.lo, p.hi]).chain(thresholds.iter().map(|t| t.0));
    let format = if c.percent { TickFormat::Percent } else { TickFormat::Plain };
    // Room above the data for the marker label.
    let pad_top = if marker.is_some() { 0.1 } else { 0.0 };
    let y = padded_axis(&c.y_label, extent(ys).unwrap_or((0.0, 1.0)), format, pad_top);

    let mut shapes = Vec::new();
    for (color, pts) in series.iter().enumerate() {
        if pts.len() > 1 {
            let upper = pts.iter().map(|p| (p.x, p.hi)).collect();
            let lower = pts.iter().map(|p| (p.x, p.lo)).collect();
            shapes.push(Shape::Area { upper, lower, color });
        }
    }
    for (v, label) in &thresholds {
        shapes.push(Shape::Threshold { y: *v, label: label.clone() });
    }
    if let Some((v, label)) = marker {
        shapes.push(Shape::VLine { x: *v, label: label.clone() });
    }
    let mut markers = Vec::new();
    for (color, pts) in series.iter().enumerate() {
        let kind = MARKERS[color % MARKERS.len()];
        match pts[..] {
            [] => {}
            [p] => shapes.push(Shape::ErrorBar { x: p.x, lo: p.lo, hi: p.hi, color }),
            _ => shapes.push(Shape::Line { points: pts.iter().map(|p| (p.x, p.mean)).collect(), color }),
        }
        markers.extend(pts.iter().map(|p| Shape::Marker { at: (p.x, p.mean), color, kind }));
    }
    shapes.extend(markers);

    let unlabeled = c.series.len() == 1 && c.series[0].label.trim().is_empty();
    let legend = if unlabeled {
        Vec::new()
    } else {
        let entry = |(i, s): (usize, &BandSeries)| {
            let label = if s.label.trim().is_empty() { format!("series {}", i + 1) } else { s.label.clone() };
            LegendEntry::new(label, i, Sample::Marked(MARKERS[i % MARKERS.len()]))
        };
        c.series.iter().enumerate().map(entry).collect()
    };
    let note = empty.then(|| NO_DATA.to_owned());
    Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None }
}

/// A value for a heat-map cell: percentages with one decimal, other values
/// with three significant digits (no exponent between 0.001 and 10^6).
pub(crate) fn format_value(v: f64, percent: bool) -> String {
    if percent {
        return format!("{:.1} %", v * 100.0 + 0.0);
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        return format!("{v:.2e}");
    }
    let decimals = if a >= 100.0 || a == 0.0 { 0 } else { (2 - a.log10().floor() as i32).clamp(0, 5) as usize };
    format!("{:.*}", decimals, v + 0.0)
}

/// A metric over a grid of two varied parameters: one cell per pair, coloured
/// on the viridis scale (colour bar right of the plot) and, for grids up to
/// 12 × 12, annotated with its value. Cells without data are hatched.
pub fn heat_map(c: &HeatMap) -> Result<Rendered, ChartError> {
    render(&heat_scene(c))
}

/// The scene of [`heat_map`].
fn heat_scene(c: &HeatMap) -> Scene {
    let cols = c.cells.iter().map(Vec::len).max().unwrap_or(0).max(c.x_values.len());
    let rows = c.cells.len().max(c.y_values.len());
    let names = |given: &[String], n: usize| (0..n).map(|i| given.get(i).cloned().unwrap_or_default()).collect();
    let x = Axis::categories(&c.x_label, names(&c.x_values, cols));
    let y = Axis::categories(&c.y_label, names(&c.y_values, rows));
    let value = |r: usize, col: usize| c.cells.get(r).and_then(|row| row.get(col)).copied().flatten();
    let value = |r, col| value(r, col).filter(|v: &f64| v.is_finite());

    let range = extent((0..rows).flat_map(|r| (0..cols).map(move |col| (r, col))).filter_map(|(r, col)| value(r, col)));
    let colorbar = range.map(|range| {
        let (lo, hi) = widen(range);
        let format = if c.percent { TickFormat::Percent } else { TickFormat::Plain };
        let missing = (0..rows).any(|r| (0..cols).any(|col| value(r, col).is_none()));
        ColorBar { axis: Axis::rounded(&c.value_label, lo, hi, format), missing }
    });
    let annotate = cols <= MAX_ANNOTATED && rows <= MAX_ANNOTATED;
    let mut shapes = Vec::new();
    for r in 0..rows {
        for col in 0..cols {
            let fill = match (value(r, col), &colorbar) {
                (Some(v), Some(bar)) => {
                    let (lo, hi) = bar.axis.range;
                    Some((viridis((v - lo) / (hi - lo)), v))
                }
                _ => None,
            };
            let text = fill.filter(|_| annotate).map(|(color, v)| (format_value(v, c.percent), text_color_on(color)));
            let (cx, cy) = (col as f64, r as f64);
            let cell = Shape::Cell { x: (cx - 0.5, cx + 0.5), y: (cy - 0.5, cy + 0.5), fill: fill.map(|f| f.0), text };
            shapes.push(cell);
        }
    }
    let note = colorbar.is_none().then(|| NO_DATA.to_owned());
    Scene { title: c.title.clone(), x, y, shapes, legend: Vec::new(), note, colorbar }
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
