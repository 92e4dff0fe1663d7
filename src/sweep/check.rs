//! `pilotsim check`: regression checks of scenarios against their `expect` thresholds and
//! their committed baselines, over replicas so that a stochastic comparison does not flap.
//!
//! - A threshold (`"pilot_efficiency >= 0.8"`) holds if the replica **mean** satisfies it.
//! - A baseline (`results/baselines/<scenario>.json`) holds the mean, standard deviation and
//!   count of the [`BASELINE_METRICS`] over the same replicas. A metric passes if
//!   `|mean − baseline| ≤ max(4·√(s_b²/n_b + s²/n), 0.01·|baseline| + 1e-9)`: four standard
//!   errors of the difference (a false alarm rate far below 1e-3 per metric when nothing
//!   changed but the random streams), with a 1 % floor for metrics that barely vary.
//!   Replica seeds are derived from the scenario's seed, so an unchanged model reproduces
//!   the baseline exactly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Stat, replica_seed, replicas, stats};
use crate::metrics::write;
use crate::run::Prepared;
use crate::scenario::expect::parse_threshold;

/// Metrics a baseline records: efficiency, fairness and waiting times. A `*` matches one
/// path segment (an entity or group name).
pub const BASELINE_METRICS: [&str; 8] = [
    "pilot_efficiency",
    "max_share_deviation",
    "jain_index",
    "jobs.done",
    "entities.*.achieved_share",
    "entities.*.deviation",
    "wait_time_s.*.p50",
    "wait_time_s.*.p95",
];

/// Four standard errors of the difference (see the module doc).
pub const SIGMAS: f64 = 4.0;
/// Relative floor of the tolerance.
pub const RELATIVE_FLOOR: f64 = 0.01;

fn matches(pattern: &str, path: &str) -> bool {
    let (p, q): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), path.split('.').collect());
    p.len() == q.len() && p.iter().zip(&q).all(|(a, b)| *a == "*" || a == b)
}

/// A committed baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub scenario: String,
    pub scenario_sha256: String,
    pub pilotsim_version: String,
    pub seeds: Vec<u64>,
    pub metrics: BTreeMap<String, Stat>,
}

/// One row of the check table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scenario: String,
    pub metric: String,
    pub expected: String,
    pub got: String,
    pub pass: bool,
}

/// The tolerance of a baseline comparison.
pub fn tolerance(base: &Stat, new: &Stat) -> f64 {
    let se = (base.std.powi(2) / f64::from(base.n.max(1)) + new.std.powi(2) / f64::from(new.n.max(1))).sqrt();
    (SIGMAS * se).max(RELATIVE_FLOOR * base.mean.abs() + 1e-9)
}

fn show(s: Option<&Stat>) -> String {
    match s {
        None => "missing".into(),
        Some(s) if s.n > 1 => format!("{:.4} ± {:.4}", s.mean, s.std),
        Some(s) => format!("{:.4}", s.mean),
    }
}

/// The baseline path of a scenario.
pub fn baseline_path(dir: &Path, scenario: &str) -> PathBuf {
    dir.join(format!("{scenario}.json"))
}

/// Check one prepared scenario: run its replicas, compare thresholds and the baseline in
/// `baselines` (or rewrite it with `update`). Returns the table rows.
pub fn check(p: &Prepared, replica_count: u32, baselines: &Path, update: bool) -> Result<Vec<Row>> {
    let summaries = replicas(p, replica_count)?;
    let got = stats(&summaries);
    let name = &p.scenario.name;
    let mut rows = Vec::new();
    for t in &p.scenario.expect.thresholds {
        let t = parse_threshold(t).map_err(anyhow::Error::msg)?;
        let s = got.get(&t.metric);
        rows.push(Row {
            scenario: name.clone(),
            metric: t.metric.clone(),
            expected: format!("{} {}", t.op.as_str(), t.value),
            got: show(s),
            pass: s.is_some_and(|s| t.op.holds(s.mean, t.value)),
        });
    }
    let path = baseline_path(baselines, name);
    let recorded: BTreeMap<String, Stat> = got
        .iter()
        .filter(|(k, _)| BASELINE_METRICS.iter().any(|p| matches(p, k)))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    if update {
        let b = Baseline {
            scenario: name.clone(),
            scenario_sha256: p.sha256.clone(),
            pilotsim_version: crate::VERSION.to_string(),
            seeds: (0..replica_count).map(|i| replica_seed(p.scenario.seed, i)).collect(),
            metrics: recorded,
        };
        std::fs::create_dir_all(baselines)?;
        write::atomic(&path, (serde_json::to_string_pretty(&b)? + "\n").as_bytes())?;
        rows.push(Row {
            scenario: name.clone(),
            metric: "baseline".into(),
            expected: "—".into(),
            got: format!("written to {}", path.display()),
            pass: true,
        });
    } else if path.exists() {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let base: Baseline =
            serde_json::from_str(&text).with_context(|| format!("{}: not a pilotsim baseline", path.display()))?;
        for (metric, b) in &base.metrics {
            let s = got.get(metric);
            let pass = s.is_some_and(|s| (s.mean - b.mean).abs() <= tolerance(b, s));
            let expected = format!("{:.4} ± {:.4}", b.mean, s.map_or(f64::NAN, |s| tolerance(b, s)));
            rows.push(Row { scenario: name.clone(), metric: metric.clone(), expected, got: show(s), pass });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_one_segment() {
        assert!(matches("entities.*.achieved_share", "entities.lhcb_user.achieved_share"));
        assert!(!matches("entities.*.achieved_share", "entities.lhcb_user/alice.x.achieved_share"));
        assert!(!matches("jobs.done", "jobs.failed"));
    }

    #[test]
    fn tolerance_uses_the_spread_with_a_floor() {
        let b = Stat { mean: 0.5, std: 0.02, n: 5 };
        let n = Stat { mean: 0.5, std: 0.02, n: 5 };
        // 4·√(0.02²/5 + 0.02²/5) = 4·√0.00016 = 0.0506
        assert!((tolerance(&b, &n) - 0.050596).abs() < 1e-6);
        let still = Stat { mean: 10.0, std: 0.0, n: 5 };
        assert!((tolerance(&still, &still) - (0.1 + 1e-9)).abs() < 1e-12);
    }
}
