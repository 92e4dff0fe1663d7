//! Thick anti-aliased polylines for the bitmap backend, one blend per pixel.
//!
//! A thick line is the union of capsules (a segment widened by a radius, with round ends and
//! joints). Each pixel within half a pixel of it is covered by `radius + ½ − d`, clamped to
//! [0, 1], where `d` is the distance from the pixel's centre to the nearest segment: a
//! one-pixel ramp across the edge, the same at every slope. Coordinates are backend pixels,
//! the line passing through the given points as pixel corners, as an SVG stroke does; pixel
//! `(i, j)` has its centre at `(i + ½, j + ½)`.
//!
//! This replaces stamping the line with a disk of one-pixel anti-aliased plotters lines (32
//! of them for the PNG's 6-pixel line): every pixel was blended up to 32 times, a third of
//! the instructions of a 1 000-job replay's whole run. A pixel near several segments (a time
//! series has several per pixel column) takes the largest coverage, kept in a per-thread
//! byte per pixel of the image instead of sorting the hits.

use std::cell::RefCell;

use plotters::element::{Drawable, PointCollection};
use plotters_backend::{BackendColor, BackendCoord, DrawingBackend, DrawingErrorKind};

thread_local! {
    /// One byte per image pixel, all zero between calls of [`Covered::line`].
    static GRID: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Pixels blended once each with one colour at their own coverage, drawn as a single
/// plotters element.
pub(crate) struct Covered {
    pub(crate) pixels: Vec<(i32, i32)>,
    /// In 256ths, as the bitmap backend blends: `q` stands for `q / 256` (1 to 254) and 255 for
    /// full (the backend paints any alpha of at least 255/256 without blending).
    pub(crate) coverage: Vec<u8>,
    pub(crate) rgb: (u8, u8, u8),
}

impl Covered {
    /// The thick polyline through `points` of `radius` in colour `rgb`: its pixels inside
    /// `(0, 0)`–`size` (exclusive), each once, in the order first reached.
    pub(crate) fn line(points: &[(i32, i32)], radius: f64, size: (i32, i32), rgb: (u8, u8, u8)) -> Self {
        let (w, h) = (size.0.max(0) as usize, size.1.max(0) as usize);
        GRID.with_borrow_mut(|grid| {
            if grid.len() < w * h {
                grid.resize(w * h, 0);
            }
            let mut touched: Vec<u32> = Vec::new();
            for pair in points.windows(2) {
                segment(pair[0], pair[1], radius, (w, h), grid, &mut touched);
            }
            let pixels = touched.iter().map(|&k| ((k as usize % w) as i32, (k as usize / w) as i32)).collect();
            let coverage = touched.iter().map(|&k| std::mem::take(&mut grid[k as usize])).collect();
            Self { pixels, coverage, rgb }
        })
    }
}

/// Raises `grid[row × width + column]` to the coverage of the capsule of `a`–`b` (as in
/// [`Covered::coverage`]) for each pixel it covers, listing in `touched` those it reaches first. Walks
/// the segment's longer axis; across it, only the pixels within reach of the part of the
/// segment near that column (or row) are measured, and none already full.
fn segment(a: (i32, i32), b: (i32, i32), radius: f64, (w, h): (usize, usize), grid: &mut [u8], touched: &mut Vec<u32>) {
    let reach = radius + 0.5;
    let (a, b) = ((f64::from(a.0), f64::from(a.1)), (f64::from(b.0), f64::from(b.1)));
    // `u` is the longer axis, `v` the other.
    let x_major = (b.0 - a.0).abs() >= (b.1 - a.1).abs();
    let (ua, va, ub, vb) = if x_major { (a.0, a.1, b.0, b.1) } else { (a.1, a.0, b.1, b.0) };
    let (u_len, v_len) = if x_major { (w, h) } else { (h, w) };
    let slope = if ub == ua { 0.0 } else { (vb - va) / (ub - ua) };
    let (u_min, u_max) = (ua.min(ub), ua.max(ub));
    let v_at = |u: f64| va + (u - ua) * slope;
    // Squared distances beyond which a pixel gets nothing, within which it is full.
    let (none2, full2) = (reach * reach, if reach > 1.0 { (reach - 1.0) * (reach - 1.0) } else { -1.0 });
    let first = ((u_min - reach - 0.5).floor()).max(0.0) as i64;
    let last = ((u_max + reach - 0.5).ceil()).min(u_len as f64 - 1.0) as i64;
    for i in first..=last {
        let cu = i as f64 + 0.5;
        // The segment's extent across, over the part of it within reach of this column.
        let (lo, hi) = ((cu - reach).max(u_min), (cu + reach).min(u_max));
        let (lo, hi) = if lo <= hi {
            (lo, hi)
        } else if cu < u_min {
            (u_min, u_min)
        } else {
            (u_max, u_max)
        };
        let (v0, v1) = (v_at(lo), v_at(hi));
        let j_first = ((v0.min(v1) - reach - 0.5).floor()).max(0.0) as i64;
        let j_last = ((v0.max(v1) + reach - 0.5).ceil()).min(v_len as f64 - 1.0) as i64;
        for j in j_first..=j_last {
            let (x, y) = if x_major { (i, j) } else { (j, i) };
            let k = y as usize * w + x as usize;
            if grid[k] == u8::MAX {
                continue;
            }
            let d2 = distance2((x as f64 + 0.5, y as f64 + 0.5), a, b);
            // In 256ths, saturating: a full pixel (and anything of 255/256 or more) is 255.
            let q = if d2 >= none2 {
                0
            } else if d2 <= full2 {
                u8::MAX
            } else {
                ((reach - d2.sqrt()).min(1.0) * 256.0) as u8
            };
            if q > 0 {
                if grid[k] == 0 {
                    touched.push(k as u32);
                }
                grid[k] = grid[k].max(q);
            }
        }
    }
}

/// Squared distance from `p` to the segment `a`–`b`.
fn distance2(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 { 0.0 } else { (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0) };
    let (qx, qy) = (a.0 + t * dx, a.1 + t * dy);
    (p.0 - qx).powi(2) + (p.1 - qy).powi(2)
}

impl<'a> PointCollection<'a, (i32, i32)> for &'a Covered {
    type Point = &'a (i32, i32);
    type IntoIter = &'a [(i32, i32)];
    fn point_iter(self) -> Self::IntoIter {
        &self.pixels
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Covered {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        points: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        for (p, &q) in points.zip(&self.coverage) {
            // q / 256 is exact: the backend's blend weight `floor(alpha × 256)` is q again.
            backend.draw_pixel(p, BackendColor { alpha: f64::from(q) / 256.0, rgb: self.rgb })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLUE: (u8, u8, u8) = (0, 0, 255);

    fn coverage(points: &[(i32, i32)], radius: f64, size: (i32, i32)) -> Vec<((i32, i32), u8)> {
        let c = Covered::line(points, radius, size, BLUE);
        c.pixels.into_iter().zip(c.coverage).collect()
    }

    fn at(cov: &[((i32, i32), u8)], p: (i32, i32)) -> u8 {
        cov.iter().find(|(q, _)| *q == p).map_or(0, |c| c.1)
    }

    /// Coverage in 256ths as [`segment`] quantises it.
    fn q(c: f64) -> u8 {
        (c.min(1.0) * 256.0) as u8
    }

    #[test]
    fn a_flat_line_covers_its_width_with_a_one_pixel_ramp() {
        // Radius 3 through y = 10 (a pixel corner): rows 7..=12 are full (centres within
        // 2.5), rows 6 and 13 at distance 3.5 get nothing.
        let cov = coverage(&[(10, 10), (30, 10)], 3.0, (100, 100));
        for j in 7..=12 {
            assert_eq!(at(&cov, (20, j)), 255, "row {j}");
        }
        assert_eq!(at(&cov, (20, 6)), 0);
        assert_eq!(at(&cov, (20, 13)), 0);
        // Radius 2.7: rows 7 and 12 (centres 2.5 away) are covered 0.7, 179/256.
        let thin = coverage(&[(10, 10), (30, 10)], 2.7, (100, 100));
        assert_eq!((at(&thin, (20, 7)), at(&thin, (20, 12))), (179, 179));
        // Round ends: past the end (30, 10), pixel 31's centre is 1.58 away, 32's 2.55
        // (covered 0.95, 243/256), 33's 3.54 (not at all).
        assert_eq!(at(&cov, (31, 10)), 255);
        assert_eq!(at(&cov, (32, 10)), 243);
        assert_eq!(at(&cov, (33, 10)), 0);
    }

    #[test]
    fn every_slope_covers_the_same_width() {
        // The covered area per unit length is the same (2 × radius) whatever the direction,
        // unlike a polygon fill of thick steep segments.
        let area = |b: (i32, i32)| -> f64 {
            let len = f64::from(b.0 - 200).hypot(f64::from(b.1 - 200));
            let cov = coverage(&[(200, 200), b], 3.0, (600, 600));
            // Less the two round ends (π r²).
            (cov.iter().map(|c| f64::from(c.1) / 256.0).sum::<f64>() - std::f64::consts::PI * 9.0) / len
        };
        let flat = area((400, 200));
        assert!((flat - 6.0).abs() < 0.1, "{flat}");
        for b in [(400, 260), (400, 400), (260, 400), (200, 400), (120, 390), (10, 250)] {
            let a = area(b);
            assert!((a - flat).abs() < 0.05 * flat, "{b:?}: {a} vs flat {flat}");
        }
    }

    #[test]
    fn pixels_come_once_each_inside_the_image_with_the_nearest_segment_coverage() {
        // A zig-zag whose joints overlap, running off the image on both sides.
        let pts = [(-20, 5), (15, 40), (30, 3), (45, 38), (80, -10)];
        let cov = coverage(&pts, 3.0, (60, 30));
        let mut keys: Vec<(i32, i32)> = cov.iter().map(|c| c.0).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), cov.len(), "each pixel once");
        assert!(cov.iter().all(|((x, y), _)| (0..60).contains(x) && (0..30).contains(y)));
        // The joint (30, 3) is covered fully.
        assert_eq!(at(&cov, (30, 3)), 255);
        // Agrees with the brute force over the whole image.
        let f = |p: (i32, i32)| (f64::from(p.0), f64::from(p.1));
        for y in 0..30 {
            for x in 0..60 {
                let centre = (f64::from(x) + 0.5, f64::from(y) + 0.5);
                let d =
                    pts.windows(2).map(|s| distance2(centre, f(s[0]), f(s[1]))).fold(f64::INFINITY, f64::min).sqrt();
                assert_eq!(at(&cov, (x, y)), q(3.5 - d), "({x}, {y})");
            }
        }
        // The grid is left clean: the same call gives the same pixels.
        assert_eq!(coverage(&pts, 3.0, (60, 30)), cov);
    }

    #[test]
    fn a_single_point_draws_nothing_and_a_repeated_one_a_dot() {
        assert!(coverage(&[(5, 5)], 3.0, (20, 20)).is_empty());
        let dot = coverage(&[(5, 5), (5, 5)], 3.0, (20, 20));
        assert_eq!(at(&dot, (5, 5)), 255);
        assert_eq!(at(&dot, (4, 4)), 255);
        assert_eq!(at(&dot, (9, 5)), 0);
    }
}
