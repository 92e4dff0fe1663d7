//! The common frame of every chart: fonts, title, axes, grid, legend, and the
//! rendering of a [`Scene`] to PNG and SVG.
//!
//! Charts only describe *what* to draw; this module decides *how*, so all charts
//! share one look. The same scene is drawn on both backends. The PNG is drawn at
//! twice the size and averaged down 2×2, which anti-aliases lines, markers and
//! text (plotters' bitmap backend does not); sizes below are in output pixels.

use std::cell::RefCell;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use plotters::coord::CoordTranslate;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontTransform, TRANSPARENT, register_font};

use super::axis::{Axis, TickFormat};
use super::canvas::{Canvas, PlotRect};
use super::colorbar::ColorBarPanel;
use super::legend::Legend;
use super::marks::{cell_text_size, draw_cell, draw_vline, threshold_label_rows};
use super::png::encode_rgb;
use super::scene::{Scene, Shape};
use super::style::{
    AREA_OPACITY, ChartError, DESC_SIZE, GRID, MINOR_GRID, MUTED, NOTE_SIZE, RULE, SHADE, SMALL_SIZE, TEXT, TICK_SIZE,
    TITLE_SIZE, palette,
};

/// Image width in pixels (16:9 slide).
const WIDTH: u32 = 1600;
/// Image height in pixels.
const HEIGHT: u32 = 900;
/// Supersampling factor of the PNG.
const SUPERSAMPLE: u32 = 2;

/// Space between the title block and the plot (and the legend).
const MARGIN_TOP: i32 = 12;
/// Tick mark length, and the gap between a tick mark and its label.
const TICK_LEN: i32 = 8;
const TICK_GAP: i32 = 6;

thread_local! {
    /// The supersampled raster of the chart being drawn (17 MB), kept by each thread from
    /// one chart to the next rather than allocated, faulted in and zeroed for every chart
    /// (a sweep's seven charts on one thread: 3 % faster, 10 pairs).
    static RASTER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

static FONTS: Once = Once::new();
static FONTS_OK: AtomicBool = AtomicBool::new(false);

/// Registers the embedded DejaVu Sans fonts as "sans-serif" (once per process).
fn ensure_fonts() -> Result<(), ChartError> {
    FONTS.call_once(|| {
        let ok = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular()).is_ok();
        FONTS_OK.store(ok, Ordering::SeqCst);
    });
    if FONTS_OK.load(Ordering::SeqCst) {
        Ok(())
    } else {
        Err(ChartError::new("cannot load the embedded DejaVu Sans font"))
    }
}

/// A rendered chart: PNG bytes and SVG text of the same 1600×900 picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// PNG file contents (RGB, 1600×900).
    pub png: Vec<u8>,
    /// SVG document (1600×900 user units; text uses the "sans-serif" family).
    pub svg: String,
}

/// Renders `scene` to a PNG (in memory) and an SVG of the same logical size.
pub(crate) fn render(scene: &Scene) -> Result<Rendered, ChartError> {
    ensure_fonts()?;
    let png = RASTER.with_borrow_mut(|big| -> Result<Vec<u8>, ChartError> {
        let (w, h) = (WIDTH * SUPERSAMPLE, HEIGHT * SUPERSAMPLE);
        // White already: the raster scene skips plotters' background fill, which blends every
        // pixel one by one (a quarter of a sweep's chart time; the bytes are the same).
        big.clear();
        big.resize(w as usize * h as usize * 3, 255);
        {
            let root = BitMapBackend::with_buffer(big, (w, h)).into_drawing_area();
            draw_scene(&Canvas::new(&root, SUPERSAMPLE, true), scene)?;
            root.present()?;
        }
        encode_rgb(&downsample(big), WIDTH, HEIGHT)
    })?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw_scene(&Canvas::new(&root, 1, false), scene)?;
        root.present()?;
    }
    Ok(Rendered { png, svg })
}

/// Averages each `SUPERSAMPLE`² (2×2) block of the RGB image into one pixel, rounding half
/// up. Written for the fixed block size in two passes over each pair of rows that the
/// compiler vectorises (the vertical sums, then each byte with the one a pixel to its right)
/// before the averages of the even pixels are picked out: a byte at a time it took 12
/// instructions per output byte, 17 % of a 1 000-job replay's whole run.
fn downsample(big: &[u8]) -> Vec<u8> {
    const _: () = assert!(SUPERSAMPLE == 2, "downsample averages 2×2 blocks");
    let (row, big_row) = (WIDTH as usize * 3, WIDTH as usize * 2 * 3);
    let mut out = vec![0u8; row * HEIGHT as usize];
    let mut sums = vec![0u16; big_row];
    let mut means = vec![0u8; big_row];
    for (dst, band) in out.chunks_exact_mut(row).zip(big.chunks_exact(big_row * 2)) {
        let (upper, lower) = band.split_at(big_row);
        for ((s, &a), &b) in sums.iter_mut().zip(upper).zip(lower) {
            *s = u16::from(a) + u16::from(b);
        }
        // means[k]: the block of big pixels k / 3 and k / 3 + 1, channel k % 3.
        for ((m, &s), &t) in means.iter_mut().zip(&sums).zip(&sums[3..]) {
            *m = ((s + t + 2) / 4) as u8;
        }
        for (d, m) in dst.chunks_exact_mut(3).zip(means.chunks_exact(6)) {
            d.copy_from_slice(&m[..3]);
        }
    }
    out
}

/// Plotters coordinate of an [`Axis`]: linear mapping, with our own tick (bold
/// grid) and minor (light grid) positions.
#[derive(Clone)]
struct AxisCoord<'a>(&'a Axis);

impl Ranged for AxisCoord<'_> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, (from, to): (i32, i32)) -> i32 {
        let (lo, hi) = self.0.range;
        let px = f64::from(from) + (v - lo) / (hi - lo) * f64::from(to - from);
        // Far outside the image anyway; the clamp keeps later pixel arithmetic
        // from overflowing, and `as` maps NaN to 0.
        px.round().clamp(-1e6, 1e6) as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() { self.0.minor.clone() } else { self.0.ticks.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.range.0..self.0.range.1
    }
}

fn draw_scene<DB: DrawingBackend>(c: &Canvas<'_, DB>, scene: &Scene) -> Result<(), ChartError> {
    if !c.raster() {
        c.root.fill(&WHITE)?;
    }
    let body_top = draw_title(c, &scene.title)?;
    // The legend starts level with the plot and ends above the bottom edge.
    let legend = Legend::new(c, &scene.legend, c.height - c.px(MARGIN_TOP + 16) - body_top)?;
    // A scene has a legend or a colour bar (heat maps), not both.
    let bar = scene.colorbar.as_ref().map(|b| ColorBarPanel::new(c, b)).transpose()?;
    let panel_w = legend.width + bar.as_ref().map_or(0, |b| b.width);
    let (_, body) = c.root.split_vertically(body_top);
    let (chart_area, _) = body.split_horizontally(c.width - panel_w);

    let (x, y) = (&scene.x, &scene.y);
    let y_labels = tick_labels(c, y, c.width / 5)?;
    let mut y_tick_w = 0;
    for label in &y_labels {
        y_tick_w = y_tick_w.max(c.text_width(label, TICK_SIZE)?);
    }
    let mut guide_w = 0;
    for shape in &scene.shapes {
        if let Shape::Guide { label, .. } | Shape::Threshold { label, .. } = shape {
            guide_w = guide_w.max(c.text_width(label, SMALL_SIZE)? + c.px(24));
        }
    }
    let tick_room = TICK_LEN + TICK_GAP + TICK_SIZE as i32;
    let y_area = y_tick_w + c.px(TICK_LEN + TICK_GAP + DESC_SIZE as i32 + 24);
    let plot_w = c.width - panel_w - c.px(16) - guide_w.max(c.px(36)) - y_area;
    let turned = turned_labels(c, x, plot_w)?;
    let x_area = match &turned {
        Some(t) => c.px(TICK_LEN + TICK_GAP) + t.height + c.px(DESC_SIZE as i32 + 24),
        None => c.px(tick_room + DESC_SIZE as i32 + 24),
    };
    let mut chart = ChartBuilder::on(&chart_area)
        .margin_top(c.px(MARGIN_TOP))
        .margin_bottom(c.px(8))
        .margin_left(c.px(16))
        .margin_right(guide_w.max(c.px(36)))
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(AxisCoord(x), AxisCoord(y))?;
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let rect: PlotRect = (xr.start, yr.start, xr.end - 1, yr.end - 1);
    let (left, top, right, bottom) = rect;
    let coord = chart.as_coord_spec().clone();
    let to_px = |p: (f64, f64)| {
        let (px, py) = coord.translate(&p);
        (px.clamp(left, right), py.clamp(top, bottom))
    };
    let column = |v: f64| to_px((v, y.range.0)).0;
    let row = |v: f64| to_px((x.range.0, v)).1;

    // Bands go below the grid, everything else above it.
    for shape in &scene.shapes {
        if let Shape::Band { x0, x1, .. } = shape {
            c.rect([(column(*x0), top), (column(*x1), bottom)], SHADE.filled())?;
        }
    }
    // plotters draws grid, axes and tick marks; the labels are ours (see below).
    chart
        .configure_mesh()
        .bold_line_style(GRID.stroke_width(c.px(1) as u32))
        .light_line_style(MINOR_GRID.stroke_width(c.px(1) as u32))
        .axis_style(MUTED.stroke_width(c.px(2) as u32))
        .set_all_tick_mark_size(c.px(TICK_LEN))
        .label_style(c.font(TICK_SIZE, TEXT).color(&TRANSPARENT))
        .draw()?;
    draw_axis_labels(c, scene, rect, (&column, &row), &y_labels, y_tick_w, turned.as_ref())?;

    let slots = dash_slots(&scene.shapes, row);
    let label_rows = threshold_label_rows(c, &scene.shapes, row, (top, bottom));
    let cell_text = cell_text_size(c, &scene.shapes, to_px)?;
    let left_center = Pos::new(HPos::Left, VPos::Center);
    for ((shape, slot), label_row) in scene.shapes.iter().zip(slots).zip(label_rows) {
        match shape {
            Shape::Band { x0, x1, label } => draw_band_label(c, label, (column(*x0), column(*x1)), top)?,
            Shape::Line { points, color } => {
                let px: Vec<_> = points.iter().map(|p| to_px(*p)).collect();
                match px[..] {
                    [single] => c.dot(single, palette(*color))?,
                    _ => c.line(&px, palette(*color))?,
                }
            }
            Shape::DashedLine { points, color } => {
                let px: Vec<_> = points.iter().map(|p| to_px(*p)).collect();
                c.dashed_path(&px, palette(*color))?;
            }
            Shape::DashedH { y: v, color } => c.dashes((left, right), row(*v), slot, palette(*color), true)?,
            Shape::Guide { y: v, label } => {
                c.dashes((left, right), row(*v), (0, 1), MUTED, false)?;
                c.text(label, SMALL_SIZE, MUTED, left_center, (right + c.px(10), row(*v)))?;
            }
            Shape::Marker { at, color, kind } => c.marker(to_px(*at), palette(*color), *kind)?,
            Shape::Area { upper, lower, color } => {
                let (upper, lower): (Vec<_>, Vec<_>) =
                    (upper.iter().map(|p| to_px(*p)).collect(), lower.iter().map(|p| to_px(*p)).collect());
                c.area(&upper, &lower, palette(*color), AREA_OPACITY)?;
            }
            Shape::ErrorBar { x: v, lo, hi, color } => {
                c.error_bar(column(*v), (row(*hi), row(*lo)), palette(*color))?
            }
            Shape::Threshold { y: v, label } => {
                c.rule((left, row(*v)), (right, row(*v)), RULE)?;
                c.text(label, SMALL_SIZE, TEXT, left_center, (right + c.px(10), label_row))?;
            }
            Shape::VLine { x: v, label } => draw_vline(c, column(*v), label, rect)?,
            Shape::Cell { x: (x0, x1), y: (y0, y1), fill, text } => {
                let corners = [to_px((*x0, *y1)), to_px((*x1, *y0))];
                draw_cell(c, corners, *fill, text.as_ref().zip(cell_text))?;
            }
        }
    }
    if let Some(note) = &scene.note {
        let center = Pos::new(HPos::Center, VPos::Center);
        c.text(note, NOTE_SIZE, MUTED, center, ((left + right) / 2, (top + bottom) / 2))?;
    }
    if let Some(bar) = &bar {
        bar.draw(c, top, bottom)?;
    }
    legend.draw(c, top)
}

/// The tick labels of `axis`; category names are shortened to `max_w`.
fn tick_labels<DB: DrawingBackend>(c: &Canvas<'_, DB>, axis: &Axis, max_w: i32) -> Result<Vec<String>, ChartError> {
    let labels = axis.ticks.iter().map(|t| axis.format_tick(*t));
    if axis.format == TickFormat::Category {
        labels.map(|l| c.fit_text(&l, TICK_SIZE, max_w)).collect()
    } else {
        Ok(labels.collect())
    }
}

/// X category names turned to read upwards, one under each tick: what a category axis
/// gets when its names side by side would not fit even shortened (the PanDA queues of a large
/// grid), as long as a turned line fits between two ticks.
struct TurnedLabels {
    /// The names, each shortened to [`MAX_TURNED_W`].
    labels: Vec<String>,
    /// The longest name's width: the height the labels take below the axis.
    height: i32,
}

/// The longest a turned name may be (CSS pixels).
const MAX_TURNED_W: i32 = 240;

/// The turned labels of a category axis `plot_w` wide, or `None` when the names fit side by side
/// (shortened to no less than 48 px each) or the axis is not one of categories.
fn turned_labels<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    x: &Axis,
    plot_w: i32,
) -> Result<Option<TurnedLabels>, ChartError> {
    if x.format != TickFormat::Category || x.ticks.len() < 2 {
        return Ok(None);
    }
    let spacing = plot_w / x.ticks.len() as i32;
    let mut widest = 0;
    for t in &x.ticks {
        widest = widest.max(c.text_width(&x.format_tick(*t), TICK_SIZE)?);
    }
    let fits_flat = widest + c.px(16) <= spacing || spacing - c.px(20) >= c.px(48);
    if fits_flat || spacing < c.px(TICK_SIZE as i32 + 2) {
        return Ok(None);
    }
    let labels: Vec<String> = x
        .ticks
        .iter()
        .map(|t| c.fit_text(&x.format_tick(*t), TICK_SIZE, c.px(MAX_TURNED_W)))
        .collect::<Result<_, _>>()?;
    let mut height = 0;
    for l in &labels {
        height = height.max(c.text_width(l, TICK_SIZE)?);
    }
    Ok(Some(TurnedLabels { labels, height }))
}

/// Tick labels and axis descriptions. Drawn here rather than by plotters so that
/// they get the same baseline correction as all other text. X labels that
/// would touch are thinned to every second (third, …) tick, unless they are
/// category names that can be shortened to fit or turned (`turned`); y category labels too
/// close to each other are thinned too.
fn draw_axis_labels<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    scene: &Scene,
    (left, top, right, bottom): PlotRect,
    (column, row): (&dyn Fn(f64) -> i32, &dyn Fn(f64) -> i32),
    y_labels: &[String],
    y_tick_w: i32,
    turned: Option<&TurnedLabels>,
) -> Result<(), ChartError> {
    let (x, y) = (&scene.x, &scene.y);
    let label_top = bottom + c.px(TICK_LEN + TICK_GAP);
    let center = Pos::new(HPos::Center, VPos::Center);
    if let Some(t) = turned {
        for (tick, label) in x.ticks.iter().zip(&t.labels) {
            let w = c.text_width(label, TICK_SIZE)?;
            let at = (column(*tick), label_top + w / 2);
            c.text_turned(label, TICK_SIZE, TEXT, center, at, FontTransform::Rotate270)?;
        }
        let x_desc_y = label_top + t.height + c.px(12 + DESC_SIZE as i32 / 2);
        c.text(&x.label, DESC_SIZE, TEXT, center, ((left + right) / 2, x_desc_y))?;
        return draw_y_labels(c, y, (left, top, bottom), row, y_labels, y_tick_w);
    }
    let spacing = match x.ticks[..] {
        [a, b, ..] => (column(b) - column(a)).max(1),
        _ => i32::MAX,
    };
    let room = if spacing == i32::MAX { right - left } else { spacing - c.px(20) };
    let shorten = x.format == TickFormat::Category && room >= c.px(48);
    let labels = tick_labels(c, x, if shorten { room } else { i32::MAX })?;
    let mut widest = 0;
    for label in &labels {
        widest = widest.max(c.text_width(label, TICK_SIZE)?);
    }
    let every = ((widest + c.px(16)) / spacing + 1).max(1) as usize;
    for (t, label) in x.ticks.iter().zip(&labels).step_by(every) {
        c.text(label, TICK_SIZE, TEXT, Pos::new(HPos::Center, VPos::Top), (column(*t), label_top))?;
    }
    let x_desc_y = label_top + c.px(TICK_SIZE as i32 + 12 + DESC_SIZE as i32 / 2);
    c.text(&x.label, DESC_SIZE, TEXT, center, ((left + right) / 2, x_desc_y))?;
    draw_y_labels(c, y, (left, top, bottom), row, y_labels, y_tick_w)
}

/// The y tick labels (category names thinned when too close) and the y description.
fn draw_y_labels<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    y: &Axis,
    (left, top, bottom): (i32, i32, i32),
    row: &dyn Fn(f64) -> i32,
    y_labels: &[String],
    y_tick_w: i32,
) -> Result<(), ChartError> {
    let center = Pos::new(HPos::Center, VPos::Center);
    let label_right = left - c.px(TICK_LEN + TICK_GAP);
    let y_spacing = match y.ticks[..] {
        [a, b, ..] => (row(a) - row(b)).abs().max(1),
        _ => i32::MAX,
    };
    let y_every = match y.format {
        TickFormat::Category => (c.px(TICK_SIZE as i32 + 4) / y_spacing + 1).max(1) as usize,
        _ => 1,
    };
    for (t, label) in y.ticks.iter().zip(y_labels).step_by(y_every) {
        let anchor = Pos::new(HPos::Right, VPos::Center);
        c.text(label, TICK_SIZE, TEXT, anchor, (label_right, row(*t)))?;
    }
    let y_desc_x = label_right - y_tick_w - c.px(12 + DESC_SIZE as i32 / 2);
    c.text_turned(&y.label, DESC_SIZE, TEXT, center, (y_desc_x, (top + bottom) / 2), FontTransform::Rotate270)
}

/// Draws the title centered at the top, shrinking it if it is too wide; returns
/// where the body starts (backend pixels).
fn draw_title<DB: DrawingBackend>(c: &Canvas<'_, DB>, title: &str) -> Result<i32, ChartError> {
    let max_w = c.width - c.px(80);
    let mut size = TITLE_SIZE;
    while size > 24.0 && c.text_width(title, size)? > max_w {
        size -= 2.0;
    }
    let title = c.fit_text(title, size, max_w)?;
    let top_center = Pos::new(HPos::Center, VPos::Top);
    c.text(&title, size, TEXT, top_center, (c.width / 2, c.px(22)))?;
    Ok(c.px(22 + TITLE_SIZE as i32 + 18))
}

/// For each `DashedH` shape, its slot and the number of dashed lines sharing its
/// pixel row (within 2 px), in shape order; other shapes get `(0, 1)`.
fn dash_slots(shapes: &[Shape], row_of: impl Fn(f64) -> i32) -> Vec<(usize, usize)> {
    let rows: Vec<Option<i32>> = shapes
        .iter()
        .map(|s| match s {
            Shape::DashedH { y, .. } => Some(row_of(*y)),
            _ => None,
        })
        .collect();
    let near = |a: i32, b: &Option<i32>| b.is_some_and(|b| (a - b).abs() <= 2);
    rows.iter()
        .enumerate()
        .map(|(i, row)| match row {
            Some(r) => {
                let slot = rows[..i].iter().filter(|o| near(*r, o)).count();
                (slot, rows.iter().filter(|o| near(*r, o)).count())
            }
            None => (0, 1),
        })
        .collect()
}

/// Labels a band at its top: inside if the label fits, else just right of it.
fn draw_band_label<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    label: &str,
    (left, right): (i32, i32),
    top: i32,
) -> Result<(), ChartError> {
    let w = c.text_width(label, SMALL_SIZE)?;
    let inside = left + c.px(6) + w + c.px(6) <= right;
    let x = if inside { left + c.px(6) } else { right + c.px(8) };
    let top_left = Pos::new(HPos::Left, VPos::Top);
    c.text(label, SMALL_SIZE, MUTED, top_left, (x, top + c.px(8)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsample_averages_each_block_rounding_half_up() {
        let (w, h) = (WIDTH as usize * 2, HEIGHT as usize * 2);
        // Every byte value, and blocks whose sums end in .25, .5 and .75.
        let big: Vec<u8> = (0..w * h * 3).map(|i| ((i * 7 + i / (w * 3) * 13) % 256) as u8).collect();
        let small = downsample(&big);
        assert_eq!(small.len(), WIDTH as usize * HEIGHT as usize * 3);
        for (y, x, c) in [(0, 0, 0), (0, 1, 2), (17, 800, 1), (HEIGHT as usize - 1, WIDTH as usize - 1, 2)] {
            let at = |yy: usize, xx: usize| u32::from(big[(yy * w + xx) * 3 + c]);
            let sum = at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1);
            assert_eq!(
                u32::from(small[(y * WIDTH as usize + x) * 3 + c]),
                (sum + 2) / 4,
                "pixel ({x}, {y}) channel {c}"
            );
        }
        // 1 + 2 + 2 + 2 = 7: 1.75 rounds to 2; 1 + 1 + 2 + 2 = 6: 1.5 rounds up to 2.
        let mut flat = vec![2u8; w * h * 3];
        flat[0] = 1;
        flat[3] = 1;
        flat[w * 3 + 6] = 1;
        let small = downsample(&flat);
        assert_eq!((small[0], small[3]), (2, 2));
    }
}
