//! Many runs: replicas of a scenario on a rayon pool, and the regression check built on
//! them. Each run has its own random streams, results are collected in order, and nothing
//! is reduced in parallel, so results do not depend on the number of threads.

pub mod check;
pub mod slurm;

use std::collections::BTreeMap;

use anyhow::Result;
use rayon::prelude::*;

use crate::engine::rng::derive_seed;
use crate::metrics::summary::Summary;
use crate::run::{self, Prepared};

/// The seed of replica `i` of a scenario whose master seed is `master`.
pub fn replica_seed(master: u64, i: u32) -> u64 {
    derive_seed(master, &format!("replica/{i}"))
}

/// Run `n` replicas (seeds from [`replica_seed`]) in parallel; summaries in replica order.
pub fn replicas(p: &Prepared, n: u32) -> Result<Vec<Summary>> {
    (0..n)
        .into_par_iter()
        .map(|i| Ok(run::simulate(p, replica_seed(p.scenario.seed, i), |_, _| {})?.summary()))
        .collect()
}

/// Summary metrics that do not depend on the machine: every number of `summary.json` but
/// the seed, wall-clock timing and event counts, by dotted path (`entities.lhcb_user.achieved_share`).
pub fn metrics(s: &Summary) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let value = serde_json::to_value(s).expect("a summary serialises");
    flatten("", &value, &mut out);
    for skip in ["seed", "wall_seconds", "events_per_second", "events"] {
        out.remove(skip);
    }
    out
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, f64>) {
    match v {
        serde_json::Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.insert(prefix.to_string(), x);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        _ => {}
    }
}

/// Mean and sample standard deviation of a metric over replicas (NaN-free: missing values
/// are skipped and counted out).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stat {
    pub mean: f64,
    pub std: f64,
    pub n: u32,
}

/// [`Stat`] of each metric over the replicas that report it.
pub fn stats(summaries: &[Summary]) -> BTreeMap<String, Stat> {
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in summaries {
        for (k, v) in metrics(s) {
            values.entry(k).or_default().push(v);
        }
    }
    values.into_iter().map(|(k, v)| (k, stat(&v))).collect()
}

/// Mean and sample standard deviation (0 for a single value).
pub fn stat(v: &[f64]) -> Stat {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 { v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    Stat { mean, std: var.sqrt(), n: v.len() as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_and_seeds() {
        let s = stat(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert!((s.std - 1.2909944487358056).abs() < 1e-12);
        assert_eq!(stat(&[5.0]).std, 0.0);
        assert_ne!(replica_seed(1, 0), replica_seed(1, 1));
        assert_ne!(replica_seed(1, 0), replica_seed(2, 0));
        assert_eq!(replica_seed(1, 3), replica_seed(1, 3));
    }
}
