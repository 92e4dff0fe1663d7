//! Charts of a comparison (`pilotsim compare`): two configurations over time on one plot, each
//! series the mean over a side's replicas with its 95 % confidence interval as a translucent
//! band. A quantity's two sides share a colour; A is solid and B dashed, so the chart also
//! reads in greyscale. The wait distributions of both sides use
//! [`super::charts::wait_time_distribution`] with the same convention.

use super::axis::{Axis, TickFormat};
use super::charts::{extent, finite_points, runs, time_axis};
use super::frame::{Rendered, render};
use super::scene::{LegendEntry, Sample, Scene, Shape};
use super::style::{ChartError, NO_DATA};

/// One side's series of an [`Overlay`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OverlaySeries {
    /// Legend label, e.g. "lhcb_user (B)".
    pub label: String,
    /// Palette index: the quantity's, the same for both sides.
    pub color: usize,
    /// B's series are dashed.
    pub dashed: bool,
    /// `(time in hours, mean)`; non-finite means break the line.
    pub points: Vec<(f64, f64)>,
    /// The 95 % interval `(lo, hi)` at each point (empty: no band, e.g. one replica).
    pub band: Vec<(f64, f64)>,
}

/// Input of [`overlay`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overlay {
    pub title: String,
    pub y_label: String,
    /// Values are fractions, shown as percentages.
    pub percent: bool,
    /// End of the time axis (extended if points go further).
    pub end_hours: f64,
    pub series: Vec<OverlaySeries>,
    /// Grey dashed reference lines labelled right of the plot (targets).
    pub guides: Vec<(f64, String)>,
}

/// Both sides' series over time, with their confidence bands.
pub fn overlay(c: &Overlay) -> Result<Rendered, ChartError> {
    let points = finite_points(c.series.iter().map(|s| s.points.as_slice()));
    let x = time_axis(c.end_hours, &points);
    let band_values = c.series.iter().flat_map(|s| s.band.iter().flat_map(|(lo, hi)| [*lo, *hi]));
    let guide_values = c.guides.iter().map(|g| g.0);
    let (lo, hi) = extent(points.iter().map(|p| p.1).chain(band_values).chain(guide_values)).unwrap_or((0.0, 1.0));
    let format = if c.percent { TickFormat::Percent } else { TickFormat::Count };
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let y = Axis::linear(&c.y_label, lo.min(0.0), hi, 0.06, format);

    let mut shapes = Vec::new();
    for s in &c.series {
        // Bands first, under every line; a band breaks where the mean or an end is not finite.
        let spans = s.points.iter().zip(&s.band).map(|(&(t, m), &(lo, hi))| (t, m, lo, hi));
        let mut upper = Vec::new();
        let mut lower = Vec::new();
        let flush = |upper: &mut Vec<(f64, f64)>, lower: &mut Vec<(f64, f64)>, shapes: &mut Vec<Shape>| {
            if upper.len() > 1 {
                shapes.push(Shape::Area { upper: std::mem::take(upper), lower: std::mem::take(lower), color: s.color });
            }
            upper.clear();
            lower.clear();
        };
        for (t, m, lo, hi) in spans {
            if [t, m, lo, hi].iter().all(|v| v.is_finite()) {
                upper.push((t, hi.max(m)));
                lower.push((t, lo.min(m)));
            } else {
                flush(&mut upper, &mut lower, &mut shapes);
            }
        }
        flush(&mut upper, &mut lower, &mut shapes);
    }
    let mut legend = Vec::new();
    for s in &c.series {
        for run in runs(&s.points) {
            shapes.push(if s.dashed {
                Shape::DashedLine { points: run, color: s.color }
            } else {
                Shape::Line { points: run, color: s.color }
            });
        }
        legend.push(LegendEntry::new(&s.label, s.color, if s.dashed { Sample::Dashed } else { Sample::Solid }));
    }
    for (y, label) in &c.guides {
        if y.is_finite() {
            shapes.push(Shape::Guide { y: *y, label: label.clone() });
        }
    }
    let note = points.is_empty().then(|| NO_DATA.to_owned());
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlay_renders_with_bands_and_without_data() {
        let s = |dashed, shift: f64| OverlaySeries {
            label: format!("g ({})", if dashed { "B" } else { "A" }),
            color: 0,
            dashed,
            points: (0..20).map(|i| (f64::from(i), 0.3 + shift + 0.01 * f64::from(i % 3))).collect(),
            band: (0..20).map(|i| (0.25 + shift, 0.35 + shift + 0.01 * f64::from(i % 3))).collect(),
        };
        let c = Overlay {
            title: "t".into(),
            y_label: "share".into(),
            percent: true,
            end_hours: 20.0,
            series: vec![s(false, 0.0), s(true, 0.2)],
            guides: vec![(0.5, "g target".into())],
        };
        let r = overlay(&c).unwrap();
        assert!(r.svg.contains("g (A)") && r.svg.contains("g (B)") && r.svg.contains("g target"));
        // B is dashed: drawn solid, the chart is another one; without bands, another again.
        let mut solid = c.clone();
        solid.series[1].dashed = false;
        assert_ne!(overlay(&solid).unwrap().svg, r.svg);
        let mut bare = c.clone();
        bare.series.iter_mut().for_each(|s| s.band.clear());
        assert_ne!(overlay(&bare).unwrap().svg, r.svg);
        let empty = overlay(&Overlay { title: "e".into(), ..Default::default() }).unwrap();
        assert!(empty.svg.contains(NO_DATA));
    }
}
