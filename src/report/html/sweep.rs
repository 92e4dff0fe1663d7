//! The sweep page: `points.json` (one row per point, mean ± 95 % CI of key metrics) and the
//! sweep directory's charts.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::{charts, esc, page, pct, table, texts};
use crate::metrics::points::{PointStat, Points, key_metrics};

/// How a metric column is shown.
#[derive(Clone, Copy)]
enum Unit {
    Percent,
    Plain,
    Hours,
}

/// The metric columns: the sweep's key metrics ([`key_metrics`]) that some point has.
fn columns(p: &Points) -> Vec<(String, String, Unit)> {
    let present = |k: &str| p.points.iter().any(|pt| pt.metrics.contains_key(k));
    key_metrics(p)
        .into_iter()
        .filter(|k| present(k))
        .map(|k| {
            let (label, unit) = match k.as_str() {
                "pilot_efficiency" => ("pilot efficiency".to_string(), Unit::Percent),
                "max_share_deviation" => ("max share deviation".to_string(), Unit::Percent),
                "jain_index" => ("Jain index".to_string(), Unit::Plain),
                wait => {
                    let group = wait.trim_start_matches("wait_time_s.").trim_end_matches(".p95");
                    (format!("p95 wait, {group} (h)"), Unit::Hours)
                }
            };
            (k, label, unit)
        })
        .collect()
}

fn number(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Percent => pct(Some(v)),
        Unit::Plain => format!("{v:.3}"),
        Unit::Hours => format!("{:.2}", v / 3600.0),
    }
}

/// `mean ± ci95` (`(n = k)` added when fewer replicas than the sweep's had a value).
fn cell(m: Option<&PointStat>, unit: Unit, replicas: u32) -> String {
    let Some(m) = m.filter(|m| m.mean.is_finite()) else { return "—".into() };
    let mut s = number(m.mean, unit);
    if let Some(ci) = m.ci95 {
        let _ = write!(s, " ± {}", number(ci, unit));
    }
    if m.n != replicas {
        let n = m.n;
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
pub(super) fn page_html(dir: &Path, p: &Points) -> Result<String> {
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

    b.push_str(&charts(dir, &[], &[], 1)?);
    Ok(page(&format!("pilotsim sweep — {}", p.scenario), &b))
}
