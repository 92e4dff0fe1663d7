//! The simulation: builds the world from a scenario, runs it, checks its invariants.

pub mod history;
pub mod setup;
pub mod waiting;
pub mod world;

use crate::engine::{RngStreams, SimDuration, SimTime};
use crate::grid::PilotStatus;
use crate::scenario::Scenario;
use crate::workload::{self, JobStatus};
pub use world::{Event, World};

/// Run a scenario with a seed to its end. `progress(now, end)` is called about 200 times.
pub fn run(scenario: &Scenario, seed: u64, mut progress: impl FnMut(SimTime, SimTime)) -> World {
    let rngs = RngStreams::new(seed);
    let specs = workload::generate(&scenario.workload, &rngs);
    let mut world = World::new(scenario.clone(), specs, &rngs);
    let end = SimTime::ZERO + SimDuration::from_secs_f64(scenario.duration_s);
    let step = SimDuration::from_millis((end.as_millis() / 200).max(1));
    let mut t = SimTime::ZERO;
    while t < end {
        t = (t + step).min(end);
        world.run_until(t);
        progress(t, end);
    }
    world
}

/// Invariants every run must satisfy; returns a description of each violation.
///
/// - every submitted job is Waiting, Running, Done or Failed, and the counts add up;
/// - a job is in exactly one state consistent with its times;
/// - busy slots = running pilots at every CE (and never above its slots, which
///   `CeState::try_take_slot` enforces);
/// - every pilot is in exactly one state, and the CE waiting counters agree with the pilots.
pub fn check_invariants(w: &World) -> Vec<String> {
    let mut bad = Vec::new();
    let now = w.queue.last_popped();
    for j in &w.jobs {
        let ok = match j.status {
            JobStatus::Pending => j.submitted > now || now == SimTime::ZERO,
            JobStatus::Waiting => j.matched.is_none() && j.tq.is_some(),
            JobStatus::Running => j.matched.is_some() && j.ended.is_none() && j.pilot.is_some(),
            JobStatus::Done | JobStatus::Failed => j.matched.is_some() && j.ended.is_some(),
        };
        if !ok {
            bad.push(format!("job {} is {} with inconsistent times {j:?}", j.id, j.status.as_str()));
        }
    }
    for (c, ce) in w.ces.iter().enumerate() {
        let running = w.pilots.iter().filter(|p| p.ce as usize == c && p.status == PilotStatus::Running).count();
        if running != ce.busy as usize {
            bad.push(format!("CE {}: {} busy slots but {running} running pilots", w.st.ces[c].name, ce.busy));
        }
        let waiting = w.pilots.iter().filter(|p| p.ce as usize == c && p.status.is_waiting()).count();
        if waiting != ce.waiting as usize {
            bad.push(format!("CE {}: waiting counter {} but {waiting} waiting pilots", w.st.ces[c].name, ce.waiting));
        }
    }
    let running_jobs = w.jobs.iter().filter(|j| j.status == JobStatus::Running).count();
    let pilots_with_job = w.pilots.iter().filter(|p| p.job.is_some()).count();
    if running_jobs != pilots_with_job {
        bad.push(format!("{running_jobs} running jobs but {pilots_with_job} pilots running a job"));
    }
    let waiting_jobs = w.jobs.iter().filter(|j| j.status == JobStatus::Waiting).count() as u64;
    if waiting_jobs != w.tqs.waiting_jobs() {
        bad.push(format!("{waiting_jobs} waiting jobs but {} jobs in task queues", w.tqs.waiting_jobs()));
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse;

    #[test]
    fn the_batch_system_kills_a_job_at_the_pilots_walltime() {
        // CPUTime 400000 is above the seed's last segment (300000), so a pilot with 349700
        // CPU seconds left takes the job but cannot finish it: killed at 350000 s, Failed.
        let s = parse(
            r#"Scenario(name: "walltime", duration_s: 400000, output: (warmup_s: 10),
                sites: [Site(name: "S", ces: [Ce(name: "ce", slots: 1, cpu_power: 1.0, max_walltime_s: 350000,
                       pilot_wait: Fixed(0))])],
                dirac: (groups: [(name: "g", properties: ["JOB_SHARING"])],
                        director: (private_pilot_fraction: 0.0)),
                workload: [JobStream(name: "long", owner: "u", group: "g", count: 1, arrival: Burst(at_s: 0),
                           cpu_work: Fixed(400000), cpu_time: 400000)])"#,
            "t",
        )
        .unwrap();
        assert_eq!(crate::scenario::validate(&s), vec![]);
        let w = run(&s, 1, |_, _| {});
        assert_eq!(check_invariants(&w), Vec::<String>::new());
        let job = &w.jobs[0];
        assert_eq!(job.status, JobStatus::Failed);
        let pilot = &w.pilots[job.pilot.unwrap() as usize];
        let limit = pilot.started.unwrap() + SimDuration::from_secs(350_000);
        assert_eq!(job.ended, Some(limit));
        assert_eq!(pilot.ended, Some(limit), "the pilot ends at its walltime, not later");
    }
}
