//! The sweep page: `points.json` (one row per point, mean ± 95 % CI of key metrics) and the
//! sweep directory's charts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{charts, esc, page, pct, table, texts};

/// `points.json` of a sweep directory. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoints {
    /// Scenario name.
    pub scenario: String,
    /// SHA-256 of the scenario source (with its overrides).
    #[serde(default)]
    pub scenario_sha256: String,
    /// Version of pilotsim that ran the sweep.
    #[serde(default)]
    pub pilotsim_version: String,
    /// Replicas (seeds) per point.
    #[serde(default)]
    pub replicas: u32,
    /// The varied parameters, in the order of the sweep.
    #[serde(default)]
    pub vary: Vec<Vary>,
    /// One entry per combination of values.
    pub points: Vec<SweepPoint>,
}

/// One varied parameter: a `--set` path and its values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vary {
    /// Scenario field path, e.g. `dirac.director.extra_pilot_fraction`.
    pub path: String,
    /// Values taken (JSON: numbers, strings, …).
    #[serde(default)]
    pub values: Vec<Value>,
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Position in the sweep.
    #[serde(default)]
    pub index: usize,
    /// Value of each varied path at this point.
    #[serde(default)]
    pub values: BTreeMap<String, Value>,
    /// Replica statistics of each metric, by dotted summary path (`wait_time_s.lhcb_user.p95`).
    #[serde(default)]
    pub metrics: BTreeMap<String, MetricStats>,
}

/// Replica statistics of one metric at one point; `null` or missing fields are `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricStats {
    /// Mean over the replicas.
    #[serde(default)]
    pub mean: Option<f64>,
    /// Sample standard deviation.
    #[serde(default)]
    pub std: Option<f64>,
    /// Half-width of the 95 % confidence interval of the mean.
    #[serde(default)]
    pub ci95: Option<f64>,
    /// Replicas that had a value.
    #[serde(default)]
    pub n: Option<u64>,
}

/// How a metric column is shown.
#[derive(Clone, Copy)]
enum Unit {
    Percent,
    Plain,
    Hours,
}

/// The metric columns: the key metrics present, then every `wait_time_s.*.p95`.
fn columns(p: &SweepPoints) -> Vec<(String, String, Unit)> {
    let present = |k: &str| p.points.iter().any(|pt| pt.metrics.contains_key(k));
    let mut cols: Vec<(String, String, Unit)> = [
        ("pilot_efficiency", "pilot efficiency", Unit::Percent),
        ("max_share_deviation", "max share deviation", Unit::Percent),
        ("jain_index", "Jain index", Unit::Plain),
    ]
    .into_iter()
    .filter(|(k, _, _)| present(k))
    .map(|(k, l, u)| (k.to_string(), l.to_string(), u))
    .collect();
    let mut waits: Vec<&String> = p
        .points
        .iter()
        .flat_map(|pt| pt.metrics.keys())
        .filter(|k| k.starts_with("wait_time_s.") && k.ends_with(".p95"))
        .collect();
    waits.sort();
    waits.dedup();
    for k in waits {
        let group = &k["wait_time_s.".len()..k.len() - ".p95".len()];
        cols.push((k.clone(), format!("p95 wait, {group} (h)"), Unit::Hours));
    }
    cols
}

fn number(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Percent => pct(Some(v)),
        Unit::Plain => format!("{v:.3}"),
        Unit::Hours => format!("{:.2}", v / 3600.0),
    }
}

/// `mean ± ci95` (`(n = k)` added when fewer replicas than the sweep's had a value).
fn cell(m: Option<&MetricStats>, unit: Unit, replicas: u32) -> String {
    let Some(mean) = m.and_then(|m| m.mean) else { return "—".into() };
    let m = m.expect("has a mean");
    let mut s = number(mean, unit);
    if let Some(ci) = m.ci95 {
        let _ = write!(s, " ± {}", number(ci, unit));
    }
    if let Some(n) = m.n.filter(|&n| n != u64::from(replicas)) {
        let _ = write!(s, " <span class=\"n\">(n = {n})</span>");
    }
    s
}

/// A varied value as text: strings bare, anything else as compact JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A dotted path, escaped, with break opportunities after the dots.
fn path_html(p: &str) -> String {
    format!("<code>{}</code>", esc(p).replace('.', ".<wbr>"))
}

/// The sweep page.
pub(super) fn page_html(dir: &Path, p: &SweepPoints) -> Result<String> {
    let mut b = String::new();
    let _ = write!(
        b,
        "<header><h1>{} <span class=\"sub\">sweep</span></h1>\n<p class=\"ident\"><span>run by pilotsim {}</span> \
         <span>scenario SHA-256 <code>{}</code></span> <span>{} points × {} replicas</span></p></header>\n",
        esc(&p.scenario),
        esc(&p.pilotsim_version),
        esc(&p.scenario_sha256),
        p.points.len(),
        p.replicas
    );
    b.push_str("<section><h2>Varied parameters</h2>\n");
    let rows: Vec<Vec<String>> = p
        .vary
        .iter()
        .map(|v| {
            let values: Vec<String> = v.values.iter().map(|x| esc(&value_text(x))).collect();
            vec![path_html(&v.path), values.join(", ")]
        })
        .collect();
    b.push_str(&table(None, &texts(&["parameter", "values"]), "ll", &rows));
    b.push_str("</section>\n");

    let cols = columns(p);
    let _ = write!(
        b,
        "<section><h2>Points</h2>\n<p>Mean ± half-width of the 95 % confidence interval over {} replicas \
         per point.</p>\n",
        p.replicas
    );
    let mut head = vec!["#".to_string()];
    head.extend(p.vary.iter().map(|v| path_html(&v.path)));
    head.extend(cols.iter().map(|(_, label, _)| esc(label)));
    let rows: Vec<Vec<String>> = p
        .points
        .iter()
        .map(|pt| {
            let mut row = vec![pt.index.to_string()];
            row.extend(p.vary.iter().map(|v| pt.values.get(&v.path).map_or("—".into(), |x| esc(&value_text(x)))));
            row.extend(cols.iter().map(|(k, _, u)| cell(pt.metrics.get(k), *u, p.replicas)));
            row
        })
        .collect();
    let align = format!("r{}{}", "l".repeat(p.vary.len()), "r".repeat(cols.len()));
    b.push_str(&table(None, &head, &align, &rows));
    b.push_str("</section>\n");

    b.push_str(&charts(dir, &[])?);
    Ok(page(&format!("pilotsim sweep — {}", p.scenario), &b))
}
