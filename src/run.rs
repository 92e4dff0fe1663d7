//! One run end to end: a loaded scenario (with `--set` overrides) and a seed in, a finished
//! world and its identity out, ready to be written. Shared by `pilotsim run`, `check`, the
//! tests and the sweeps.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};

use crate::engine::SimTime;
use crate::metrics::summary::Summary;
use crate::metrics::{ExtraColumn, ExtraValues, RunData, RunMeta};
use crate::report::outputs;
use crate::scenario::{self, Loaded, Scenario, overrides};
use crate::sim::{self, World};

/// A scenario ready to run: overrides applied and re-validated, with its identity.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub scenario: Scenario,
    /// Where it came from.
    pub origin: String,
    /// SHA-256 of the source text, extended by the `--set` assignments if any.
    pub sha256: String,
    /// The `--set` assignments applied, in order.
    pub sets: Vec<String>,
}

/// Apply `--set` assignments to a loaded scenario and validate the result.
pub fn prepare(loaded: &Loaded, sets: &[String]) -> Result<Prepared> {
    if sets.is_empty() {
        // Already validated when it was loaded.
        return Ok(Prepared {
            scenario: loaded.scenario.clone(),
            origin: loaded.origin.clone(),
            sha256: loaded.sha256.clone(),
            sets: Vec::new(),
        });
    }
    let mut scenario = overrides::apply(&loaded.scenario, sets).map_err(anyhow::Error::msg)?;
    let cfg_file = |s: &Scenario| s.dirac.as_ref().and_then(|d| d.cfg_file.clone());
    if cfg_file(&scenario) != cfg_file(&loaded.scenario) {
        let s = sets.iter().find(|s| s.contains("cfg_file")).or(sets.last()).cloned().unwrap_or_default();
        bail!("--set {s:?}: dirac.cfg_file is read when the scenario is loaded; edit the scenario file instead");
    }
    // A replay file the sets changed is read and checked now, like the scenario's own.
    let files = scenario::read_set_files(&mut scenario, &loaded.origin)?;
    let problems = scenario::validate(&scenario);
    if !problems.is_empty() {
        let lines: Vec<String> =
            problems.iter().map(|p| format!("{}: {}: {}", loaded.origin, p.path, p.message)).collect();
        bail!("after --set, the scenario is invalid:\n{}", lines.join("\n"));
    }
    // The identity covers the files the sets brought in, as a scenario's covers its own.
    let mut identity = format!("{}\n--set {}", loaded.sha256, sets.join("\n--set "));
    for (name, csv) in &files {
        identity += &format!("\n--- panda.replay {name} ---\n{csv}");
    }
    let sha256 = scenario::sha256_hex(&identity);
    Ok(Prepared { scenario, origin: loaded.origin.clone(), sha256, sets: sets.to_vec() })
}

/// A finished run.
pub struct Finished {
    pub world: World,
    pub meta: RunMeta,
}

impl Finished {
    /// The data the output writers read.
    pub fn data(&mut self) -> RunData<'_> {
        self.data_with(true, true)
    }

    /// The data of the run without the WMSs' extra columns and tables: what the summary reads.
    pub fn core_data(&mut self) -> RunData<'_> {
        self.data_with(false, false)
    }

    /// The data of the run with the WMSs' extra columns but not their tables: what a
    /// comparison's traces read.
    pub fn column_data(&mut self) -> RunData<'_> {
        self.data_with(true, false)
    }

    /// The data of a run; without `columns` and `tables`, the WMSs' extra columns and tables
    /// are left empty (the summary reads neither, and a sweep run builds nothing else: at 10⁶
    /// jobs they were a fifth of the summary's time).
    fn data_with(&mut self, columns: bool, tables: bool) -> RunData<'_> {
        let w = &mut self.world;
        let mut job_columns = Vec::new();
        let mut pilot_columns = Vec::new();
        let mut wms_tables = Vec::new();
        let mut wms_summaries = std::collections::BTreeMap::new();
        for wms in &w.wms {
            if columns {
                merge_columns(&mut job_columns, wms.job_columns(&w.core.jobs));
                merge_columns(&mut pilot_columns, wms.pilot_columns(&w.core.grid));
            }
            if tables {
                wms_tables.extend(wms.tables());
            }
            if let Some(v) = wms.summary(&w.core.jobs) {
                wms_summaries.insert(wms.name().to_string(), v);
            }
        }
        let mut factory_summaries = Vec::new();
        let end = crate::engine::SimTime::ZERO + crate::engine::SimDuration::from_secs_f64(w.scenario.duration_s);
        for p in &w.provisioners {
            if columns {
                pilot_columns.extend(p.pilot_columns(&w.core.grid));
            }
            if tables {
                wms_tables.extend(p.tables());
            }
            factory_summaries.extend(p.summaries(&w.core.grid, &w.core.jobs, &w.core.streams, end));
        }
        RunData {
            meta: self.meta.clone(),
            scenario: &w.scenario,
            jobs: &w.core.jobs,
            grid: &w.core.grid,
            recorder: &mut w.core.recorder,
            entities_of_stream: &w.core.entities.of_stream,
            streams: &w.core.streams,
            wms_names: w.wms.iter().map(|x| x.name().to_string()).collect(),
            job_columns,
            pilot_columns,
            wms_tables,
            wms_summaries,
            factory_summaries,
            network: &w.core.network,
        }
    }

    /// Write every output into `dir`; returns the summary.
    pub fn write(&mut self, dir: &Path) -> Result<Summary> {
        outputs::write_run(dir, &mut self.data())
    }

    /// The summary without writing anything.
    pub fn summary(&mut self) -> Summary {
        crate::metrics::summary::build(&mut self.core_data())
    }
}

/// Add a WMS's columns: a column another WMS already gave is filled where it was empty.
fn merge_columns(into: &mut Vec<ExtraColumn>, from: Vec<ExtraColumn>) {
    for col in from {
        match into.iter_mut().find(|c| c.name == col.name) {
            None => into.push(col),
            Some(have) => match (&mut have.values, col.values) {
                (ExtraValues::U32(a), ExtraValues::U32(b)) => a.iter_mut().zip(b).for_each(|(x, y)| *x = x.or(y)),
                (ExtraValues::U64(a), ExtraValues::U64(b)) => a.iter_mut().zip(b).for_each(|(x, y)| *x = x.or(y)),
                (ExtraValues::F64(a), ExtraValues::F64(b)) => a.iter_mut().zip(b).for_each(|(x, y)| *x = x.or(y)),
                (ExtraValues::Bool(a), ExtraValues::Bool(b)) => a.iter_mut().zip(b).for_each(|(x, y)| *x = x.or(y)),
                (ExtraValues::Str(a), ExtraValues::Str(b)) => {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x = x.take().or(y))
                }
                (_, values) => into.push(ExtraColumn { name: format!("{}_2", col.name), values }),
            },
        }
    }
}

/// Run a prepared scenario with a seed; `progress(now, end)` is called as it goes.
/// Fails if the scenario is invalid (a [`Prepared`] built by hand, not by [`prepare`]), or if
/// an invariant of the model is violated (a bug, never an input problem).
pub fn simulate(p: &Prepared, seed: u64, progress: impl FnMut(SimTime, SimTime)) -> Result<Finished> {
    let start = Instant::now();
    let world = sim::run(&p.scenario, seed, progress).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(|x| format!("{}: {}: {}", p.origin, x.path, x.message)).collect();
        anyhow::anyhow!("the scenario is invalid:\n{}", lines.join("\n"))
    })?;
    let wall_seconds = start.elapsed().as_secs_f64();
    let broken = sim::check_invariants(&world);
    if !broken.is_empty() {
        bail!("internal error: {} invariant(s) violated, first: {}", broken.len(), broken[0]);
    }
    let meta = RunMeta {
        scenario: p.scenario.name.clone(),
        scenario_sha256: p.sha256.clone(),
        seed,
        pilotsim_version: crate::VERSION,
        digest: world.core.digest.hex(),
        events: world.core.events,
        wall_seconds,
        end: SimTime::ZERO + crate::engine::SimDuration::from_secs_f64(p.scenario.duration_s),
        origin: p.origin.clone(),
        overrides: p.sets.clone(),
    };
    Ok(Finished { world, meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulate_refuses_an_invalid_scenario_with_its_problems() {
        let q = scenario::quickstart();
        let mut s = q.scenario.clone();
        s.workload[0].group = "nobody".into();
        let p = Prepared { scenario: s, origin: q.origin.clone(), sha256: q.sha256.clone(), sets: Vec::new() };
        let e = simulate(&p, 1, |_, _| {}).err().expect("refused").to_string();
        assert!(e.contains(&format!("{}: workload[0].group: unknown group \"nobody\"", q.origin)), "{e}");
    }
}
