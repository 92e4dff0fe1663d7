//! The simulation: builds the world from a scenario, runs it, checks its invariants.

mod arrivals;
mod ctx;
mod lookahead;
mod provision;
pub mod world;

use crate::engine::{RngStreams, SimDuration, SimTime};
use crate::grid::PilotStatus;
use crate::ids::job_index;
use crate::scenario::{Problem, Scenario, validate};
use crate::wms;
use crate::workload::{self, JobStatus};
pub use world::{Core, Event, World};

/// Run a scenario with a seed to its end with the WMSs its sections describe.
/// `progress(now, end)` is called about 200 times.
///
/// The scenario is validated first: the world is built on the assumptions validation checks
/// (every stream's group exists, every period is long enough to let time pass), so an
/// invalid scenario gives its problems, never a panic or a run that never ends.
pub fn run(scenario: &Scenario, seed: u64, progress: impl FnMut(SimTime, SimTime)) -> Result<World, Vec<Problem>> {
    let mut world = build(scenario, seed)?;
    run_to_end(&mut world, progress);
    Ok(world)
}

/// The world of [`run`] before its first event: validated, its WMSs set up, every job drawn
/// ([`workload::generate`]) and tabled. What the scale benchmark times as "build", apart from
/// the event loop ([`run_to_end`]), whose cost per event it reports.
pub fn build(scenario: &Scenario, seed: u64) -> Result<World, Vec<Problem>> {
    let problems = validate(scenario);
    if !problems.is_empty() {
        return Err(problems);
    }
    let rngs = RngStreams::new(seed);
    let setup = wms::setup(scenario, &rngs);
    Ok(build_with(scenario, setup, &rngs))
}

/// Run a scenario with the given WMS instances (any implementation of [`wms::Wms`]). The
/// scenario must be valid (see [`run`]); tests use this to plug in their own WMS.
pub fn run_with(
    scenario: &Scenario,
    setup: wms::Setup,
    rngs: &RngStreams,
    progress: impl FnMut(SimTime, SimTime),
) -> World {
    let mut world = build_with(scenario, setup, rngs);
    run_to_end(&mut world, progress);
    world
}

fn build_with(scenario: &Scenario, setup: wms::Setup, rngs: &RngStreams) -> World {
    let specs = workload::generate(&scenario.workload, rngs);
    World::new(scenario.clone(), specs, setup, rngs)
}

/// Handle every event of a built world up to its scenario's end, in 200 steps, calling
/// `progress(now, end)` after each.
pub fn run_to_end(world: &mut World, mut progress: impl FnMut(SimTime, SimTime)) {
    let end = SimTime::ZERO + SimDuration::from_secs_f64(world.scenario.duration_s);
    let step = SimDuration::from_millis((end.as_millis() / 200).max(1));
    let mut t = SimTime::ZERO;
    while t < end {
        t = (t + step).min(end);
        world.run_until(t);
        progress(t, end);
    }
}

/// Invariants every run must satisfy; returns a description of each violation.
///
/// - every job is in exactly one state consistent with its times and its pilot;
/// - the grid's counters agree with its pilots (see `Grid::check_invariants`), and every
///   running job is in the running list of its pilot;
/// - each WMS's own invariants hold (DIRAC: its task queues hold exactly its waiting jobs);
/// - no WMS gave a pilot a job it could not run, nor a GPU job to a pilot without its GPUs.
pub fn check_invariants(w: &World) -> Vec<String> {
    let c = &w.core;
    let mut bad = c.violations.clone();
    let now = crate::wms::Ctx::now(c);
    for j in &c.jobs {
        let ok = match j.status {
            JobStatus::Pending => j.submitted > now || now == SimTime::ZERO,
            JobStatus::Waiting => j.matched().is_none() && j.pilot().is_none(),
            JobStatus::Running => {
                j.matched().is_some() && j.ended().is_none() && j.pilot().is_some_and(|p| c.grid.pilot(p).runs(j.id))
            }
            JobStatus::Done | JobStatus::Failed => j.matched().is_some() && j.ended().is_some(),
            JobStatus::Cancelled => j.matched().is_none() && j.pilot().is_none() && j.ended().is_some(),
        };
        if !ok {
            bad.push(format!("job {} is {} with inconsistent times {j:?}", j.id, j.status.as_str()));
        }
    }
    bad.extend(c.grid.check_invariants());
    bad.extend(c.network.check_invariants());
    for e in c.storages.endpoints() {
        if e.total.is_some_and(|t| e.used > t) {
            bad.push(format!("storage {} holds {} bytes of {}", e.name, e.used, e.total.unwrap_or(0)));
        }
    }
    let running_jobs = c.jobs.iter().filter(|j| j.status == JobStatus::Running).count();
    let in_pilots: usize = c.grid.pilots.iter().map(|p| p.running.len()).sum();
    if running_jobs != in_pilots {
        bad.push(format!("{running_jobs} running jobs but {in_pilots} jobs running in pilots"));
    }
    for p in c.grid.pilots.iter().filter(|p| p.status == PilotStatus::Running) {
        for j in p.running.iter() {
            if c.jobs[job_index(j)].status != JobStatus::Running {
                bad.push(format!("pilot {} runs job {j}, which is not Running", p.id));
            }
        }
    }
    // A GPU pilot's running jobs use exactly the GPUs it holds and has not free; a job that
    // needs GPUs runs only in a pilot holding them.
    for (p, h) in c.grid.gpus.holding() {
        let used: u32 =
            c.grid.pilot(p).running.iter().map(|j| c.streams[c.jobs[job_index(j)].stream as usize].gpus).sum();
        if used != h.gpus - h.free.min(h.gpus) {
            bad.push(format!("pilot {p} holds {} GPUs, {} free, but its jobs use {used}", h.gpus, h.free));
        }
    }
    for p in c.grid.pilots.iter().filter(|p| p.status == PilotStatus::Running && c.grid.gpus.hold(p.id).is_none()) {
        if let Some(j) = p.running.iter().find(|j| c.streams[c.jobs[job_index(*j)].stream as usize].gpus > 0) {
            bad.push(format!("CPU pilot {} runs job {j}, which needs GPUs", p.id));
        }
    }
    for wms in &w.wms {
        bad.extend(wms.check_invariants(&c.jobs).into_iter().map(|m| format!("{}: {m}", wms.name())));
    }
    bad
}

#[cfg(test)]
mod tests;
