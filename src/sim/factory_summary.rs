//! What the pilot factories did, for `summary.json` (`factory[i]`) and `pilots.parquet`
//! (issue 12 item 6): the counters of [`FactoryStats`](super::factory::FactoryStats), the head
//! node's load (submissions per finished job), the jobs finished per hour over the second half
//! of the run (the steady state the seed's closed forms describe), and the waits of the
//! analysis and production jobs that ran in its pilots.

use serde::Serialize;

use super::factory::{Factories, FactoryStats};
use crate::engine::SimTime;
use crate::grid::Grid;
use crate::metrics::summary::WaitStats;
use crate::metrics::{ExtraColumn, ExtraValues};
use crate::workload::{Job, JobKind, JobStatus, StreamInfo};

/// One factory's section.
#[derive(Debug, Clone, Serialize)]
pub struct FactorySummary {
    /// `Generic` or `Startd`.
    pub kind: &'static str,
    pub site: String,
    /// The PanDA queue it serves; absent for DIRAC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    #[serde(flatten)]
    pub stats: FactoryStats,
    /// Pilots submitted per job finished (Done) in its pilots: the head node's load per job.
    pub submissions_per_finished_job: Option<f64>,
    /// Jobs finished (Done) per hour in its pilots over the second half of the run.
    pub jobs_per_hour_second_half: f64,
    /// Mean standby pilots queued (submitted, not yet started) at its Generator's cycles.
    pub mean_standby: Option<f64>,
    /// Waits (submission → start) of the jobs that started in its pilots, by kind.
    pub wait_time_s: std::collections::BTreeMap<&'static str, WaitStats>,
}

impl Factories {
    /// Per pilot id, the index of the factory that owns it (None: its WMS's own).
    fn owners(&self, grid: &Grid) -> Vec<Option<u32>> {
        grid.pilots.iter().map(|p| self.owner.get(p.id as usize).copied().flatten()).collect()
    }

    /// The `summary.json` section: one entry per factory, in scenario order.
    pub fn summary(&self, grid: &Grid, jobs: &[Job], streams: &[StreamInfo], end: SimTime) -> Vec<FactorySummary> {
        let owners = self.owners(grid);
        let half = SimTime::from_millis(end.as_millis() / 2);
        let hours = (end.as_millis() - half.as_millis()) as f64 / 3.6e6;
        self.list
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mine = |j: &&Job| j.pilot.and_then(|p| owners[p as usize]) == Some(i as u32);
                let mut waits = [Vec::new(), Vec::new()];
                let mut second_half = 0u64;
                for j in jobs.iter().filter(mine) {
                    let kind = streams[j.stream as usize].kind;
                    if let Some(m) = j.matched {
                        waits[usize::from(kind == JobKind::Analysis)].push((m - j.submitted).as_secs_f64());
                    }
                    if j.status == JobStatus::Done && j.ended.is_some_and(|t| t > half) {
                        second_half += 1;
                    }
                }
                let [prod, anal] = waits;
                let (site, _, queue) = f.cfg.target();
                let s = f.stats;
                FactorySummary {
                    kind: if f.is_startd() { "Startd" } else { "Generic" },
                    site: site.to_string(),
                    queue: queue.map(str::to_string),
                    stats: s,
                    submissions_per_finished_job: (s.jobs_done > 0)
                        .then(|| s.pilots_submitted as f64 / s.jobs_done as f64),
                    jobs_per_hour_second_half: if hours > 0.0 { second_half as f64 / hours } else { 0.0 },
                    mean_standby: (s.cycles > 0).then(|| s.standby_sum as f64 / s.cycles as f64),
                    wait_time_s: [("production", WaitStats::of(prod)), ("analysis", WaitStats::of(anal))]
                        .into_iter()
                        .filter(|(_, w)| w.n > 0)
                        .collect(),
                }
            })
            .collect()
    }

    /// `pilots.parquet`'s `factory` column: `<kind>@<site>` for a factory's pilot.
    pub fn pilot_column(&self, grid: &Grid) -> ExtraColumn {
        let labels: Vec<String> = self
            .list
            .iter()
            .map(|f| format!("{}@{}", if f.is_startd() { "Startd" } else { "Generic" }, f.cfg.target().0))
            .collect();
        let values = self.owners(grid).into_iter().map(|o| o.map(|i| labels[i as usize].clone())).collect();
        ExtraColumn { name: "factory".into(), values: ExtraValues::Str(values) }
    }
}
