//! Drawing of the marks that sweep charts add to the common frame: threshold
//! labels, the vertical marker line and heat-map cells.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{Canvas, PlotRect};
use super::scene::Shape;
use super::style::{ChartError, RULE, SMALL_SIZE, TEXT, TICK_SIZE};

/// Smallest text in heat-map cells; cells too small for it stay unlabelled.
const MIN_CELL_TEXT: f64 = 14.0;

/// For each shape, the row of its label right of the plot: a threshold's own
/// row, moved apart from the other threshold labels so that none overlap (and
/// kept inside `top..=bottom` where possible); other shapes get 0.
pub(crate) fn threshold_label_rows<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    shapes: &[Shape],
    row_of: impl Fn(f64) -> i32,
    (top, bottom): (i32, i32),
) -> Vec<i32> {
    let mut rows: Vec<(i32, usize)> = shapes
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Shape::Threshold { y, .. } => Some((row_of(*y), i)),
            _ => None,
        })
        .collect();
    rows.sort();
    let gap = c.px(SMALL_SIZE as i32 + 4);
    // Push down from the top, then back up from the bottom.
    for k in 1..rows.len() {
        rows[k].0 = rows[k].0.max(rows[k - 1].0 + gap);
    }
    if let Some(last) = rows.last_mut() {
        last.0 = last.0.min(bottom.max(top));
    }
    for k in (0..rows.len().saturating_sub(1)).rev() {
        rows[k].0 = rows[k].0.min(rows[k + 1].0 - gap);
    }
    let mut out = vec![0; shapes.len()];
    for (row, i) in rows {
        out[i] = row;
    }
    out
}

/// Largest font size, from the tick size down to [`MIN_CELL_TEXT`], at which
/// the text of every cell fits inside it; `None` if there is none.
pub(crate) fn cell_text_size<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    shapes: &[Shape],
    to_px: impl Fn((f64, f64)) -> (i32, i32),
) -> Result<Option<f64>, ChartError> {
    let cells: Vec<(&str, i32, i32)> = shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Cell { x, y, text: Some((text, _)), .. } => {
                let ((x0, y0), (x1, y1)) = (to_px((x.0, y.1)), to_px((x.1, y.0)));
                Some((text.as_str(), x1 - x0, y1 - y0))
            }
            _ => None,
        })
        .collect();
    let mut size = TICK_SIZE;
    while size >= MIN_CELL_TEXT {
        let mut fits = true;
        for (text, w, h) in &cells {
            let too_big = f64::from(*h) < 1.6 * size * f64::from(c.px(1)) || c.text_width(text, size)? > w - c.px(12);
            if too_big {
                fits = false;
                break;
            }
        }
        if fits {
            return Ok(Some(size));
        }
        size -= 2.0;
    }
    Ok(None)
}

/// A heat-map cell between the pixel corners, inset by a thin white gap
/// unless it is tiny, with its text at `text.1` points.
pub(crate) fn draw_cell<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    [(x0, y0), (x1, y1)]: [(i32, i32); 2],
    fill: Option<RGBColor>,
    text: Option<(&(String, RGBColor), f64)>,
) -> Result<(), ChartError> {
    let gap = if x1 - x0 > c.px(12) && y1 - y0 > c.px(12) { c.px(1) } else { 0 };
    let corners = [(x0 + gap, y0 + gap), (x1 - gap, y1 - gap)];
    match fill {
        Some(color) => c.rect(corners, color.filled())?,
        None => c.hatch(corners)?,
    }
    if let Some(((text, color), size)) = text {
        let center = Pos::new(HPos::Center, VPos::Center);
        c.text(text, size, *color, center, ((x0 + x1) / 2, (y0 + y1) / 2))?;
    }
    Ok(())
}

/// A vertical marker line at column `x` with its label at the top of the
/// plot, right of the line (left if it does not fit), on a light backing.
pub(crate) fn draw_vline<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    x: i32,
    label: &str,
    (left, top, right, bottom): PlotRect,
) -> Result<(), ChartError> {
    c.rule((x, top), (x, bottom), RULE)?;
    if label.is_empty() {
        return Ok(());
    }
    let label = c.fit_text(label, SMALL_SIZE, (right - left - c.px(24)).max(c.px(40)))?;
    let w = c.text_width(&label, SMALL_SIZE)?;
    let fits_right = x + c.px(8) + w + c.px(6) <= right;
    let text_left = if fits_right { x + c.px(8) } else { (x - c.px(8) - w).max(left + c.px(6)) };
    let (y0, y1) = (top + c.px(6), top + c.px(10 + SMALL_SIZE as i32 + 6));
    c.rect([(text_left - c.px(4), y0), (text_left + w + c.px(4), y1)], WHITE.mix(0.85).filled())?;
    let left_center = Pos::new(HPos::Left, VPos::Center);
    c.text(&label, SMALL_SIZE, TEXT, left_center, (text_left, (y0 + y1) / 2))
}
