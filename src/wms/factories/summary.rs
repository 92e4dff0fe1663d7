//! What the pilot factories did, for `summary.json` (`factory[i]`), `pilots.parquet` and
//! `factory_cycles.parquet`: the counters of
//! [`FactoryStats`](super::factory::FactoryStats), the head node's load (submissions per
//! finished job), the jobs finished per hour over the second half of the run beside the seed's
//! closed form with the measured Tsw and Tj, the waits and slowdowns of the analysis and
//! production jobs that ran in its pilots, and every startd Generator cycle.

use std::collections::BTreeMap;

use serde::Serialize;

use super::factory::{CycleRow, Factory, FactoryStats, Mode};
use super::provisioner::Factories;
use crate::engine::SimTime;
use crate::factory::generic::gpf_throughput;
use crate::factory::standby::Estimates;
use crate::factory::startd::spf_throughput;
use crate::grid::Grid;
use crate::metrics::summary::WaitStats;
use crate::metrics::{ExtraColumn, ExtraValues, Table};
use crate::workload::{Job, JobKind, JobStatus, StreamInfo};

/// Above this part of empty looks for a job, a factory lacked work and the seed's closed form
/// (every node kept busy) does not describe its throughput.
pub const CLOSED_FORM_MAX_EMPTY: f64 = 0.05;

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
    /// x, the worker nodes it can hold: its CEs' slots (at most `max_total` generic pilots), or
    /// for startd pilots the slots over `vms`.
    pub nodes: u32,
    /// Tsw measured: mean time from submission to a worker node of its pilots that started.
    pub mean_queue_wait_s: Option<f64>,
    /// Tj measured: mean CPU work at the CE's power of the jobs finished in its pilots.
    pub mean_job_s: Option<f64>,
    /// The seed's closed form with the measured Tsw and Tj, jobs per hour when every node is
    /// kept busy ("Pilot Submission Efficiency"): generic x/(Tsw + cycle/2 + tp + tpw + Tj);
    /// startd x·vms/(tp + interval/2 + tpw + Tj·max(1, vms/slot_cpus)) after the first round.
    pub closed_form_jobs_per_hour: Option<f64>,
    /// The part of its pilots' looks for a job that found none: generic pilots that exited
    /// without a job over pilots started; startd fetches without a job over fetches.
    pub pilots_without_job_fraction: Option<f64>,
    /// The closed form describes this run: its premise, that a pilot always finds a job (the
    /// factory is limited by its nodes, not by the work), held — at most
    /// [`CLOSED_FORM_MAX_EMPTY`] of the looks found none. Otherwise the throughput is the
    /// work's arrival rate and the closed form is only a capacity.
    pub closed_form_applies: bool,
    /// Mean standby pilots queued (submitted, not yet started) at its Generator's cycles.
    pub mean_standby: Option<f64>,
    /// Slot time of its pilots (cores × start → end, or the run's end), hours.
    pub held_slot_hours: f64,
    /// Pilot efficiency: the part of that time its slots ran jobs (suspended time included).
    /// A startd pilot idles between jobs and until its removal; a generic one runs its script.
    pub pilot_efficiency: Option<f64>,
    /// Waits (submission → start) of the jobs that started in its pilots, by kind.
    pub wait_time_s: BTreeMap<&'static str, WaitStats>,
    /// Mean slowdown of the jobs finished in its pilots, by kind: run time (start → end) over
    /// the run alone (tpw + CPU work at the CE's power); above 1 by the time suspended.
    pub slowdown: BTreeMap<&'static str, f64>,
}

/// Index of a kind in per-kind arrays, and its name in the outputs.
fn kind_index(k: JobKind) -> usize {
    usize::from(k == JobKind::Analysis)
}
const KIND_NAMES: [&str; 2] = ["production", "analysis"];

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

impl Factory {
    /// x of the closed forms (see [`FactorySummary::nodes`]); for startd pilots, the pool
    /// the standby controller sees.
    pub(super) fn nodes(&self, grid: &Grid) -> u32 {
        let slots: u32 = self.ces.iter().map(|&c| grid.ce_slots[c as usize]).sum();
        match &self.mode {
            Mode::Generic(_) => match self.cfg.generator_settings().and_then(|g| g.max_total) {
                Some(m) => slots.min(m),
                None => slots,
            },
            Mode::Startd { settings, .. } => slots / settings.vms.max(1),
        }
    }

    /// The seed's closed form, jobs per hour, with measured `tsw` and `tj` (seconds).
    fn closed_form(&self, x: f64, tsw: Option<f64>, tj: Option<f64>) -> Option<f64> {
        let (tp, tpw) = (self.steps.0.as_secs_f64(), self.steps.1.as_secs_f64());
        let per_s = match &self.mode {
            Mode::Generic(_) => gpf_throughput(x, tsw? + self.cfg.cycle().as_secs_f64() / 2.0, tj?, tp, tpw).exact,
            Mode::Startd { settings, .. } => {
                let cpus = settings.slot_cpus.unwrap_or(f64::from(settings.vms));
                let tp = tp + settings.pilot_interval.as_secs_f64() / 2.0;
                spf_throughput(x, settings.vms, cpus, tp, tpw, tj?).exact
            }
        };
        per_s.is_finite().then_some(per_s * 3600.0)
    }
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
                let mine = |j: &&Job| j.pilot().and_then(|p| owners[p as usize]) == Some(i as u32);
                let mut waits = [Vec::new(), Vec::new()];
                let mut slowdowns = [Vec::new(), Vec::new()];
                let mut job_s = Vec::new();
                let mut second_half = 0u64;
                let mut busy_s = f.stats.busy_s;
                let tpw = f.steps.1.as_secs_f64();
                for j in jobs.iter().filter(mine) {
                    let k = kind_index(streams[j.stream as usize].kind);
                    if let Some(m) = j.matched() {
                        waits[k].push((m - j.submitted).as_secs_f64());
                        if j.status == JobStatus::Running {
                            busy_s += (end - m).as_secs_f64();
                        }
                    }
                    if j.status != JobStatus::Done {
                        continue;
                    }
                    let (Some(m), Some(e), Some(c)) = (j.matched(), j.ended(), j.ce()) else { continue };
                    let alone = j.cpu_work / grid.ces[c as usize].cpu_power;
                    job_s.push(alone);
                    if alone + tpw > 0.0 {
                        slowdowns[k].push((e - m).as_secs_f64() / (alone + tpw));
                    }
                    if e > half {
                        second_half += 1;
                    }
                }
                let [prod, anal] = waits;
                let own = grid.pilots.iter().filter(|p| owners[p.id as usize] == Some(i as u32));
                let started: Vec<_> = own.filter_map(|p| Some((p, p.started()?))).collect();
                let tsw: Vec<f64> = started.iter().map(|(p, s)| (*s - p.submitted).as_secs_f64()).collect();
                let held_s: f64 = started
                    .iter()
                    .map(|(p, s)| f64::from(p.cores) * (p.ended().unwrap_or(end) - *s).as_secs_f64())
                    .sum();
                let (tsw, tj) = (mean(&tsw), mean(&job_s));
                let nodes = f.nodes(grid);
                let (site, _, queue) = f.cfg.target();
                let s = f.stats;
                let (empty_looks, looks) = if f.is_startd() {
                    (s.empty_fetches, s.empty_fetches + s.jobs_started)
                } else {
                    (s.pilots_without_job, s.pilots_started)
                };
                let empty = (looks > 0).then(|| empty_looks as f64 / looks as f64);
                FactorySummary {
                    kind: if f.is_startd() { "Startd" } else { "Generic" },
                    site: site.to_string(),
                    queue: queue.map(str::to_string),
                    stats: s,
                    submissions_per_finished_job: (s.jobs_done > 0)
                        .then(|| s.pilots_submitted as f64 / s.jobs_done as f64),
                    jobs_per_hour_second_half: if hours > 0.0 { second_half as f64 / hours } else { 0.0 },
                    nodes,
                    mean_queue_wait_s: tsw,
                    mean_job_s: tj,
                    closed_form_jobs_per_hour: f.closed_form(f64::from(nodes), tsw, tj),
                    pilots_without_job_fraction: empty,
                    closed_form_applies: empty.is_some_and(|e| e <= CLOSED_FORM_MAX_EMPTY),
                    mean_standby: (s.cycles > 0).then(|| s.standby_sum as f64 / s.cycles as f64),
                    held_slot_hours: held_s / 3600.0,
                    pilot_efficiency: (held_s > 0.0).then(|| busy_s / held_s),
                    wait_time_s: [("production", WaitStats::of(prod)), ("analysis", WaitStats::of(anal))]
                        .into_iter()
                        .filter(|(_, w)| w.n > 0)
                        .collect(),
                    slowdown: KIND_NAMES.iter().zip(&slowdowns).filter_map(|(n, v)| Some((*n, mean(v)?))).collect(),
                }
            })
            .collect()
    }

    /// Each factory's label in the outputs: `<kind>@<site>`.
    fn labels(&self) -> Vec<String> {
        self.list
            .iter()
            .map(|f| format!("{}@{}", if f.is_startd() { "Startd" } else { "Generic" }, f.cfg.target().0))
            .collect()
    }

    /// `pilots.parquet`'s `factory` column: `<kind>@<site>` for a factory's pilot.
    pub fn pilot_column(&self, grid: &Grid) -> ExtraColumn {
        let labels = self.labels();
        let values = self.owners(grid).into_iter().map(|o| o.map(|i| labels[i as usize].clone())).collect();
        ExtraColumn { name: "factory".into(), values: ExtraValues::Str(values) }
    }

    /// `factory_cycles.parquet`: a row per startd Generator cycle — what its standby policy
    /// saw (queued jobs, running startd pilots, idle VMs), its target and the standby pilots
    /// queued after the cycle's submissions, and the adaptive controller's estimates (null for
    /// the other policies). None without startd factories.
    pub fn cycles_table(&self) -> Option<Table> {
        if self.cycles.is_empty() {
            return None;
        }
        let labels = self.labels();
        let rows = &self.cycles;
        let u32s = |name: &str, f: fn(&CycleRow) -> u32| ExtraColumn {
            name: name.into(),
            values: ExtraValues::U32(rows.iter().map(|r| Some(f(r))).collect()),
        };
        let est = |name: &str, f: fn(Estimates) -> f64| ExtraColumn {
            name: name.into(),
            values: ExtraValues::F64(rows.iter().map(|r| r.estimates.map(f)).collect()),
        };
        let columns = vec![
            ExtraColumn {
                name: "time_s".into(),
                values: ExtraValues::F64(rows.iter().map(|r| Some(r.time.as_millis() as f64 / 1e3)).collect()),
            },
            ExtraColumn {
                name: "factory".into(),
                values: ExtraValues::Str(rows.iter().map(|r| Some(labels[r.factory as usize].clone())).collect()),
            },
            ExtraColumn {
                name: "queued_jobs".into(),
                values: ExtraValues::U64(rows.iter().map(|r| Some(r.obs.queued_jobs)).collect()),
            },
            u32s("running_startds", |r| r.obs.running_startds),
            u32s("idle_vms", |r| r.obs.idle_vms),
            u32s("target", |r| r.target),
            u32s("standby", |r| r.standby),
            est("queue_wait_estimate_s", |e| e.queue_wait_s),
            est("lifetime_estimate_s", |e| e.lifetime_s),
            est("arrivals_per_hour_estimate", |e| e.arrivals_per_s * 3600.0),
            est("job_ends_per_hour_estimate", |e| e.ends_per_s * 3600.0),
            est("safety", |e| e.safety),
        ];
        Some(Table { name: "factory_cycles".into(), columns })
    }
}
