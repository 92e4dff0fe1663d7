//! Two configurations side by side (`pilotsim compare`): two scenario files, one scenario with
//! two sets of overrides, or two existing run or sweep directories.
//!
//! Scenarios are run R times each with common random numbers: replica i of A and replica i of
//! B run with the same seed (derived from A's seed, as a sweep derives a replica's), so that
//! both sides see the same job arrivals, lengths and pilot latencies where their settings let
//! them, and the paired difference ([`table`]) has a tight interval. Directories are compared
//! as they are: paired where their runs' seeds are equal, as independent samples otherwise.

pub mod html;
pub mod outputs;
pub mod table;
pub mod trace;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use rayon::prelude::*;

use crate::metrics::summary::Summary;
use crate::run::{self, Prepared};
use crate::sweep::{self, replica_seed, store};
pub use table::{Pairing, Row};
pub use trace::Trace;

/// One replica of one side: its seed, its summary's metrics and (for a run made here) its
/// trace for the overlay charts.
#[derive(Debug, Clone, PartialEq)]
pub struct Replica {
    pub seed: u64,
    pub metrics: BTreeMap<String, f64>,
    pub trace: Option<Trace>,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// `A` or `B`.
    pub label: String,
    /// What it is, for titles and the table's header: a scenario and its overrides, or a
    /// directory.
    pub description: String,
    /// The scenario's name.
    pub scenario: String,
    /// Simulated hours (0 when unknown: a sweep directory).
    pub hours: f64,
    pub replicas: Vec<Replica>,
}

/// Two sides and the table of their differences.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub pairing: Pairing,
    /// Every metric both sides report.
    pub rows: Vec<Row>,
}

impl Comparison {
    /// The table of two sides.
    pub fn of(a: Side, b: Side) -> Result<Self> {
        let pairing = if a.replicas.len() == b.replicas.len()
            && a.replicas.iter().zip(&b.replicas).all(|(x, y)| x.seed == y.seed)
        {
            Pairing::Paired
        } else {
            Pairing::Unpaired
        };
        let metrics = |s: &Side| s.replicas.iter().map(|r| r.metrics.clone()).collect::<Vec<_>>();
        let rows = table::rows(&metrics(&a), &metrics(&b), pairing);
        if rows.is_empty() {
            bail!(
                "{} ({}) and {} ({}) have no metric in common: nothing to compare",
                a.label,
                a.description,
                b.label,
                b.description
            );
        }
        Ok(Self { a, b, pairing, rows })
    }
}

/// Run `replicas` replicas of A and of B with common random numbers (replica i of both with
/// [`replica_seed`] of A's seed and i) on `threads` threads (all cores when `None`);
/// `progress(done, of)` after each run. Results do not depend on the thread count.
pub fn run_scenarios(
    a: (&Prepared, &str),
    b: (&Prepared, &str),
    replicas: u32,
    threads: Option<usize>,
    progress: impl Fn(usize, usize) + Sync,
) -> Result<Comparison> {
    if replicas == 0 {
        bail!("--replicas must be at least 1");
    }
    let master = a.0.scenario.seed;
    let total = 2 * replicas as usize;
    let done = AtomicUsize::new(0);
    progress(0, total);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build()?;
    let plan: Vec<(usize, u32)> = (0..replicas).flat_map(|i| [(0, i), (1, i)]).collect();
    let results: Vec<Replica> = pool.install(|| {
        plan.par_iter()
            .map(|&(side, i)| {
                let p = if side == 0 { a.0 } else { b.0 };
                let seed = replica_seed(master, i);
                let mut finished = run::simulate(p, seed, |_, _| {})
                    .with_context(|| format!("{}, replica {i}", if side == 0 { "A" } else { "B" }))?;
                let summary = finished.summary();
                // With the WMSs' columns (PanDA's queue and times, each pilot's factory), not
                // their tables.
                let trace = Trace::of(&finished.column_data());
                progress(done.fetch_add(1, Ordering::SeqCst) + 1, total);
                Ok(Replica { seed, metrics: sweep::metrics(&summary), trace: Some(trace) })
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for (r, &(side, _)) in results.into_iter().zip(&plan) {
        if side == 0 { ra.push(r) } else { rb.push(r) }
    }
    let side = |label: &str, p: &Prepared, what: &str, replicas| Side {
        label: label.into(),
        description: what.into(),
        scenario: p.scenario.name.clone(),
        hours: p.scenario.duration_s / 3600.0,
        replicas,
    };
    Comparison::of(side("A", a.0, a.1, ra), side("B", b.0, b.1, rb))
}

/// A side read from an existing directory: a run directory (`summary.json`: one replica) or
/// a sweep directory of one point (its runs).
pub fn read_dir(dir: &Path, label: &str) -> Result<Side> {
    let summary = dir.join("summary.json");
    let description = dir.display().to_string();
    if summary.is_file() {
        let text = std::fs::read_to_string(&summary).with_context(|| format!("reading {}", summary.display()))?;
        let s: Summary = serde_json::from_str(&text).with_context(|| summary.display().to_string())?;
        return Ok(Side {
            label: label.into(),
            description,
            scenario: s.scenario.clone(),
            hours: s.simulated_hours,
            replicas: vec![Replica { seed: s.seed, metrics: sweep::metrics(&s), trace: None }],
        });
    }
    if store::manifest_path(dir).is_file() {
        let manifest = store::read_manifest(dir)?;
        let runs = store::read_runs(dir)?;
        let points: std::collections::BTreeSet<usize> = runs.iter().map(|r| r.point).collect();
        if points.len() != 1 {
            bail!(
                "{}: a sweep of {} points ({}); compare takes a sweep of one point (run `pilotsim sweep` \
                 with one value, or compare two scenarios)",
                dir.display(),
                points.len(),
                manifest.vary.iter().map(|v| format!("--vary {}={}", v.path, v.spec)).collect::<Vec<_>>().join(" ")
            );
        }
        let mut runs = runs;
        runs.sort_by_key(|r| r.replica);
        return Ok(Side {
            label: label.into(),
            description,
            scenario: manifest.scenario,
            hours: 0.0,
            replicas: runs.into_iter().map(|r| Replica { seed: r.seed, metrics: r.metrics, trace: None }).collect(),
        });
    }
    let why = if dir.is_dir() { "" } else { " (no such directory)" };
    bail!("{}: neither a run directory (summary.json) nor a sweep directory (sweep.json){why}", dir.display())
}
