//! Many runs: replicas of a scenario on a rayon pool, and the regression check built on
//! them. Each run has its own random streams, results are collected in order, and nothing
//! is reduced in parallel, so results do not depend on the number of threads.

pub mod check;
pub mod names;
pub mod outputs;
pub mod plan;
pub mod slurm;
pub mod store;
pub mod text;
pub mod tune;

use std::collections::BTreeMap;

use anyhow::Result;
use rayon::prelude::*;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::engine::rng::derive_seed;
use crate::metrics::summary::Summary;
use crate::run::{self, Prepared};
use crate::scenario::Loaded;
use plan::{Plan, Vary};
use store::{Manifest, RunRecord};

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

/// Options of a sweep.
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    /// Replicas per point.
    pub replicas: u32,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Run only shard `I` of `N`.
    pub shard: Option<(u32, u32)>,
    /// `--set` assignments applied to every point.
    pub sets: Vec<String>,
}

/// What a sweep call did.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOutcome {
    /// Runs of the whole grid.
    pub total: usize,
    /// Runs this call was responsible for (the shard, or all).
    pub mine: usize,
    /// Runs found already done and skipped.
    pub skipped: usize,
    /// Merged outputs were written (the sweep is complete and unsharded).
    pub merged: bool,
}

/// The plan and manifest of a sweep, with every point's scenario prepared (so a bad
/// `--vary` value fails before any run starts).
pub fn prepare_sweep(loaded: &Loaded, vary: Vec<Vary>, opts: &SweepOptions) -> Result<(Plan, Manifest, Vec<Prepared>)> {
    let base = run::prepare(loaded, &opts.sets)?;
    let plan = Plan::new(vary, opts.replicas, base.scenario.seed)?;
    let prepared = plan
        .points
        .iter()
        .map(|p| {
            let mut sets = opts.sets.clone();
            sets.extend(p.sets());
            run::prepare(loaded, &sets).map_err(|e| e.context(format!("point {}", p.key())))
        })
        .collect::<Result<Vec<_>>>()?;
    let manifest = Manifest {
        scenario: base.scenario.name.clone(),
        scenario_sha256: base.sha256.clone(),
        pilotsim_version: crate::VERSION.to_string(),
        master_seed: base.scenario.seed,
        replicas: plan.replicas,
        vary: plan.vary.clone(),
        runs: plan.runs.len(),
    };
    Ok((plan, manifest, prepared))
}

/// Run a sweep (or one shard of it) into `out`, skipping finished runs; write the merged
/// outputs when the sweep is unsharded. `progress(done, of)` is called after every run.
pub fn sweep(
    loaded: &Loaded,
    vary: Vec<Vary>,
    opts: &SweepOptions,
    out: &Path,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<SweepOutcome> {
    let (plan, manifest, prepared) = prepare_sweep(loaded, vary, opts)?;
    store::ensure_manifest(out, &manifest)?;
    let mine: Vec<&plan::RunSpec> = match opts.shard {
        Some((i, n)) => plan.shard(i, n),
        None => plan.runs.iter().collect(),
    };
    let todo: Vec<&plan::RunSpec> = mine.iter().copied().filter(|r| !store::is_done(out, r)).collect();
    let skipped = mine.len() - todo.len();
    let done = AtomicUsize::new(skipped);
    progress(skipped, mine.len());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(opts.threads.unwrap_or(0)).build()?;
    pool.install(|| {
        // Runs are handed out one at a time in run order, each to the next free thread (greedy
        // list scheduling). A split into halves, what `par_iter` does, gives each thread a
        // contiguous block of the plan, and a varied parameter that lengthens runs along it
        // (more pilots, more jobs) then loads one thread more than the other: the sweep waits
        // for the slower half.
        todo.iter().par_bridge().try_for_each(|r| -> Result<()> {
            let rec = simulate_one(&plan, &prepared, r)?;
            store::write_run(out, &rec)?;
            progress(done.fetch_add(1, Ordering::SeqCst) + 1, mine.len());
            Ok(())
        })
    })?;
    let merged = opts.shard.is_none_or(|(_, n)| n == 1);
    if merged {
        let runs = store::read_runs(out)?;
        // On the sweep's own pool, so that `--threads` also bounds the drawing of the charts.
        pool.install(|| outputs::write_all(out, &manifest, &runs))?;
    }
    Ok(SweepOutcome { total: plan.runs.len(), mine: mine.len(), skipped, merged })
}

/// Combine shard directories into `out`: the same files as an unsharded sweep.
pub fn merge(dirs: &[std::path::PathBuf], out: &Path) -> Result<usize> {
    let (manifest, runs) = store::gather(dirs)?;
    store::ensure_manifest(out, &manifest)?;
    let plan_runs = runs.len();
    for r in &runs {
        store::write_run(out, r)?;
    }
    outputs::write_all(out, &manifest, &runs)?;
    Ok(plan_runs)
}

/// Summary metrics that do not depend on the machine: every number of `summary.json` but
/// the seed, wall-clock timing and event counts, by dotted path (`entities.lhcb_user.achieved_share`;
/// list items by index: `factory.0.pilot_efficiency`).
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
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), v, out);
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

/// Run `r` of `plan` (its point's prepared scenario, its seed) and its record: what a sweep
/// stores per run, whether it writes it to a file (the CLI) or keeps it (Python).
pub fn simulate_one(plan: &Plan, prepared: &[Prepared], r: &plan::RunSpec) -> Result<RunRecord> {
    let summary = run::simulate(&prepared[r.point], r.seed, |_, _| {})?.summary();
    Ok(RunRecord {
        run: r.id(),
        index: r.index,
        point: r.point,
        replica: r.replica,
        seed: r.seed,
        values: plan.points[r.point].values.iter().cloned().collect(),
        metrics: metrics(&summary),
    })
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
