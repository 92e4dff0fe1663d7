//! The table of a comparison: every metric of A and B with the difference B − A and its 95 %
//! confidence interval.
//!
//! Replicas run with the same seeds on both sides (common random numbers) are paired: the
//! interval is that of the mean of the replica-by-replica differences, t(0.975, n−1)·s_d/√n,
//! which is far tighter than that of two independent means when the two configurations react
//! alike to the same random draws. Unpaired samples (two existing directories run with
//! different seeds) get Welch's interval, with the degrees of freedom rounded down
//! (conservative). A difference is "larger than the noise" when its interval excludes zero.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::sweep::outputs::{ci95, t975};
use crate::sweep::{Stat, stat};

/// One metric of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Dotted path into `summary.json` (`wait_time_s.lhcb_user.p95`).
    pub metric: String,
    /// Over the replicas of A and of B that report it.
    pub a: Stat,
    pub b: Stat,
    /// Mean of B − A (paired: over the replicas both report).
    pub diff: f64,
    /// Half-width of the 95 % confidence interval of `diff`; `None` with fewer than two
    /// replicas (pairs) on a side.
    pub ci95: Option<f64>,
    /// The interval excludes zero.
    pub significant: bool,
}

/// How the replicas of the two sides relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Replica i of A and of B ran with the same seed.
    Paired,
    /// Independent samples.
    Unpaired,
}

/// The rows of every metric either side reports, in name order.
pub fn rows(a: &[BTreeMap<String, f64>], b: &[BTreeMap<String, f64>], pairing: Pairing) -> Vec<Row> {
    let names: BTreeSet<&String> = a.iter().chain(b).flat_map(|m| m.keys()).collect();
    names
        .into_iter()
        .filter_map(|name| {
            let of = |side: &[BTreeMap<String, f64>]| -> Vec<f64> {
                side.iter().filter_map(|m| m.get(name).copied()).filter(|v| v.is_finite()).collect()
            };
            let (va, vb) = (of(a), of(b));
            if va.is_empty() || vb.is_empty() {
                return None;
            }
            let (sa, sb) = (stat(&va), stat(&vb));
            let (diff, ci95) = match pairing {
                Pairing::Paired => {
                    let d: Vec<f64> = a
                        .iter()
                        .zip(b)
                        .filter_map(|(x, y)| Some(y.get(name)? - x.get(name)?))
                        .filter(|v| v.is_finite())
                        .collect();
                    if d.is_empty() {
                        (sb.mean - sa.mean, None)
                    } else {
                        let sd = stat(&d);
                        (sd.mean, (sd.n >= 2).then(|| ci95(&sd)))
                    }
                }
                Pairing::Unpaired => (sb.mean - sa.mean, welch(&sa, &sb)),
            };
            let significant = ci95.is_some_and(|h| diff.abs() > h) || (ci95 == Some(0.0) && diff != 0.0);
            Some(Row { metric: name.clone(), a: sa, b: sb, diff, ci95, significant })
        })
        .collect()
}

/// Welch's 95 % half-width for the difference of two independent means.
fn welch(a: &Stat, b: &Stat) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.std.powi(2) / f64::from(a.n), b.std.powi(2) / f64::from(b.n));
    let se2 = va + vb;
    if se2 == 0.0 {
        return Some(0.0);
    }
    let df = se2.powi(2) / (va.powi(2) / f64::from(a.n - 1) + vb.powi(2) / f64::from(b.n - 1));
    Some(t975((df.floor() as u32).max(1)) * se2.sqrt())
}

/// The metrics an operator reads first, in the order the table shows them: throughput,
/// pilots, fairness, then each group's and user's shares and waits, the factories' and the
/// WMSs' own figures. Every other metric is in `compare.json` and `compare.parquet`.
pub fn is_key(metric: &str) -> bool {
    key_rank(metric).is_some()
}

/// Sort key of a key metric (see [`is_key`]).
pub fn key_rank(metric: &str) -> Option<usize> {
    const EXACT: [&str; 11] = [
        "jobs.submitted",
        "jobs.done",
        "jobs.failed",
        "pilots.submitted",
        "pilots.empty",
        "pilots.aborted",
        "pilot_efficiency",
        "submission_efficiency",
        "max_share_deviation",
        "jain_index",
        "convergence_time_h",
    ];
    if let Some(i) = EXACT.iter().position(|m| *m == metric) {
        return Some(i);
    }
    // Names may hold dots (`users.lhcb_user/john.doe.wait_s.p95`): matched by prefix and suffix.
    let is = |prefix: &str, suffix: &str| metric.starts_with(prefix) && metric.ends_with(suffix);
    // A user's share is a row of its own (`users.`), not an entity's.
    let rank = if is("entities.", ".achieved_share") && !metric.contains('/') {
        20
    } else if is("users.", ".achieved_share") {
        21
    } else if is("wait_time_s.", ".p50") {
        30
    } else if is("wait_time_s.", ".p95") {
        31
    } else if is("users.", ".wait_s.p50") {
        32
    } else if is("users.", ".wait_s.p95") {
        33
    } else if is("factory.", ".pilot_efficiency") {
        40
    } else if is("factory.", ".throughput_jobs_per_h") {
        41
    } else if metric == "network.transfers" || metric == "network.bytes_moved" {
        50
    } else {
        return None;
    };
    Some(rank)
}

/// The key rows, in [`key_rank`] order (then by name).
pub fn key_rows(rows: &[Row]) -> Vec<&Row> {
    let mut out: Vec<(usize, &Row)> = rows.iter().filter_map(|r| Some((key_rank(&r.metric)?, r))).collect();
    out.sort_by(|x, y| x.0.cmp(&y.0).then_with(|| x.1.metric.cmp(&y.1.metric)));
    out.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(values: &[f64]) -> Vec<BTreeMap<String, f64>> {
        values.iter().map(|v| BTreeMap::from([("pilot_efficiency".to_string(), *v)])).collect()
    }

    #[test]
    fn paired_interval_is_that_of_the_differences() {
        // Differences 0.10, 0.12, 0.08, 0.10: mean 0.10, s = 0.016330, t(0.975, 3) = 3.182,
        // half-width 3.182 · 0.016330 / 2 = 0.025981.
        let a = side(&[0.50, 0.60, 0.40, 0.55]);
        let b = side(&[0.60, 0.72, 0.48, 0.65]);
        let r = &rows(&a, &b, Pairing::Paired)[0];
        assert!((r.diff - 0.10).abs() < 1e-12);
        assert!((r.ci95.unwrap() - 0.025_981).abs() < 1e-5, "{:?}", r.ci95);
        assert!(r.significant);
        // The same numbers unpaired: the spread between replicas swamps the difference.
        let u = &rows(&a, &b, Pairing::Unpaired)[0];
        assert!((u.diff - 0.10).abs() < 1e-12);
        assert!(u.ci95.unwrap() > 0.1, "{:?}", u.ci95);
        assert!(!u.significant);
    }

    #[test]
    fn welch_interval_matches_a_hand_computation() {
        // A: 1, 2, 3 (mean 2, s² 1); B: 2, 4, 6, 8 (mean 5, s² 6.6667). se² = 1/3 + 6.6667/4 =
        // 2.0; df = 4 / ((1/3)²/2 + (1.6667)²/3) = 4 / (0.05556 + 0.92593) = 4.075 → 4;
        // t(0.975, 4) = 2.776; half-width 2.776 · √2 = 3.9259.
        let a = side(&[1.0, 2.0, 3.0]);
        let b = side(&[2.0, 4.0, 6.0, 8.0]);
        let r = &rows(&a, &b, Pairing::Unpaired)[0];
        assert!((r.diff - 3.0).abs() < 1e-12);
        assert!((r.ci95.unwrap() - 3.9259).abs() < 1e-3, "{:?}", r.ci95);
        assert!(!r.significant);
    }

    #[test]
    fn one_run_a_side_has_no_interval_and_metrics_of_one_side_are_left_out() {
        let a = vec![BTreeMap::from([("jain_index".to_string(), 0.9), ("only_a".to_string(), 1.0)])];
        let b = vec![BTreeMap::from([("jain_index".to_string(), 0.8)])];
        let r = rows(&a, &b, Pairing::Paired);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].ci95, None);
        assert!(!r[0].significant);
        assert!((r[0].diff + 0.1).abs() < 1e-12);
    }

    #[test]
    fn identical_sides_differ_by_nothing_and_a_constant_shift_is_significant() {
        let a = side(&[0.5, 0.6, 0.7]);
        let same = &rows(&a, &a, Pairing::Paired)[0];
        assert_eq!((same.diff, same.ci95, same.significant), (0.0, Some(0.0), false));
        let shifted = &rows(&a, &side(&[0.6, 0.7, 0.8]), Pairing::Paired)[0];
        assert!(shifted.significant, "{shifted:?}");
    }

    #[test]
    fn key_rows_come_in_reading_order() {
        let names = [
            "wait_time_s.g.p95",
            "users.g/j.doe.wait_s.p95",
            "users.g/j.doe.wait_s.mean",
            "entities.g.achieved_share",
            "entities.g/j.doe.achieved_share",
            "jobs.done",
            "pilots.submitted",
            "events",
        ];
        let maps: Vec<BTreeMap<String, f64>> = vec![names.iter().map(|n| (n.to_string(), 1.0)).collect()];
        let all = rows(&maps, &maps, Pairing::Paired);
        let keys: Vec<&str> = key_rows(&all).iter().map(|r| r.metric.as_str()).collect();
        let want = [
            "jobs.done",
            "pilots.submitted",
            "entities.g.achieved_share",
            "wait_time_s.g.p95",
            "users.g/j.doe.wait_s.p95",
        ];
        assert_eq!(keys, want);
    }
}
