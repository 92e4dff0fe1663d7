//! Drawing primitives on the whole image, identical in look on both backends.
//!
//! Coordinates are backend pixels. Sizes are given in output pixels and scaled
//! with [`Canvas::px`], because the PNG is drawn supersampled.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontTransform;
use plotters::style::text_anchor::Pos;

use super::scene::MarkerKind;
use super::style::{ChartError, MISSING_FILL, MISSING_HATCH};

/// Pixel bounds of the plotting area: `(left, top, right, bottom)`, inclusive.
pub(crate) type PlotRect = (i32, i32, i32, i32);

/// Width of data lines.
const LINE_WIDTH: i32 = 3;
/// Dash and gap lengths of dashed data lines (guides use half of each).
const DASH: i32 = 18;
const GAP: i32 = 10;
/// plotters' ab_glyph text renderer puts the baseline about this fraction of
/// the font size higher than SVG viewers do; raster text is moved down by it,
/// so that labels sit centred on their ticks in both outputs.
const RASTER_BASELINE_FIX: f64 = 0.15;

/// The whole image as a drawing surface.
pub(crate) struct Canvas<'a, DB: DrawingBackend> {
    pub(crate) root: &'a DrawingArea<DB, Shift>,
    scale: i32,
    /// Bitmap backend: lines are blended by coverage and text moved (see the methods).
    raster: bool,
    /// Size of the backend in backend pixels.
    pub(crate) width: i32,
    pub(crate) height: i32,
}

impl<'a, DB: DrawingBackend> Canvas<'a, DB> {
    /// Canvas over `root`, whose size is the output size times `scale`.
    pub(crate) fn new(root: &'a DrawingArea<DB, Shift>, scale: u32, raster: bool) -> Self {
        let (w, h) = root.dim_in_pixel();
        Self { root, scale: scale as i32, raster, width: w as i32, height: h as i32 }
    }

    /// True on the bitmap backend (whose buffer starts white), false on SVG.
    pub(crate) fn raster(&self) -> bool {
        self.raster
    }

    /// Output pixels to backend pixels.
    pub(crate) fn px(&self, v: i32) -> i32 {
        v * self.scale
    }

    /// The "sans-serif" text style of `size` output pixels.
    pub(crate) fn font(&self, size: f64, color: RGBColor) -> TextStyle<'static> {
        ("sans-serif", size * f64::from(self.scale)).into_font().color(&color)
    }

    /// Width of `text` in backend pixels.
    pub(crate) fn text_width(&self, text: &str, size: f64) -> Result<i32, ChartError> {
        let (w, _) = self.root.estimate_text_size(text, &self.font(size, RGBColor(0, 0, 0)))?;
        Ok(w as i32)
    }

    /// `text`, cut and ended with "…" until it is at most `max_w` wide.
    pub(crate) fn fit_text(&self, text: &str, size: f64, max_w: i32) -> Result<String, ChartError> {
        // No line of a 1600-px image holds 300 characters; cutting there first
        // keeps the measuring loop short for absurdly long input.
        let mut chars: Vec<char> = text.chars().take(300).collect();
        let mut candidate: String = chars.iter().collect();
        while !chars.is_empty() && self.text_width(&candidate, size)? > max_w {
            chars.pop();
            candidate = chars.iter().collect::<String>().trim_end().to_owned() + "…";
        }
        Ok(candidate)
    }

    /// Horizontal text anchored at `at`.
    pub(crate) fn text(
        &self,
        text: &str,
        size: f64,
        color: RGBColor,
        anchor: Pos,
        at: (i32, i32),
    ) -> Result<(), ChartError> {
        self.text_turned(text, size, color, anchor, at, FontTransform::None)
    }

    /// Text turned by `turn` (e.g. [`FontTransform::Rotate270`] reads upwards),
    /// anchored at `at`.
    pub(crate) fn text_turned(
        &self,
        text: &str,
        size: f64,
        color: RGBColor,
        anchor: Pos,
        (x, y): (i32, i32),
        turn: FontTransform,
    ) -> Result<(), ChartError> {
        let down = if self.raster { (RASTER_BASELINE_FIX * size) as i32 * self.scale } else { 0 };
        let (dx, dy) = turn.transform(0, down);
        let style = self.font(size, color).pos(anchor).transform(turn);
        Ok(self.root.draw_text(text, &style, (x + dx, y + dy))?)
    }

    /// Rectangle with the given corners (filled: the right and bottom edges are
    /// exclusive, on both backends).
    pub(crate) fn rect(&self, corners: [(i32, i32); 2], style: ShapeStyle) -> Result<(), ChartError> {
        Ok(self.root.draw(&Rectangle::new(corners, style))?)
    }

    /// Thick solid polyline with round ends and joints. On the raster backend each pixel is
    /// blended once with its coverage ([`super::brush`]); plotters' polygon fill for thick
    /// paths draws steep segments visibly thinner than flat ones.
    pub(crate) fn line(&self, points: &[(i32, i32)], color: RGBColor) -> Result<(), ChartError> {
        let width = self.px(LINE_WIDTH);
        if !self.raster {
            let style = color.stroke_width(width as u32);
            return Ok(self.root.draw(&PathElement::new(points.to_vec(), style))?);
        }
        let size = (self.width, self.height);
        Ok(self.root.draw(&super::brush::Covered::line(
            points,
            f64::from(width) / 2.0,
            size,
            (color.0, color.1, color.2),
        ))?)
    }

    /// Horizontal dashes from `x0` to `x1` at row `y`. With `slots.1` lines on the
    /// same row the pattern is one dash per line and then a gap; this line draws
    /// dash number `slots.0`. `thick` selects the data line width, else a thin
    /// guide line with shorter dashes.
    pub(crate) fn dashes(
        &self,
        (x0, x1): (i32, i32),
        y: i32,
        (slot, slots): (usize, usize),
        color: RGBColor,
        thick: bool,
    ) -> Result<(), ChartError> {
        let (dash, gap) = if thick { (self.px(DASH), self.px(GAP)) } else { (self.px(DASH / 2), self.px(GAP / 2)) };
        let mut start = x0 + dash * slot as i32;
        while start < x1 {
            let end = (start + dash).min(x1);
            if thick {
                self.line(&[(start, y), (end, y)], color)?;
            } else {
                self.root.draw(&PathElement::new(vec![(start, y), (end, y)], color.stroke_width(self.px(1) as u32)))?;
            }
            start += dash * slots as i32 + gap;
        }
        Ok(())
    }

    /// Thick dashed polyline (data line width, [`DASH`] on, [`GAP`] off); the pattern runs on
    /// across corners, so that a staircase with short steps stays visibly dashed.
    pub(crate) fn dashed_path(&self, points: &[(i32, i32)], color: RGBColor) -> Result<(), ChartError> {
        let (dash, gap) = (f64::from(self.px(DASH)), f64::from(self.px(GAP)));
        let (mut on, mut left) = (true, dash);
        let mut piece: Vec<(i32, i32)> = points.first().copied().into_iter().collect();
        for w in points.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (dx, dy) = (f64::from(b.0 - a.0), f64::from(b.1 - a.1));
            let len = dx.hypot(dy);
            let mut done = 0.0;
            // Each phase change inside this segment ends a dash or starts one.
            while len - done > left {
                done += left;
                let at = (a.0 + (dx * done / len).round() as i32, a.1 + (dy * done / len).round() as i32);
                if on {
                    piece.push(at);
                    self.line(&piece, color)?;
                    piece.clear();
                } else {
                    piece = vec![at];
                }
                on = !on;
                left = if on { dash } else { gap };
            }
            left -= len - done;
            if on {
                piece.push(b);
            }
        }
        if on && piece.len() > 1 {
            self.line(&piece, color)?;
        }
        Ok(())
    }

    /// Marker with a white halo, which keeps it readable on top of its own line.
    pub(crate) fn marker(&self, (x, y): (i32, i32), color: RGBColor, kind: MarkerKind) -> Result<(), ChartError> {
        for (r, c) in [(self.px(10), WHITE), (self.px(7), color)] {
            match kind {
                MarkerKind::Circle => self.root.draw(&Circle::new((x, y), r, c.filled()))?,
                MarkerKind::Diamond => {
                    let r = r * 4 / 3;
                    let corners = vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)];
                    self.root.draw(&Polygon::new(corners, c.filled()))?
                }
                // Same area as the circle.
                MarkerKind::Square => {
                    let h = (f64::from(r) * 0.886).round() as i32;
                    self.root.draw(&Rectangle::new([(x - h, y - h), (x + h, y + h)], c.filled()))?
                }
                MarkerKind::Triangle => {
                    let big = f64::from(r) * 1.555;
                    let (dx, dy) = ((big * 0.866).round() as i32, (big / 2.0).round() as i32);
                    let corners = vec![(x, y - big.round() as i32), (x + dx, y + dy), (x - dx, y + dy)];
                    self.root.draw(&Polygon::new(corners, c.filled()))?
                }
            }
        }
        Ok(())
    }

    /// Small filled dot (a series with a single point).
    pub(crate) fn dot(&self, at: (i32, i32), color: RGBColor) -> Result<(), ChartError> {
        Ok(self.root.draw(&Circle::new(at, self.px(5), color.filled()))?)
    }

    /// Translucent area between `upper` and `lower`, pixel paths over the same
    /// x values from left to right. The raster backend fills it column by
    /// column, blending every pixel exactly once (plotters' polygon fill blends
    /// some pixels twice, which shows as stripes at low opacity).
    pub(crate) fn area(
        &self,
        upper: &[(i32, i32)],
        lower: &[(i32, i32)],
        color: RGBColor,
        opacity: f64,
    ) -> Result<(), ChartError> {
        let style = color.mix(opacity).filled();
        if !self.raster {
            let outline: Vec<_> = upper.iter().chain(lower.iter().rev()).copied().collect();
            return Ok(self.root.draw(&Polygon::new(outline, style))?);
        }
        let (Some(first), Some(last)) = (upper.first(), upper.last()) else { return Ok(()) };
        let (x0, x1) = (first.0, last.0.max(first.0));
        // Per column, the extent of the area: union over the segments touching it.
        let mut spans: Vec<Option<(i32, i32)>> = vec![None; (x1 - x0 + 1) as usize];
        for (u, l) in upper.windows(2).zip(lower.windows(2)) {
            let (a, b) = (u[0].0.min(u[1].0), u[0].0.max(u[1].0));
            for x in a.max(x0)..=b.min(x1) {
                let f = if b > a { f64::from(x - u[0].0) / f64::from(u[1].0 - u[0].0) } else { 0.0 };
                let at = |p: &[(i32, i32)]| f64::from(p[0].1) + f * f64::from(p[1].1 - p[0].1);
                let (top, bottom) = (at(u).min(at(l)).round() as i32, at(u).max(at(l)).round() as i32);
                let span = &mut spans[(x - x0) as usize];
                *span = Some(span.map_or((top, bottom), |(t, b)| (t.min(top), b.max(bottom))));
            }
        }
        // Blended a row at a time: plotters blends eight pixels of a row per step, but a
        // column of one pixel per row pixel by pixel (a quarter of a sweep chart's time).
        for (y, from, to) in row_runs(&spans) {
            self.rect([(x0 + from as i32, y), (x0 + to as i32, y + 1)], style)?;
        }
        Ok(())
    }

    /// Dashed horizontal or vertical rule from `from` to `to`, 2 px wide: the
    /// threshold and marker lines.
    pub(crate) fn rule(&self, from: (i32, i32), to: (i32, i32), color: RGBColor) -> Result<(), ChartError> {
        let (dash, gap, half) = (self.px(12), self.px(7), self.px(1));
        let horizontal = from.1 == to.1;
        let (start, end) = if horizontal { (from.0, to.0) } else { (from.1, to.1) };
        let mut at = start.min(end);
        while at < start.max(end) {
            let stop = (at + dash).min(start.max(end));
            let corners = if horizontal {
                [(at, from.1 - half), (stop, from.1 + half)]
            } else {
                [(from.0 - half, at), (from.0 + half, stop)]
            };
            self.rect(corners, color.filled())?;
            at += dash + gap;
        }
        Ok(())
    }

    /// Vertical error bar from `top` to `bottom` at column `x`, with caps.
    pub(crate) fn error_bar(&self, x: i32, (top, bottom): (i32, i32), color: RGBColor) -> Result<(), ChartError> {
        let cap = self.px(9);
        self.line(&[(x, top), (x, bottom)], color)?;
        self.line(&[(x - cap, top), (x + cap, top)], color)?;
        self.line(&[(x - cap, bottom), (x + cap, bottom)], color)
    }

    /// Light grey rectangle with diagonal hatching ("no data").
    pub(crate) fn hatch(&self, [(x0, y0), (x1, y1)]: [(i32, i32); 2]) -> Result<(), ChartError> {
        self.rect([(x0, y0), (x1, y1)], MISSING_FILL.filled())?;
        let step = self.px(10);
        let style = MISSING_HATCH.stroke_width(self.px(1) as u32);
        // Lines x + y = s, from bottom left to top right, clipped to the rectangle.
        let mut s = x0 + y0 + step / 2;
        while s < x1 + y1 {
            let (from, to) = ((s - y1).max(x0), (s - y0).min(x1));
            if from < to {
                self.root.draw(&PathElement::new(vec![(from, s - from), (to, s - to)], style))?;
            }
            s += step;
        }
        Ok(())
    }
}

/// The pixels of an area given column by column (`spans[i]`: the rows `top..=bottom` of
/// column `i`, or none), as horizontal runs `(row, first column, column after the last)`:
/// every pixel exactly once.
///
/// Columns are cut into pieces over which both `top` and `bottom` are monotone (one piece
/// per straight segment of the area's outline, give or take a column); in a piece, the
/// columns that cover a row are one interval, found by two binary searches.
fn row_runs(spans: &[Option<(i32, i32)>]) -> Vec<(i32, usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    while start < spans.len() {
        let Some(first) = spans[start] else {
            start += 1;
            continue;
        };
        // Extend the piece while `top` and `bottom` each keep one direction, noting its rows.
        let (mut top_dir, mut bottom_dir) = (0, 0);
        let mut piece = vec![first];
        let (mut highest, mut lowest) = first;
        while let Some(&Some(next)) = spans.get(start + piece.len()) {
            let last = piece[piece.len() - 1];
            let (t, b) = ((next.0 - last.0).signum(), (next.1 - last.1).signum());
            if t * top_dir < 0 || b * bottom_dir < 0 {
                break;
            }
            top_dir = if t != 0 { t } else { top_dir };
            bottom_dir = if b != 0 { b } else { bottom_dir };
            (highest, lowest) = (highest.min(next.0), lowest.max(next.1));
            piece.push(next);
        }
        for y in highest..=lowest {
            // Columns with top ≤ y: a prefix if top grows along the piece, else a suffix;
            // columns with bottom ≥ y: a suffix if bottom grows, else a prefix.
            let (mut lo, mut hi) = (0, piece.len());
            if top_dir >= 0 {
                hi = hi.min(piece.partition_point(|s| s.0 <= y));
            } else {
                lo = lo.max(piece.partition_point(|s| s.0 > y));
            }
            if bottom_dir >= 0 {
                lo = lo.max(piece.partition_point(|s| s.1 < y));
            } else {
                hi = hi.min(piece.partition_point(|s| s.1 >= y));
            }
            if lo < hi {
                runs.push((y, start + lo, start + hi));
            }
        }
        start += piece.len();
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::row_runs;

    /// Each pixel of the columns once, in the runs, and nothing else.
    fn assert_same_pixels(spans: &[Option<(i32, i32)>]) {
        let mut from_columns: Vec<(i32, usize)> = spans
            .iter()
            .enumerate()
            .filter_map(|(x, s)| s.map(|(t, b)| (x, t, b)))
            .flat_map(|(x, t, b)| (t..=b).map(move |y| (y, x)))
            .collect();
        let mut from_rows: Vec<(i32, usize)> =
            row_runs(spans).into_iter().flat_map(|(y, a, b)| (a..b).map(move |x| (y, x))).collect();
        from_columns.sort_unstable();
        from_rows.sort_unstable();
        assert_eq!(from_rows, from_columns, "{spans:?}");
    }

    #[test]
    fn a_band_is_one_run_per_row_and_segment() {
        // A diamond: top rises then falls, bottom falls then rises (rows grow downwards).
        let spans: Vec<_> = (0..9).map(|x: i32| Some((10 - (4 - (x - 4).abs()), 10 + (4 - (x - 4).abs())))).collect();
        assert_same_pixels(&spans);
        let runs = row_runs(&spans);
        // Row 10 is crossed by the whole band in each of the two pieces.
        let row10: Vec<_> = runs.iter().filter(|r| r.0 == 10).collect();
        assert_eq!(row10, [&(10, 0, 5), &(10, 5, 9)]);
        // Row 6, the tip, only at its middle column.
        assert_eq!(runs.iter().filter(|r| r.0 == 6).collect::<Vec<_>>(), [&(6, 4, 5)]);
    }

    #[test]
    fn any_columns_give_the_same_pixels() {
        assert_same_pixels(&[]);
        assert_same_pixels(&[None, Some((3, 3)), None]);
        assert_same_pixels(&[Some((5, 2))]);
        // Flat, zig-zag, gaps, crossing bounds: a small deterministic pseudo-random walk.
        let mut seed = 12_345_u64;
        let mut next = |m: i32| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % m as u64) as i32
        };
        for _ in 0..200 {
            let n = next(40) as usize;
            let spans: Vec<_> = (0..n)
                .map(|_| {
                    let t = next(30);
                    (next(8) != 0).then(|| (t, t + next(12) - 1))
                })
                .collect();
            assert_same_pixels(&spans);
        }
    }
}
