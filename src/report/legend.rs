//! The legend panel, right of the plot, so that it never hides data.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::Canvas;
use super::scene::{LegendEntry, Sample};
use super::style::{ChartError, LEGEND_SIZE, MUTED, SMALL_SIZE, TEXT, palette};

const PAD: i32 = 16;
const SAMPLE_W: i32 = 56;
const ROW_H: i32 = 38;
const DETAIL_H: i32 = 26;
/// Gap between the panel and the right edge of the image.
const OUTER: i32 = 24;

/// Legend entries with labels shortened to fit, and the panel width.
pub(crate) struct Legend {
    entries: Vec<LegendEntry>,
    /// Entries left out for lack of height, announced as "+ N more".
    hidden: usize,
    /// Panel width in backend pixels, including the outer gap; 0 without entries.
    pub(crate) width: i32,
}

impl Legend {
    /// Lays out `entries` in at most `max_height` backend pixels: entries that do
    /// not fit are left out and counted, and labels wider than 30 % of the image
    /// are shortened (keeping their suffix).
    pub(crate) fn new<DB: DrawingBackend>(
        canvas: &Canvas<'_, DB>,
        entries: &[LegendEntry],
        max_height: i32,
    ) -> Result<Self, ChartError> {
        let mut room = max_height - canvas.px(PAD);
        let mut shown = 0;
        for (i, e) in entries.iter().enumerate() {
            // Keep a row for "+ N more" unless this is the last entry.
            let more = if i + 1 < entries.len() { canvas.px(ROW_H) } else { 0 };
            let height = canvas.px(row_height(e));
            if height + more > room {
                break;
            }
            room -= height;
            shown += 1;
        }
        if shown == 0 {
            return Ok(Self { entries: Vec::new(), hidden: 0, width: 0 });
        }
        let max_text = canvas.width * 3 / 10;
        let mut text_w = 0;
        // Headings start at the sample's left edge.
        let mut heading_w = 0;
        let mut fitted = Vec::new();
        for e in &entries[..shown] {
            let room = max_text - canvas.text_width(&e.suffix, LEGEND_SIZE)?;
            let label = canvas.fit_text(&e.label, LEGEND_SIZE, room)? + &e.suffix;
            if e.sample == Sample::Heading {
                heading_w = heading_w.max(canvas.text_width(&label, LEGEND_SIZE)?);
            } else {
                text_w = text_w.max(canvas.text_width(&label, LEGEND_SIZE)?);
            }
            let detail = match &e.detail {
                Some(d) => {
                    let d = canvas.fit_text(d, SMALL_SIZE, max_text)?;
                    text_w = text_w.max(canvas.text_width(&d, SMALL_SIZE)?);
                    Some(d)
                }
                None => None,
            };
            fitted.push(LegendEntry { label, suffix: String::new(), detail, ..e.clone() });
        }
        let width = (canvas.px(3 * PAD + SAMPLE_W) + text_w).max(canvas.px(2 * PAD) + heading_w) + canvas.px(OUTER);
        Ok(Self { entries: fitted, hidden: entries.len() - shown, width })
    }

    /// Draws the panel with its top at `top` (backend pixels).
    pub(crate) fn draw<DB: DrawingBackend>(&self, canvas: &Canvas<'_, DB>, top: i32) -> Result<(), ChartError> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let [pad, sample_w, row_h, detail_h] = [PAD, SAMPLE_W, ROW_H, DETAIL_H].map(|v| canvas.px(v));
        let left = canvas.width - self.width;
        let right = canvas.width - canvas.px(OUTER);
        let more_h = if self.hidden > 0 { ROW_H } else { 0 };
        let rows = canvas.px(self.entries.iter().map(row_height).sum::<i32>() + more_h);
        let frame = [(left, top), (right, top + rows + pad)];
        canvas.rect(frame, WHITE.mix(0.85).filled())?;
        canvas.rect(frame, RGBColor(200, 200, 200).stroke_width(1))?;
        let left_center = Pos::new(HPos::Left, VPos::Center);
        let mut y = top + pad / 2;
        for e in &self.entries {
            let cy = y + row_h / 2;
            let (x0, x1) = (left + pad, left + pad + sample_w);
            if e.sample == Sample::Heading {
                canvas.text(&e.label, LEGEND_SIZE, MUTED, left_center, (x0, cy))?;
                y += row_h;
                continue;
            }
            match e.sample {
                Sample::Solid => canvas.line(&[(x0, cy), (x1, cy)], palette(e.color))?,
                Sample::Dashed => canvas.dashes((x0, x1), cy, (0, 1), palette(e.color), true)?,
                Sample::Heading => {}
                Sample::Marked(kind) => {
                    canvas.line(&[(x0, cy), (x1, cy)], palette(e.color))?;
                    canvas.marker(((x0 + x1) / 2, cy), palette(e.color), kind)?;
                }
            }
            let text_x = x1 + pad;
            canvas.text(&e.label, LEGEND_SIZE, TEXT, left_center, (text_x, cy))?;
            y += row_h;
            if let Some(d) = &e.detail {
                let cy = y + detail_h / 2 - canvas.px(6);
                canvas.text(d, SMALL_SIZE, MUTED, left_center, (text_x, cy))?;
                y += detail_h;
            }
        }
        if self.hidden > 0 {
            let more = format!("+ {} more", self.hidden);
            canvas.text(&more, LEGEND_SIZE, MUTED, left_center, (left + pad, y + row_h / 2))?;
        }
        Ok(())
    }
}

/// Height of an entry in output pixels.
fn row_height(e: &LegendEntry) -> i32 {
    ROW_H + if e.detail.is_some() { DETAIL_H } else { 0 }
}
