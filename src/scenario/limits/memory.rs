//! The memory a run needs at its peak, estimated from the scenario before it runs, over every
//! source of rows: DIRAC jobs, PanDA production, analysis and replayed jobs (with their retries),
//! the pilots of the directors, Harvester and the factories, PanDA's file transfers, the
//! samples of `timeseries.parquet`, and the corrector's accounting snapshots.
//!
//! Each term is a count times a calibrated size; the counts are upper bounds where the scenario
//! gives one and the expected value where only a distribution does (payload retries).

use crate::factory::standby::StandbyPolicy;
use crate::panda::harvester::config::MapType;
use crate::scenario::factory::FactoryConfig;
use crate::scenario::panda::PandaConfig;
use crate::scenario::types::Scenario;

/// Peak bytes per DIRAC job of a whole run (simulation and outputs).
///
/// Calibrated with `/usr/bin/time -v` (maximum resident set size) on
/// `benches/scenarios/dirac_million_jobs.ron`: 0.5 M jobs (26 k pilots) 244 MB, 1 M jobs
/// (47 k pilots) 435 MB, 2 M jobs (1.8 M pilots) 1 360 MB: a job costs about 380 B (its row
/// in the world's table, its arrival event, its task-queue entry, its rows while the Parquet
/// tables are built), a pilot about 300 B ([`BYTES_PER_PILOT`]).
pub const BYTES_PER_JOB: f64 = 400.0;
/// Peak bytes per PanDA job: its row in the world's table and in PanDA's job table, its
/// brokerage decision rows and its rows in `jobs.parquet` and `brokerage.parquet`. The ATLAS
/// week of `generate atlas --jobs 2e6` (947 151 jobs, about as many pilots and 10⁶ transfers)
/// peaks at 1.46 GiB: 1.65 kB a job with its pilot and transfers.
pub const BYTES_PER_PANDA_JOB: f64 = 1_200.0;
/// Peak bytes per pilot (its grid record, its WMS's row, its `pilots.parquet` row).
pub const BYTES_PER_PILOT: f64 = 300.0;
/// Peak bytes per file transfer (the network's record and its `transfers.parquet` row).
pub const BYTES_PER_TRANSFER: f64 = 150.0;
/// Peak bytes per sample and share entity (the sample in memory, its `timeseries.parquet`
/// row, its chart points). Calibrated on the quickstart (6 entities at most): 86 401
/// samples peak at 158 MB against 69 MB with 145 samples, 172 B per sample and entity.
pub const BYTES_PER_SAMPLE_ENTITY: f64 = 200.0;
/// Bytes per accounting snapshot and entity (a `u64` each, plus the snapshot's own 32 B).
pub const BYTES_PER_SNAPSHOT_ENTITY: f64 = 8.0;
/// Memory of a run whatever its size (the binary, the allocator, the chart renderer, which
/// draws on every thread into a 17 MB supersampled raster each): the quickstart (15 000 jobs)
/// peaks at 88 MiB on 2 cores.
pub const BASE_BYTES: f64 = 96.0 * 1024.0 * 1024.0;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// What a run of a scenario is expected to need at its peak, and why.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MemoryEstimate {
    /// DIRAC jobs (`workload`).
    pub jobs: f64,
    /// PanDA jobs: production, analysis and replayed, each attempt a job.
    pub panda_jobs: f64,
    /// Pilots: one per job, plus those no job asks for (Harvester's pull-mode bootstrap pilot
    /// every cycle, generic factories' rate, startd standby pilots).
    pub pilots: f64,
    /// PanDA file transfers: inputs of every task and one output per job.
    pub transfers: f64,
    pub samples: f64,
    /// An upper bound on the share entities (groups, job streams, PanDA queues and users).
    pub entities: f64,
    /// Accounting snapshots (share corrections on), 0 otherwise.
    pub snapshots: f64,
    pub bytes: f64,
}

/// Expected attempts of a job whose payload fails with probability `p`, at most `max`:
/// 1 + p + … + p^(max−1).
fn attempts(p: f64, max: u8) -> f64 {
    let p = if p.is_finite() { p.clamp(0.0, 1.0) } else { 0.0 };
    (0..max.max(1)).map(|k| p.powi(i32::from(k))).sum()
}

/// Jobs per production task, as JEDI splits it (`nEvents / nEventsPerJob`, else one job per
/// file of the master dataset).
pub fn production_jobs_per_task(t: &crate::scenario::panda::ProductionStream) -> u64 {
    match t.n_events_per_job {
        Some(per) => t.n_events.div_ceil(per.max(1)),
        None => t.inputs.iter().find(|d| d.master).map_or(1, |d| d.files),
    }
    .max(1)
}

/// PanDA's jobs, transfers and extra pilots.
fn panda_terms(p: &PandaConfig, duration_s: f64) -> (f64, f64, f64) {
    let (mut jobs, mut transfers) = (0.0, 0.0);
    for t in &p.tasks {
        let n =
            f64::from(t.count) * production_jobs_per_task(t) as f64 * attempts(t.failure_probability, t.max_attempt);
        let files: f64 = t.inputs.iter().map(|d| d.files as f64).sum();
        jobs += n;
        transfers += n + f64::from(t.count) * files;
    }
    for a in &p.analysis {
        let n = f64::from(a.count) * f64::from(a.jobs_per_task.max(1)) * attempts(a.failure_probability, a.max_attempt);
        let files: f64 = a.inputs.iter().map(|d| d.files as f64).sum();
        jobs += n;
        transfers += n + f64::from(a.count) * files;
    }
    for r in &p.replay {
        jobs += r.records.len() as f64;
        transfers += r.records.len() as f64;
    }
    // A pull-mode PQ's Harvester sends a bootstrap worker each cycle while nothing is activated.
    let cycles = duration_s / p.harvester.lookup_time.as_secs_f64();
    let pull = p.queues.iter().filter(|q| q.harvester.map_type == MapType::NoJob).count() as f64;
    (jobs, transfers, pull * cycles)
}

/// Pilots a factory sends beyond one per job: a generic factory's rate over the run, a startd
/// factory's standby pilots (each a pilot row, and one refill per lifetime is a job's worth).
fn factory_pilots(f: &FactoryConfig, duration_s: f64) -> f64 {
    match f {
        FactoryConfig::Generic { rate_per_min, .. } => {
            if rate_per_min.is_finite() {
                rate_per_min.max(0.0) * duration_s / 60.0
            } else {
                0.0
            }
        }
        FactoryConfig::Startd { standby, .. } => f64::from(match standby {
            StandbyPolicy::Fixed(n) => *n,
            StandbyPolicy::Proportional { max, .. } => *max,
            StandbyPolicy::Adaptive(a) => a.max,
        }),
    }
}

impl MemoryEstimate {
    /// The estimate of a scenario whose fields are valid (see [`super::problems`]).
    pub fn of(s: &Scenario) -> Self {
        let duration = if s.duration_s.is_finite() { s.duration_s.max(0.0) } else { 0.0 };
        let jobs: f64 = s.workload.iter().map(|w| f64::from(w.count)).sum();
        let (panda_jobs, transfers, pull_pilots) =
            s.panda.as_ref().map_or((0.0, 0.0, 0.0), |p| panda_terms(p, duration));
        let factory: f64 = s.factory.iter().map(|f| factory_pilots(f, duration)).sum();
        let pilots = jobs + panda_jobs + pull_pilots + factory;
        let samples = (duration / s.output.sample_interval_s).floor() + 1.0;
        let groups =
            s.dirac.as_ref().map_or(0, |d| d.groups.len() + d.groups.iter().map(|g| g.users.len()).sum::<usize>());
        let panda_entities =
            s.panda.as_ref().map_or(0, |p| p.queues.len() + p.tasks.len() + p.analysis.len() + p.replay.len());
        let entities = (groups + s.workload.len() + panda_entities) as f64;
        let snapshots = match &s.dirac {
            Some(d) if d.share_corrections.enabled => {
                (duration / d.share_corrections.update_history_period_s.as_secs_f64()).floor() + 1.0
            }
            _ => 0.0,
        };
        let bytes = BASE_BYTES
            + jobs * BYTES_PER_JOB
            + panda_jobs * BYTES_PER_PANDA_JOB
            + pilots * BYTES_PER_PILOT
            + transfers * BYTES_PER_TRANSFER
            + samples * entities * BYTES_PER_SAMPLE_ENTITY
            + snapshots * (32.0 + entities * BYTES_PER_SNAPSHOT_ENTITY);
        Self { jobs, panda_jobs, pilots, transfers, samples, entities, snapshots, bytes }
    }

    /// The estimate in GiB.
    pub fn gib(&self) -> f64 {
        self.bytes / GIB
    }

    /// What the estimate is made of, for the message that refuses a run.
    pub fn breakdown(&self) -> String {
        let mut parts = Vec::new();
        let mut add = |n: f64, what: &str, size: f64| {
            if n > 0.0 {
                parts.push(format!("{} {what} × {size} B", count(n)));
            }
        };
        add(self.jobs, "DIRAC jobs", BYTES_PER_JOB);
        add(self.panda_jobs, "PanDA jobs", BYTES_PER_PANDA_JOB);
        add(self.pilots, "pilots", BYTES_PER_PILOT);
        add(self.transfers, "transfers", BYTES_PER_TRANSFER);
        parts.push(format!(
            "{} samples × {} entities × {BYTES_PER_SAMPLE_ENTITY} B",
            count(self.samples),
            count(self.entities)
        ));
        if self.snapshots > 0.0 {
            parts.push(format!("{} accounting snapshots", count(self.snapshots)));
        }
        parts.join(", ")
    }
}

/// A count as a message shows it: `15000`, `3.0e8`.
fn count(n: f64) -> String {
    if n < 1e7 { format!("{n:.0}") } else { format!("{n:.1e}") }
}
