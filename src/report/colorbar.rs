//! The sequential colour scale of heat maps and its colour bar, right of the
//! plot where other charts have their legend.
//!
//! The scale is viridis (perceptually uniform, readable with colour-vision
//! deficiencies and in greyscale): 17 samples of matplotlib's table, linearly
//! interpolated.

use plotters::prelude::*;
use plotters::style::FontTransform;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::Canvas;
use super::scene::ColorBar;
use super::style::{ChartError, LEGEND_SIZE, MUTED, NO_DATA, SMALL_SIZE, TEXT};

/// Viridis at `0, 1/16, …, 1`.
const VIRIDIS: [(u8, u8, u8); 17] = [
    (68, 1, 84),
    (72, 24, 106),
    (71, 45, 123),
    (66, 64, 134),
    (59, 82, 139),
    (51, 99, 141),
    (44, 114, 142),
    (38, 130, 142),
    (33, 145, 140),
    (31, 159, 136),
    (39, 173, 129),
    (61, 188, 116),
    (92, 200, 99),
    (129, 211, 77),
    (170, 220, 50),
    (213, 226, 26),
    (253, 231, 37),
];

/// Viridis at `t` in `[0, 1]` (clamped; NaN gives the low end).
pub(crate) fn viridis(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |a: u8, b: u8| (f64::from(a) + f * (f64::from(b) - f64::from(a))).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever contrasts more with `background` (WCAG contrast
/// ratio of the relative luminances).
pub(crate) fn text_color_on(background: RGBColor) -> RGBColor {
    let linear = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    let RGBColor(r, g, b) = background;
    let l = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    if 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 { WHITE } else { RGBColor(0, 0, 0) }
}

/// Widths and gaps of the panel, in output pixels.
const BAR_W: i32 = 32;
const TICK_LEN: i32 = 8;
const TICK_GAP: i32 = 6;
const TITLE_GAP: i32 = 18;
/// Gap between the panel and the right edge of the image.
const OUTER: i32 = 24;

/// A laid-out colour bar.
pub(crate) struct ColorBarPanel<'a> {
    bar: &'a ColorBar,
    labels: Vec<String>,
    labels_w: i32,
    /// Panel width in backend pixels, including the outer gap.
    pub(crate) width: i32,
}

impl<'a> ColorBarPanel<'a> {
    /// Measures the tick labels and the "no data" swatch of `bar`.
    pub(crate) fn new<DB: DrawingBackend>(c: &Canvas<'_, DB>, bar: &'a ColorBar) -> Result<Self, ChartError> {
        let labels: Vec<String> = bar.axis.ticks.iter().map(|t| bar.axis.format_tick(*t)).collect();
        let mut labels_w = 0;
        for label in &labels {
            labels_w = labels_w.max(c.text_width(label, SMALL_SIZE)?);
        }
        let mut right = c.px(BAR_W + TICK_LEN + TICK_GAP) + labels_w;
        if bar.missing {
            right = right.max(c.px(BAR_W + 10) + c.text_width(NO_DATA, SMALL_SIZE)?);
        }
        let width = right + c.px(TITLE_GAP + LEGEND_SIZE as i32 + OUTER);
        Ok(Self { bar, labels, labels_w, width })
    }

    /// Draws the panel from `top` to `bottom` (backend pixels), level with the plot.
    pub(crate) fn draw<DB: DrawingBackend>(&self, c: &Canvas<'_, DB>, top: i32, bottom: i32) -> Result<(), ChartError> {
        let left = c.width - self.width;
        let (x0, x1) = (left, left + c.px(BAR_W));
        let swatch = c.px(BAR_W);
        let bar_bottom = if self.bar.missing { bottom - swatch - c.px(18) } else { bottom };
        let span = f64::from((bar_bottom - top).max(1));
        // One rectangle per pixel row, reaching into the next row: no seams
        // in SVG viewers that anti-alias rectangle edges.
        let mut y = top;
        while y <= bar_bottom {
            let color = viridis(f64::from(bar_bottom - y) / span);
            c.rect([(x0, y), (x1, (y + 2).min(bar_bottom))], color.filled())?;
            y += 1;
        }
        c.rect([(x0, top), (x1, bar_bottom)], MUTED.stroke_width(1))?;

        let (lo, hi) = self.bar.axis.range;
        let left_center = Pos::new(HPos::Left, VPos::Center);
        for (t, label) in self.bar.axis.ticks.iter().zip(&self.labels) {
            let y = bar_bottom - ((t - lo) / (hi - lo) * span).round() as i32;
            c.rect([(x1, y), (x1 + c.px(TICK_LEN), y + c.px(1))], MUTED.filled())?;
            c.text(label, SMALL_SIZE, TEXT, left_center, (x1 + c.px(TICK_LEN + TICK_GAP), y))?;
        }
        if self.bar.missing {
            let corners = [(x0, bottom - swatch), (x1, bottom)];
            c.hatch(corners)?;
            c.rect(corners, MUTED.stroke_width(1))?;
            c.text(NO_DATA, SMALL_SIZE, TEXT, left_center, (x1 + c.px(10), bottom - swatch / 2))?;
        }
        let title_x = x1 + c.px(TICK_LEN + TICK_GAP + TITLE_GAP + LEGEND_SIZE as i32 / 2) + self.labels_w;
        let title = c.fit_text(&self.bar.axis.label, LEGEND_SIZE, bar_bottom - top)?;
        let center = Pos::new(HPos::Center, VPos::Center);
        c.text_turned(&title, LEGEND_SIZE, TEXT, center, (title_x, (top + bar_bottom) / 2), FontTransform::Rotate270)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_runs_from_purple_to_yellow() {
        assert_eq!(viridis(0.0), RGBColor(68, 1, 84));
        assert_eq!(viridis(1.0), RGBColor(253, 231, 37));
        assert_eq!(viridis(0.5), RGBColor(33, 145, 140));
        assert_eq!(viridis(f64::NAN), viridis(-3.0));
        assert_eq!(viridis(7.0), viridis(1.0));
    }

    #[test]
    fn text_contrasts_with_its_cell() {
        assert_eq!(text_color_on(viridis(0.0)), WHITE);
        assert_eq!(text_color_on(viridis(0.3)), WHITE);
        assert_eq!(text_color_on(viridis(0.9)), RGBColor(0, 0, 0));
    }
}
