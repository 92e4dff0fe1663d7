//! The WMS boundary: a second, deliberately small WMS runs on the same
//! world with no change to it, alone and beside DIRAC on one grid.

use pilotsim::engine::{RngStreams, SimDuration, SimTime};
use pilotsim::grid::{PilotShape, PilotStatus};
use pilotsim::scenario::{self, Scenario};
use pilotsim::sim;
use pilotsim::wms::dirac::DiracWms;
use pilotsim::wms::push::PushWms;
use pilotsim::wms::{Answer, Ctx, PilotNews, Setup, Timer, Wms};
use pilotsim::workload::{JobStatus, StreamInfo};

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
        streams: StreamInfo::of_job_streams(&s.workload, &[0, 0]),
        accounting_period: None,
        provisioners: Vec::new(),
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
    assert!(pilots.iter().all(|p| p.jobs_run <= 1), "a push pilot runs the one job it was sent for");
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
        streams: StreamInfo::of_job_streams(&s.workload, &[0, 1]),
        accounting_period: None,
        provisioners: Vec::new(),
    };
    let w = sim::run_with(&s, setup, &rngs, |_, _| {});
    assert_eq!(sim::check_invariants(&w), Vec::<String>::new());
    for (stream, wms) in [(0, 0), (1, 1)] {
        let jobs: Vec<_> = w.core.jobs.iter().filter(|j| j.stream == stream).collect();
        assert!(jobs.iter().all(|j| j.wms == wms && j.status == JobStatus::Done), "stream {stream}");
        // Each job ran in a pilot of its own WMS.
        assert!(jobs.iter().all(|j| w.core.grid.pilot(j.pilot().unwrap()).wms == wms));
    }
    let by = |wms| w.core.grid.pilots.iter().filter(|p| p.wms == wms).count();
    assert!(by(0) > 0 && by(1) >= 60, "DIRAC {} pilots, push {}", by(0), by(1));
    // Pinned: timers or news reaching the wrong instance change this.
    assert_eq!((w.core.events, w.core.digest.hex().as_str()), (1944, "76d58d959a25f205"));
}

/// A WMS that misbehaves on purpose: it answers some pilots with a job that does not exist
/// or with a zero wait, and every hour cancels its running pilots with their jobs.
struct RogueWms {
    waiting: std::collections::VecDeque<u32>,
    assigned: std::collections::BTreeMap<u32, u32>,
    live: Vec<u32>,
}

impl Wms for RogueWms {
    fn name(&self) -> &str {
        "rogue"
    }
    fn start(&mut self, ctx: &mut dyn Ctx) {
        ctx.set_timer(SimTime::ZERO, Timer { kind: 100, id: 0 });
        ctx.set_timer(SimTime::from_secs(3600), Timer { kind: 101, id: 0 });
    }
    fn job_submitted(&mut self, _ctx: &mut dyn Ctx, j: u32) {
        self.waiting.push_back(j);
    }
    fn timer(&mut self, ctx: &mut dyn Ctx, t: Timer) {
        if t.kind == 101 {
            for p in std::mem::take(&mut self.live) {
                ctx.cancel_pilot(p);
            }
            ctx.set_timer(ctx.now() + SimDuration::from_secs(3600), t);
            return;
        }
        while let Some(&j) = self.waiting.front() {
            let Ok(p) = ctx.submit_pilot(j % 2, PilotShape::default()) else { break };
            self.waiting.pop_front();
            self.assigned.insert(p, j);
            self.live.push(p);
        }
        ctx.set_timer(ctx.now() + SimDuration::from_secs(60), t);
    }
    fn pilot_news(&mut self, _ctx: &mut dyn Ctx, p: u32, news: PilotNews) {
        if matches!(news, PilotNews::Ended(s) if s != PilotStatus::Done) {
            if let Some(j) = self.assigned.remove(&p) {
                self.waiting.push_back(j);
            }
        }
    }
    fn pilot_asks(&mut self, _ctx: &mut dyn Ctx, p: u32) -> Answer {
        match (p % 5, self.assigned.remove(&p)) {
            (1, Some(j)) => {
                self.waiting.push_back(j);
                Answer::Run(0)
            }
            (2, Some(j)) => {
                self.waiting.push_back(j);
                Answer::Wait(SimDuration::ZERO)
            }
            (_, Some(j)) => Answer::Run(j),
            (_, None) => Answer::Exit,
        }
    }
}

#[test]
fn a_misbehaving_wms_cannot_break_the_world() {
    let s = small();
    let rngs = RngStreams::new(9);
    let rogue = RogueWms { waiting: Default::default(), assigned: Default::default(), live: Vec::new() };
    let setup = Setup {
        instances: vec![Box::new(rogue) as Box<dyn Wms>],
        entities: PushWms::entities(&["prod", "user"]),
        streams: StreamInfo::of_job_streams(&s.workload, &[0, 0]),
        accounting_period: None,
        provisioners: Vec::new(),
    };
    let w = sim::run_with(&s, setup, &rngs, |_, _| {});
    // Only the rogue's own mistakes are reported; every other invariant holds.
    let problems = sim::check_invariants(&w);
    assert!(!problems.is_empty());
    for p in &problems {
        assert!(p.contains("was given job 0") || p.contains("wait 0 ms"), "{p}");
    }
    // Cancelled running pilots killed their jobs: Failed, ended at the cancellation.
    let killed: Vec<_> = w
        .core
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Failed && j.ended().is_some_and(|t| t.as_millis() % 3_600_000 == 0))
        .collect();
    assert!(!killed.is_empty(), "the hourly cancellation killed running jobs");
    for j in &killed {
        assert_eq!(w.core.grid.pilot(j.pilot().unwrap()).status, PilotStatus::Cancelled);
    }
    // Every pilot the rogue answered wrongly ended (none holds its slot until the end).
    let stranded = w.core.grid.pilots.iter().filter(|p| p.status == PilotStatus::Running && p.running.is_empty());
    assert_eq!(stranded.count(), 0);
}
