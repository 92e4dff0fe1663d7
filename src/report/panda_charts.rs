//! Charts of a PanDA run, in the look of the run charts ([`super::charts`]): the wait from
//! `activated` to `running` per PanDA queue ([`queue_waits`], a box chart), and counts over
//! time drawn as steps — activated jobs per PQ, files queued per network link
//! ([`counts_over_time`]). [`step_series`] and [`top_series`] turn `+1`/`−1` events into those
//! steps, keeping the largest series and summing the rest as "others".

use super::axis::{Axis, TickFormat, format_hours};
use super::charts::{Line, extent};
use super::frame::{Rendered, render};
use super::scene::{LegendEntry, Sample, Scene, Shape};
use super::style::{ChartError, NO_DATA};

/// Input of [`queue_waits`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueWaits {
    /// Chart title.
    pub title: String,
    /// `(PQ, waits in seconds)`, in the order shown; negative and non-finite waits are ignored.
    pub queues: Vec<(String, Vec<f64>)>,
}

/// Input of [`counts_over_time`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CountsOverTime {
    /// Chart title.
    pub title: String,
    /// Y axis description, e.g. "activated jobs".
    pub y_label: String,
    /// End of the time axis in hours (extended if points go further).
    pub end_hours: f64,
    /// One line per series, points `(hours, count)` in time order.
    pub lines: Vec<Line>,
}

/// Most series a counts chart draws before summing the rest as "others".
pub const TOP_SERIES: usize = 8;
/// Most PQs a box chart shows (those with most waits).
pub const MAX_BOXES: usize = 16;
/// Above this many steps a series is drawn as the maximum of each of [`BINS`] time bins.
const MAX_STEPS: usize = 4000;
const BINS: usize = 2000;

const TIME_LABEL: &str = "simulated time [h]";

/// The wait of each PQ as a box: p25–p75 box, median line, whiskers to p5 and p95; the
/// y axis (hours) is logarithmic when the waits span more than two decades.
pub fn queue_waits(c: &QueueWaits) -> Result<Rendered, ChartError> {
    let queues: Vec<(&str, Vec<f64>)> = c
        .queues
        .iter()
        .map(|(name, secs)| {
            let mut h: Vec<f64> = secs.iter().filter(|s| s.is_finite() && **s >= 0.0).map(|s| s / 3600.0).collect();
            h.sort_by(f64::total_cmp);
            (name.as_str(), h)
        })
        .collect();
    // The axis covers what is drawn: p5 to p95 of each PQ.
    let drawn: Vec<f64> = queues
        .iter()
        .filter(|q| !q.1.is_empty())
        .flat_map(|q| [crate::metrics::percentile(&q.1, 0.05), crate::metrics::percentile(&q.1, 0.95)])
        .collect();
    let all = || drawn.iter().copied();
    let empty = drawn.is_empty();
    let max = all().fold(0.0, f64::max);
    let min_pos = all().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let log = min_pos.is_finite() && max / min_pos > 100.0;
    let y = if log {
        let y = Axis::log10("", min_pos.max(1.0 / 3600.0), max);
        let edge = 10f64.powf(y.range.0);
        let note = if all().any(|v| v < edge) {
            format!(", under {} at the bottom", format_hours(edge))
        } else {
            String::new()
        };
        Axis { label: format!("wait [h] (log scale{note})"), ..y }
    } else {
        Axis::linear("wait [h]", 0.0, max, 0.04, TickFormat::Plain)
    };
    let to_y = |h: f64| if log { h.log10().max(y.range.0) } else { h };
    let x = Axis::categories("PanDA queue", queues.iter().map(|q| q.0.to_string()).collect());
    let p = |v: &[f64], q: f64| to_y(crate::metrics::percentile(v, q));
    let mut shapes = Vec::new();
    let mut legend = Vec::new();
    for (i, (name, h)) in queues.iter().enumerate() {
        let detail = if h.is_empty() {
            NO_DATA.to_owned()
        } else {
            let xi = i as f64;
            let (p5, p25, p50, p75, p95) = (p(h, 0.05), p(h, 0.25), p(h, 0.5), p(h, 0.75), p(h, 0.95));
            let (l, r) = (xi - 0.3, xi + 0.3);
            shapes.push(Shape::ErrorBar { x: xi, lo: p5, hi: p25, color: i });
            shapes.push(Shape::ErrorBar { x: xi, lo: p75, hi: p95, color: i });
            shapes.push(Shape::Area { upper: vec![(l, p75), (r, p75)], lower: vec![(l, p25), (r, p25)], color: i });
            shapes.push(Shape::Line { points: vec![(l, p25), (r, p25), (r, p75), (l, p75), (l, p25)], color: i });
            shapes.push(Shape::Line { points: vec![(l, p50), (r, p50)], color: i });
            let pc = |q: f64| format_hours(crate::metrics::percentile(h, q));
            format!("n = {}, p50 {}, p95 {}", h.len(), pc(0.5), pc(0.95))
        };
        legend.push(LegendEntry { detail: Some(detail), ..LegendEntry::new(*name, i, Sample::Solid) });
    }
    let note = empty.then(|| NO_DATA.to_owned());
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None })
}

/// Counts over time, one step line per series.
pub fn counts_over_time(c: &CountsOverTime) -> Result<Rendered, ChartError> {
    let points: Vec<(f64, f64)> =
        c.lines.iter().flat_map(|l| l.points.iter().copied()).filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    let (lo, hi) = extent(points.iter().map(|p| p.0)).unwrap_or((0.0, 0.0));
    let end = if c.end_hours.is_finite() { c.end_hours } else { 0.0 };
    let x = Axis::hours(TIME_LABEL, lo.min(0.0), hi.max(end));
    let y_hi = extent(points.iter().map(|p| p.1)).map_or(0.0, |e| e.1);
    let y = Axis::linear(&c.y_label, 0.0, if y_hi > 0.0 { y_hi } else { 10.0 }, 0.04, TickFormat::Count);
    let mut shapes = Vec::new();
    let mut legend = Vec::new();
    for (color, line) in c.lines.iter().enumerate() {
        let pts: Vec<(f64, f64)> =
            line.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        if !pts.is_empty() {
            shapes.push(Shape::Line { points: pts, color });
        }
        legend.push(LegendEntry::new(&line.label, color, Sample::Solid));
    }
    let note = points.is_empty().then(|| NO_DATA.to_owned());
    render(&Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None })
}

/// Changes of a count: `(time in hours, +n/−n)`.
pub type Changes = Vec<(f64, i64)>;

/// A count over time from its changes `(time in hours, +n/−n)` (any order), as steps from 0 at
/// `start` to `end` (hours), and its peak. Above [`MAX_STEPS`] changes the steps are the
/// maximum of each of [`BINS`] equal bins, so peaks stay visible.
pub fn step_series(mut changes: Changes, start: f64, end: f64) -> (Vec<(f64, f64)>, i64) {
    changes.retain(|c| c.0.is_finite());
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let end = changes.last().map_or(end, |c| c.0.max(end));
    // The value after each distinct time.
    let mut steps: Vec<(f64, i64)> = Vec::new();
    let mut v = 0i64;
    for (t, d) in changes {
        v += d;
        match steps.last_mut() {
            Some(last) if last.0 == t => last.1 = v,
            _ => steps.push((t, v)),
        }
    }
    let peak = steps.iter().map(|s| s.1).max().unwrap_or(0).max(0);
    if steps.len() > MAX_STEPS && end > start {
        let width = (end - start) / BINS as f64;
        let mut bins = vec![0i64; BINS];
        let mut before = 0i64;
        let mut k = 0;
        for (b, slot) in bins.iter_mut().enumerate() {
            let hi = start + (b + 1) as f64 * width;
            // The value carried into the bin, and every value the bin takes.
            let mut m = before;
            while k < steps.len() && (steps[k].0 < hi || b == BINS - 1) {
                m = m.max(steps[k].1);
                before = steps[k].1;
                k += 1;
            }
            *slot = m;
        }
        steps = bins.iter().enumerate().map(|(b, &m)| (start + b as f64 * width, m)).collect();
    }
    let mut points = vec![(start, 0.0)];
    let mut prev = 0i64;
    for (t, v) in steps {
        if v != prev {
            points.push((t, prev as f64));
            points.push((t, v as f64));
            prev = v;
        }
    }
    points.push((end, prev as f64));
    (points, peak)
}

/// The [`TOP_SERIES`] series of largest peak (ties by name) as lines, the others summed as
/// one "others (N)" line. `series` are `(label, changes)` as [`step_series`] takes them.
pub fn top_series(series: Vec<(String, Changes)>, start: f64, end: f64) -> Vec<Line> {
    let mut peaked: Vec<(String, Changes, i64)> = series
        .into_iter()
        .map(|(label, changes)| {
            let peak = step_series(changes.clone(), start, end).1;
            (label, changes, peak)
        })
        .collect();
    peaked.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let rest: Vec<_> = if peaked.len() > TOP_SERIES { peaked.split_off(TOP_SERIES) } else { Vec::new() };
    let mut lines: Vec<Line> = peaked
        .into_iter()
        .map(|(label, changes, _)| Line { label, points: step_series(changes, start, end).0 })
        .collect();
    if !rest.is_empty() {
        let n = rest.len();
        let changes: Vec<(f64, i64)> = rest.into_iter().flat_map(|r| r.1).collect();
        lines.push(Line { label: format!("others ({n})"), points: step_series(changes, start, end).0 });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_start_at_zero_and_merge_simultaneous_changes() {
        let (points, peak) = step_series(vec![(2.0, -1), (1.0, 1), (1.0, 1), (3.0, -1)], 0.0, 5.0);
        assert_eq!(peak, 2);
        assert_eq!(
            points,
            vec![(0.0, 0.0), (1.0, 0.0), (1.0, 2.0), (2.0, 2.0), (2.0, 1.0), (3.0, 1.0), (3.0, 0.0), (5.0, 0.0)]
        );
    }

    #[test]
    fn many_steps_are_binned_by_their_maximum() {
        // A spike of one instant among 10 000 changes survives the binning.
        let mut changes: Vec<(f64, i64)> =
            (0..5000).flat_map(|i| [(f64::from(i) * 1e-3, 1), (f64::from(i) * 1e-3 + 5e-4, -1)]).collect();
        changes.push((2.5, 50));
        changes.push((2.5001, -50));
        let (points, peak) = step_series(changes, 0.0, 5.0);
        assert_eq!(peak, 51);
        assert!(points.len() <= 2 * BINS + 2, "{}", points.len());
        assert!(points.iter().any(|p| p.1 >= 50.0), "the spike is kept");
    }

    #[test]
    fn the_largest_peaks_are_kept_and_the_rest_summed() {
        let series: Vec<(String, Vec<(f64, i64)>)> =
            (0..10).map(|i| (format!("q{i}"), vec![(1.0, i64::from(i)), (2.0, -i64::from(i))])).collect();
        let lines = top_series(series, 0.0, 3.0);
        assert_eq!(lines.len(), TOP_SERIES + 1);
        assert_eq!(lines[0].label, "q9");
        assert_eq!(lines[TOP_SERIES].label, "others (2)");
        // q0 and q1 summed: peak 1.
        assert_eq!(lines[TOP_SERIES].points.iter().map(|p| p.1).fold(0.0, f64::max), 1.0);
    }
}
