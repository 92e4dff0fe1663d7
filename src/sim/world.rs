//! The world: all simulation state, and the handlers that turn events into calls of the
//! DIRAC modules and schedule what follows. The only place where time passes.

use std::collections::BTreeMap;

use super::history::UsageHistory;
use super::setup::Static;
use super::waiting::WaitingPilots;
use crate::dirac::corrector::{self, CorrectorInstance};
use crate::dirac::director;
use crate::dirac::matcher::{self, PilotIdentity};
use crate::dirac::priority::{self, EntityShares};
use crate::dirac::taskqueue::{JobId, TaskQueue, TaskQueueDb, TqChange, TqId};
use crate::engine::{Digest, EventQueue, RngStreams, SimDuration, SimRng, SimTime, dist};
use crate::grid::{CeState, Pilot, PilotId, PilotStatus, wms};
use crate::metrics::recorder::{Level, PilotCounts, Recorder};
use crate::scenario::Scenario;
use crate::workload::{Job, JobSpec, JobStatus};

/// What can happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A job is submitted and enters a task queue.
    JobArrival(JobId),
    /// The TaskqueueDirector runs a cycle.
    DirectorCycle,
    /// The TaskQueuesAgent recomputes every TQ priority.
    PriorityRecalculation,
    /// Metrics are sampled.
    Sample,
    /// A pilot leaves the middleware and reaches its CE's batch queue.
    PilotReachesBatch(PilotId),
    /// The middleware aborts a pilot.
    PilotAborted(PilotId),
    /// `PilotStalledDays` after submission: a pilot still waiting is given up.
    PilotStalled(PilotId),
    /// A pilot's JobAgent asks the Matcher for a job.
    JobRequest(PilotId),
    /// The job a pilot runs ends.
    JobEnd(PilotId),
    /// The share corrector's accounting history is refreshed (`UpdateHistoryPeriod`).
    HistoryUpdate,
}

impl Event {
    /// A stable code and id for the event digest.
    fn digest_words(self) -> (u64, u64) {
        match self {
            Event::JobArrival(j) => (1, u64::from(j)),
            Event::DirectorCycle => (2, 0),
            Event::PriorityRecalculation => (3, 0),
            Event::Sample => (4, 0),
            Event::PilotReachesBatch(p) => (5, u64::from(p)),
            Event::PilotAborted(p) => (6, u64::from(p)),
            Event::PilotStalled(p) => (7, u64::from(p)),
            Event::JobRequest(p) => (8, u64::from(p)),
            Event::JobEnd(p) => (9, u64::from(p)),
            Event::HistoryUpdate => (10, 0),
        }
    }
}

/// The random streams of the world, one per purpose (keyed by name, see `RngStreams`).
struct Streams {
    director: SimRng,
    matcher: SimRng,
    wms: SimRng,
    /// Per CE: middleware wait, abort, stuck, failure draws.
    ce_wait: Vec<SimRng>,
    ce_abort: Vec<SimRng>,
    ce_stuck: Vec<SimRng>,
    ce_failure: Vec<SimRng>,
    /// Per stream: job failure draws.
    job_failure: Vec<SimRng>,
}

/// All state of a run.
pub struct World {
    pub scenario: Scenario,
    pub st: Static,
    pub queue: EventQueue<Event>,
    pub tqs: TaskQueueDb,
    pub jobs: Vec<Job>,
    pub pilots: Vec<Pilot>,
    pub ces: Vec<CeState>,
    pub recorder: Recorder,
    pub digest: Digest,
    pub events: u64,
    /// The accounting history the share corrector reads.
    history: UsageHistory,
    /// Pilots in Submitted/Waiting per TQ within maxPilotWaitingHours, for the director.
    waiting: WaitingPilots,
    aborted: u32,
    rng: Streams,
}

impl World {
    /// Build the world at time 0 with every job arrival and periodic agent scheduled.
    pub fn new(scenario: Scenario, specs: Vec<JobSpec>, rngs: &RngStreams) -> Self {
        let st = Static::new(&scenario);
        let ce_stream = |purpose: &str| -> Vec<SimRng> {
            st.ces.iter().map(|c| rngs.stream(&format!("ce:{}/{purpose}", c.name))).collect()
        };
        let rng = Streams {
            director: rngs.stream("dirac/director"),
            matcher: rngs.stream("dirac/matcher"),
            wms: rngs.stream("grid/wms"),
            ce_wait: ce_stream("wait"),
            ce_abort: ce_stream("abort"),
            ce_stuck: ce_stream("stuck"),
            ce_failure: ce_stream("failure"),
            job_failure: scenario
                .workload
                .iter()
                .map(|w| rngs.stream(&format!("workload:{}/failure", w.name)))
                .collect(),
        };
        let mut queue = EventQueue::new();
        let jobs: Vec<Job> = specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let id = i as JobId + 1;
                queue.push(s.submitted, Event::JobArrival(id));
                Job {
                    id,
                    stream: s.stream,
                    submitted: s.submitted,
                    cpu_work: s.cpu_work,
                    status: JobStatus::Pending,
                    tq: None,
                    matched: None,
                    ended: None,
                    ce: None,
                    pilot: None,
                }
            })
            .collect();
        queue.push(SimTime::ZERO, Event::PriorityRecalculation);
        queue.push(SimTime::ZERO, Event::DirectorCycle);
        queue.push(SimTime::ZERO, Event::Sample);
        if scenario.dirac.share_corrections.enabled {
            queue.push(SimTime::ZERO, Event::HistoryUpdate);
        }
        let ces = vec![CeState::default(); st.ces.len()];
        let warmup = SimTime::ZERO + SimDuration::from_secs_f64(scenario.output.warmup_s);
        let recorder = Recorder::new(st.entities.clone(), warmup);
        Self {
            scenario,
            st,
            queue,
            tqs: TaskQueueDb::new(),
            jobs,
            pilots: Vec::new(),
            ces,
            recorder,
            digest: Digest::new(),
            events: 0,
            history: UsageHistory::default(),
            waiting: WaitingPilots::default(),
            aborted: 0,
            rng,
        }
    }

    /// Process every event up to and including `until`.
    pub fn run_until(&mut self, until: SimTime) {
        while let Some((now, ev)) = self.queue.pop_until(until) {
            let (code, id) = ev.digest_words();
            self.digest.write_u64(now.as_millis());
            self.digest.write_u64(code << 32 | id);
            self.events += 1;
            self.handle(now, ev);
        }
    }

    fn after(&mut self, now: SimTime, secs: f64, ev: Event) {
        self.queue.push(now + SimDuration::from_secs_f64(secs), ev);
    }

    fn handle(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::JobArrival(j) => self.job_arrival(j),
            Event::DirectorCycle => {
                self.director_cycle(now);
                self.after(now, self.scenario.dirac.director.polling_time_s, Event::DirectorCycle);
            }
            Event::PriorityRecalculation => {
                self.recompute_priorities();
                self.after(now, self.scenario.dirac.priority.recalculation_period_s, Event::PriorityRecalculation);
            }
            Event::Sample => {
                let counts = self.pilot_counts();
                self.recorder.sample(now, counts);
                self.after(now, self.scenario.output.sample_interval_s, Event::Sample);
            }
            Event::PilotReachesBatch(p) => self.pilot_reaches_batch(now, p),
            Event::PilotAborted(p) => self.pilot_gives_up_waiting(now, p, PilotStatus::Aborted),
            Event::PilotStalled(p) => self.pilot_gives_up_waiting(now, p, PilotStatus::Cancelled),
            Event::JobRequest(p) => self.job_request(now, p),
            Event::JobEnd(p) => self.job_end(now, p),
            Event::HistoryUpdate => {
                self.history.refresh(now, self.recorder.total_job_seconds(now));
                self.after(now, self.scenario.dirac.share_corrections.update_history_period_s, Event::HistoryUpdate);
            }
        }
    }

    // ---- task queues and priorities ------------------------------------------------------

    fn job_arrival(&mut self, j: JobId) {
        let job = &mut self.jobs[j as usize - 1];
        let stream = job.stream as usize;
        let w = &self.scenario.workload[stream];
        job.status = JobStatus::Waiting;
        let change = self.tqs.insert_job(self.st.stream_def[stream].clone(), j, w.user_priority);
        job.tq = Some(change.id());
        self.recorder.job_waiting(self.st.stream_entities[stream]);
        if matches!(change, TqChange::Created(_)) {
            self.recompute_priorities();
        }
    }

    /// The group shares entering the priority computation, corrected by the WMSHistory
    /// corrector when `EnableSharesCorrection` is on (seed 002, "Dynamic share corrections";
    /// reference §2.3): the global instance corrects the shares of the groups that have task
    /// queues, a per-group instance the shares `S_g/U_g` of that group's owners.
    fn entity_shares(&self) -> EntityShares {
        let mut shares = EntityShares { group: self.st.group_share.clone(), user_factor: BTreeMap::new() };
        let sc = &self.scenario.dirac.share_corrections;
        if !sc.enabled {
            return shares;
        }
        let bare = |id: u32| self.st.names.name(id).split_once(':').map_or("", |x| x.1).to_string();
        let owners = priority::owners_per_group(self.tqs.iter());
        for inst in &sc.instances {
            let slices = self.history_slices(inst);
            match &inst.group {
                None => {
                    let expected: BTreeMap<String, f64> =
                        owners.keys().map(|&g| (bare(g), self.st.group_share[&g])).collect();
                    let corrected = corrector::correct_shares(inst, sc.variant, &expected, &slices);
                    for &g in owners.keys() {
                        shares.group.insert(g, corrected[&bare(g)]);
                    }
                }
                Some(group) => {
                    // Factors do not depend on the scale of the expected shares: S_g/U_g each.
                    let Some((&g, users)) = owners.iter().find(|(g, _)| bare(**g) == *group) else { continue };
                    let expected: BTreeMap<String, f64> = users.iter().map(|&u| (bare(u), 1.0)).collect();
                    let factors = corrector::correction_factors(inst, sc.variant, &expected, &slices);
                    for &u in users {
                        shares.user_factor.insert((g, u), factors[&bare(u)]);
                    }
                }
            }
        }
        shares
    }

    /// The usage of each slice of a corrector instance, keyed as the instance's entities
    /// (group names, or user names of its group). Entities with no usage are absent, as in
    /// an accounting report.
    fn history_slices(&self, inst: &CorrectorInstance) -> Vec<BTreeMap<String, f64>> {
        inst.slices
            .iter()
            .map(|slice| {
                let Some(avg) = self.history.average_running(slice.time_span_s) else { return BTreeMap::new() };
                self.recorder
                    .entities
                    .iter()
                    .zip(avg)
                    .filter(|(_, a)| *a > 0.0)
                    .filter_map(|(def, a)| match (&inst.group, def.level) {
                        (None, Level::Group) => Some((def.name.clone(), a)),
                        (Some(g), Level::User) => def
                            .name
                            .strip_prefix(g.as_str())
                            .and_then(|r| r.strip_prefix('/'))
                            .map(|u| (u.to_string(), a)),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn recompute_priorities(&mut self) {
        let shares = self.entity_shares();
        let st = &self.st;
        let weighting = self.scenario.dirac.priority.user_priority_weighting;
        let new = priority::compute(self.tqs.iter(), |g| st.is_job_sharing(g), &shares, weighting);
        for (id, p) in new {
            self.tqs.get_mut(id).expect("listed").priority = p;
        }
    }

    // ---- director and pilots in the middleware ------------------------------------------

    fn director_cycle(&mut self, now: SimTime) {
        let settings = &self.scenario.dirac.director;
        let horizon = now.saturating_sub(SimDuration::from_secs_f64(settings.max_pilot_waiting_hours * 3600.0));
        self.waiting.expire(horizon);
        let waiting = |tq: TqId| self.waiting.count(tq);
        let tqs: Vec<&TaskQueue> = self.tqs.iter().collect();
        let max_cpu = self.scenario.dirac.task_queues.cpu_segments.max();
        let plan = director::plan_cycle(
            settings,
            &tqs,
            waiting,
            &self.st.default_pools,
            self.st.private_type,
            max_cpu,
            &mut self.rng.director,
        );
        for sub in plan {
            let tq = self.tqs.get(sub.tq).expect("planned from the db");
            let identity = if sub.private {
                PilotIdentity::Private { owner: tq.def.owner, group: tq.def.group }
            } else {
                PilotIdentity::Generic
            };
            let candidates = self.list_match(tq, sub.pool);
            let max_cycles = (!sub.private).then_some(self.scenario.dirac.director.max_jobs_in_fill_mode);
            for _ in 0..sub.pilots {
                let Some(ce) = wms::choose(&candidates, &self.ces, &self.st.ce_slots, &mut self.rng.wms) else { break };
                self.submit_pilot(now, ce, sub.tq, identity, max_cycles);
            }
        }
    }

    /// CEs of the pool that can run the TQ (all of the pool's CEs without list-match).
    fn list_match(&self, tq: &TaskQueue, pool: u32) -> Vec<u32> {
        let Some(pool_ces) = self.st.pool_ces.get(&pool) else { return Vec::new() };
        if !self.scenario.dirac.director.list_match {
            return pool_ces.clone();
        }
        let ja = &self.scenario.dirac.job_agent;
        pool_ces
            .iter()
            .copied()
            .filter(|&c| {
                let ce = &self.st.ces[c as usize];
                // Only the resource filters matter here: present the TQ owner's private identity, for
                // which the owner, group and pilot-type filters always pass.
                let r = self.st.resource(
                    c,
                    PilotIdentity::Private { owner: tq.def.owner, group: tq.def.group },
                    ja.cpu_time_left(ce.max_walltime_s, 0.0, ce.cpu_power),
                );
                matcher::tq_matches(&tq.def, &r, |_| true)
            })
            .collect()
    }

    fn submit_pilot(&mut self, now: SimTime, ce: u32, tq: TqId, identity: PilotIdentity, max_cycles: Option<u32>) {
        let id = self.pilots.len() as PilotId;
        let c = ce as usize;
        let cfg = &self.st.ces[c];
        let aborts = dist::bernoulli(&mut self.rng.ce_abort[c], cfg.abort_probability);
        let stuck = !aborts && dist::bernoulli(&mut self.rng.ce_stuck[c], cfg.stuck_probability);
        if aborts {
            let delay = cfg.abort_delay.sample(&mut self.rng.ce_abort[c]);
            self.after(now, delay, Event::PilotAborted(id));
        } else {
            let wait = self.st.ces[c].pilot_wait.sample(&mut self.rng.ce_wait[c]);
            self.after(now, wait, Event::PilotReachesBatch(id));
        }
        self.after(now, self.scenario.dirac.pilot_status.pilot_stalled_days * 86_400.0, Event::PilotStalled(id));
        self.pilots.push(Pilot {
            id,
            ce,
            tq,
            identity,
            status: PilotStatus::Submitted,
            submitted: now,
            started: None,
            ended: None,
            jobs_run: 0,
            cycles: 0,
            max_cycles,
            failed_matches: 0,
            stuck,
            job: None,
        });
        self.ces[c].waiting += 1;
        self.waiting.submitted(tq, id, now);
    }

    fn leave_waiting(&mut self, p: PilotId) {
        let pilot = &self.pilots[p as usize];
        self.ces[pilot.ce as usize].waiting -= 1;
        self.waiting.left(pilot.tq, p);
    }

    fn pilot_reaches_batch(&mut self, now: SimTime, p: PilotId) {
        let pilot = &mut self.pilots[p as usize];
        if pilot.status != PilotStatus::Submitted {
            return; // cancelled meanwhile
        }
        pilot.status = PilotStatus::Waiting;
        if pilot.stuck {
            return; // the pathological middleware: Waiting for ever
        }
        let c = pilot.ce as usize;
        if self.ces[c].queue.is_empty() && self.ces[c].try_take_slot(self.st.ce_slots[c]) {
            self.start_pilot(now, p);
        } else {
            self.ces[c].queue.push_back(p);
        }
    }

    /// Abort (middleware) or cancel (stalled) a pilot that is still waiting.
    fn pilot_gives_up_waiting(&mut self, now: SimTime, p: PilotId, status: PilotStatus) {
        if !self.pilots[p as usize].status.is_waiting() {
            return;
        }
        self.leave_waiting(p);
        let pilot = &mut self.pilots[p as usize];
        pilot.status = status;
        pilot.ended = Some(now);
        if status == PilotStatus::Aborted {
            self.aborted += 1;
        }
    }

    /// A slot was taken for `p`: it starts now.
    fn start_pilot(&mut self, now: SimTime, p: PilotId) {
        self.leave_waiting(p);
        let c = self.pilots[p as usize].ce as usize;
        let fails = dist::bernoulli(&mut self.rng.ce_failure[c], self.st.ces[c].pilot_failure_probability);
        let pilot = &mut self.pilots[p as usize];
        pilot.status = PilotStatus::Running;
        pilot.started = Some(now);
        if fails {
            self.end_pilot(now, p, PilotStatus::Failed);
        } else {
            self.queue.push(now, Event::JobRequest(p));
        }
    }

    /// A running pilot ends: its slot goes to the next pilot in the batch queue.
    fn end_pilot(&mut self, now: SimTime, p: PilotId, status: PilotStatus) {
        debug_assert!(now <= self.walltime_limit(p), "pilot {p} outlived its walltime");
        let pilot = &mut self.pilots[p as usize];
        let c = pilot.ce as usize;
        pilot.status = status;
        pilot.ended = Some(now);
        self.ces[c].release_slot();
        while let Some(next) = self.ces[c].queue.pop_front() {
            if self.pilots[next as usize].status == PilotStatus::Waiting {
                let taken = self.ces[c].try_take_slot(self.st.ce_slots[c]);
                debug_assert!(taken, "a slot was just released");
                self.start_pilot(now, next);
                break;
            }
        }
    }

    // ---- the JobAgent --------------------------------------------------------------------

    /// When the batch system kills a running pilot: its start plus the CE's walltime limit.
    fn walltime_limit(&self, p: PilotId) -> SimTime {
        let pilot = &self.pilots[p as usize];
        pilot.started.expect("running") + SimDuration::from_secs_f64(self.st.ces[pilot.ce as usize].max_walltime_s)
    }

    fn job_request(&mut self, now: SimTime, p: PilotId) {
        let ja = &self.scenario.dirac.job_agent;
        let pilot = &self.pilots[p as usize];
        let c = pilot.ce as usize;
        let cfg = &self.st.ces[c];
        let elapsed = (now - pilot.started.expect("running")).as_secs_f64();
        let cpu_left = ja.cpu_time_left(cfg.max_walltime_s, elapsed, cfg.cpu_power);
        let out_of_cycles = pilot.max_cycles.is_some_and(|m| pilot.cycles >= m);
        if out_of_cycles || (pilot.jobs_run > 0 && !ja.can_ask(cpu_left)) || cpu_left <= 0.0 {
            self.end_pilot(now, p, PilotStatus::Done);
            return;
        }
        let resource = self.st.resource(c as u32, pilot.identity, cpu_left);
        let st = &self.st;
        let found = matcher::request_job(
            &self.tqs,
            &resource,
            |g| st.is_job_sharing(g),
            &self.scenario.dirac.matcher,
            &mut self.rng.matcher,
        );
        self.pilots[p as usize].cycles += 1;
        match found {
            Some(m) => self.start_job(now, p, m.tq, m.job),
            None => {
                let pilot = &mut self.pilots[p as usize];
                pilot.failed_matches += 1;
                let failures = pilot.failed_matches;
                let ja = &self.scenario.dirac.job_agent;
                if ja.gives_up(failures) {
                    self.end_pilot(now, p, PilotStatus::Done);
                } else {
                    // The back-off may be longer than StopMargin: the batch system ends the
                    // pilot at its walltime limit, where the next request finds no time left.
                    let wake = (now + SimDuration::from_secs_f64(ja.backoff_s(failures))).min(self.walltime_limit(p));
                    self.queue.push(wake, Event::JobRequest(p));
                }
            }
        }
    }

    fn start_job(&mut self, now: SimTime, p: PilotId, tq: TqId, j: JobId) {
        let stream = self.jobs[j as usize - 1].stream as usize;
        let up = self.scenario.workload[stream].user_priority;
        let change = self.tqs.remove_job(tq, j, up).expect("the matcher picked a job of this TQ");
        if matches!(change, TqChange::Deleted(_)) {
            self.recompute_priorities();
        }
        let pilot = &mut self.pilots[p as usize];
        pilot.jobs_run += 1;
        pilot.failed_matches = 0;
        pilot.job = Some(j);
        let c = pilot.ce as usize;
        let job = &mut self.jobs[j as usize - 1];
        job.status = JobStatus::Running;
        job.matched = Some(now);
        job.ce = Some(c as u32);
        job.pilot = Some(p);
        // A job longer than the pilot's remaining walltime (possible when its CPUTime is
        // above the last CPU segment) is killed by the batch system at the limit.
        let duration = SimDuration::from_secs_f64(job.cpu_work / self.st.ces[c].cpu_power);
        self.recorder.job_started(now, self.st.stream_entities[stream], self.st.ces[c].cpu_power);
        let limit = self.walltime_limit(p);
        self.queue.push((now + duration).min(limit), Event::JobEnd(p));
    }

    fn job_end(&mut self, now: SimTime, p: PilotId) {
        let j = self.pilots[p as usize].job.take().expect("a pilot ends the job it runs");
        let job = &mut self.jobs[j as usize - 1];
        let stream = job.stream as usize;
        let power = self.st.ces[job.ce.expect("ran somewhere") as usize].cpu_power;
        let fails =
            dist::bernoulli(&mut self.rng.job_failure[stream], self.scenario.workload[stream].failure_probability);
        // Cut short at the walltime limit: its CPU work is not done.
        let killed = now - job.matched.expect("started") < SimDuration::from_secs_f64(job.cpu_work / power);
        job.status = if fails || killed { JobStatus::Failed } else { JobStatus::Done };
        job.ended = Some(now);
        self.recorder.job_ended(now, self.st.stream_entities[stream], power);
        // Filling mode: the JobAgent asks again straight away.
        self.job_request(now, p);
    }

    // ---- observation ---------------------------------------------------------------------

    /// Pilot counts now.
    pub fn pilot_counts(&self) -> PilotCounts {
        let running = self.ces.iter().map(|c| c.busy).sum();
        let waiting = self.ces.iter().map(|c| c.waiting).sum();
        PilotCounts { waiting, running, aborted: self.aborted }
    }
}
