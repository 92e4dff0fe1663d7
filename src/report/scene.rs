//! What a chart shows, independent of how it is drawn: a [`Scene`] of [`Shape`]s
//! in data coordinates, and legend entries.

use plotters::style::RGBColor;

use super::axis::Axis;

/// Something drawn inside the plot, in data coordinates. Colours are entity
/// indices into the palette.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    /// Light grey vertical band over the full plot height, labelled at its top.
    Band { x0: f64, x1: f64, label: String },
    /// Solid polyline; a single point is drawn as a dot.
    Line { points: Vec<(f64, f64)>, color: usize },
    /// Dashed polyline (a target that changes over time), in the entity's colour; the dash
    /// pattern runs on across its corners.
    DashedLine { points: Vec<(f64, f64)>, color: usize },
    /// Dashed horizontal line across the plot. Dashed lines at the same height
    /// interleave their dashes so that each colour stays visible.
    DashedH { y: f64, color: usize },
    /// Thin grey dashed horizontal reference line, labelled right of the plot.
    Guide { y: f64, label: String },
    /// Point marker.
    Marker { at: (f64, f64), color: usize, kind: MarkerKind },
    /// Translucent area between two curves over the same x values, left to
    /// right (a confidence band), in the entity's colour.
    Area { upper: Vec<(f64, f64)>, lower: Vec<(f64, f64)>, color: usize },
    /// Vertical error bar with caps from `lo` to `hi` at `x`.
    ErrorBar { x: f64, lo: f64, hi: f64, color: usize },
    /// Dark dashed horizontal threshold line across the plot, labelled right
    /// of the plot (labels too close to each other are moved apart).
    Threshold { y: f64, label: String },
    /// Dark dashed vertical line over the full plot height, labelled at its top.
    VLine { x: f64, label: String },
    /// Filled rectangle (a heat-map cell) from `x.0` to `x.1` and `y.0` to
    /// `y.1`, with a thin white gap to its neighbours; `fill: None` is a
    /// hatched "no data" cell. The text, if any, is centred in the cell at the
    /// largest size at which every cell text of the scene fits its cell.
    Cell { x: (f64, f64), y: (f64, f64), fill: Option<RGBColor>, text: Option<(String, RGBColor)> },
}

/// Marker shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum MarkerKind {
    /// Filled circle.
    Circle,
    /// Filled diamond.
    Diamond,
    /// Filled square.
    Square,
    /// Filled triangle, pointing up.
    Triangle,
}

/// How a legend entry's sample is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sample {
    /// Solid line.
    Solid,
    /// Dashed line.
    Dashed,
    /// Solid line with a marker in its middle.
    Marked(MarkerKind),
    /// No sample: the label is a heading over the entries below it (no detail).
    Heading,
}

/// One legend entry: a line sample, a label and an optional smaller second line.
/// A label too long for the legend is shortened, but never its `suffix`, which
/// keeps entries such as "<label>" and "<label> target" apart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegendEntry {
    pub label: String,
    pub suffix: String,
    pub detail: Option<String>,
    pub color: usize,
    pub sample: Sample,
}

impl LegendEntry {
    /// Entry without a second line.
    pub(crate) fn new(label: impl Into<String>, color: usize, sample: Sample) -> Self {
        Self { label: label.into(), suffix: String::new(), detail: None, color, sample }
    }
}

/// Everything one chart shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scene {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    /// Drawn in order, except bands, which go below the grid.
    pub shapes: Vec<Shape>,
    pub legend: Vec<LegendEntry>,
    /// Centered note in the plot (e.g. "no data").
    pub note: Option<String>,
    /// Colour bar right of the plot (heat maps), in place of a legend.
    pub colorbar: Option<ColorBar>,
}

/// A colour bar: the viridis scale ([`super::colorbar`]) over
/// `axis.range`, with ticks and labels from `axis` and `axis.label` as its title.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColorBar {
    pub axis: Axis,
    /// Explain the hatched "no data" cells below the bar.
    pub missing: bool,
}
