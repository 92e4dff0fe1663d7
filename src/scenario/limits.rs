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

/// The most of each thing the model numbers with 16 bits (PanDA queues, nuclei, streams and
/// gshare leaves, pilot factories): `u16::MAX` is kept as the "none" marker.
pub const MAX_U16_INDEX: usize = u16::MAX as usize - 1;

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

mod memory;
pub use memory::{
    BASE_BYTES, BYTES_PER_JOB, BYTES_PER_PANDA_JOB, BYTES_PER_PILOT, BYTES_PER_SAMPLE_ENTITY,
    BYTES_PER_SNAPSHOT_ENTITY, BYTES_PER_TRANSFER, MemoryEstimate, production_jobs_per_task,
};

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
    time_limits(s, &mut p);
    sampling_limit(s, &mut p);
    dirac_limits(s, &mut p);
    if s.expect.replicas > MAX_REPLICAS {
        p.push(Problem {
            path: "expect.replicas".into(),
            message: format!("must be at most {MAX_REPLICAS}, got {}", s.expect.replicas),
        });
    }
    narrowing(s, &mut p);
    // The memory estimate needs sane periods; without them the problems above say why.
    if p.is_empty() && positive(s.output.sample_interval_s) {
        memory_limit(s, max_memory_gb, &mut p);
    }
    p
}

/// A value that is not a positive finite number was reported by `validate` already.
fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// `v` at `path` is at most `max` (in `what`).
fn at_most(p: &mut Vec<Problem>, path: &str, v: f64, max: f64, what: &str) {
    if v.is_finite() && v > max {
        p.push(Problem { path: path.into(), message: format!("must be at most {max} {what}, got {}", num(v)) });
    }
}

/// Every time field within [`MAX_TIME_S`]: the run's span, the streams' arrivals, the CEs'
/// walltimes.
fn time_limits(s: &Scenario, p: &mut Vec<Problem>) {
    use super::types::Arrival;
    const TEN_YEARS: &str = "s (ten years)";
    at_most(p, "duration_s", s.duration_s, MAX_TIME_S, TEN_YEARS);
    for (i, w) in s.workload.iter().enumerate() {
        let a = format!("workload[{i}].arrival");
        match &w.arrival {
            Arrival::Burst { at_s } => at_most(p, &format!("{a}.at_s"), *at_s, MAX_TIME_S, TEN_YEARS),
            Arrival::Poisson { start_s, .. } => at_most(p, &format!("{a}.start_s"), *start_s, MAX_TIME_S, TEN_YEARS),
            Arrival::Spread { start_s, end_s } => {
                at_most(p, &format!("{a}.start_s"), *start_s, MAX_TIME_S, TEN_YEARS);
                at_most(p, &format!("{a}.end_s"), *end_s, MAX_TIME_S, TEN_YEARS);
            }
        }
    }
    for (i, site) in s.sites.iter().enumerate() {
        for (j, ce) in site.ces.iter().enumerate() {
            at_most(p, &format!("sites[{i}].ces[{j}].max_walltime_s"), ce.max_walltime_s, MAX_TIME_S, TEN_YEARS);
        }
    }
}

/// The sample interval: at least [`MIN_SAMPLE_INTERVAL_S`], and at most [`MAX_SAMPLES`] samples
/// over the run.
fn sampling_limit(s: &Scenario, p: &mut Vec<Problem>) {
    let interval = s.output.sample_interval_s;
    if positive(interval) && interval < MIN_SAMPLE_INTERVAL_S {
        p.push(Problem {
            path: "output.sample_interval_s".into(),
            message: format!(
                "must be at least {MIN_SAMPLE_INTERVAL_S} s, got {interval}: a sample per second is the finest pilotsim records"
            ),
        });
    }
    let sampling_ok = positive(interval) && interval >= MIN_SAMPLE_INTERVAL_S;
    let duration_ok = positive(s.duration_s) && s.duration_s <= MAX_TIME_S;
    if sampling_ok && duration_ok && s.duration_s / interval > MAX_SAMPLES {
        p.push(Problem {
            path: "output.sample_interval_s".into(),
            message: format!(
                "gives {:.0} samples over duration_s {}, more than {MAX_SAMPLES}: use at least {} s",
                (s.duration_s / interval).floor(),
                s.duration_s,
                (s.duration_s / MAX_SAMPLES).ceil()
            ),
        });
    }
}

/// What bounds DIRAC's tables and loops: the pilots one director cycle may ask for (each a row
/// of the pilot table) and `StopAfterFailedMatches`.
fn dirac_limits(s: &Scenario, p: &mut Vec<Problem>) {
    let Some(d) = &s.dirac else { return };
    let dir = &d.director;
    let per_cycle = [
        ("dirac.director.pilots_per_iteration", dir.pilots_per_iteration, MAX_PILOTS_PER_CYCLE),
        ("dirac.director.extra_pilots", f64::from(dir.extra_pilots), MAX_PILOTS_PER_CYCLE),
        ("dirac.director.extra_pilot_fraction", dir.extra_pilot_fraction, MAX_EXTRA_PILOT_FRACTION),
    ];
    for (path, v, max) in per_cycle {
        if v.is_finite() && v > max {
            p.push(Problem {
                path: path.into(),
                message: format!(
                    "must be at most {max}, got {}: each director cycle may submit that many pilots, each a row of the pilot table",
                    num(v)
                ),
            });
        }
    }
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

/// The memory a run would need ([`MemoryEstimate`]) within `max_memory_gb` GiB, named at
/// `panda` when PanDA's jobs are most of them, else at `workload`.
fn memory_limit(s: &Scenario, max_memory_gb: f64, p: &mut Vec<Problem>) {
    let m = MemoryEstimate::of(s);
    if m.gib() > max_memory_gb {
        p.push(Problem {
            path: if s.panda.is_some() && m.panda_jobs >= m.jobs { "panda" } else { "workload" }.into(),
            message: format!(
                "a run would need about {:.1} GiB of memory ({}), more than the limit of {max_memory_gb} GiB; \
                 run fewer jobs or a shorter scenario, or raise the limit with the environment variable {MEMORY_ENV} (e.g. {MEMORY_ENV}={:.0})",
                m.gib(),
                m.breakdown(),
                m.gib().ceil() + 1.0,
            ),
        });
    }
}

/// Counts that the model narrows to `u32` (job and task ids) or `u16` (indices of PanDA queues,
/// nuclei, streams, gshare leaves and factories): refused here, never truncated in the run.
fn narrowing(s: &Scenario, p: &mut Vec<Problem>) {
    let mut fail = |path: &str, message: String| p.push(Problem { path: path.into(), message });
    // Every job id a run can create: DIRAC jobs, and each PanDA job at its last attempt; the
    // message names the stream that creates the most.
    let mut jobs: u128 = 0;
    let mut largest = (0u128, String::from("workload"));
    let mut add = |n: u128, path: String| {
        jobs += n;
        if n > largest.0 {
            largest = (n, path);
        }
    };
    for (i, w) in s.workload.iter().enumerate() {
        add(u128::from(w.count), format!("workload[{i}].count"));
    }
    let mut tasks: u128 = 0;
    if let Some(pc) = &s.panda {
        for (i, t) in pc.tasks.iter().enumerate() {
            let per = production_jobs_per_task(t);
            if per > u64::from(u32::MAX) {
                fail(
                    &format!("panda.tasks[{i}]"),
                    format!("{per} jobs per task, more than {} (job ids are 32-bit)", u32::MAX),
                );
            }
            add(
                u128::from(t.count) * u128::from(per) * u128::from(t.max_attempt.max(1)),
                format!("panda.tasks[{i}].count"),
            );
            tasks += u128::from(t.count);
        }
        for (i, a) in pc.analysis.iter().enumerate() {
            let n = u128::from(a.count) * u128::from(a.jobs_per_task.max(1)) * u128::from(a.max_attempt.max(1));
            add(n, format!("panda.analysis[{i}].count"));
            tasks += u128::from(a.count);
        }
        for (i, r) in pc.replay.iter().enumerate() {
            add(r.records.len() as u128, format!("panda.replay[{i}].file"));
            tasks += 1;
        }
        let sized = [
            ("panda.queues", pc.queues.len(), "PanDA queues"),
            ("panda.nuclei", pc.nuclei.len(), "nuclei"),
            ("panda.tasks", pc.tasks.len() + pc.analysis.len() + pc.replay.len(), "PanDA task streams"),
            ("panda.gshares", crate::panda::gshare::leaves(&pc.gshares).len(), "global share leaves"),
        ];
        for (path, n, what) in sized {
            if n > MAX_U16_INDEX {
                fail(path, format!("{n} {what}, more than {MAX_U16_INDEX} (they are numbered with 16 bits)"));
            }
        }
    }
    if s.factory.len() > MAX_U16_INDEX {
        fail(
            "factory",
            format!("{} factories, more than {MAX_U16_INDEX} (they are numbered with 16 bits)", s.factory.len()),
        );
    }
    if jobs > u128::from(MAX_JOBS) {
        let why =
            format!("up to {jobs} jobs in all (PanDA's with every attempt), more than {MAX_JOBS} (job ids are 32-bit)");
        fail(&largest.1, why);
    }
    if tasks > u128::from(u32::MAX) {
        fail("panda.tasks", format!("{tasks} PanDA tasks in all, more than {} (task ids are 32-bit)", u32::MAX));
    }
}

#[cfg(test)]
mod tests;
