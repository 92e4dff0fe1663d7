//! The common frame of every chart: fonts, title, axes, grid, legend, and the
//! rendering of a [`Scene`] to PNG and SVG.
//!
//! Charts only describe *what* to draw; this module decides *how*, so all charts
//! share one look. The same scene is drawn on both backends. The PNG is drawn at
//! twice the size and averaged down 2×2, which anti-aliases lines, markers and
//! text (plotters' bitmap backend does not); sizes below are in output pixels.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::Axis;
use super::charts::{ChartError, Rendered};
use super::legend::Legend;
use super::scene::{MarkerKind, Scene, Shape, palette};

/// Image width in pixels (16:9 slide).
pub(crate) const WIDTH: u32 = 1600;
/// Image height in pixels.
pub(crate) const HEIGHT: u32 = 900;
/// Supersampling factor of the PNG.
const SUPERSAMPLE: u32 = 2;

const TITLE_SIZE: f64 = 40.0;
const DESC_SIZE: f64 = 28.0;
const TICK_SIZE: f64 = 22.0;
pub(crate) const LEGEND_SIZE: f64 = 24.0;
pub(crate) const SMALL_SIZE: f64 = 20.0;
const NOTE_SIZE: f64 = 32.0;
const LINE_WIDTH: i32 = 3;
/// Dash and gap lengths of dashed lines.
const DASH: i32 = 18;
const GAP: i32 = 10;

pub(crate) const TEXT: RGBColor = RGBColor(30, 30, 30);
pub(crate) const MUTED: RGBColor = RGBColor(100, 100, 100);
const GRID: RGBColor = RGBColor(222, 222, 222);
const MINOR_GRID: RGBColor = RGBColor(240, 240, 240);
const SHADE: RGBColor = RGBColor(232, 232, 232);

static FONTS: Once = Once::new();
static FONTS_OK: AtomicBool = AtomicBool::new(false);

/// Registers the embedded DejaVu Sans fonts as "sans-serif" (once per process).
fn ensure_fonts() -> Result<(), ChartError> {
    FONTS.call_once(|| {
        let ok = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold()).is_ok();
        FONTS_OK.store(ok, Ordering::SeqCst);
    });
    if FONTS_OK.load(Ordering::SeqCst) {
        Ok(())
    } else {
        Err(ChartError::new("cannot load the embedded DejaVu Sans font"))
    }
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError::new(e.to_string())
    }
}

/// Renders `scene` to a PNG (in memory) and an SVG of the same logical size.
pub(crate) fn render(scene: &Scene) -> Result<Rendered, ChartError> {
    ensure_fonts()?;
    let (w, h) = (WIDTH * SUPERSAMPLE, HEIGHT * SUPERSAMPLE);
    let mut big = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut big, (w, h)).into_drawing_area();
        draw_scene(&Canvas::new(&root, SUPERSAMPLE), scene)?;
        root.present()?;
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw_scene(&Canvas::new(&root, 1), scene)?;
        root.present()?;
    }
    Ok(Rendered { png: encode_png(&downsample(&big))?, svg })
}

/// Averages each `SUPERSAMPLE`² block of the RGB image into one pixel.
fn downsample(big: &[u8]) -> Vec<u8> {
    let (s, w, h) = (SUPERSAMPLE as usize, WIDTH as usize, HEIGHT as usize);
    let mut out = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let sum: usize = (0..s * s)
                    .map(|i| usize::from(big[((y * s + i / s) * w * s + x * s + i % s) * 3 + c]))
                    .sum();
                out[(y * w + x) * 3 + c] = ((sum + s * s / 2) / (s * s)) as u8;
            }
        }
    }
    out
}

fn encode_png(rgb: &[u8]) -> Result<Vec<u8>, ChartError> {
    use image::ImageEncoder;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(rgb, WIDTH, HEIGHT, image::ColorType::Rgb8)
        .map_err(|e| ChartError::new(format!("PNG encoding failed: {e}")))?;
    Ok(png)
}

/// The whole image as a drawing surface. Coordinates are backend pixels; sizes
/// given in output pixels (constants above) are scaled with [`Canvas::px`].
pub(crate) struct Canvas<'a, DB: DrawingBackend> {
    root: &'a DrawingArea<DB, Shift>,
    scale: i32,
    /// Width of the backend in backend pixels.
    pub(crate) width: i32,
}

impl<'a, DB: DrawingBackend> Canvas<'a, DB> {
    fn new(root: &'a DrawingArea<DB, Shift>, scale: u32) -> Self {
        let scale = scale as i32;
        Self { root, scale, width: WIDTH as i32 * scale }
    }

    /// Output pixels to backend pixels.
    pub(crate) fn px(&self, v: i32) -> i32 {
        v * self.scale
    }

    fn font(&self, size: f64, color: RGBColor) -> TextStyle<'static> {
        ("sans-serif", size * f64::from(self.scale)).into_font().color(&color)
    }

    pub(crate) fn text_width(&self, text: &str, size: f64) -> Result<i32, ChartError> {
        let (w, _) = self.root.estimate_text_size(text, &self.font(size, TEXT))?;
        Ok(w as i32)
    }

    /// `text`, cut and ended with "…" until it is at most `max_w` wide.
    pub(crate) fn fit_text(&self, text: &str, size: f64, max_w: i32) -> Result<String, ChartError> {
        let mut chars: Vec<char> = text.chars().collect();
        let mut candidate = text.to_owned();
        while !chars.is_empty() && self.text_width(&candidate, size)? > max_w {
            chars.pop();
            candidate = chars.iter().collect::<String>().trim_end().to_owned() + "…";
        }
        Ok(candidate)
    }

    pub(crate) fn text(
        &self,
        text: &str,
        size: f64,
        color: RGBColor,
        anchor: Pos,
        at: (i32, i32),
    ) -> Result<(), ChartError> {
        Ok(self.root.draw_text(text, &self.font(size, color).pos(anchor), at)?)
    }

    pub(crate) fn rect(&self, corners: [(i32, i32); 2], style: ShapeStyle) -> Result<(), ChartError> {
        Ok(self.root.draw(&Rectangle::new(corners, style))?)
    }

    /// Thick solid polyline.
    pub(crate) fn line(&self, points: &[(i32, i32)], color: RGBColor) -> Result<(), ChartError> {
        let style = color.stroke_width(self.px(LINE_WIDTH) as u32);
        Ok(self.root.draw(&PathElement::new(points.to_vec(), style))?)
    }

    /// Horizontal dashes from `x0` to `x1` at row `y`. With `slots.1` lines on the
    /// same row the pattern is one dash per line and then a gap; this line draws
    /// dash number `slots.0`. `thick` selects the data line width, else 1 px.
    pub(crate) fn dashes(
        &self,
        (x0, x1): (i32, i32),
        y: i32,
        (slot, slots): (usize, usize),
        color: RGBColor,
        thick: bool,
    ) -> Result<(), ChartError> {
        let width = if thick { self.px(LINE_WIDTH) } else { self.px(1) };
        let (dash, gap) = if thick { (DASH, GAP) } else { (DASH / 2, GAP / 2) };
        let (dash, gap) = (self.px(dash), self.px(gap));
        let mut start = x0 + dash * slot as i32;
        while start < x1 {
            let end = (start + dash).min(x1);
            let path = PathElement::new(vec![(start, y), (end, y)], color.stroke_width(width as u32));
            self.root.draw(&path)?;
            start += dash * slots as i32 + gap;
        }
        Ok(())
    }

    fn marker(&self, (x, y): (i32, i32), color: RGBColor, kind: MarkerKind) -> Result<(), ChartError> {
        // A white halo keeps the marker readable on top of its own line.
        for (r, c) in [(self.px(10), WHITE), (self.px(7), color)] {
            match kind {
                MarkerKind::Circle => self.root.draw(&Circle::new((x, y), r, c.filled()))?,
                MarkerKind::Diamond => {
                    let r = r * 4 / 3;
                    let pts = vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)];
                    self.root.draw(&Polygon::new(pts, c.filled()))?
                }
            }
        }
        Ok(())
    }
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
        // `as` saturates (NaN → 0), so odd values cannot panic here.
        from + (f64::from(to - from) * (v - lo) / (hi - lo)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.0.minor.clone()
        } else {
            self.0.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.range.0..self.0.range.1
    }
}

fn draw_scene<DB: DrawingBackend>(c: &Canvas<'_, DB>, scene: &Scene) -> Result<(), ChartError> {
    c.root.fill(&WHITE)?;
    let body_top = draw_title(c, &scene.title)?;
    let legend = Legend::new(c, &scene.legend)?;
    let (_, body) = c.root.split_vertically(body_top);
    let (chart_area, _) = body.split_horizontally(c.width - legend.width);

    let (x, y) = (&scene.x, &scene.y);
    let mut y_tick_w = 0;
    for t in &y.ticks {
        y_tick_w = y_tick_w.max(c.text_width(&y.format_tick(*t), TICK_SIZE)?);
    }
    let mut guide_w = 0;
    for shape in &scene.shapes {
        if let Shape::Guide { label, .. } = shape {
            guide_w = guide_w.max(c.text_width(label, SMALL_SIZE)? + c.px(24));
        }
    }
    let mut chart = ChartBuilder::on(&chart_area)
        .margin_top(c.px(12))
        .margin_bottom(c.px(8))
        .margin_left(c.px(16))
        .margin_right(guide_w.max(c.px(36)))
        .x_label_area_size(c.px(TICK_SIZE as i32 + DESC_SIZE as i32 + 36))
        .y_label_area_size(y_tick_w + c.px(DESC_SIZE as i32 + 32))
        .build_cartesian_2d(AxisCoord(x), AxisCoord(y))?;
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (left, top, right, bottom) = (xr.start, yr.start, xr.end - 1, yr.end - 1);
    let coord = chart.as_coord_spec().clone();
    let to_px = |p: (f64, f64)| {
        let (px, py) = coord.translate(&p);
        (px.clamp(left, right), py.clamp(top, bottom))
    };
    let row = |v: f64| to_px((x.range.0, v)).1;

    // Bands go below the grid, everything else above it.
    for shape in &scene.shapes {
        if let Shape::Band { x0, x1, .. } = shape {
            c.rect([(to_px((*x0, 0.0)).0, top), (to_px((*x1, 0.0)).0, bottom)], SHADE.filled())?;
        }
    }
    chart
        .configure_mesh()
        .bold_line_style(GRID.stroke_width(c.px(1) as u32))
        .light_line_style(MINOR_GRID.stroke_width(c.px(1) as u32))
        .axis_style(MUTED.stroke_width(c.px(2) as u32))
        .set_all_tick_mark_size(c.px(8))
        .x_label_offset(0)
        .label_style(c.font(TICK_SIZE, TEXT))
        .axis_desc_style(c.font(DESC_SIZE, TEXT))
        .x_desc(x.label.as_str())
        .y_desc(y.label.as_str())
        .x_label_formatter(&|v| x.format_tick(*v))
        .y_label_formatter(&|v| y.format_tick(*v))
        .draw()?;

    let slots = dash_slots(&scene.shapes, row);
    let left_center = Pos::new(HPos::Left, VPos::Center);
    for (shape, slot) in scene.shapes.iter().zip(slots) {
        match shape {
            Shape::Band { x0, x1, label } => {
                draw_band_label(c, label, (to_px((*x0, 0.0)).0, to_px((*x1, 0.0)).0), top)?
            }
            Shape::Line { points, color } => {
                let px: Vec<_> = points.iter().map(|p| to_px(*p)).collect();
                if let [single] = px[..] {
                    c.root.draw(&Circle::new(single, c.px(5), palette(*color).filled()))?;
                } else {
                    c.line(&px, palette(*color))?;
                }
            }
            Shape::DashedH { y: v, color } => {
                c.dashes((left, right), row(*v), slot, palette(*color), true)?
            }
            Shape::Guide { y: v, label } => {
                c.dashes((left, right), row(*v), (0, 1), MUTED, false)?;
                c.text(label, SMALL_SIZE, MUTED, left_center, (right + c.px(10), row(*v)))?;
            }
            Shape::Marker { at, color, kind } => c.marker(to_px(*at), palette(*color), *kind)?,
        }
    }
    if let Some(note) = &scene.note {
        let center = Pos::new(HPos::Center, VPos::Center);
        c.text(note, NOTE_SIZE, MUTED, center, ((left + right) / 2, (top + bottom) / 2))?;
    }
    legend.draw(c, top)
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
