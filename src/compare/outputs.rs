//! What a comparison writes: `compare.json` (both sides, the pairing and every metric's row),
//! `compare.parquet` (the same rows, one per metric), the overlay charts as PNG and SVG, and
//! `compare.html` ([`super::html`]); and the text table the terminal shows.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use super::table::{Row, key_rows};
use super::trace::Waits;
use super::{Comparison, Side, Trace};
use crate::metrics::columns::Data;
use crate::metrics::format::{aligned, fmt_diff, fmt_half, fmt_value};
use crate::metrics::{parquet, write};
use crate::report::compare_charts::{Overlay, OverlaySeries, overlay};
use crate::report::factory_charts::hourly_rate;
use crate::report::outputs::{MAX_USERS, write_chart};
use crate::report::panda_charts::step_series;
use crate::report::{Rendered, WaitTimes, wait_time_distribution};
use crate::sweep::outputs::ci95;

/// File names inside a comparison's directory.
pub const JSON_FILE: &str = "compare.json";
pub const PARQUET_FILE: &str = "compare.parquet";
pub const HTML_FILE: &str = "compare.html";

/// Write every output of `c` into `dir` (created if missing), each file atomically.
pub fn write_all(dir: &Path, c: &Comparison) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let json = serde_json::to_string_pretty(&to_json(c))? + "\n";
    write::atomic(&dir.join(JSON_FILE), json.as_bytes())?;
    let table = parquet::write_data(&columns(&c.rows), &metadata(c))?;
    write::atomic(&dir.join(PARQUET_FILE), &table)?;
    for (stem, chart) in charts(c)? {
        write_chart(dir, stem, chart)?;
    }
    super::html::write(dir)?;
    Ok(())
}

/// `compare.json`.
pub fn to_json(c: &Comparison) -> serde_json::Value {
    let side = |s: &Side| {
        json!({
            "description": s.description,
            "scenario": s.scenario,
            "simulated_hours": s.hours,
            "seeds": s.replicas.iter().map(|r| r.seed).collect::<Vec<_>>(),
        })
    };
    json!({
        "pilotsim_version": crate::VERSION,
        "a": side(&c.a),
        "b": side(&c.b),
        "pairing": c.pairing,
        "key_metrics": key_rows(&c.rows).iter().map(|r| r.metric.clone()).collect::<Vec<_>>(),
        "rows": c.rows,
    })
}

fn metadata(c: &Comparison) -> Vec<(String, String)> {
    vec![
        ("pilotsim_version".into(), crate::VERSION.into()),
        ("a".into(), c.a.description.clone()),
        ("b".into(), c.b.description.clone()),
        ("pairing".into(), format!("{:?}", c.pairing).to_lowercase()),
    ]
}

/// One row per metric: A's and B's mean, std and count, the difference, its interval and
/// whether it is larger than the noise.
fn columns(rows: &[Row]) -> Vec<(String, Data)> {
    let f = |g: &dyn Fn(&Row) -> f64| Data::F64(rows.iter().map(|r| Some(g(r))).collect());
    let n = |g: &dyn Fn(&Row) -> u32| Data::U32(rows.iter().map(|r| Some(g(r))).collect());
    vec![
        ("metric".into(), Data::Str(rows.iter().map(|r| Some(r.metric.clone())).collect())),
        ("key".into(), Data::Bool(rows.iter().map(|r| Some(super::table::is_key(&r.metric))).collect())),
        ("a_mean".into(), f(&|r| r.a.mean)),
        ("a_std".into(), f(&|r| r.a.std)),
        ("a_n".into(), n(&|r| r.a.n)),
        ("b_mean".into(), f(&|r| r.b.mean)),
        ("b_std".into(), f(&|r| r.b.std)),
        ("b_n".into(), n(&|r| r.b.n)),
        ("diff".into(), f(&|r| r.diff)),
        ("ci95".into(), Data::F64(rows.iter().map(|r| r.ci95).collect())),
        ("significant".into(), Data::Bool(rows.iter().map(|r| Some(r.significant)).collect())),
    ]
}

/// The header of the key-metrics table.
pub const HEAD: [&str; 6] = ["metric", "A", "B", "B − A", "95 % CI", "beyond noise"];

/// A key row as text: metric, A, B, B − A, the half-width of its 95 % interval and whether
/// the difference is beyond the noise (`n/a` with one run a side).
pub fn row_cells(r: &Row) -> [String; 6] {
    let ci = r.ci95.map_or("—".to_string(), |h| fmt_half(&r.metric, h));
    let noise = match (r.ci95, r.significant) {
        (None, _) => "n/a",
        (Some(_), true) => "yes",
        (Some(_), false) => "no",
    };
    [
        r.metric.clone(),
        fmt_value(&r.metric, r.a.mean),
        fmt_value(&r.metric, r.b.mean),
        fmt_diff(&r.metric, r.diff),
        ci,
        noise.into(),
    ]
}

/// The key rows as the terminal shows them, in aligned columns.
pub fn text_table(c: &Comparison) -> String {
    let rows: Vec<Vec<String>> = key_rows(&c.rows).into_iter().map(|r| row_cells(r).to_vec()).collect();
    aligned(&HEAD, &rows)
}

/// Traces of a side's replicas (empty for a directory).
fn traces(s: &Side) -> Vec<&Trace> {
    s.replicas.iter().filter_map(|r| r.trace.as_ref()).collect()
}

/// The overlay charts, by file stem; none when a side has no traces (directories).
pub fn charts(c: &Comparison) -> Result<Vec<(&'static str, Rendered)>> {
    let (ta, tb) = (traces(&c.a), traces(&c.b));
    if ta.is_empty() || tb.is_empty() {
        return Ok(Vec::new());
    }
    let title = |what: &str| format!("{what} — A: {} · B: {}", c.a.description, c.b.description);
    let end_hours = c.a.hours.max(c.b.hours);
    let mut out = Vec::new();

    // Share convergence: every group either side has, in A's order then B's.
    let mut groups: Vec<String> = Vec::new();
    for t in ta.iter().chain(&tb) {
        for g in &t.groups {
            if !groups.contains(&g.name) {
                groups.push(g.name.clone());
            }
        }
    }
    let mut series = Vec::new();
    let mut guides = Vec::new();
    for (color, g) in groups.iter().enumerate() {
        let mut targets = Vec::new();
        for (side, ts) in [("A", &ta), ("B", &tb)] {
            let Some(first) = ts[0].groups.iter().find(|x| &x.name == g) else { continue };
            targets.push((side, first.target));
            let values: Vec<&[f64]> =
                ts.iter().filter_map(|t| t.groups.iter().find(|x| &x.name == g).map(|x| x.values.as_slice())).collect();
            series.push(side_series(g, side, color, &ts[0].hours, &values, true));
        }
        match targets.as_slice() {
            [(_, a), (_, b)] if a == b => guides.push((*a, format!("{g} target"))),
            ts => guides.extend(ts.iter().map(|(side, t)| (*t, format!("{g} target ({side})")))),
        }
    }
    out.push((
        "share_convergence",
        overlay(&Overlay {
            title: title("Share convergence"),
            y_label: "running share (mean of replicas, 95 % CI)".into(),
            percent: true,
            end_hours,
            series,
            guides,
        })?,
    ));

    // Pilots over time.
    let mut series = Vec::new();
    for (color, (what, get)) in [
        ("running pilots", (|t: &Trace| &t.pilots_running) as fn(&Trace) -> &Vec<f64>),
        ("waiting pilots", |t: &Trace| &t.pilots_waiting),
    ]
    .into_iter()
    .enumerate()
    {
        for (side, ts) in [("A", &ta), ("B", &tb)] {
            let values: Vec<&[f64]> = ts.iter().map(|t| get(t).as_slice()).collect();
            series.push(side_series(what, side, color, &ts[0].hours, &values, false));
        }
    }
    out.push((
        "pilots_over_time",
        overlay(&Overlay {
            title: title("Pilots"),
            y_label: "pilots (mean of replicas, 95 % CI)".into(),
            percent: false,
            end_hours,
            series,
            guides: Vec::new(),
        })?,
    ));

    // Waits, pooled over the replicas of each side: per group, and per user.
    out.push((
        "wait_times",
        wait_times(&title("Waiting time to match per group"), &ta, &tb, |t| &t.group_waits, usize::MAX)?,
    ));
    if ta.iter().chain(&tb).any(|t| !t.user_waits.is_empty()) {
        out.push((
            "user_wait_times",
            wait_times(&title("Waiting time to match per user"), &ta, &tb, |t| &t.user_waits, MAX_USERS)?,
        ));
    }
    out.extend(panda_and_factory_charts(&ta, &tb, &title, end_hours)?);
    Ok(out)
}

/// Queues and links drawn in a comparison: the busiest, like the run's charts (every factory
/// is drawn: a scenario has a few).
const MAX_OVERLAID: usize = 6;

/// PanDA's waits per queue (the queues with most started jobs) and link backlogs (the links
/// with the highest peaks), and the jobs finished per hour in each pilot factory, where either
/// side has them.
fn panda_and_factory_charts(
    ta: &[&Trace],
    tb: &[&Trace],
    title: &dyn Fn(&str) -> String,
    end_hours: f64,
) -> Result<Vec<(&'static str, Rendered)>> {
    let mut out = Vec::new();
    let both = || ta.iter().chain(tb);
    if both().any(|t| !t.queue_waits.is_empty()) {
        let what = format!("Wait from activated to running, the {MAX_OVERLAID} busiest PanDA queues");
        out.push(("queue_waits", wait_times(&title(&what), ta, tb, |t| &t.queue_waits, MAX_OVERLAID)?));
    }
    if both().any(|t| !t.link_backlogs.is_empty()) {
        // Each link's peak over every replica of both sides; the highest first, ties by name.
        let mut peaks: Vec<(String, i64)> = Vec::new();
        for t in both() {
            for (name, changes) in &t.link_backlogs {
                let peak = step_series(changes.clone(), 0.0, 0.0).1;
                match peaks.iter_mut().find(|(n, _)| n == name) {
                    Some(e) => e.1 = e.1.max(peak),
                    None => peaks.push((name.clone(), peak)),
                }
            }
        }
        peaks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut series = Vec::new();
        for (color, (link, _)) in peaks.iter().take(MAX_OVERLAID).enumerate() {
            for (side, ts) in [("A", ta), ("B", tb)] {
                let levels: Vec<Vec<f64>> = ts
                    .iter()
                    .map(|t| {
                        let changes = t.link_backlogs.iter().find(|(n, _)| n == link).map_or(&[][..], |(_, c)| c);
                        levels_at(changes, &t.hours)
                    })
                    .collect();
                let replicas: Vec<&[f64]> = levels.iter().map(Vec::as_slice).collect();
                series.push(side_series(link, side, color, &ts[0].hours, &replicas, false));
            }
        }
        out.push((
            "link_backlog",
            overlay(&Overlay {
                title: title("Files queued per link, this run's transfers"),
                y_label: "files queued or in transfer (mean of replicas, 95 % CI)".into(),
                percent: false,
                end_hours,
                series,
                guides: Vec::new(),
            })?,
        ));
    }
    if both().any(|t| !t.factory_ends.is_empty()) {
        let mut names: Vec<String> = Vec::new();
        for t in both() {
            for (name, _) in &t.factory_ends {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
        let mut series = Vec::new();
        for (color, name) in names.iter().enumerate() {
            for (side, ts) in [("A", ta), ("B", tb)] {
                // Every replica of a side has the same length, hence the same hourly bins.
                let rates: Vec<Vec<(f64, f64)>> = ts
                    .iter()
                    .map(|t| {
                        let ends = t.factory_ends.iter().find(|(n, _)| n == name).map_or(&[][..], |(_, e)| e);
                        hourly_rate(ends, t.end_hours)
                    })
                    .collect();
                let hours: Vec<f64> = rates[0].iter().map(|p| p.0).collect();
                let values: Vec<Vec<f64>> = rates.iter().map(|r| r.iter().map(|p| p.1).collect()).collect();
                let replicas: Vec<&[f64]> = values.iter().map(Vec::as_slice).collect();
                series.push(side_series(name, side, color, &hours, &replicas, false));
            }
        }
        out.push((
            "factory_throughput",
            overlay(&Overlay {
                title: title("Jobs finished per hour by pilot factory"),
                y_label: "jobs finished per hour (mean of replicas, 95 % CI)".into(),
                percent: false,
                end_hours,
                series,
                guides: Vec::new(),
            })?,
        ));
    }
    Ok(out)
}

/// The level of a series of `(time, ±n)` changes at each of `hours` (changes at an instant
/// count from that instant on).
fn levels_at(changes: &[(f64, i64)], hours: &[f64]) -> Vec<f64> {
    let mut sorted = changes.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut level = 0i64;
    let mut next = 0;
    hours
        .iter()
        .map(|&h| {
            while next < sorted.len() && sorted[next].0 <= h {
                level += sorted[next].1;
                next += 1;
            }
            level as f64
        })
        .collect()
}

/// One side's mean series with its band.
fn side_series(name: &str, side: &str, color: usize, hours: &[f64], replicas: &[&[f64]], share: bool) -> OverlaySeries {
    let (means, mut band) = mean_band(replicas);
    // Every series drawn is a count, a rate or a share: never below 0, a share never above 1;
    // so is the interval drawn for it.
    let top = if share { 1.0 } else { f64::INFINITY };
    band.iter_mut().for_each(|(lo, hi)| (*lo, *hi) = (lo.max(0.0), hi.min(top)));
    OverlaySeries {
        label: format!("{name} ({side})"),
        color,
        dashed: side == "B",
        points: hours.iter().copied().zip(means).collect(),
        band: if replicas.len() > 1 { band } else { Vec::new() },
    }
}

/// The wait ECDFs of both sides, A solid and B dashed in each entity's colour; at most
/// `max` entities (those with most matched jobs on both sides together).
fn wait_times(title: &str, ta: &[&Trace], tb: &[&Trace], get: fn(&Trace) -> &Waits, max: usize) -> Result<Rendered> {
    let mut names: Vec<(String, usize)> = Vec::new();
    for t in ta.iter().chain(tb) {
        for (name, waits) in get(t) {
            match names.iter_mut().find(|(n, _)| n == name) {
                Some(e) => e.1 += waits.len(),
                None => names.push((name.clone(), waits.len())),
            }
        }
    }
    if names.len() > max {
        let mut by_count = names.clone();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        by_count.truncate(max);
        names.retain(|n| by_count.iter().any(|k| k.0 == n.0));
    }
    let pooled = |ts: &[&Trace], name: &str| -> Vec<f64> {
        ts.iter().flat_map(|t| get(t).iter().filter(|(n, _)| n == name).flat_map(|(_, w)| w.iter().copied())).collect()
    };
    let mut groups = Vec::new();
    let mut styles = Vec::new();
    for (color, (name, _)) in names.iter().enumerate() {
        for (side, ts) in [("A", ta), ("B", tb)] {
            groups.push((format!("{name} ({side})"), pooled(ts, name)));
            styles.push((color, side == "B"));
        }
    }
    Ok(wait_time_distribution(&WaitTimes { title: title.into(), groups, styles })?)
}

/// Mean and 95 % interval at each index of equally long replica series (the replicas of one
/// side sample at the same instants); NaN values are left out of their index's statistics.
pub fn mean_band(replicas: &[&[f64]]) -> (Vec<f64>, Vec<(f64, f64)>) {
    let len = replicas.iter().map(|r| r.len()).min().unwrap_or(0);
    let mut means = Vec::with_capacity(len);
    let mut band = Vec::with_capacity(len);
    for i in 0..len {
        let v: Vec<f64> = replicas.iter().map(|r| r[i]).filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            means.push(f64::NAN);
            band.push((f64::NAN, f64::NAN));
            continue;
        }
        let s = crate::sweep::stat(&v);
        // One replica: no interval, the band is the line.
        let h = if s.n >= 2 { ci95(&s) } else { 0.0 };
        means.push(s.mean);
        band.push((s.mean - h, s.mean + h));
    }
    (means, band)
}

#[cfg(test)]
mod tests {
    #[test]
    fn link_levels_are_sampled_from_their_changes() {
        // Two files submitted at 0.5 h, one ends at 1.0 h, one more submitted and one ended at 2 h.
        let changes = [(0.5, 1), (0.5, 1), (1.0, -1), (2.0, 1), (2.0, -1)];
        assert_eq!(levels_at(&changes, &[0.0, 0.5, 0.9, 1.0, 2.0, 3.0]), [0.0, 2.0, 2.0, 1.0, 1.0, 1.0]);
        assert_eq!(step_series(changes.to_vec(), 0.0, 0.0).1, 2, "changes at one instant count together");
    }

    use super::*;

    #[test]
    fn mean_band_is_the_t_interval_at_each_instant() {
        let a = [1.0, 2.0, f64::NAN];
        let b = [3.0, 2.0, f64::NAN];
        let (m, band) = mean_band(&[&a, &b]);
        assert_eq!(m[..2], [2.0, 2.0]);
        // s = √2, t(0.975, 1) = 12.706: half-width 12.706 · √2 / √2.
        assert!((band[0].1 - 2.0 - 12.706).abs() < 1e-9);
        assert_eq!(band[1], (2.0, 2.0));
        assert!(m[2].is_nan());
    }
}
