//! Limits that make every accepted scenario finish in bounded time and memory: bounds on
//! durations and counts, and an estimate of the memory a run needs, refused above a limit.
//! The periods of everything that reschedules itself are [`crate::engine::Period`]s, refused
//! under a second when the scenario is read.
//!
//! The semantic checks of [`super::validate`] say what a value means ("a positive number");
//! these say what a run can afford. A problem here names the field and the limit, like every
//! other [`Problem`]. A value the semantic checks already refuse (negative, NaN) is not
//! reported a second time here.

use super::types::Scenario;
use super::validate::Problem;

/// The longest simulated span, and the largest value of any other time field: ten years of
/// 365 days (315 360 000 s). A simulated millisecond clock (`u64`) would hold 5.8·10⁸ years,
/// so every time the model computes from these fields stays far from saturation, and no
/// grid study needs more than a few months.
pub const MAX_TIME_S: f64 = 10.0 * 365.0 * 86_400.0;

/// The shortest interval between two rows of `timeseries.parquet`: 1 s (same reason, and a
/// grid's state does not change meaningfully faster).
pub const MIN_SAMPLE_INTERVAL_S: f64 = 1.0;

/// The most samples a run records: `duration_s / sample_interval_s ≤ 100 000`. Each is a
/// row per share entity in `timeseries.parquet` and a point per line in the charts; a
/// hundred thousand points is already far more than a chart can show.
pub const MAX_SAMPLES: f64 = 100_000.0;

/// The most jobs of a run: job ids are `u32`, numbered from 1.
pub const MAX_JOBS: u64 = u32::MAX as u64 - 1;

/// The most pilots one director cycle may ask for per task queue (`pilotsPerIteration`,
/// `extraPilots`), and the largest `extraPilotFraction`: every pilot asked for is a row of
/// the pilot table, so an unbounded setting grows memory without limit. Real values are 40,
/// 4 and 0.2.
pub const MAX_PILOTS_PER_CYCLE: f64 = 100_000.0;
/// See [`MAX_PILOTS_PER_CYCLE`].
pub const MAX_EXTRA_PILOT_FRACTION: f64 = 100.0;

/// The largest `StopAfterFailedMatches` (DIRAC's default is 10): a pilot whose walltime
/// ends within the millisecond it asks in is told to wait until its walltime, which is now,
/// so it asks again at the same instant until it gives up; this bounds that loop.
pub const MAX_FAILED_MATCHES: u32 = 1_000;

/// The most replicas `pilotsim check` runs of one scenario (`expect.replicas`; default 5).
pub const MAX_REPLICAS: u32 = 10_000;

/// The environment variable that sets the memory limit, in GiB.
pub const MEMORY_ENV: &str = "PILOTSIM_MAX_MEMORY_GB";
/// The memory limit when [`MEMORY_ENV`] is not set: 16 GiB.
pub const DEFAULT_MAX_MEMORY_GB: f64 = 16.0;

/// Peak bytes per job of a whole run (simulation and outputs), with one pilot per job.
///
/// Calibrated with `/usr/bin/time -v` (maximum resident set size) on
/// `benches/scenarios/dirac_million_jobs.ron`: 0.5 M jobs (26 k pilots) 244 MB, 1 M jobs
/// (47 k pilots) 435 MB, 2 M jobs (1.8 M pilots) 1 360 MB. A job costs about 380 B (its row
/// in the world's table, its arrival event, its task-queue entry, its rows while the Parquet
/// tables are built), a pilot about 300 B; pilots are not known before the run, so the
/// estimate allows one per job. The simulation alone peaks at 121 MB for 1 M jobs.
pub const BYTES_PER_JOB: f64 = 700.0;
/// Peak bytes per sample and share entity (the sample in memory, its `timeseries.parquet`
/// row, its chart points). Calibrated on the quickstart (6 entities at most): 86 401
/// samples peak at 158 MB against 69 MB with 145 samples, 172 B per sample and entity.
pub const BYTES_PER_SAMPLE_ENTITY: f64 = 200.0;
/// Bytes per accounting snapshot and entity (a `u64` each, plus the snapshot's own 32 B).
pub const BYTES_PER_SNAPSHOT_ENTITY: f64 = 8.0;
/// Memory of a run whatever its size (the binary, the allocator, the chart renderer): the
/// quickstart (15 000 jobs) peaks at 69 MB.
pub const BASE_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// What a run of a scenario is expected to need at its peak, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryEstimate {
    pub jobs: u64,
    pub samples: f64,
    /// An upper bound on the share entities (groups + job streams).
    pub entities: u64,
    /// Accounting snapshots (share corrections on), 0 otherwise.
    pub snapshots: f64,
    pub bytes: f64,
}

impl MemoryEstimate {
    /// The estimate of a scenario whose fields are valid (see [`problems`]).
    pub fn of(s: &Scenario) -> Self {
        let jobs: u64 = s.workload.iter().map(|w| u64::from(w.count)).sum();
        let duration = if s.duration_s.is_finite() { s.duration_s.max(0.0) } else { 0.0 };
        let samples = (duration / s.output.sample_interval_s).floor() + 1.0;
        let groups = s.dirac.as_ref().map_or(0, |d| d.groups.len());
        let entities = (groups + s.workload.len()) as u64;
        let snapshots = match &s.dirac {
            Some(d) if d.share_corrections.enabled => {
                (duration / d.share_corrections.update_history_period_s.as_secs_f64()).floor() + 1.0
            }
            _ => 0.0,
        };
        let e = entities as f64;
        let bytes = BASE_BYTES
            + jobs as f64 * BYTES_PER_JOB
            + samples * e * BYTES_PER_SAMPLE_ENTITY
            + snapshots * (32.0 + e * BYTES_PER_SNAPSHOT_ENTITY);
        Self { jobs, samples, entities, snapshots, bytes }
    }

    /// The estimate in GiB.
    pub fn gib(&self) -> f64 {
        self.bytes / GIB
    }
}

/// The memory limit in GiB: [`MEMORY_ENV`] if set, else [`DEFAULT_MAX_MEMORY_GB`]; an error
/// message if the variable is not a positive number.
pub fn memory_limit_gb() -> Result<f64, String> {
    match std::env::var(MEMORY_ENV) {
        Err(_) => Ok(DEFAULT_MAX_MEMORY_GB),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => Err(format!("is {v:?}: must be a positive number of GiB")),
        },
    }
}

/// Every limit the scenario exceeds, with the memory limit from the environment.
pub fn problems(s: &Scenario) -> Vec<Problem> {
    match memory_limit_gb() {
        Ok(limit) => problems_with(s, limit),
        Err(message) => {
            let mut p = problems_with(s, f64::INFINITY);
            p.push(Problem { path: MEMORY_ENV.into(), message });
            p
        }
    }
}

/// A number as a message shows it: `1e308`, not its 309 digits.
fn num(v: f64) -> String {
    if v.abs() < 1e15 { format!("{v}") } else { format!("{v:e}") }
}

/// Every limit the scenario exceeds, with a memory limit of `max_memory_gb` GiB.
pub fn problems_with(s: &Scenario, max_memory_gb: f64) -> Vec<Problem> {
    let mut p = Vec::new();
    let mut fail = |path: &str, message: String| p.push(Problem { path: path.into(), message });
    // A value that is not a positive finite number was reported by `validate` already.
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let mut at_most = |path: &str, v: f64, max: f64, what: &str| {
        if v.is_finite() && v > max {
            fail(path, format!("must be at most {max} {what}, got {}", num(v)));
        }
    };

    at_most("duration_s", s.duration_s, MAX_TIME_S, "s (ten years)");
    for (i, w) in s.workload.iter().enumerate() {
        use super::types::Arrival;
        let a = format!("workload[{i}].arrival");
        match &w.arrival {
            Arrival::Burst { at_s } => at_most(&format!("{a}.at_s"), *at_s, MAX_TIME_S, "s (ten years)"),
            Arrival::Poisson { start_s, .. } => at_most(&format!("{a}.start_s"), *start_s, MAX_TIME_S, "s (ten years)"),
            Arrival::Spread { start_s, end_s } => {
                at_most(&format!("{a}.start_s"), *start_s, MAX_TIME_S, "s (ten years)");
                at_most(&format!("{a}.end_s"), *end_s, MAX_TIME_S, "s (ten years)");
            }
        }
    }
    for (i, site) in s.sites.iter().enumerate() {
        for (j, ce) in site.ces.iter().enumerate() {
            at_most(&format!("sites[{i}].ces[{j}].max_walltime_s"), ce.max_walltime_s, MAX_TIME_S, "s (ten years)");
        }
    }

    let mut floor = |path: &str, v: f64, min: f64, why: &str| -> bool {
        if positive(v) && v < min {
            p.push(Problem { path: path.into(), message: format!("must be at least {min} s, got {v}: {why}") });
            return false;
        }
        positive(v)
    };
    let sampling_ok = floor(
        "output.sample_interval_s",
        s.output.sample_interval_s,
        MIN_SAMPLE_INTERVAL_S,
        "a sample per second is the finest pilotsim records",
    );
    let duration_ok = positive(s.duration_s) && s.duration_s <= MAX_TIME_S;
    if sampling_ok && duration_ok && s.duration_s / s.output.sample_interval_s > MAX_SAMPLES {
        p.push(Problem {
            path: "output.sample_interval_s".into(),
            message: format!(
                "gives {:.0} samples over duration_s {}, more than {MAX_SAMPLES}: use at least {} s",
                (s.duration_s / s.output.sample_interval_s).floor(),
                s.duration_s,
                (s.duration_s / MAX_SAMPLES).ceil()
            ),
        });
    }
    if let Some(d) = &s.dirac {
        let dir = &d.director;
        let mut at_most = |path: &str, v: f64, max: f64| {
            if v.is_finite() && v > max {
                p.push(Problem {
                    path: path.into(),
                    message: format!(
                        "must be at most {max}, got {}: each director cycle may submit that many pilots, each a row of the pilot table",
                        num(v)
                    ),
                });
            }
        };
        at_most("dirac.director.pilots_per_iteration", dir.pilots_per_iteration, MAX_PILOTS_PER_CYCLE);
        at_most("dirac.director.extra_pilots", f64::from(dir.extra_pilots), MAX_PILOTS_PER_CYCLE);
        at_most("dirac.director.extra_pilot_fraction", dir.extra_pilot_fraction, MAX_EXTRA_PILOT_FRACTION);
    }

    if let Some(d) = &s.dirac {
        let n = d.job_agent.stop_after_failed_matches;
        if n > MAX_FAILED_MATCHES {
            p.push(Problem {
                path: "dirac.job_agent.stop_after_failed_matches".into(),
                message: format!(
                    "must be at most {MAX_FAILED_MATCHES}, got {n}: a pilot at the end of its walltime asks that many times at one instant"
                ),
            });
        }
    }
    if s.expect.replicas > MAX_REPLICAS {
        p.push(Problem {
            path: "expect.replicas".into(),
            message: format!("must be at most {MAX_REPLICAS}, got {}", s.expect.replicas),
        });
    }
    let jobs: u64 = s.workload.iter().map(|w| u64::from(w.count)).sum();
    if jobs > MAX_JOBS {
        p.push(Problem {
            path: "workload".into(),
            message: format!("{jobs} jobs in all, more than {MAX_JOBS} (job ids are 32-bit)"),
        });
    }
    // The memory estimate needs sane periods; without them the problems above say why.
    let periods_ok = p.is_empty() && positive(s.output.sample_interval_s);
    if periods_ok {
        let m = MemoryEstimate::of(s);
        if m.gib() > max_memory_gb {
            p.push(Problem {
                path: "workload".into(),
                message: format!(
                    "a run would need about {:.1} GiB of memory ({} jobs × {BYTES_PER_JOB} B, {:.0} samples × {} entities × {BYTES_PER_SAMPLE_ENTITY} B{}), more than the limit of {max_memory_gb} GiB; \
                     run fewer jobs or a shorter scenario, or raise the limit with the environment variable {MEMORY_ENV} (e.g. {MEMORY_ENV}={:.0})",
                    m.gib(),
                    m.jobs,
                    m.samples,
                    m.entities,
                    if m.snapshots > 0.0 { format!(", {:.0} accounting snapshots", m.snapshots) } else { String::new() },
                    m.gib().ceil() + 1.0,
                ),
            });
        }
    }
    p
}

#[cfg(test)]
mod tests;
