//! Metric names: which dotted paths of `summary.json` a scenario's runs have, so that a metric
//! named in `expect`, `--minimize`/`--maximize` or `--target` that no run can have (a typo) is
//! bad input, named with the nearest real names, and never a threshold that silently fails or
//! a tuning without a feasible value.

use std::collections::BTreeSet;

use anyhow::Result;
use serde_json::Value;

use crate::metrics::summary::Summary;
use crate::run::{self, Prepared};

/// Every numeric leaf of the summary by its dotted path, the `null` ones too (a percentile of
/// no jobs, a convergence never reached: the metric exists, this run has no value for it).
pub fn names(s: &Summary) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let value = serde_json::to_value(s).unwrap_or(Value::Null);
    leaves("", &value, false, &mut out);
    out
}

/// Marks, in a [`catalogue`], a map that was empty in the short run (`PATH.*`): a map keyed by
/// what happens (a factory's `wait_time_s` by the kinds of job that started in its pilots), whose
/// keys a full run may have.
const OPEN: &str = ".*";

fn leaves(prefix: &str, v: &Value, open: bool, out: &mut BTreeSet<String>) {
    match v {
        Value::Number(_) | Value::Null if !prefix.is_empty() => {
            out.insert(prefix.to_string());
        }
        Value::Object(map) if map.is_empty() && open && !prefix.is_empty() => {
            out.insert(format!("{prefix}{OPEN}"));
        }
        Value::Object(map) => {
            for (k, v) in map {
                leaves(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, v, open, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                leaves(&format!("{prefix}.{i}"), v, open, out);
            }
        }
        _ => {}
    }
}

/// The metric names of a scenario without running it through: the names of a run cut to its
/// first simulated second (the summary's shape depends on the scenario — its entities,
/// streams, WMSs, factories — not on how long it runs).
pub fn catalogue(p: &Prepared) -> Result<BTreeSet<String>> {
    let mut short = p.clone();
    short.scenario.duration_s = short.scenario.duration_s.min(1.0);
    short.scenario.output.warmup_s = 0.0;
    let mut f = run::simulate(&short, short.scenario.seed, |_, _| {})?;
    let mut out = BTreeSet::new();
    leaves("", &serde_json::to_value(f.summary()).unwrap_or(Value::Null), true, &mut out);
    Ok(out)
}

/// The thresholds of the scenario's `expect` whose metric no run of it has, as
/// (`expect.thresholds[i]`, message) — what `pilotsim validate` reports.
pub fn expect_problems(p: &Prepared) -> Result<Vec<(String, String)>> {
    let thresholds: Vec<_> =
        p.scenario.expect.thresholds.iter().filter_map(|t| crate::scenario::expect::parse_threshold(t).ok()).collect();
    if thresholds.is_empty() {
        return Ok(Vec::new());
    }
    let all = catalogue(p)?;
    Ok(thresholds
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let path = format!("expect.thresholds[{i}]");
            plausible(&t.metric, &all, &path).err().map(|e| (path.clone(), e[path.len() + 2..].to_string()))
        })
        .collect())
}

/// `Err` naming `metric` and the (up to three) nearest known names, if it is not one of
/// `known`; `what` says where it was written (`expect.thresholds[0]`, `--target`).
pub fn known(metric: &str, known: &BTreeSet<String>, what: &str) -> Result<(), String> {
    check(metric, known, what, false)
}

/// [`known`] against a [`catalogue`], whose maps keyed by what happens (the network links that
/// carried a transfer, …) may lack keys a full run has: a metric that differs from a known
/// name in one inner segment only (`network.links.SWT2_CPB:BNL.transfer_time_s.p95` beside
/// `network.links.BNL:SWT2_CPB.transfer_time_s.p95`) is taken as known, and so is any metric
/// under a map the short run left empty (`factory.0.wait_time_s.production.p95` under
/// `factory.0.wait_time_s`: no job had started in the factory's pilots).
pub fn plausible(metric: &str, catalogue: &BTreeSet<String>, what: &str) -> Result<(), String> {
    check(metric, catalogue, what, true)
}

fn check(metric: &str, known: &BTreeSet<String>, what: &str, loose: bool) -> Result<(), String> {
    if known.contains(metric) {
        return Ok(());
    }
    let segs: Vec<&str> = metric.split('.').collect();
    let one_key_apart = |k: &String| {
        let other: Vec<&str> = k.split('.').collect();
        other.len() == segs.len()
            && other.last() == segs.last()
            && other.iter().zip(&segs).filter(|(a, b)| a != b).count() == 1
    };
    let under_open_map = |k: &String| {
        k.strip_suffix(OPEN).is_some_and(|map| metric.strip_prefix(map).is_some_and(|rest| rest.starts_with('.')))
    };
    if loose && known.iter().any(|k| one_key_apart(k) || under_open_map(k)) {
        return Ok(());
    }
    let mut by_distance: Vec<(usize, &String)> =
        known.iter().filter(|k| !k.ends_with(OPEN)).map(|k| (distance(metric, k), k)).collect();
    by_distance.sort();
    let nearest: Vec<&str> = by_distance.iter().take(3).map(|(_, k)| k.as_str()).collect();
    Err(format!("{what}: no metric {metric:?} in the summary (nearest: {})", nearest.join(", ")))
}

/// Levenshtein distance in chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_metric_names_the_nearest() {
        let set: BTreeSet<String> =
            ["pilot_efficiency", "submission_efficiency", "jobs.done", "jain_index"].map(String::from).into();
        assert!(known("jobs.done", &set, "x").is_ok());
        let e = known("pilot_efficency", &set, "--target").unwrap_err();
        let want = "--target: no metric \"pilot_efficency\" in the summary (nearest: pilot_efficiency, submission_efficiency, ";
        assert!(e.starts_with(want), "{e}");
        let links: BTreeSet<String> = ["network.links.A:B.transfer_time_s.p95".to_string()].into();
        assert!(plausible("network.links.B:A.transfer_time_s.p95", &links, "x").is_ok());
        assert!(known("network.links.B:A.transfer_time_s.p95", &links, "x").is_err());
        assert!(plausible("network.links.A:B.transfer_time_s.p59", &links, "x").is_err());
        assert_eq!((distance("kitten", "sitting"), distance("", "ab"), distance("ab", "ab")), (3, 2, 0));
    }

    #[test]
    fn the_catalogue_of_the_quickstart_has_its_null_metrics() {
        let p = run::prepare(&crate::scenario::quickstart(), &[]).unwrap();
        let c = catalogue(&p).unwrap();
        for m in ["pilot_efficiency", "convergence_time_h", "entities.lhcb_user/alice.achieved_share", "jobs.done"] {
            assert!(c.contains(m), "{m}: {c:?}");
        }
        assert!(!c.contains("scenario") && !c.contains("digest"));
    }

    /// A factory's waits are keyed by the kinds of job that started in its pilots: none in the
    /// catalogue's first second, yet `tune --target factory.0.wait_time_s.production.p95` (the
    /// README's standby walkthrough) names a metric every full run has.
    #[test]
    fn a_metric_under_a_map_empty_in_the_catalogue_is_plausible() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let loaded = crate::scenario::load_file(&root.join("scenarios/factory_standby.ron")).unwrap();
        let c = catalogue(&run::prepare(&loaded, &[]).unwrap()).unwrap();
        assert!(c.contains("factory.0.wait_time_s.*"), "{c:?}");
        assert!(plausible("factory.0.wait_time_s.production.p95", &c, "--target").is_ok());
        assert!(plausible("factory.0.wait_time_sx.production.p95", &c, "--target").is_err());
        let e = plausible("factory.0.pilot_efficency", &c, "--target").unwrap_err();
        assert!(!e.contains(".*"), "{e}");
    }
}
