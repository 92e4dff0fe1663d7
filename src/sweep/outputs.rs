//! The merged outputs of a complete sweep, built only from the manifest and the run files
//! (so a sharded and merged sweep gives the same bytes as an unsharded one):
//! `sweep.parquet` (one row per run), `points.parquet` and `points.json` (one row per point:
//! mean, standard deviation and 95 % confidence interval of each metric), and charts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde_json::Value;

use super::store::{Manifest, RunRecord};
use super::{Stat, stat};
use crate::metrics::columns::Data;
use crate::metrics::parquet::write_data;
pub use crate::metrics::points::{PointStat, PointSummary, Points, key_metrics};
use crate::metrics::write;
use crate::report::outputs::write_chart;
use crate::report::{BandPoint, BandSeries, HeatMap, MetricVsParam, heat_map, metric_vs_param};

/// Student's t quantile t(0.975, df) for df = 1..=30; 1.96 beyond.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// t(0.975, df): the table up to 30, then the Cornish–Fisher expansion around z = 1.96
/// (error below 1e-3 for df > 30).
pub fn t975(df: u32) -> f64 {
    if let Some(&t) = T975.get(df as usize - 1) {
        return t;
    }
    let (z, d) = (1.959_964_f64, f64::from(df));
    z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
}

/// Half-width of the 95 % confidence interval of a mean: t(0.975, n−1)·s/√n (NaN for n < 2).
pub fn ci95(s: &Stat) -> f64 {
    if s.n < 2 {
        return f64::NAN;
    }
    let t = t975(s.n - 1);
    t * s.std / f64::from(s.n).sqrt()
}

/// Per-point statistics of every metric.
pub fn summarise(m: &Manifest, runs: &[RunRecord]) -> Points {
    let mut by_point: BTreeMap<usize, Vec<&RunRecord>> = BTreeMap::new();
    for r in runs {
        by_point.entry(r.point).or_default().push(r);
    }
    let points = by_point
        .into_iter()
        .map(|(index, rs)| {
            let names: BTreeSet<&String> = rs.iter().flat_map(|r| r.metrics.keys()).collect();
            let metrics = names
                .into_iter()
                .map(|k| {
                    let v: Vec<f64> = rs.iter().filter_map(|r| r.metrics.get(k).copied()).collect();
                    let s = stat(&v);
                    let ci = ci95(&s);
                    (k.clone(), PointStat { mean: s.mean, std: s.std, ci95: ci.is_finite().then_some(ci), n: s.n })
                })
                .collect();
            PointSummary { index, values: rs[0].values.clone(), metrics }
        })
        .collect();
    Points {
        scenario: m.scenario.clone(),
        scenario_sha256: m.scenario_sha256.clone(),
        pilotsim_version: m.pilotsim_version.clone(),
        replicas: m.replicas,
        vary: m.vary.clone(),
        points,
    }
}

/// A column of the varied values: f64 when every value is a number, text otherwise.
fn value_column(name: &str, values: Vec<Option<&Value>>) -> (String, Data) {
    if values.iter().all(|v| v.is_some_and(Value::is_number)) {
        (name.into(), Data::F64(values.iter().map(|v| v.and_then(Value::as_f64)).collect()))
    } else {
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        (name.into(), Data::Str(values.iter().map(|v| v.map(text)).collect()))
    }
}

/// The sweep's identity as Parquet metadata.
pub fn metadata(m: &Manifest) -> Vec<(String, String)> {
    vec![
        ("pilotsim.scenario".into(), m.scenario.clone()),
        ("pilotsim.scenario_sha256".into(), m.scenario_sha256.clone()),
        ("pilotsim.version".into(), m.pilotsim_version.clone()),
        ("pilotsim.master_seed".into(), m.master_seed.to_string()),
    ]
}

fn parquet(columns: &[(String, Data)], m: &Manifest) -> Result<Vec<u8>> {
    Ok(write_data(columns, &metadata(m))?)
}

/// `sweep.parquet`: run, point, replica, seed, the varied values, then every metric.
pub fn runs_table(m: &Manifest, runs: &[RunRecord]) -> Vec<(String, Data)> {
    let mut cols = vec![
        ("run".into(), Data::Str(runs.iter().map(|r| Some(r.run.clone())).collect())),
        ("point".into(), Data::U32(runs.iter().map(|r| Some(r.point as u32)).collect())),
        ("replica".into(), Data::U32(runs.iter().map(|r| Some(r.replica)).collect())),
        ("seed".into(), Data::U64(runs.iter().map(|r| Some(r.seed)).collect())),
    ];
    for v in &m.vary {
        cols.push(value_column(&v.path, runs.iter().map(|r| r.values.get(&v.path)).collect()));
    }
    let names: BTreeSet<&String> = runs.iter().flat_map(|r| r.metrics.keys()).collect();
    for k in names {
        cols.push((k.clone(), Data::F64(runs.iter().map(|r| r.metrics.get(k).copied()).collect())));
    }
    cols
}

/// `points.parquet`: point, the varied values, replicas, then `<metric>.mean/.std/.ci95`.
pub fn points_table(p: &Points) -> Vec<(String, Data)> {
    let pts = &p.points;
    let mut cols = vec![("point".to_string(), Data::U32(pts.iter().map(|x| Some(x.index as u32)).collect()))];
    for v in &p.vary {
        cols.push(value_column(&v.path, pts.iter().map(|x| x.values.get(&v.path)).collect()));
    }
    cols.push((
        "replicas".into(),
        Data::U32(pts.iter().map(|x| Some(x.metrics.values().map(|s| s.n).max().unwrap_or(0))).collect()),
    ));
    let names: BTreeSet<&String> = pts.iter().flat_map(|x| x.metrics.keys()).collect();
    for k in names {
        let get = |f: &dyn Fn(&PointStat) -> Option<f64>| {
            Data::F64(pts.iter().map(|x| x.metrics.get(k).and_then(f)).collect::<Vec<_>>())
        };
        cols.push((format!("{k}.mean"), get(&|s| Some(s.mean))));
        cols.push((format!("{k}.std"), get(&|s| Some(s.std))));
        cols.push((format!("{k}.ci95"), get(&|s| s.ci95)));
    }
    cols
}

pub use crate::metrics::format::is_fraction;

fn label(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The band chart of `metric` against the first varied parameter (one line per value of the
/// second, if any); `None` if the first parameter is not numeric.
pub fn band_chart(p: &Points, metric: &str) -> Option<MetricVsParam> {
    let first = p.vary.first()?;
    if !first.values.iter().all(Value::is_number) {
        return None;
    }
    let second = p.vary.get(1);
    let groups: Vec<Option<&Value>> = match second {
        Some(s) => s.values.iter().map(Some).collect(),
        None => vec![None],
    };
    let series = groups
        .into_iter()
        .map(|g| BandSeries {
            label: match (second, g) {
                (Some(s), Some(v)) => format!("{} = {}", s.path, label(v)),
                _ => String::new(),
            },
            points: p
                .points
                .iter()
                .filter(|pt| second.is_none_or(|s| pt.values.get(&s.path) == g))
                .filter_map(|pt| {
                    let x = pt.values.get(&first.path)?.as_f64()?;
                    let s = pt.metrics.get(metric)?;
                    let ci = s.ci95.unwrap_or(0.0);
                    Some(BandPoint { x, mean: s.mean, lo: s.mean - ci, hi: s.mean + ci })
                })
                .collect(),
        })
        .collect();
    Some(MetricVsParam {
        title: format!("{metric} — {} ({} replicas, 95 % CI)", p.scenario, p.replicas),
        x_label: first.path.clone(),
        y_label: metric.to_string(),
        series,
        thresholds: Vec::new(),
        marker: None,
        percent: is_fraction(metric),
    })
}

/// The heat map of `metric` over the first two varied parameters.
pub fn heat_chart(p: &Points, metric: &str) -> Option<HeatMap> {
    let (x, y) = (p.vary.first()?, p.vary.get(1)?);
    let cells = y
        .values
        .iter()
        .map(|yv| {
            x.values
                .iter()
                .map(|xv| {
                    p.points
                        .iter()
                        .find(|pt| pt.values.get(&x.path) == Some(xv) && pt.values.get(&y.path) == Some(yv))
                        .and_then(|pt| pt.metrics.get(metric))
                        .map(|s| s.mean)
                })
                .collect()
        })
        .collect();
    let noise = p
        .points
        .iter()
        .filter_map(|pt| pt.metrics.get(metric)?.ci95)
        .filter(|h| h.is_finite())
        .fold(None, |m: Option<f64>, h| Some(m.map_or(h, |m| m.max(h))));
    Some(HeatMap {
        title: format!("{metric} — {} (mean of {} replicas)", p.scenario, p.replicas),
        x_label: x.path.clone(),
        x_values: x.values.iter().map(label).collect(),
        y_label: y.path.clone(),
        y_values: y.values.iter().map(label).collect(),
        cells,
        value_label: metric.to_string(),
        percent: is_fraction(metric),
        noise,
    })
}

/// A file stem for a metric path.
pub fn stem(metric: &str) -> String {
    metric.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// Write every merged output of a complete sweep into `dir`.
pub fn write_all(dir: &Path, m: &Manifest, runs: &[RunRecord]) -> Result<Points> {
    let points = summarise(m, runs);
    let runs_cols = runs_table(m, runs);
    let points_cols = points_table(&points);
    write::atomic(&dir.join("sweep.parquet"), &parquet(&runs_cols, m)?).context("writing sweep.parquet")?;
    write::atomic(&dir.join("points.parquet"), &parquet(&points_cols, m)?).context("writing points.parquet")?;
    // The charts are the serial tail of a sweep: drawn in parallel, each to
    // files of its own, so the result does not depend on the order they finish in.
    key_metrics(&points).par_iter().try_for_each(|metric| -> Result<()> {
        if let Some(c) = band_chart(&points, metric) {
            write_chart(dir, &format!("sweep_{}", stem(metric)), metric_vs_param(&c)?)?;
        }
        if let Some(c) = heat_chart(&points, metric) {
            write_chart(dir, &format!("heatmap_{}", stem(metric)), heat_map(&c)?)?;
        }
        Ok(())
    })?;
    write::atomic(&dir.join("points.json"), (serde_json::to_string_pretty(&points)? + "\n").as_bytes())?;
    Ok(points)
}

#[cfg(test)]
mod parquet_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_interval_uses_student_t() {
        let s = Stat { mean: 1.0, std: 2.0, n: 4 };
        assert!((ci95(&s) - 3.182 * 2.0 / 2.0).abs() < 1e-12);
        assert!(ci95(&Stat { mean: 1.0, std: 0.0, n: 1 }).is_nan());
        // t(0.975, 31) = 2.0395, t(0.975, 99) = 1.9842 (tables).
        assert!((t975(31) - 2.0395).abs() < 1e-3 && (t975(99) - 1.9842).abs() < 1e-3);
        let big = Stat { mean: 0.0, std: 1.0, n: 100 };
        assert!((ci95(&big) - 0.19842).abs() < 1e-4);
    }
}
