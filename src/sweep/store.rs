//! A sweep's directory: the manifest `sweep.json`, one JSON file per finished run in
//! `runs/`, written atomically as each run completes, so a killed sweep resumes where it
//! stopped and shards can be merged. A sweep refuses to mix runs of a different scenario
//! or grid into an existing directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plan::{RunSpec, Vary};
use crate::metrics::write;

/// What identifies a sweep: scenario, grid, replicas, master seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub scenario: String,
    /// SHA-256 of the scenario text and the base `--set` assignments.
    pub scenario_sha256: String,
    pub pilotsim_version: String,
    pub master_seed: u64,
    pub replicas: u32,
    pub vary: Vec<Vary>,
    /// Total runs of the full grid.
    pub runs: usize,
}

/// One finished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run: String,
    pub index: usize,
    pub point: usize,
    pub replica: u32,
    pub seed: u64,
    /// The varied values of its point, by path.
    pub values: BTreeMap<String, Value>,
    /// Every machine-independent summary metric, by dotted path.
    pub metrics: BTreeMap<String, f64>,
}

/// `DIR/sweep.json`.
pub fn manifest_path(dir: &Path) -> PathBuf {
    dir.join("sweep.json")
}

fn runs_dir(dir: &Path) -> PathBuf {
    dir.join("runs")
}

/// The file of a run.
pub fn run_path(dir: &Path, run: &RunSpec) -> PathBuf {
    runs_dir(dir).join(format!("{}.json", run.id()))
}

/// Read a manifest.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = manifest_path(dir);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a pilotsim sweep manifest", path.display()))
}

/// Write the manifest into a new directory, or check that the existing one is the same
/// sweep; a different one is an error that says what changed. Either way, the temporaries
/// that killed writes left in the directory and in `runs/` are removed
/// ([`write::remove_stale_temporaries`]: one sweep process per directory, so another
/// process's temporary is an orphan; each Slurm shard has its own directory).
pub fn ensure_manifest(dir: &Path, m: &Manifest) -> Result<()> {
    std::fs::create_dir_all(runs_dir(dir)).with_context(|| format!("creating {}", dir.display()))?;
    for d in [dir.to_path_buf(), runs_dir(dir)] {
        write::remove_stale_temporaries(&d).with_context(|| format!("cleaning {}", d.display()))?;
    }
    if !manifest_path(dir).exists() {
        return write::atomic(&manifest_path(dir), (serde_json::to_string_pretty(m)? + "\n").as_bytes())
            .with_context(|| format!("writing {}", manifest_path(dir).display()));
    }
    let old = read_manifest(dir)?;
    if old == *m {
        return Ok(());
    }
    let what = if old.scenario_sha256 != m.scenario_sha256 {
        let short = |s: &str| s.chars().take(12).collect::<String>();
        format!(
            "the scenario changed (SHA-256 {} then, {} now)",
            short(&old.scenario_sha256),
            short(&m.scenario_sha256)
        )
    } else if old.vary != m.vary || old.replicas != m.replicas {
        "the grid (--vary or --replicas) changed".to_string()
    } else if old.master_seed != m.master_seed {
        "the seed changed".to_string()
    } else {
        format!("it was made by pilotsim {}", old.pilotsim_version)
    };
    bail!("{} holds another sweep: {what}. Refusing to mix old and new results; use another --out.", dir.display())
}

/// True if the run's file exists and is not empty (run files are not synced to disk, so
/// after a power loss one may be left empty: that run is run again).
pub fn is_done(dir: &Path, run: &RunSpec) -> bool {
    std::fs::metadata(run_path(dir, run)).is_ok_and(|m| m.len() > 0)
}

/// Write a finished run atomically (named by its id, like [`run_path`]).
pub fn write_run(dir: &Path, rec: &RunRecord) -> Result<()> {
    let path = runs_dir(dir).join(format!("{}.json", rec.run));
    write::atomic(&path, (serde_json::to_string_pretty(rec)? + "\n").as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Every finished run in `dir`, by run index (temporary files of killed writes are ignored).
pub fn read_runs(dir: &Path) -> Result<Vec<RunRecord>> {
    let mut out = Vec::new();
    let rd = runs_dir(dir);
    let entries = std::fs::read_dir(&rd).with_context(|| format!("reading {}", rd.display()))?;
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        let name = p.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        out.push(serde_json::from_str(&text).with_context(|| format!("{}: not a pilotsim run record", p.display()))?);
    }
    out.sort_by_key(|r: &RunRecord| r.index);
    Ok(out)
}

/// Runs of several shard directories with identical manifests, checked complete and
/// consistent; returns the manifest and the runs in index order.
pub fn gather(dirs: &[PathBuf]) -> Result<(Manifest, Vec<RunRecord>)> {
    let Some(first) = dirs.first() else { bail!("merge needs at least one sweep directory") };
    let manifest = read_manifest(first)?;
    let mut runs: BTreeMap<usize, RunRecord> = BTreeMap::new();
    for d in dirs {
        let m = read_manifest(d)?;
        if m != manifest {
            bail!("{} and {} are not shards of the same sweep (their sweep.json differ)", first.display(), d.display());
        }
        for r in read_runs(d)? {
            if let Some(prev) = runs.get(&r.index) {
                if *prev != r {
                    bail!("run {} differs between shards", r.run);
                }
            }
            runs.insert(r.index, r);
        }
    }
    let missing = (0..manifest.runs).filter(|i| !runs.contains_key(i)).count();
    if missing > 0 {
        bail!("{missing} of {} runs are missing from {dirs:?}: run the remaining shards first", manifest.runs);
    }
    Ok((manifest, runs.into_values().collect()))
}
