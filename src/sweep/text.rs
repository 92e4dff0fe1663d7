//! The points table `pilotsim sweep` prints when a sweep is complete: one row per point, its
//! varied values, then each key metric's mean over the replicas with its 95 % interval (the
//! metrics of the sweep's charts; every metric is in `points.parquet`).

use serde_json::Value;

use crate::metrics::format::{aligned, fmt_half, fmt_value};
use crate::metrics::points::{Points, key_metrics};

/// The table, ready to print.
pub fn points_table(p: &Points) -> String {
    let metrics = key_metrics(p);
    let mut head: Vec<&str> = p.vary.iter().map(|v| v.path.as_str()).collect();
    head.extend(metrics.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = p
        .points
        .iter()
        .map(|pt| {
            let mut row: Vec<String> =
                p.vary.iter().map(|v| pt.values.get(&v.path).map_or("—".into(), label)).collect();
            for m in &metrics {
                row.push(match pt.metrics.get(m) {
                    None => "—".into(),
                    Some(s) => match s.ci95 {
                        Some(h) if h.is_finite() => format!("{} {}", fmt_value(m, s.mean), fmt_half(m, h)),
                        _ => fmt_value(m, s.mean),
                    },
                });
            }
            row
        })
        .collect();
    aligned(&head, &rows)
}

fn label(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::metrics::points::{PointStat, PointSummary, Vary};

    #[test]
    fn one_row_per_point_with_means_and_intervals() {
        let point = |i: usize, x: f64, eff: f64| PointSummary {
            index: i,
            values: BTreeMap::from([("dirac.director.extra_pilot_fraction".to_string(), Value::from(x))]),
            metrics: BTreeMap::from([
                ("pilot_efficiency".to_string(), PointStat { mean: eff, std: 0.01, ci95: Some(0.012), n: 3 }),
                ("jain_index".to_string(), PointStat { mean: 0.92, std: 0.0, ci95: None, n: 1 }),
            ]),
        };
        let p = Points {
            scenario: "s".into(),
            scenario_sha256: String::new(),
            pilotsim_version: String::new(),
            replicas: 3,
            vary: vec![Vary {
                path: "dirac.director.extra_pilot_fraction".into(),
                spec: "0.1,0.5".into(),
                values: vec![],
            }],
            points: vec![point(0, 0.1, 0.887), point(1, 0.5, 0.877)],
        };
        let t = points_table(&p);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert!(lines[0].starts_with("dirac.director.extra_pilot_fraction") && lines[0].contains("pilot_efficiency"));
        assert!(
            lines[1].starts_with("0.1 ") && lines[1].contains("88.7% ±1.2 pp") && lines[1].contains("92.0%"),
            "{t}"
        );
        assert!(lines[2].contains("87.7% ±1.2 pp"), "{t}");
    }
}
