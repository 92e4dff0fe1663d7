//! GPUs in the outputs of a run whose grid declares some: the GPU columns of `jobs.parquet` and
//! `pilots.parquet`, `gpu_timeseries.parquet` (GPUs of each site and model held by pilots and
//! used by jobs over time) and the `gpus` section of `summary.json`.
//!
//! A GPU "kind" is one (site, model) pair: the CEs' inventory entries of one model at one site
//! are summed. Utilisation is exact, from each GPU pilot's and job's run (not from the samples):
//! GPU-hours held by pilots, and used by jobs, after the warm-up (as the shares), over the GPUs
//! of the kind × the hours from the warm-up to the end.

use serde::{Deserialize, Serialize};

use super::columns::{Column, Values};
use super::recorder::GpuSample;
use super::{RunData, percentile};
use crate::engine::{SimDuration, SimTime};
use crate::ids::PilotId;

/// The (site, model) kinds of a grid and which one each CE inventory entry belongs to.
#[derive(Debug, Clone, Default)]
pub struct GpuKinds<'a> {
    /// (site, model, GPUs in all), in first-seen order (CE order, then entry order).
    pub kinds: Vec<(&'a str, &'a str, u32)>,
    /// The models, in first-seen order.
    pub models: Vec<&'a str>,
    /// Per kind, its model's index in `models`.
    model_of: Vec<usize>,
    /// Per CE, per inventory entry: its kind.
    of_entry: Vec<Vec<usize>>,
}

impl<'a> GpuKinds<'a> {
    pub fn of(run: &RunData<'a>) -> Self {
        let mut k = GpuKinds::default();
        for site in &run.scenario.sites {
            for ce in &site.ces {
                let mut entries = Vec::with_capacity(ce.gpus.len());
                for g in &ce.gpus {
                    let key = (site.name.as_str(), g.model.as_str());
                    let i = k.kinds.iter().position(|x| (x.0, x.1) == key).unwrap_or_else(|| {
                        k.kinds.push((key.0, key.1, 0));
                        k.kinds.len() - 1
                    });
                    k.kinds[i].2 += g.gpus_per_node.saturating_mul(g.nodes);
                    entries.push(i);
                }
                k.of_entry.push(entries);
            }
        }
        k.model_of = vec![0; k.kinds.len()];
        for (i, (m, members)) in groups(k.kinds.iter().map(|x| x.1)).into_iter().enumerate() {
            k.models.push(m);
            for kind in members {
                k.model_of[kind] = i;
            }
        }
        k
    }

    /// The kind of inventory entry `entry` of CE `ce`.
    pub fn kind(&self, ce: u32, entry: u8) -> Option<usize> {
        self.of_entry.get(ce as usize)?.get(usize::from(entry)).copied()
    }

    /// The index in `models` of kind `k`'s model.
    pub fn model_index(&self, k: usize) -> usize {
        self.model_of[k]
    }

    /// A sample's GPUs held and used, summed per kind (its vectors are per CE inventory entry,
    /// flattened in CE then entry order, as `grid::gpu::Gpus::usage` gives them).
    pub fn per_kind(&self, s: &GpuSample) -> (Vec<u32>, Vec<u32>) {
        let n = self.kinds.len();
        let (mut held, mut used) = (vec![0u32; n], vec![0u32; n]);
        for (i, &k) in self.of_entry.iter().flatten().enumerate() {
            held[k] += s.held.get(i).copied().unwrap_or(0);
            used[k] += s.used.get(i).copied().unwrap_or(0);
        }
        (held, used)
    }
}

/// The GPU kind pilot `p` held its GPUs from (None: a CPU pilot, or one that never ran).
fn pilot_kind(run: &RunData, kinds: &GpuKinds, p: PilotId) -> Option<usize> {
    let (_, entry) = run.grid.gpus.record().get(&p)?;
    kinds.kind(run.grid.pilot(p).ce, (*entry)?)
}

/// `gpus` (what each job holds while it runs) and `gpu_model` (the model of the node it used,
/// null for a CPU job or one that has not run) for the jobs `rows`.
pub fn job_columns<'a>(run: &'a RunData, rows: std::ops::Range<usize>) -> Vec<Column<'a>> {
    let kinds = GpuKinds::of(run);
    let jobs = &run.jobs[rows];
    let gpus = |j: &crate::workload::Job| run.streams.get(j.stream as usize).map_or(0, |s| s.gpus);
    let model = |j: &crate::workload::Job| {
        if gpus(j) == 0 {
            return None;
        }
        let k = pilot_kind(run, &kinds, j.pilot()?)?;
        Some(kinds.model_index(k) as u32)
    };
    let models = kinds.models.clone();
    vec![
        Column::new("gpus", Values::U32(jobs.iter().map(|j| Some(gpus(j))).collect::<Vec<_>>().into())),
        Column::new(
            "gpu_model",
            Values::Coded { texts: models.clone(), codes: jobs.iter().map(model).collect::<Vec<_>>().into() },
        ),
    ]
}

/// `gpus` (asked for) and `gpu_model` (of the node it held them on) of every pilot.
pub fn pilot_columns<'a>(run: &'a RunData) -> Vec<Column<'a>> {
    let kinds = GpuKinds::of(run);
    let record = run.grid.gpus.record();
    let pilots = &run.grid.pilots;
    let model = |p: PilotId| Some(kinds.model_index(pilot_kind(run, &kinds, p)?) as u32);
    let models = kinds.models.clone();
    let gpus: Vec<Option<u32>> = pilots.iter().map(|p| Some(record.get(&p.id).map_or(0, |r| r.0))).collect();
    vec![
        Column::new("gpus", Values::U32(gpus.into())),
        Column::new(
            "gpu_model",
            Values::Coded { texts: models, codes: pilots.iter().map(|p| model(p.id)).collect::<Vec<_>>().into() },
        ),
    ]
}

/// `gpu_timeseries.parquet`: one row per sample and (site, model): `time_s`, `site`, `model`,
/// `gpus` (the inventory), `held` (by running pilots), `used` (by their running jobs).
pub fn timeseries<'a>(run: &'a RunData) -> Vec<Column<'a>> {
    let kinds = GpuKinds::of(run);
    let n = kinds.kinds.len();
    let (mut time, mut kind, mut held, mut used) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for s in &run.recorder.gpu_samples {
        let (h, u) = kinds.per_kind(s);
        for k in 0..n {
            time.push(Some(s.time.as_secs_f64()));
            kind.push(Some(k as u32));
            held.push(Some(h[k]));
            used.push(Some(u[k]));
        }
    }
    let sites: Vec<&str> = kinds.kinds.iter().map(|k| k.0).collect();
    let models: Vec<&str> = kinds.kinds.iter().map(|k| k.1).collect();
    let inventory: Vec<Option<u32>> = kind.iter().map(|k| k.map(|k| kinds.kinds[k as usize].2)).collect();
    vec![
        Column::new("time_s", Values::F64(time.into())),
        Column::new("site", Values::Coded { texts: sites, codes: kind.clone().into() }),
        Column::new("model", Values::Coded { texts: models, codes: kind.into() }),
        Column::new("gpus", Values::U32(inventory.into())),
        Column::new("held", Values::U32(held.into())),
        Column::new("used", Values::U32(used.into())),
    ]
}

/// One site and model's GPUs over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuKindSummary {
    pub site: String,
    pub model: String,
    /// GPUs of this model at the site.
    pub gpus: u32,
    /// Fraction of its GPU time after the warm-up used by jobs: GPU-hours of jobs / (GPUs ×
    /// hours from the warm-up to the end).
    pub utilisation: Option<f64>,
    /// Fraction of its GPU time after the warm-up held by pilots (the batch system's view).
    pub held_fraction: Option<f64>,
    /// GPU jobs that ran on it (started, at any time).
    pub jobs_run: u64,
    /// Their waits from submission to match, hours.
    pub wait_p50_h: Option<f64>,
    pub wait_p95_h: Option<f64>,
}

/// `summary.json` `gpus`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSummary {
    /// GPUs of the grid.
    pub gpus: u32,
    /// As in [`GpuKindSummary`], over every GPU.
    pub utilisation: Option<f64>,
    pub held_fraction: Option<f64>,
    /// Jobs that need GPUs: submitted, started, still waiting at the end.
    pub jobs_submitted: u64,
    pub jobs_started: u64,
    pub jobs_waiting_at_end: u64,
    pub wait_p50_h: Option<f64>,
    pub wait_p95_h: Option<f64>,
    /// Per site, every model together.
    pub sites: Vec<GpuKindSummary>,
    /// Per model, every site together (`site` is empty).
    pub models: Vec<GpuKindSummary>,
    /// Per site and model.
    pub kinds: Vec<GpuKindSummary>,
}

/// The `gpus` section: None when the grid declares no GPU.
pub fn summary(run: &RunData) -> Option<GpuSummary> {
    let kinds = GpuKinds::of(run);
    if kinds.kinds.iter().all(|k| k.2 == 0) {
        return None;
    }
    // GPU time counts from the warm-up to the end, as the shares do; in GPU-milliseconds,
    // summed as integers: exact, so held ≥ used holds to the last digit.
    let end = run.meta.end;
    let start = (SimTime::ZERO + SimDuration::from_secs_f64(run.scenario.output.warmup_s)).min(end);
    let ms = |from: SimTime, to: Option<SimTime>| {
        let (from, to) = (from.clamp(start, end), to.unwrap_or(end).clamp(start, end));
        (to - from).0
    };
    let n = kinds.kinds.len();
    let (mut held_ms, mut used_ms) = (vec![0u64; n], vec![0u64; n]);
    for (&p, &(gpus, entry)) in run.grid.gpus.record() {
        let pilot = run.grid.pilot(p);
        if let (Some(k), Some(began)) = (entry.and_then(|e| kinds.kind(pilot.ce, e)), pilot.started()) {
            held_ms[k] += u64::from(gpus) * ms(began, pilot.ended());
        }
    }
    let mut waits: Vec<Vec<f64>> = vec![Vec::new(); n];
    let (mut submitted, mut waiting, mut all_waits) = (0, 0, Vec::new());
    for j in run.jobs {
        let gpus = run.streams.get(j.stream as usize).map_or(0, |s| s.gpus);
        if gpus == 0 || j.status == crate::workload::JobStatus::Pending {
            continue;
        }
        submitted += 1;
        waiting += u64::from(j.status == crate::workload::JobStatus::Waiting);
        let (Some(p), Some(matched), Some(wait)) = (j.pilot(), j.matched(), j.wait_s()) else { continue };
        all_waits.push(wait / 3600.0);
        if let Some(k) = pilot_kind(run, &kinds, p) {
            used_ms[k] += u64::from(gpus) * ms(matched, j.ended());
            waits[k].push(wait / 3600.0);
        }
    }
    let row = |site: &str, model: &str, members: &[usize]| {
        let gpus: u32 = members.iter().map(|&k| kinds.kinds[k].2).sum();
        let capacity = u64::from(gpus) * (end - start).0;
        let ratio = |x: u64| (capacity > 0).then(|| x as f64 / capacity as f64);
        let mut w: Vec<f64> = members.iter().flat_map(|&k| waits[k].iter().copied()).collect();
        w.sort_unstable_by(f64::total_cmp);
        GpuKindSummary {
            site: site.to_string(),
            model: model.to_string(),
            gpus,
            utilisation: ratio(members.iter().map(|&k| used_ms[k]).sum()),
            held_fraction: ratio(members.iter().map(|&k| held_ms[k]).sum()),
            jobs_run: w.len() as u64,
            wait_p50_h: finite(percentile(&w, 0.5)),
            wait_p95_h: finite(percentile(&w, 0.95)),
        }
    };
    let sites = groups(kinds.kinds.iter().map(|k| k.0)).into_iter().map(|(s, m)| row(s, "", &m)).collect();
    let models = groups(kinds.kinds.iter().map(|k| k.1)).into_iter().map(|(x, m)| row("", x, &m)).collect();
    let all: Vec<usize> = (0..n).collect();
    let total = row("", "", &all);
    all_waits.sort_unstable_by(f64::total_cmp);
    Some(GpuSummary {
        gpus: total.gpus,
        utilisation: total.utilisation,
        held_fraction: total.held_fraction,
        jobs_submitted: submitted,
        jobs_started: all_waits.len() as u64,
        jobs_waiting_at_end: waiting,
        wait_p50_h: finite(percentile(&all_waits, 0.5)),
        wait_p95_h: finite(percentile(&all_waits, 0.95)),
        sites,
        models,
        kinds: (0..n).map(|k| row(kinds.kinds[k].0, kinds.kinds[k].1, &[k])).collect(),
    })
}

/// The distinct keys of the kinds (first-seen order) and the kinds of each.
fn groups<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<(&'k str, Vec<usize>)> {
    let mut out: Vec<(&str, Vec<usize>)> = Vec::new();
    for (k, key) in keys.enumerate() {
        match out.iter_mut().find(|(x, _)| *x == key) {
            Some((_, members)) => members.push(k),
            None => out.push((key, vec![k])),
        }
    }
    out
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
