//! The shared look and error type of every chart: font sizes, colours, the palette,
//! the "no data" note and [`ChartError`].
//!
//! This module depends on no other module of `report`, and every drawing module takes
//! its constants from here, so that the modules of `report` form an acyclic graph
//! (checked by the `module_graph` test): the frame uses the canvas, legend, colour bar
//! and marks, never the other way round. Sizes are in output pixels.

use plotters::prelude::DrawingAreaErrorKind;
use plotters::style::RGBColor;
use thiserror::Error;

/// Error while rendering a chart (plotters and encoder errors, as text).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("chart rendering failed: {0}")]
pub struct ChartError(String);

impl ChartError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError::new(e.to_string())
    }
}

/// The note drawn on a chart with nothing to show.
pub(crate) const NO_DATA: &str = "no data";

/// Chart title.
pub(crate) const TITLE_SIZE: f64 = 40.0;
/// Axis descriptions.
pub(crate) const DESC_SIZE: f64 = 28.0;
/// Tick labels.
pub(crate) const TICK_SIZE: f64 = 22.0;
/// Legend labels.
pub(crate) const LEGEND_SIZE: f64 = 24.0;
/// Legend details, threshold labels, colour-bar ticks.
pub(crate) const SMALL_SIZE: f64 = 20.0;
/// The note in the middle of an empty plot.
pub(crate) const NOTE_SIZE: f64 = 32.0;

/// Text.
pub(crate) const TEXT: RGBColor = RGBColor(30, 30, 30);
/// Secondary text.
pub(crate) const MUTED: RGBColor = RGBColor(100, 100, 100);
/// Grid lines at the ticks.
pub(crate) const GRID: RGBColor = RGBColor(222, 222, 222);
/// Grid lines between the ticks.
pub(crate) const MINOR_GRID: RGBColor = RGBColor(240, 240, 240);
/// Shaded periods (the warm-up).
pub(crate) const SHADE: RGBColor = RGBColor(232, 232, 232);
/// Threshold and marker lines.
pub(crate) const RULE: RGBColor = RGBColor(70, 70, 70);
/// Hatched "no data" fill and its lines.
pub(crate) const MISSING_FILL: RGBColor = RGBColor(238, 238, 238);
pub(crate) const MISSING_HATCH: RGBColor = RGBColor(185, 185, 185);
/// Opacity of confidence bands.
pub(crate) const AREA_OPACITY: f64 = 0.2;

/// The Okabe–Ito colour-blind-safe palette, most distinguishable colours first; then grey, which
/// the ninth series of a chart gets (the "others" line of a chart of the eight largest series
/// and the rest, so that it never takes the top series' blue); then seven colours of Paul
/// Tol's colour-blind-safe "muted" scheme, so that a chart of up to 16 series (an ATLAS week's
/// gshares and queues) repeats none. Entity `i` always gets `PALETTE[i % 16]`, in every chart.
const PALETTE: [RGBColor; 16] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow (weak on white)
    RGBColor(0x99, 0x99, 0x99), // grey: "others"
    RGBColor(0x88, 0x22, 0x55), // wine
    RGBColor(0x44, 0xAA, 0x99), // teal
    RGBColor(0x99, 0x99, 0x33), // olive
    RGBColor(0x33, 0x22, 0x88), // indigo
    RGBColor(0xCC, 0x66, 0x77), // rose
    RGBColor(0x11, 0x77, 0x33), // green
    RGBColor(0xDD, 0xCC, 0x77), // sand
];

/// Colour of the entity at position `index` (entity order fixes the colour).
pub(crate) fn palette(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_series_get_sixteen_colours_and_the_ninth_is_grey() {
        let colours: std::collections::BTreeSet<(u8, u8, u8)> = (0..16).map(palette).map(|c| (c.0, c.1, c.2)).collect();
        assert_eq!(colours.len(), 16);
        let grey = palette(8);
        assert_eq!((grey.0, grey.1, grey.2), (0x99, 0x99, 0x99), "the \"others\" line after eight series");
        assert_eq!(palette(16), palette(0));
    }
}
