//! `summary.json`: counts, efficiencies, fairness and waiting times of one run.
//!
//! Maps are `BTreeMap`s so the JSON has a stable key order; every number is finite or
//! `null` (serde_json writes NaN as `null`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::recorder::Level;
use super::{RunData, percentile};
use crate::grid::PilotStatus;
use crate::workload::JobStatus;

/// Job counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobCounts {
    pub submitted: u64,
    pub done: u64,
    pub failed: u64,
    pub running_at_end: u64,
    pub waiting_at_end: u64,
}

/// Pilot counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PilotSummary {
    pub submitted: u64,
    pub aborted: u64,
    pub cancelled: u64,
    pub failed: u64,
    /// Started but ran no job.
    pub empty: u64,
    /// Ran at least one job.
    pub used: u64,
    pub waiting_at_end: u64,
    pub running_at_end: u64,
    /// Submitted but never started: aborted, cancelled while waiting, or still waiting.
    /// (Defaults to 0 when reading a summary written before it existed.)
    #[serde(default)]
    pub never_started: u64,
    /// Submissions a CE refused (its `MaxWaitingJobs` / `MaxTotalJobs`); not in `submitted`.
    #[serde(default)]
    pub refused: u64,
}

/// Statistics of some durations, s: waiting times (submission to match) here, transfer times
/// and turnarounds elsewhere ([`WaitStats::of`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitStats {
    pub n: u64,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
}

/// A share entity's target and achieved share, and how fast it got there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntitySummary {
    /// `group` or `user` (a user's share is within its group).
    pub level: String,
    pub target_share: f64,
    /// What `achieved_share` counts: `jobs` (DIRAC's group shares count jobs) or `cores`
    /// (PanDA's global shares count cores).
    #[serde(default)]
    pub share_unit: String,
    /// Share of running time after the warm-up, in `share_unit` (job-seconds or core-seconds).
    pub achieved_share: Option<f64>,
    /// Share of running core-seconds after the warm-up (the same as `achieved_share` for a
    /// core-counted entity).
    #[serde(default)]
    pub achieved_core_share: Option<f64>,
    /// Share of delivered CPU work (running time × CPU power) after the warm-up.
    pub achieved_cpu_share: Option<f64>,
    /// |achieved − target|.
    pub deviation: Option<f64>,
    /// Largest |running share − target| over the samples after the warm-up.
    pub max_deviation: Option<f64>,
    /// Hours after which |running share − target| stays within the tolerance; null if it
    /// never settles (the last sample is outside).
    pub convergence_time_h: Option<f64>,
    /// Mean time from submission to match of its jobs.
    pub mean_wait_s: Option<f64>,
}

/// The whole `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub scenario: String,
    pub scenario_sha256: String,
    pub seed: u64,
    /// The `--set` assignments the run was made with, in order (`scenario.ron` beside this file
    /// is the scenario after them).
    #[serde(default)]
    pub overrides: Vec<String>,
    pub pilotsim_version: String,
    pub digest: String,
    pub events: u64,
    pub simulated_hours: f64,
    pub wall_seconds: f64,
    pub events_per_second: f64,
    pub jobs: JobCounts,
    pub pilots: PilotSummary,
    /// used / started pilots.
    pub pilot_efficiency: Option<f64>,
    /// used / submitted pilots: how many of the pilots sent out ran a job.
    #[serde(default)]
    pub submission_efficiency: Option<f64>,
    pub warmup_hours: f64,
    pub entities: BTreeMap<String, EntitySummary>,
    /// Largest |running share − target| over group entities and samples after the warm-up.
    pub max_share_deviation: Option<f64>,
    /// Tolerance used for the convergence times.
    pub convergence_tolerance: f64,
    /// When every group has converged (the latest group convergence time); null if one never does.
    pub convergence_time_h: Option<f64>,
    /// Jain's fairness index over groups of achieved/target: 1 is perfectly fair, 1/n worst.
    pub jain_index: Option<f64>,
    /// Waiting time per group.
    pub wait_time_s: BTreeMap<String, WaitStats>,
    /// Every user's waits and achieved share within its group (module `users`): the users of
    /// groups whose users share them (`group/user`) and PanDA's analysis users (`gshare/user`);
    /// absent when there are none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub users: BTreeMap<String, super::users::UserSummary>,
    /// Jobs a WMS gave up before they ran (PanDA's closed jobs); absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub jobs_cancelled: u64,
    /// Each WMS's own figures (PanDA: brokerage, data, timeouts, Harvester); absent when none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wms: BTreeMap<String, serde_json::Value>,
    /// The simulated transfers on the grid's links (module `network_summary`); absent when the
    /// run moved no data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<super::network_summary::NetworkSummary>,
    /// The pilot factories (seed 003; `wms::factories::summary`), in scenario order; absent
    /// without a `factory` section.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub factory: Vec<serde_json::Value>,
    /// GPUs (module `gpus`): utilisation and GPU-job waits per site and model; absent when the
    /// grid declares no GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<super::gpus::GpuSummary>,
    /// What makes the run's figures mean little (`metrics::warnings`): no job created or none
    /// finished, every task waiting for a nucleus, pilot efficiency under 10 %, a stream or
    /// queue that never ran anything. Empty for a meaningful run.
    #[serde(default)]
    pub warnings: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl WaitStats {
    /// Count, mean, median and 95th percentile of `v` (null statistics when it is empty).
    pub fn of(mut v: Vec<f64>) -> WaitStats {
        // Unstable is exact here: values equal under `total_cmp` have the same bits.
        v.sort_unstable_by(f64::total_cmp);
        let mean = if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 };
        WaitStats {
            n: v.len() as u64,
            mean: finite(mean),
            p50: finite(percentile(&v, 0.5)),
            p95: finite(percentile(&v, 0.95)),
        }
    }
}

/// The first time after which every deviation in `series` (time in hours, deviation) stays
/// within `tolerance`; `None` if the last one is outside or there is no sample.
pub fn convergence_time(series: &[(f64, f64)], tolerance: f64) -> Option<f64> {
    let last_bad = series.iter().rposition(|&(_, d)| d > tolerance);
    match last_bad {
        None => series.first().map(|x| x.0),
        Some(i) => series.get(i + 1).map(|x| x.0),
    }
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`; `None` for no values or all zeros.
pub fn jain(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    (sq > 0.0).then(|| sum * sum / (x.len() as f64 * sq))
}

/// Build the summary of a finished run.
pub fn build(run: &mut RunData) -> Summary {
    // One pass over the jobs and one over the pilots (at 10⁶ jobs each pass reads 64 MB),
    // counting by status (`Cancelled` is the last of the job statuses, and of the pilots').
    let mut by_status = [0u64; JobStatus::Cancelled as usize + 1];
    let mut entity_waits: Vec<Vec<f64>> = vec![Vec::new(); run.recorder.entities.len()];
    for j in run.jobs {
        by_status[j.status as usize] += 1;
        if let Some(w) = j.wait_s() {
            let e = run.entities_of_stream[j.stream as usize];
            entity_waits[e.group].push(w);
            if let Some(u) = e.user {
                entity_waits[u].push(w);
            }
        }
    }
    let count = |st: JobStatus| by_status[st as usize];
    let jobs = JobCounts {
        submitted: run.jobs.len() as u64 - count(JobStatus::Pending),
        done: count(JobStatus::Done),
        failed: count(JobStatus::Failed),
        running_at_end: count(JobStatus::Running),
        waiting_at_end: count(JobStatus::Waiting),
    };
    let all = &run.grid.pilots;
    let (mut pilot_status, mut waiting, mut empty, mut used) = ([0u64; PilotStatus::Cancelled as usize + 1], 0, 0, 0);
    for p in all {
        pilot_status[p.status as usize] += 1;
        waiting += u64::from(p.status.is_waiting());
        if p.started().is_some() {
            if p.jobs_run == 0 {
                empty += 1;
            } else {
                used += 1;
            }
        }
    }
    let pcount = |st: PilotStatus| pilot_status[st as usize];
    let n_started = (empty + used) as f64;
    let pilots = PilotSummary {
        submitted: all.len() as u64,
        aborted: pcount(PilotStatus::Aborted),
        cancelled: pcount(PilotStatus::Cancelled),
        failed: pcount(PilotStatus::Failed),
        empty,
        used,
        waiting_at_end: waiting,
        running_at_end: pcount(PilotStatus::Running),
        never_started: all.len() as u64 - empty - used,
        refused: u64::from(run.grid.counts().refused),
    };
    let end = run.meta.end;
    let achieved = run.recorder.achieved_shares(end);
    let cpu = run.recorder.achieved_cpu_shares(end);
    let cores = run.recorder.achieved_core_shares(end);
    let tolerance = run.scenario.output.convergence_tolerance;
    let warmup = run.scenario.output.warmup_s;
    let r = &*run.recorder;
    let wait_stats: Vec<WaitStats> = entity_waits.into_iter().map(WaitStats::of).collect();
    let mut entities = BTreeMap::new();
    let (mut max_dev, mut converged, mut all_converge) = (None::<f64>, None::<f64>, true);
    let mut ratios = Vec::new();
    for (e, def) in r.entities.iter().enumerate() {
        let a = finite(achieved[e]);
        let series: Vec<(f64, f64)> = r
            .samples
            .iter()
            .filter(|s| s.time.as_secs_f64() >= warmup && s.share[e].is_finite())
            .map(|s| (s.time.as_hours_f64(), (s.share[e] - def.target_share).abs()))
            .collect();
        let entity_max = series.iter().map(|x| x.1).reduce(f64::max);
        let convergence = convergence_time(&series, tolerance);
        if def.level == Level::Group {
            if let Some(d) = entity_max {
                max_dev = Some(max_dev.map_or(d, |m| m.max(d)));
            }
            match convergence {
                Some(t) => converged = Some(converged.map_or(t, |c| c.max(t))),
                None => all_converge = false,
            }
            if let Some(a) = a.filter(|_| def.target_share > 0.0) {
                ratios.push(a / def.target_share);
            }
        }
        entities.insert(
            def.name.clone(),
            EntitySummary {
                level: def.level.as_str().into(),
                target_share: def.target_share,
                share_unit: def.unit.as_str().into(),
                achieved_share: a,
                achieved_core_share: finite(cores[e]),
                achieved_cpu_share: finite(cpu[e]),
                deviation: a.map(|a| (a - def.target_share).abs()),
                max_deviation: entity_max,
                convergence_time_h: convergence,
                mean_wait_s: wait_stats[e].mean,
            },
        );
    }
    // Group entities are exactly the workload's groups: their waits are the groups' waits.
    let waits: BTreeMap<String, WaitStats> = r
        .entities
        .iter()
        .zip(&wait_stats)
        .filter(|(def, _)| def.level == Level::Group)
        .map(|(def, w)| (def.name.clone(), w.clone()))
        .collect();
    let achieved_options: Vec<Option<f64>> = achieved.iter().map(|a| finite(*a)).collect();
    let users = super::users::build(run, &wait_stats, &achieved_options);
    let site_names: Vec<&str> = run.scenario.sites.iter().map(|s| s.name.as_str()).collect();
    let m = &run.meta;
    let mut summary = Summary {
        scenario: m.scenario.clone(),
        scenario_sha256: m.scenario_sha256.clone(),
        seed: m.seed,
        overrides: m.overrides.clone(),
        pilotsim_version: m.pilotsim_version.to_string(),
        digest: m.digest.clone(),
        events: m.events,
        simulated_hours: m.end.as_hours_f64(),
        wall_seconds: m.wall_seconds,
        events_per_second: if m.wall_seconds > 0.0 { m.events as f64 / m.wall_seconds } else { 0.0 },
        jobs,
        pilot_efficiency: (n_started > 0.0).then(|| pilots.used as f64 / n_started),
        submission_efficiency: (pilots.submitted > 0).then(|| pilots.used as f64 / pilots.submitted as f64),
        pilots,
        warmup_hours: run.scenario.output.warmup_s / 3600.0,
        entities,
        max_share_deviation: max_dev,
        convergence_tolerance: tolerance,
        convergence_time_h: if all_converge { converged } else { None },
        jain_index: jain(&ratios),
        wait_time_s: waits,
        users,
        jobs_cancelled: count(JobStatus::Cancelled),
        wms: run.wms_summaries.clone(),
        factory: run.factory_summaries.clone(),
        network: super::network_summary::build(run.network, &site_names, end),
        gpus: super::gpus::summary(run),
        warnings: Vec::new(),
    };
    summary.warnings = super::warnings::of(run, &summary);
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convergence_is_the_start_of_the_last_run_within_tolerance() {
        let s = [(2.0, 0.2), (3.0, 0.01), (4.0, 0.08), (5.0, 0.04), (6.0, 0.03)];
        assert_eq!(convergence_time(&s, 0.05), Some(5.0));
        assert_eq!(convergence_time(&s, 0.5), Some(2.0));
        assert_eq!(convergence_time(&s[..3], 0.05), None, "ends outside");
        assert_eq!(convergence_time(&[], 0.05), None);
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain(&[3.0, 0.0, 0.0]).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!((jain(&[1.2, 0.4]).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0]), None);
    }
}
