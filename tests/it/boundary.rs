//! The WMS boundary (issue 8 item 5): a second, deliberately small WMS runs on the same
//! world with no change to it, alone and beside DIRAC on one grid.

use pilotsim::engine::{RngStreams, SimDuration};
use pilotsim::grid::PilotStatus;
use pilotsim::scenario::{self, Scenario};
use pilotsim::sim;
use pilotsim::wms::dirac::DiracWms;
use pilotsim::wms::push::PushWms;
use pilotsim::wms::{Setup, Wms};
use pilotsim::workload::JobStatus;

/// Two sites of 20 slots, two streams of 60 short jobs each, six hours.
fn small() -> Scenario {
    scenario::parse(
        r#"Scenario(name: "boundary", duration_s: 21600, output: (warmup_s: 600),
            sites: [
                Site(name: "A", ces: [Ce(name: "a1", slots: 20, pilot_wait: Fixed(60))]),
                Site(name: "B", ces: [Ce(name: "b1", slots: 20, pilot_wait: Fixed(120), abort_probability: 0.2)]),
            ],
            dirac: (groups: [(name: "prod", properties: ["JOB_SHARING"]), (name: "user")]),
            workload: [
                JobStream(name: "p", owner: "pm", group: "prod", count: 60, arrival: Spread(start_s: 0, end_s: 3600),
                          cpu_work: Fixed(1200), cpu_time: 3000),
                JobStream(name: "u", owner: "ann", group: "user", count: 60, arrival: Spread(start_s: 0, end_s: 3600),
                          cpu_work: Fixed(600), cpu_time: 3000),
            ])"#,
        "boundary.ron",
    )
    .unwrap()
}

#[test]
fn a_push_wms_runs_on_the_world_unchanged() {
    let s = small();
    assert_eq!(scenario::validate(&s), vec![]);
    let rngs = RngStreams::new(3);
    let push = PushWms::new(SimDuration::from_secs(60));
    let setup = Setup {
        instances: vec![Box::new(push) as Box<dyn Wms>],
        entities: PushWms::entities(&["prod", "user"]),
        stream_wms: vec![0, 0],
        accounting_period: None,
    };
    let w = sim::run_with(&s, setup, &rngs, |_, _| {});
    assert_eq!(sim::check_invariants(&w), Vec::<String>::new());
    let jobs = &w.core.jobs;
    assert!(jobs.iter().all(|j| j.status == JobStatus::Done), "every job ran");
    // One pilot per job, plus one for each job whose pilot the middleware aborted.
    let pilots = &w.core.grid.pilots;
    let aborted = pilots.iter().filter(|p| p.status == PilotStatus::Aborted).count();
    assert!(aborted > 0, "CE b1 aborts 20 %");
    assert_eq!(pilots.len(), jobs.len() + aborted);
    assert!(pilots.iter().all(|p| p.jobs_run <= 1 && p.wms == 0));
}

#[test]
fn dirac_and_a_push_wms_share_one_grid() {
    let s = small();
    let rngs = RngStreams::new(5);
    let (dirac, entities) = DiracWms::new(&s, s.dirac.as_ref().unwrap(), &rngs);
    let setup = Setup {
        instances: vec![Box::new(dirac) as Box<dyn Wms>, Box::new(PushWms::new(SimDuration::from_secs(60)))],
        entities,
        // Production goes through DIRAC, the user stream is pushed.
        stream_wms: vec![0, 1],
        accounting_period: None,
    };
    let w = sim::run_with(&s, setup, &rngs, |_, _| {});
    assert_eq!(sim::check_invariants(&w), Vec::<String>::new());
    for (stream, wms) in [(0, 0), (1, 1)] {
        let jobs: Vec<_> = w.core.jobs.iter().filter(|j| j.stream == stream).collect();
        assert!(jobs.iter().all(|j| j.wms == wms && j.status == JobStatus::Done), "stream {stream}");
        // Each job ran in a pilot of its own WMS.
        assert!(jobs.iter().all(|j| w.core.grid.pilot(j.pilot.unwrap()).wms == wms));
    }
    let by = |wms| w.core.grid.pilots.iter().filter(|p| p.wms == wms).count();
    assert!(by(0) > 0 && by(1) >= 60, "DIRAC {} pilots, push {}", by(0), by(1));
}
