//! Charts of a parameter sweep, in the look of the run charts ([`super::charts`]):
//! a metric against a varied parameter with confidence bands
//! ([`metric_vs_param`]), and a metric over a grid of two varied parameters
//! ([`heat_map`]).
//!
//! Non-finite values are skipped; inputs without any usable value still give a
//! valid chart carrying a "no data" note.

use super::axis::{Axis, TickFormat};
use super::charts::extent;
use super::colorbar::{text_color_on, viridis};
use super::frame::{Rendered, render};
use super::scene::{ColorBar, LegendEntry, MarkerKind, Sample, Scene, Shape};
use super::style::{ChartError, NO_DATA};

/// One line of a sweep chart: the mean of a metric at each value of the varied
/// parameter, with its 95 % confidence interval as a shaded band of the same colour.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BandSeries {
    /// Legend label, e.g. "dirac.director.max_waiting = 50"; may be empty for
    /// the only series of a chart.
    pub label: String,
    /// The points, in any order; points with a non-finite `x` or `mean` (or
    /// one beyond ±10^150) are skipped.
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
    /// One series per value of a second varied parameter, labelled
    /// `<param2> = <v>` (the legend then shows `<param2>` as its heading over
    /// the values), or a single unlabeled series (no legend). The order fixes
    /// the colours and marker shapes.
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
    /// The largest 95 % CI half-width of a cell's mean: the colour scale spans at least twice
    /// it, so that cells apart by less than the noise look alike (`None`: one replica).
    pub noise: Option<f64>,
}

/// Marker shapes of the series (redundant with the colours, for greyscale prints).
const MARKERS: [MarkerKind; 4] = [MarkerKind::Circle, MarkerKind::Square, MarkerKind::Diamond, MarkerKind::Triangle];

/// Marker shape of series `i`; series 16 apart share their colour, not their shape.
fn marker_kind(i: usize) -> MarkerKind {
    MARKERS[(i + i / 16) % MARKERS.len()]
}

/// Series with more points than this have no markers: they would hide the line.
const MAX_MARKED: usize = 30;
/// Largest grid whose cells are annotated with their values.
const MAX_ANNOTATED: usize = 12;

/// Magnitudes beyond this are treated as non-finite in band charts: no metric
/// reaches them, and the axis arithmetic on them would overflow.
const LIMIT: f64 = 1e150;

fn usable(v: f64) -> bool {
    v.abs() <= LIMIT
}

/// Usable points of a series sorted by x, with `lo ≤ mean ≤ hi`.
fn clean(points: &[BandPoint]) -> Vec<BandPoint> {
    let mut out: Vec<BandPoint> = points
        .iter()
        .filter(|p| usable(p.x) && usable(p.mean))
        .map(|p| {
            let or_mean = |v: f64| if usable(v) { v } else { p.mean };
            let (lo, hi) = (or_mean(p.lo), or_mean(p.hi));
            BandPoint { x: p.x, mean: p.mean, lo: lo.min(hi).min(p.mean), hi: hi.max(lo).max(p.mean) }
        })
        .collect();
    out.sort_by(|a, b| a.x.total_cmp(&b.x));
    out
}

/// A range around a single value (or `(lo, hi)` itself if it is not empty).
fn widen((lo, hi): (f64, f64)) -> (f64, f64) {
    if hi > lo {
        return (lo, hi);
    }
    let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
    (lo - d, hi + d)
}

/// `(lo, hi)` widened about its middle to span at least `2 × noise`: a spread within the
/// noise of the means gets a narrow band of colours, not the whole scale.
fn at_least_noise((lo, hi): (f64, f64), noise: Option<f64>) -> (f64, f64) {
    match noise.filter(|n| n.is_finite() && *n > 0.0) {
        Some(n) if hi - lo < 2.0 * n => {
            let mid = lo / 2.0 + hi / 2.0;
            (mid - n, mid + n)
        }
        _ => (lo, hi),
    }
}

/// Axis over `data` rounded outward to ticks. Where the data reach a rounded
/// end, 3 % of the span is added there, so that markers clear the frame; at
/// least `pad_top` (a fraction of the span) is added at the top.
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
/// the means with a marker at each point (series of up to 30 points) and the
/// 95 % confidence interval as a translucent band (a single point: marker with
/// error bar); thresholds as dashed horizontal lines labelled right of the
/// plot, and the chosen value as a dashed vertical line labelled at its top.
pub fn metric_vs_param(c: &MetricVsParam) -> Result<Rendered, ChartError> {
    render(&band_scene(c))
}

/// The scene of [`metric_vs_param`].
fn band_scene(c: &MetricVsParam) -> Scene {
    let series: Vec<Vec<BandPoint>> = c.series.iter().map(|s| clean(&s.points)).collect();
    let points = series.iter().flatten();
    let empty = points.clone().next().is_none();
    let thresholds: Vec<&(f64, String)> = c.thresholds.iter().filter(|t| usable(t.0)).collect();
    let marker = c.marker.as_ref().filter(|m| usable(m.0));

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
        let kind = marker_kind(color);
        match pts[..] {
            [] => {}
            [p] => shapes.push(Shape::ErrorBar { x: p.x, lo: p.lo, hi: p.hi, color }),
            _ => shapes.push(Shape::Line { points: pts.iter().map(|p| (p.x, p.mean)).collect(), color }),
        }
        if pts.len() <= MAX_MARKED {
            markers.extend(pts.iter().map(|p| Shape::Marker { at: (p.x, p.mean), color, kind }));
        }
    }
    shapes.extend(markers);

    let note = empty.then(|| NO_DATA.to_owned());
    Scene { title: c.title.clone(), x, y, shapes, legend: band_legend(&c.series, &series), note, colorbar: None }
}

/// Legend of the series: none for a single unlabeled series; a heading
/// `<param>` over the values if every label reads `<param> = <value>`; else
/// the labels (`series <n>` for empty ones). `drawn` are the usable points of
/// each series (a series drawn without markers gets a plain line sample).
fn band_legend(series: &[BandSeries], drawn: &[Vec<BandPoint>]) -> Vec<LegendEntry> {
    if let [only] = series
        && only.label.trim().is_empty()
    {
        return Vec::new();
    }
    let split: Vec<Option<(&str, &str)>> = series.iter().map(|s| s.label.split_once(" = ")).collect();
    let heading = match split.first() {
        Some(Some((param, _))) if split.iter().all(|p| p.is_some_and(|p| p.0 == *param)) => Some(*param),
        _ => None,
    };
    let mut legend = Vec::new();
    if let Some(param) = heading {
        legend.push(LegendEntry::new(param, 0, Sample::Heading));
    }
    for (i, (s, parts)) in series.iter().zip(&split).enumerate() {
        let label = match (heading, parts) {
            (Some(_), Some((_, value))) => (*value).to_owned(),
            _ if s.label.trim().is_empty() => format!("series {}", i + 1),
            _ => s.label.clone(),
        };
        let sample = if drawn[i].len() > MAX_MARKED { Sample::Solid } else { Sample::Marked(marker_kind(i)) };
        legend.push(LegendEntry::new(label, i, sample));
    }
    legend
}

/// How heat-map cells show their values: the same number of decimals in every
/// cell, enough for three significant digits of the largest magnitude (none if
/// all values are whole numbers, else at least one for percentages), or an
/// exponent for magnitudes outside `[0.001, 10^6)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CellFormat {
    percent: bool,
    /// `None`: exponent notation.
    decimals: Option<usize>,
}

impl CellFormat {
    /// The format for `values` (finite).
    pub(crate) fn new(values: &[f64], percent: bool) -> Self {
        let scale = if percent { 100.0 } else { 1.0 };
        let max = values.iter().map(|v| (v * scale).abs()).fold(0.0, f64::max);
        let whole = values.iter().all(|v| (v * scale).fract() == 0.0);
        let decimals = if max != 0.0 && !(1e-3..1e6).contains(&max) {
            None
        } else if whole {
            Some(0)
        } else {
            let digits = if max == 0.0 { 0 } else { max.log10().floor() as i32 };
            let decimals = (2 - digits).clamp(0, 5) as usize;
            Some(if percent { decimals.max(1) } else { decimals })
        };
        Self { percent, decimals }
    }

    /// `v` as shown in its cell.
    pub(crate) fn format(&self, v: f64) -> String {
        let (shown, unit) = if self.percent { (v * 100.0, " %") } else { (v, "") };
        match self.decimals {
            Some(d) => format!("{:.*}{unit}", d, shown + 0.0),
            None => format!("{shown:.2e}{unit}"),
        }
    }
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

    let values: Vec<f64> = (0..rows).flat_map(|r| (0..cols).filter_map(move |col| value(r, col))).collect();
    let colorbar = extent(values.iter().copied()).map(|range| {
        let (lo, hi) = at_least_noise(widen(range), c.noise);
        let format = if c.percent { TickFormat::Percent } else { TickFormat::Plain };
        let missing = (0..rows).any(|r| (0..cols).any(|col| value(r, col).is_none()));
        ColorBar { axis: Axis::rounded(&c.value_label, lo, hi, format), missing }
    });
    let shown = CellFormat::new(&values, c.percent);
    let annotate = cols <= MAX_ANNOTATED && rows <= MAX_ANNOTATED;
    // Without any value, the note alone says it best.
    let drawn_rows = if values.is_empty() { 0 } else { rows };
    let mut shapes = Vec::new();
    for r in 0..drawn_rows {
        for col in 0..cols {
            let fill = match (value(r, col), &colorbar) {
                (Some(v), Some(bar)) => {
                    // Halved: no overflow for values near ±f64::MAX.
                    let (lo, hi) = (bar.axis.range.0 / 2.0, bar.axis.range.1 / 2.0);
                    Some((viridis((v / 2.0 - lo) / (hi - lo)), v))
                }
                _ => None,
            };
            let text = fill.filter(|_| annotate).map(|(color, v)| (shown.format(v), text_color_on(color)));
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
