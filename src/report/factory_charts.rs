//! Charts of a run with pilot factories (seed 003), in the look of the run
//! charts ([`super::charts`]):
//!
//! - [`factory_throughput`]: jobs finished per hour in each factory's pilots, beside the
//!   factory's closed form (dashed) — the seed's efficiency argument: a generic pilot factory
//!   finishes x/(Tsw + tp + tpw + Tj) jobs per hour, a startd factory more;
//! - `factory_waits`: the wait to start of the jobs each factory's pilots ran, per job kind,
//!   drawn by [`wait_time_distribution`] — the seed's analysis argument: analysis jobs wait far
//!   less on startd pilots that keep a VM for analysis;
//! - [`factory_standby`]: the standby startd pilots queued after each Generator cycle, against
//!   the standby policy's target (dashed).
//!
//! [`factory_charts`] builds them from a run: the inputs come from `summary.json`'s `factory`
//! sections (labels, closed forms), `pilots.parquet`'s `factory` column (which factory owns a
//! pilot) and the `factory_cycles` table (standby per cycle). Everything is in factory order
//! (the scenario's) or in sorted order, never in hash order, so the charts are deterministic.

use std::collections::BTreeMap;

use super::axis::{Axis, TickFormat, format_hours};
use super::charts::{WaitTimes, extent, runs, wait_time_distribution};
use super::frame::{Rendered, render};
use super::scene::{LegendEntry, Sample, Scene, Shape};
use super::style::{ChartError, NO_DATA};
use crate::metrics::{ExtraColumn, ExtraValues, RunData};
use crate::workload::{Job, JobKind, JobStatus};

/// Name of the table of startd Generator cycles (`factory_cycles.parquet`).
pub const CYCLES_TABLE: &str = "factory_cycles";

const TIME_LABEL: &str = "simulated time [h]";
/// `(x, y)` points of a line: `(time in hours, value)`.
type Points = Vec<(f64, f64)>;
/// Above this many changes, levels are drawn as means over time bins (see [`level_steps`]):
/// about one change per two pixel columns of the plot.
const MAX_STEPS: usize = 500;
/// Most bins of a binned level: steps about three pixels wide.
const MAX_BINS: usize = 400;

/// Input of [`factory_throughput`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FactoryThroughput {
    /// Chart title.
    pub title: String,
    /// End of the time axis in hours (extended if points go further).
    pub end_hours: f64,
    /// One entry per factory; the order fixes the colours.
    pub factories: Vec<FactoryRate>,
}

/// One factory of a [`FactoryThroughput`] chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FactoryRate {
    /// Legend label, `<kind>@<site>`.
    pub label: String,
    /// `(bin centre in hours, jobs finished per hour)`, as [`hourly_rate`] gives them.
    pub points: Vec<(f64, f64)>,
    /// The closed form's jobs per hour, drawn dashed; `None` where it does not apply.
    pub closed_form: Option<f64>,
    /// The simulated jobs per hour over the second half of the run (the steady state the
    /// closed form describes), shown under the label.
    pub second_half: Option<f64>,
}

/// Input of [`factory_standby`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FactoryStandby {
    /// Chart title.
    pub title: String,
    /// End of the time axis in hours (extended if points go further).
    pub end_hours: f64,
    /// One entry per startd factory.
    pub factories: Vec<StandbyLevel>,
}

/// One startd factory of a [`FactoryStandby`] chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StandbyLevel {
    /// Legend label, `<kind>@<site>`.
    pub label: String,
    /// Palette index: the factory's position among all factories of the run, so that it has
    /// the same colour as in [`factory_throughput`].
    pub color: usize,
    /// `(time in hours, standby pilots)` after each cycle, any order.
    pub standby: Vec<(f64, f64)>,
    /// `(time in hours, target)` of the standby policy at each cycle, any order.
    pub target: Vec<(f64, f64)>,
}

/// Jobs finished per hour in each factory's pilots (solid, 1-hour bins), with the factory's
/// closed form as a dashed line of the same colour where it has one.
pub fn factory_throughput(c: &FactoryThroughput) -> Result<Rendered, ChartError> {
    render(&throughput_scene(c))
}

/// The scene of [`factory_throughput`].
fn throughput_scene(c: &FactoryThroughput) -> Scene {
    let points: Vec<(f64, f64)> = c.factories.iter().flat_map(|f| runs(&f.points)).flatten().collect();
    let forms = || c.factories.iter().filter_map(|f| f.closed_form).filter(|v| v.is_finite());
    let x = time_axis(c.end_hours, &points);
    let y_hi = extent(points.iter().map(|p| p.1).chain(forms())).map_or(0.0, |e| e.1);
    let y = Axis::linear("jobs finished per hour", 0.0, if y_hi > 0.0 { y_hi } else { 10.0 }, 0.06, TickFormat::Count);
    let mut shapes = Vec::new();
    let mut legend = Vec::new();
    for (color, f) in c.factories.iter().enumerate() {
        for run in runs(&f.points) {
            shapes.push(Shape::Line { points: run, color });
        }
        let detail = f.second_half.filter(|v| v.is_finite()).map(|v| format!("second half: {} jobs/h", rate(v)));
        legend.push(LegendEntry { detail, ..LegendEntry::new(&f.label, color, Sample::Solid) });
        if let Some(v) = f.closed_form.filter(|v| v.is_finite()) {
            let entry = LegendEntry::new(&f.label, color, Sample::Dashed);
            legend.push(LegendEntry {
                suffix: " closed form".into(),
                detail: Some(format!("{} jobs/h", rate(v))),
                ..entry
            });
        }
    }
    // Closed forms on top of every line, so that no factory's line hides them.
    for (color, f) in c.factories.iter().enumerate() {
        if let Some(y) = f.closed_form.filter(|v| v.is_finite()) {
            shapes.push(Shape::DashedH { y, color });
        }
    }
    let note = points.is_empty().then(|| NO_DATA.to_owned());
    Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None }
}

/// Standby pilots of each startd factory over time (solid steps) and the standby policy's
/// target (dashed steps of the same colour). When a line changes more than [`MAX_STEPS`]
/// times, every line is drawn as its mean per time bin (see [`level_steps`]), and the y axis
/// says so.
pub fn factory_standby(c: &FactoryStandby) -> Result<Rendered, ChartError> {
    render(&standby_scene(c))
}

/// The scene of [`factory_standby`].
fn standby_scene(c: &FactoryStandby) -> Scene {
    let changes: Vec<[Points; 2]> = c.factories.iter().map(|f| [changes(&f.standby), changes(&f.target)]).collect();
    let all = || changes.iter().flatten().flatten();
    // One bin width for every line of the chart, when one of them changes too often.
    let bin = match extent(all().map(|p| p.0)) {
        Some((lo, hi)) if changes.iter().flatten().any(|c| c.len() > MAX_STEPS) => {
            let end = if c.end_hours.is_finite() { c.end_hours.max(hi) } else { hi };
            Some(bin_hours(end - lo))
        }
        _ => None,
    };
    let levels: Vec<(Points, Points)> =
        changes.iter().map(|[s, t]| (level_steps(s, c.end_hours, bin), level_steps(t, c.end_hours, bin))).collect();
    let points: Vec<(f64, f64)> = levels.iter().flat_map(|(s, t)| s.iter().chain(t)).copied().collect();
    let x = time_axis(c.end_hours, &points);
    let y_hi = extent(points.iter().map(|p| p.1)).map_or(0.0, |e| e.1);
    let y_label = match bin {
        Some(h) if h < 1.0 => format!("standby pilots, mean per {:.0} min", h * 60.0),
        Some(h) => format!("standby pilots, mean per {}", format_hours(h)),
        None => "standby pilots (queued, not started)".to_owned(),
    };
    let y = Axis::linear(&y_label, 0.0, if y_hi > 0.0 { y_hi } else { 10.0 }, 0.06, TickFormat::Count);
    let mut shapes = Vec::new();
    let mut legend = Vec::new();
    for (f, (standby, target)) in c.factories.iter().zip(&levels) {
        if !standby.is_empty() {
            shapes.push(Shape::Line { points: standby.clone(), color: f.color });
        }
        legend.push(LegendEntry::new(&f.label, f.color, Sample::Solid));
        if !target.is_empty() {
            let entry = LegendEntry::new(&f.label, f.color, Sample::Dashed);
            legend.push(LegendEntry { suffix: " target".into(), ..entry });
        }
    }
    // Targets on top, as in the share-convergence chart.
    for (f, (_, target)) in c.factories.iter().zip(&levels) {
        if !target.is_empty() {
            shapes.push(Shape::DashedLine { points: target.clone(), color: f.color });
        }
    }
    let note = points.is_empty().then(|| NO_DATA.to_owned());
    Scene { title: c.title.clone(), x, y, shapes, legend, note, colorbar: None }
}

/// Time axis from `min(0, first x)` to `max(end_hours, last x)`.
fn time_axis(end_hours: f64, points: &[(f64, f64)]) -> Axis {
    let (lo, hi) = extent(points.iter().map(|p| p.0)).unwrap_or((0.0, 0.0));
    let end = if end_hours.is_finite() { end_hours } else { 0.0 };
    Axis::hours(TIME_LABEL, lo.min(0.0), hi.max(end))
}

/// A rate for the legend: two decimals below 100 per hour (the closed forms of seed 003 differ
/// from the simulated rates in the first decimal), one below 1000, none above.
fn rate(v: f64) -> String {
    match v.abs() {
        a if a < 100.0 => format!("{v:.2}"),
        a if a < 1000.0 => format!("{v:.1}"),
        _ => format!("{v:.0}"),
    }
}

/// Jobs per hour from their end times (hours, any order): counted in 1-hour bins from 0 to
/// `end_hours` (or to the last end, if later), each bin as `(its centre, count / its width)`.
/// A last, shorter bin is scaled to its width. Negative and non-finite times are ignored;
/// nothing for a run of no length.
pub fn hourly_rate(ends: &[f64], end_hours: f64) -> Vec<(f64, f64)> {
    let ends: Vec<f64> = ends.iter().copied().filter(|t| t.is_finite() && *t >= 0.0).collect();
    let span = ends.iter().copied().fold(if end_hours.is_finite() { end_hours.max(0.0) } else { 0.0 }, f64::max);
    if span <= 0.0 {
        return Vec::new();
    }
    // The cap only matters for absurd inputs: a year is 8 760 bins.
    let bins = span.ceil().min(1e6) as usize;
    let mut counts = vec![0u64; bins];
    for t in ends {
        // A job ending exactly at the end of the run counts in the last bin.
        counts[(t.floor() as usize).min(bins - 1)] += 1;
    }
    counts
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let (lo, hi) = (k as f64, ((k + 1) as f64).min(span));
            ((lo + hi) / 2.0, n as f64 / (hi - lo))
        })
        .collect()
}

/// A level sampled at `samples` (`(time in hours, value)`, any order; non-finite samples
/// ignored), reduced to its changes in time order: the first sample, then each sample whose
/// value differs from the one before.
fn changes(samples: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut samples: Vec<(f64, f64)> =
        samples.iter().copied().filter(|(t, v)| t.is_finite() && v.is_finite()).collect();
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut changes: Vec<(f64, f64)> = Vec::new();
    for (t, v) in samples {
        if changes.last().is_none_or(|last| last.1 != v) {
            changes.push((t, v));
        }
    }
    changes
}

/// The bin width (hours) of levels with more than [`MAX_STEPS`] changes over `span` hours:
/// the shortest round duration that gives at most [`MAX_BINS`] bins.
fn bin_hours(span: f64) -> f64 {
    const MINUTES: [f64; 10] = [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 360.0, 1440.0];
    let fits = |m: &&f64| span / (**m / 60.0) <= MAX_BINS as f64;
    MINUTES.iter().find(fits).map_or(span / MAX_BINS as f64, |m| m / 60.0)
}

/// A level's `changes` (see [`changes`]) as a step line from its first change, held until
/// `end` hours (or the last change). With `bin: Some(hours)`, as the level's time-weighted
/// mean in bins of that width (aligned on multiples of it), drawn as steps: thousands of
/// Generator cycles that move the level up and down by a pilot or two would draw a solid
/// band, hiding the target behind it, where the mean shows how the level follows the target.
pub fn level_steps(changes: &[(f64, f64)], end: f64, bin: Option<f64>) -> Vec<(f64, f64)> {
    let (Some(&(start, first)), Some(&(last_t, last_v))) = (changes.first(), changes.last()) else {
        return Vec::new();
    };
    let stop = if end.is_finite() { end.max(last_t) } else { last_t };
    let mut points = Vec::new();
    let width = bin.filter(|w| w.is_finite() && *w > 0.0 && stop > start);
    let Some(width) = width else {
        let mut prev = first;
        for (i, &(t, v)) in changes.iter().enumerate() {
            if i > 0 {
                points.push((t, prev));
            }
            points.push((t, v));
            prev = v;
        }
        points.push((stop, last_v));
        return points;
    };
    let first_bin = (start / width).floor();
    let bins = (((stop - start) / width).ceil() as usize + 1).min(10 * MAX_BINS);
    // `k`: the change in effect at the current time `at`.
    let (mut k, mut at) = (0, start);
    for b in 0..bins {
        let hi = ((first_bin + (b + 1) as f64) * width).min(stop);
        if hi <= at {
            continue;
        }
        let lo = at;
        let mut sum = 0.0;
        while k + 1 < changes.len() && changes[k + 1].0 < hi {
            sum += changes[k].1 * (changes[k + 1].0 - at);
            at = changes[k + 1].0;
            k += 1;
        }
        sum += changes[k].1 * (hi - at);
        at = hi;
        let mean = sum / (hi - lo);
        if let Some(last) = points.last().copied() {
            points.push((lo, last.1));
        }
        points.push((lo, mean));
        if hi >= stop {
            break;
        }
    }
    if let Some(last) = points.last().copied() {
        points.push((stop, last.1));
    }
    points
}

/// One factory as the charts see it.
#[derive(Debug, Clone, PartialEq)]
struct Factory {
    label: String,
    closed_form: Option<f64>,
    second_half: Option<f64>,
}

/// The factories of a run and which one owns each pilot.
struct Factories {
    /// In scenario order. Factories of the same label (same kind and site) are one entry, with
    /// their rates summed: the pilots' `factory` column cannot tell them apart.
    list: Vec<Factory>,
    /// Per pilot id, the index in `list` of its factory.
    owner: Vec<Option<usize>>,
}

impl Factories {
    fn of(run: &RunData) -> Self {
        let mut list: Vec<Factory> = Vec::new();
        for (i, s) in run.factory_summaries.iter().enumerate() {
            let label = match (s["kind"].as_str(), s["site"].as_str()) {
                (Some(kind), Some(site)) => format!("{kind}@{site}"),
                _ => format!("factory {i}"),
            };
            // Drawn only where its premise held (`closed_form_applies`; absent in older runs).
            let applies = s.get("closed_form_applies").and_then(serde_json::Value::as_bool) != Some(false);
            let closed_form =
                s.get("closed_form_jobs_per_hour").and_then(serde_json::Value::as_f64).filter(|_| applies);
            let second_half = s.get("jobs_per_hour_second_half").and_then(serde_json::Value::as_f64);
            match list.iter_mut().find(|f| f.label == label) {
                Some(f) => {
                    f.closed_form = f.closed_form.zip(closed_form).map(|(a, b)| a + b);
                    f.second_half = f.second_half.zip(second_half).map(|(a, b)| a + b);
                }
                None => list.push(Factory { label, closed_form, second_half }),
            }
        }
        // `grid.pilots` is indexed by pilot id (`Grid::pilot`), and the column has one value
        // per pilot in that order: row i is pilot i.
        let column = run.pilot_columns.iter().find(|c| c.name == "factory");
        let owner = match column {
            Some(c) => (0..column_len(c))
                .map(|row| text(c, row).and_then(|l| list.iter().position(|f| f.label == l)))
                .collect(),
            None => Vec::new(),
        };
        Self { list, owner }
    }

    /// The index of the factory whose pilot ran `job`, if any.
    fn of_job(&self, job: &Job) -> Option<usize> {
        job.pilot().and_then(|p| self.owner.get(p as usize).copied().flatten())
    }
}

fn title(what: &str, run: &RunData) -> String {
    format!("{what} — {}", run.meta.label())
}

/// The end times (hours) of the jobs that ended `Done` in each factory's pilots.
fn done_ends(run: &RunData, f: &Factories) -> Vec<Vec<f64>> {
    let mut ends: Vec<Vec<f64>> = vec![Vec::new(); f.list.len()];
    for j in run.jobs.iter().filter(|j| j.status == JobStatus::Done) {
        if let (Some(i), Some(t)) = (f.of_job(j), j.ended()) {
            ends[i].push(t.as_hours_f64());
        }
    }
    ends
}

/// Per factory (its label, `Generic@GPF.BNL.us`), the end times in hours of the jobs that
/// finished in its pilots; empty without factories.
pub fn finished_by_factory(run: &RunData) -> Vec<(String, Vec<f64>)> {
    let f = Factories::of(run);
    let ends = done_ends(run, &f);
    f.list.into_iter().map(|x| x.label).zip(ends).collect()
}

/// Jobs that ended `Done` in each factory's pilots, per hour of their end time.
fn throughput_chart(run: &RunData, f: &Factories) -> FactoryThroughput {
    let end_hours = run.meta.end.as_hours_f64();
    let ends = done_ends(run, f);
    let factories = f
        .list
        .iter()
        .zip(&ends)
        .map(|(x, ends)| FactoryRate {
            label: x.label.clone(),
            points: hourly_rate(ends, end_hours),
            closed_form: x.closed_form,
            second_half: x.second_half,
        })
        .collect();
    FactoryThroughput { title: title("Jobs finished per hour by pilot factory", run), end_hours, factories }
}

/// The waits (match − submission) of the jobs that started in each factory's pilots, one
/// group per factory and job kind (the kinds the run's streams have), factory by factory.
fn waits_chart(run: &RunData, f: &Factories) -> WaitTimes {
    let kinds: Vec<(JobKind, &str)> = [(JobKind::Production, "production"), (JobKind::Analysis, "analysis")]
        .into_iter()
        .filter(|(k, _)| run.streams.iter().any(|s| s.kind == *k))
        .collect();
    let mut groups: Vec<(String, Vec<f64>)> = f
        .list
        .iter()
        .flat_map(|x| kinds.iter().map(move |(_, name)| (format!("{} {name}", x.label), Vec::new())))
        .collect();
    for j in run.jobs {
        let (Some(i), Some(wait)) = (f.of_job(j), j.wait_s()) else { continue };
        let kind = run.streams.get(j.stream as usize).map(|s| s.kind);
        if let Some(k) = kinds.iter().position(|(x, _)| Some(*x) == kind) {
            groups[i * kinds.len() + k].1.push(wait);
        }
    }
    WaitTimes { title: title("Wait to start by pilot factory and job kind", run), groups, styles: Vec::new() }
}

/// The standby pilots and target per cycle of each startd factory, from the
/// [`CYCLES_TABLE`] table; `None` without that table or without rows.
fn standby_chart(run: &RunData, f: &Factories) -> Option<FactoryStandby> {
    let table = run.wms_tables.iter().find(|t| t.name == CYCLES_TABLE)?;
    let col = |name: &str| table.columns.iter().find(|c| c.name == name);
    let (time, factory) = (col("time_s")?, col("factory")?);
    let (standby, target) = (col("standby"), col("target"));
    let rows = column_len(time);
    if rows == 0 {
        return None;
    }
    // Per label: (standby, target) samples. Known factories first, in their order, then any
    // other label in sorted order.
    let mut by_label: BTreeMap<String, (Points, Points)> = BTreeMap::new();
    for row in 0..rows {
        let (Some(t), Some(label)) = (number(time, row), text(factory, row)) else { continue };
        let entry = by_label.entry(label.to_string()).or_default();
        let h = t / 3600.0;
        if let Some(v) = standby.and_then(|c| number(c, row)) {
            entry.0.push((h, v));
        }
        if let Some(v) = target.and_then(|c| number(c, row)) {
            entry.1.push((h, v));
        }
    }
    let mut factories = Vec::new();
    for (i, x) in f.list.iter().enumerate() {
        if let Some((standby, target)) = by_label.remove(&x.label) {
            factories.push(StandbyLevel { label: x.label.clone(), color: i, standby, target });
        }
    }
    for (k, (label, (standby, target))) in by_label.into_iter().enumerate() {
        factories.push(StandbyLevel { label, color: f.list.len() + k, standby, target });
    }
    let end_hours = run.meta.end.as_hours_f64();
    Some(FactoryStandby { title: title("Standby startd pilots per factory", run), end_hours, factories })
}

/// The factory charts of a run (file stem and chart): throughput and waits when the run has
/// factories, standby when it also has a [`CYCLES_TABLE`] table with rows; none otherwise.
pub fn factory_charts(run: &RunData) -> Result<Vec<(&'static str, Rendered)>, ChartError> {
    if run.factory_summaries.is_empty() {
        return Ok(Vec::new());
    }
    let f = Factories::of(run);
    let mut out = vec![
        ("factory_throughput", factory_throughput(&throughput_chart(run, &f))?),
        ("factory_waits", wait_time_distribution(&waits_chart(run, &f))?),
    ];
    if let Some(c) = standby_chart(run, &f) {
        out.push(("factory_standby", factory_standby(&c)?));
    }
    Ok(out)
}

/// Number of rows of a column.
fn column_len(c: &ExtraColumn) -> usize {
    match &c.values {
        ExtraValues::U32(v) => v.len(),
        ExtraValues::U64(v) => v.len(),
        ExtraValues::F64(v) => v.len(),
        ExtraValues::Bool(v) => v.len(),
        ExtraValues::Str(v) => v.len(),
        ExtraValues::Coded { codes, .. } => codes.len(),
    }
}

/// Row `row` of a numeric column, as a number.
fn number(c: &ExtraColumn, row: usize) -> Option<f64> {
    match &c.values {
        ExtraValues::U32(v) => v.get(row).copied().flatten().map(f64::from),
        ExtraValues::U64(v) => v.get(row).copied().flatten().map(|x| x as f64),
        ExtraValues::F64(v) => v.get(row).copied().flatten(),
        _ => None,
    }
}

/// Row `row` of a text column.
fn text(c: &ExtraColumn, row: usize) -> Option<&str> {
    match &c.values {
        ExtraValues::Str(v) => v.get(row).and_then(Option::as_deref),
        ExtraValues::Coded { texts, codes } => {
            codes.get(row).copied().flatten().and_then(|i| texts.get(i as usize)).map(String::as_str)
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
