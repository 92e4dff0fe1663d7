//! The DIRAC WMS on the world's boundary: the TaskQueueDB, the Matcher answering the pilots'
//! JobAgents, the TaskQueuesAgent's priorities (with the share corrector), the
//! TaskqueueDirector and the PilotStatusAgent's `PilotStalledDays` (seeds 000–002; reference
//! `dirac.md` §1–§5). It keeps its own tables — each job's task queue, each pilot's task queue
//! and identity — keyed by the neutral ids, and calls the pure `crate::dirac` modules.

mod director;
pub mod setup;
pub mod shares;
pub mod waiting;

use std::collections::BTreeMap;

use director::{DirectorPilot, TaskQueueView, TaskqueueDirector};
use setup::Static;
use shares::ShareKeys;

use crate::dirac::matcher::{self, PilotIdentity, Resource};
use crate::dirac::priority::{self, EntityRecalculationShares, EntityShares};
use crate::dirac::taskqueue::{DefId, EmptyTqDeletion, TaskQueueDb, TqChange, TqId};
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::grid::{Grid, PilotShape, Refusal};
use crate::ids::{CeId, JobId, PilotId, job_index};
use crate::metrics::{ExtraColumn, ExtraValues};
use crate::scenario::Scenario;
use crate::scenario::dirac::{DiracConfig, DiracRules};
use crate::wms::provision::{Provisioning, Submit};
use crate::wms::{Answer, Ctx, FetchRequest, PilotNews, Timer, Wms};
use crate::workload::{Job, JobKind, JobStatus, ShareEntities};

/// Timer kinds (their codes in the run digest).
const DIRECTOR_CYCLE: u16 = 2;
const PRIORITY_RECALCULATION: u16 = 3;
const PILOT_STALLED: u16 = 7;

/// DIRAC 9's shares in the processes that create and delete TQs (reference §2.4): none
/// loaded, every group at `DEFAULT_GROUP_SHARE`. One value for the whole run, not two empty
/// maps built and dropped at every recalculation.
static PROCESS_DEFAULT_SHARES: EntityShares = EntityShares { group: BTreeMap::new(), user_factor: BTreeMap::new() };

/// What DIRAC attaches to one of its pilots. Kept to 16 bytes: the JobAgent reads it at
/// every request, and a compact table keeps the running pilots' entries in cache.
#[derive(Debug, Clone, Copy, Default)]
struct DiracPilot {
    /// The task queue it was submitted for (0: not one of DIRAC's pilots).
    tq: TqId,
    /// Its identity, an index into `DiracWms::identities` (0: generic).
    identity: u32,
    /// JobAgent cycles (match requests) made.
    cycles: u32,
    /// Consecutive failed matches (saturating; `StopAfterFailedMatches` ends it long before).
    failed_matches: u16,
    /// Limited to `MaxJobsInFillMode` cycles (`-M`, generic pilots).
    limited: bool,
}

const _: () = assert!(std::mem::size_of::<DiracPilot>() == 16);

/// The DIRAC WMS.
pub struct DiracWms {
    cfg: DiracConfig,
    /// The options that depend on `dirac.preset`, resolved.
    rules: DiracRules,
    st: Static,
    keys: ShareKeys,
    tqs: TaskQueueDb,
    /// The TQ definition id of each stream in `tqs`.
    stream_def_id: Vec<DefId>,
    /// The task queue of each job it was given, by `job_index` (None: not DIRAC's).
    job_tq: Vec<Option<TqId>>,
    /// Its pilots, by pilot id (`tq` 0: another WMS's).
    pilots: Vec<DiracPilot>,
    /// Pilot identities in first-use order; 0 is Generic.
    identities: Vec<PilotIdentity>,
    /// The TaskqueueDirector, DIRAC's pilot provisioner.
    director: TaskqueueDirector,
    /// The Matcher's random stream.
    matcher_rng: SimRng,
    /// Buffers of the priority recomputation, reused.
    priority_scratch: priority::Scratch,
}

/// Per CE id, whether a pilot factory feeds it for `queue` (a PanDA queue, or DIRAC for `None`).
pub(crate) fn factory_fed(scenario: &Scenario, queue: Option<&str>) -> Vec<bool> {
    let n: usize = scenario.sites.iter().map(|s| s.ces.len()).sum();
    let mut fed = vec![false; n];
    for f in scenario.factory.iter().filter(|f| f.target().2 == queue) {
        for c in f.ce_ids(&scenario.sites) {
            fed[c as usize] = true;
        }
    }
    fed
}

impl DiracWms {
    /// The DIRAC WMS of a validated scenario whose `dirac` section is `cfg`, and its share
    /// entities.
    pub fn new(scenario: &Scenario, cfg: &DiracConfig, rngs: &RngStreams) -> (Self, ShareEntities) {
        let mut st = Static::new(scenario, cfg);
        let entities = setup::share_entities(scenario, cfg);
        let keys = ShareKeys::new(&entities.defs, &cfg.share_corrections, &mut st.names);
        let rules = cfg.rules();
        let keep_empty = rules.empty_tq_deletion == EmptyTqDeletion::OrphanCleaning;
        let mut tqs = TaskQueueDb::with_rules(rules.max_jobs_in_tq, keep_empty);
        let stream_def_id = st.stream_def.iter().map(|d| tqs.intern(d)).collect();
        let wms = Self {
            cfg: cfg.clone(),
            st,
            keys,
            tqs,
            stream_def_id,
            rules,
            job_tq: Vec::new(),
            pilots: Vec::new(),
            identities: vec![PilotIdentity::Generic],
            director: TaskqueueDirector::new(factory_fed(scenario, None), rngs),
            matcher_rng: rngs.stream("dirac/matcher"),
            priority_scratch: priority::Scratch::default(),
        };
        (wms, entities)
    }

    /// `UpdateHistoryPeriod` when share corrections are on: how often the accounting history
    /// the corrector reads is refreshed.
    pub fn accounting_period(&self) -> Option<SimDuration> {
        let sc = &self.cfg.share_corrections;
        sc.enabled.then(|| sc.update_history_period_s.duration())
    }

    fn after(ctx: &mut dyn Ctx, secs: f64, kind: u16, id: u32) {
        let at = ctx.now() + SimDuration::from_secs_f64(secs);
        ctx.set_timer(at, Timer { kind, id });
    }

    fn pilot(&mut self, p: PilotId) -> &mut DiracPilot {
        &mut self.pilots[p as usize]
    }

    // ---- task queues and priorities (TaskQueuesAgent) -------------------------------------

    /// The Matcher gave job `m.job` of TQ `m.tq`: it leaves its TQ.
    fn take_matched(&mut self, ctx: &mut dyn Ctx, m: matcher::Match) {
        let stream = ctx.jobs()[job_index(m.job)].stream as usize;
        let up = self.st.stream_user_priority[stream];
        match self.tqs.remove_job(m.tq, m.job, up).expect("the matcher picked a job of this TQ") {
            TqChange::Deleted(_) => {
                let def = &self.st.stream_def[stream];
                self.recalculate_entity(ctx, def.group, def.owner);
            }
            // DIRAC 9.1.22: the TQ stays, nothing recomputed, until the director's query
            // finds it (`EmptyTqDeletion::OrphanCleaning`, `director_cycle`).
            TqChange::Emptied(_) => {}
            _ => {
                // The job that has just entered the Matcher's window (the first
                // `jobs_per_level` of the level) may be matched next: load its record now.
                let last = self.rules.matching.jobs_per_level.max(1) as usize - 1;
                if let Some(next) = self.tqs.get(m.tq).and_then(|t| t.levels.get(up)?.get(last)) {
                    crate::engine::prefetch(&ctx.jobs()[job_index(next)]);
                }
            }
        }
    }

    /// A TQ of `owner` in `group` was created or deleted: DIRAC recomputes that entity's
    /// priorities, or its whole group's when the number of owners may have changed
    /// (`recalculateTQSharesForEntity`, [`priority::recalculate_entity_into`]). The other TQs
    /// keep theirs, computed from the job averages of that time, until the next agent pass.
    /// Under DIRAC 9 the shares are the process-local default, 1000 per group and uncorrected
    /// (`EntityRecalculationShares::ProcessDefault`, reference §2.4).
    fn recalculate_entity(&mut self, ctx: &dyn Ctx, group: u32, owner: u32) {
        self.recalculate(ctx, Some((group, owner)));
    }

    /// The TaskQueuesAgent's pass (`recalculateTQSharesForAll`): every group.
    fn recalculate_all(&mut self, ctx: &dyn Ctx) {
        self.recalculate(ctx, None);
    }

    fn recalculate(&mut self, ctx: &dyn Ctx, entity: Option<(u32, u32)>) {
        let sc = &self.cfg.share_corrections;
        let corrected;
        let in_process = self.rules.entity_recalculation_shares == EntityRecalculationShares::ProcessDefault;
        let shares = if entity.is_some() && in_process {
            // DIRAC 9: the optimizer and the Matcher never load the shares (reference §2.4).
            &PROCESS_DEFAULT_SHARES
        } else if sc.enabled {
            let variant = self.rules.corrector_variant;
            corrected = shares::entity_shares(&self.tqs, &self.st, sc, variant, &self.keys, ctx.accounting());
            &corrected
        } else {
            &self.st.shares
        };
        let st = &self.st;
        let weighting = self.rules.user_priority_weighting;
        let scratch = &mut self.priority_scratch;
        match entity {
            Some((group, owner)) => {
                let job_sharing = st.is_job_sharing(group);
                priority::recalculate_entity_into(&self.tqs, group, owner, job_sharing, shares, weighting, scratch)
            }
            None => priority::compute_into(self.tqs.iter(), |g| st.is_job_sharing(g), shares, weighting, scratch),
        };
        let new = if self.rules.sum_identical_definitions {
            priority::sum_identical_definitions_into(&self.tqs, scratch)
        } else {
            scratch.result()
        };
        self.tqs.set_priorities(new);
    }

    // ---- the TaskqueueDirector ------------------------------------------------------------

    fn director_cycle(&mut self, ctx: &mut dyn Ctx) {
        // The director's `getMatchingTaskQueues` asks for every TQ (its query names no site
        // or CE), so under DIRAC 9.1.22 it finds any kept empty TQ with a requirement row,
        // and `retrieveTaskQueues` then deletes every empty TQ (`cleanOrphanedTaskQueues`)
        // without recomputing a priority (reference §1.4, §4.3).
        if self.rules.empty_tq_deletion == EmptyTqDeletion::OrphanCleaning && self.tqs.has_orphan() {
            self.tqs.clean_orphaned();
        }
        let view =
            TaskQueueView { tqs: &self.tqs, st: &self.st, cfg: &self.cfg, max_cpu: self.rules.cpu_segments.max() };
        let stalled_s = self.cfg.pilot_status.pilot_stalled_days * 86_400.0;
        let mut submit = DiracSubmit { ctx, pilots: &mut self.pilots, identities: &mut self.identities, stalled_s };
        self.director.cycle(view, &mut submit);
    }
}

/// The index of `identity` in `identities` (first-use order), added if new.
fn identity_index(identities: &mut Vec<PilotIdentity>, identity: PilotIdentity) -> u32 {
    let i = identities.iter().position(|&x| x == identity).unwrap_or_else(|| {
        identities.push(identity);
        identities.len() - 1
    });
    i as u32
}

/// DIRAC's side of the director's submissions: the pilot's entry (its TQ, identity and fill
/// mode limit) and its `PilotStalledDays` timer, set as the CE takes it.
struct DiracSubmit<'a> {
    ctx: &'a mut dyn Ctx,
    pilots: &'a mut Vec<DiracPilot>,
    /// Pilot identities in first-use order; 0 is Generic.
    identities: &'a mut Vec<PilotIdentity>,
    stalled_s: f64,
}

impl Submit<DirectorPilot> for DiracSubmit<'_> {
    fn now(&self) -> SimTime {
        self.ctx.now()
    }

    fn grid(&self) -> &Grid {
        self.ctx.grid()
    }

    fn submit(&mut self, ce: CeId, shape: PilotShape, t: DirectorPilot) -> Result<PilotId, Refusal> {
        let p = self.ctx.submit_pilot(ce, shape)?;
        DiracWms::after(self.ctx, self.stalled_s, PILOT_STALLED, p);
        let identity = identity_index(self.identities, t.identity);
        let i = p as usize;
        if self.pilots.len() <= i {
            self.pilots.resize(i + 1, DiracPilot::default());
        }
        self.pilots[i] = DiracPilot {
            tq: t.tq,
            identity,
            cycles: 0,
            failed_matches: 0,
            limited: t.identity == PilotIdentity::Generic,
        };
        Ok(p)
    }
}

impl Wms for DiracWms {
    fn name(&self) -> &str {
        "dirac"
    }

    fn start(&mut self, ctx: &mut dyn Ctx) {
        ctx.set_timer(SimTime::ZERO, Timer { kind: PRIORITY_RECALCULATION, id: 0 });
        ctx.set_timer(SimTime::ZERO, Timer { kind: DIRECTOR_CYCLE, id: 0 });
    }

    fn job_submitted(&mut self, ctx: &mut dyn Ctx, j: JobId) {
        let stream = ctx.jobs()[job_index(j)].stream as usize;
        let up = self.st.stream_user_priority[stream];
        let change = self.tqs.insert_job_as(self.stream_def_id[stream], j, up);
        let i = job_index(j);
        if self.job_tq.len() <= i {
            self.job_tq.resize(i + 1, None);
        }
        self.job_tq[i] = Some(change.id());
        if matches!(change, TqChange::Created(_)) {
            let def = &self.st.stream_def[stream];
            self.recalculate_entity(ctx, def.group, def.owner);
        }
    }

    fn timer(&mut self, ctx: &mut dyn Ctx, timer: Timer) {
        match timer.kind {
            DIRECTOR_CYCLE => {
                self.director_cycle(ctx);
                Self::after(ctx, self.cfg.director.polling_time_s.as_secs_f64(), DIRECTOR_CYCLE, 0);
            }
            PRIORITY_RECALCULATION => {
                self.recalculate_all(ctx);
                Self::after(ctx, self.cfg.priority.recalculation_period_s.as_secs_f64(), PRIORITY_RECALCULATION, 0);
            }
            PILOT_STALLED => {
                // PilotStalledDays after submission: a pilot still waiting is given up.
                if ctx.grid().pilot(timer.id).status.is_waiting() {
                    ctx.cancel_pilot(timer.id);
                }
            }
            other => unreachable!("DIRAC set no timer of kind {other}"),
        }
    }

    /// Started, or ended (aborted, failed, cancelled, done): the pilot no longer counts as
    /// waiting for the director (a second call for the same pilot changes nothing).
    fn pilot_news(&mut self, _ctx: &mut dyn Ctx, p: PilotId, _news: PilotNews) {
        let tq = self.pilot(p).tq;
        self.director.pilot_left(tq, p);
    }

    /// Its per-pilot entry (the director's TQ, identity and match counters).
    fn prefetch_pilot(&self, p: PilotId) {
        if let Some(dp) = self.pilots.get(p as usize) {
            crate::engine::prefetch(dp);
        }
    }

    /// The JobAgent's cycle (reference §5): stop when out of cycles or CPU time, otherwise
    /// ask the Matcher; after a failed match back off, or stop after too many.
    fn pilot_asks(&mut self, ctx: &mut dyn Ctx, p: PilotId) -> Answer {
        let now = ctx.now();
        let ja = &self.cfg.job_agent;
        let pilot = ctx.grid().pilot(p);
        let (c, jobs_run) = (pilot.ce, pilot.jobs_run);
        let ce = &ctx.grid().ces[c as usize];
        let elapsed = (now - pilot.started().expect("running")).as_secs_f64();
        let cpu_left = ja.cpu_time_left(ce.max_walltime_s, elapsed, ce.cpu_power);
        let dp = self.pilots[p as usize];
        let out_of_cycles = dp.limited && dp.cycles >= self.cfg.director.max_jobs_in_fill_mode;
        if out_of_cycles || (jobs_run > 0 && !ja.can_ask(cpu_left)) || cpu_left <= 0.0 {
            return Answer::Exit;
        }
        let resource = self.st.resource(c, self.identities[dp.identity as usize], cpu_left);
        let st = &self.st;
        let found = matcher::request_job(
            &self.tqs,
            &resource,
            |g| st.is_job_sharing(g),
            self.rules.matching,
            &mut self.matcher_rng,
        );
        self.pilot(p).cycles += 1;
        match found {
            Some(m) => {
                self.take_matched(ctx, m);
                self.pilot(p).failed_matches = 0;
                Answer::Run(m.job)
            }
            None => {
                let pilot = self.pilot(p);
                pilot.failed_matches = pilot.failed_matches.saturating_add(1);
                let failures = u32::from(pilot.failed_matches);
                let ja = &self.cfg.job_agent;
                if ja.gives_up(failures) {
                    Answer::Exit
                } else {
                    Answer::Wait(SimDuration::from_secs_f64(ja.backoff_s(failures)))
                }
            }
        }
    }

    /// A pilot factory's pilot at a CE of this DIRAC asks the Matcher for a job: a generic
    /// pilot's resource at its CE, with the CE's CPU time left for a pilot started now (the
    /// factory's pilot runs one job, or one per VM), and `JobType` restricted to the kind asked
    /// (seed 003 §2; reference §1.3 item 4).
    fn fetch_job(&mut self, ctx: &mut dyn Ctx, req: &FetchRequest) -> Option<JobId> {
        let c = ctx.grid().pilot(req.pilot).ce;
        let ce = &ctx.grid().ces[c as usize];
        let cpu_left = self.cfg.job_agent.cpu_time_left(ce.max_walltime_s, 0.0, ce.cpu_power);
        let types: &[u32] = match req.only {
            None => &[],
            Some(kind) => &self.st.kind_job_types[usize::from(kind == JobKind::Analysis)],
        };
        if req.only.is_some() && types.is_empty() {
            return None; // no job of that kind exists (an empty list would mean "any")
        }
        let resource = Resource { job_types: types, ..self.st.resource(c, PilotIdentity::Generic, cpu_left) };
        let st = &self.st;
        let m = matcher::request_job(
            &self.tqs,
            &resource,
            |g| st.is_job_sharing(g),
            self.rules.matching,
            &mut self.matcher_rng,
        )?;
        self.take_matched(ctx, m);
        Some(m.job)
    }

    fn queued_jobs(&self, _queue: Option<&str>) -> u64 {
        self.tqs.waiting_jobs()
    }

    fn job_columns(&self, jobs: &[Job]) -> Vec<ExtraColumn> {
        let tq = jobs.iter().map(|j| self.job_tq.get(job_index(j.id)).copied().flatten()).collect();
        vec![ExtraColumn { name: "task_queue_id".into(), values: ExtraValues::U32(tq) }]
    }

    fn pilot_columns(&self, grid: &Grid) -> Vec<ExtraColumn> {
        let of = |p: u32| self.pilots.get(p as usize).copied().filter(|d| d.tq != 0);
        let tq = grid.pilots.iter().map(|p| of(p.id).map(|d| d.tq)).collect();
        let kind = grid
            .pilots
            .iter()
            .map(|p| {
                of(p.id).map(|d| match self.identities[d.identity as usize] {
                    PilotIdentity::Generic => "generic".to_string(),
                    PilotIdentity::Private { .. } => "private".to_string(),
                })
            })
            .collect();
        let cycles = grid.pilots.iter().map(|p| of(p.id).map(|d| d.cycles)).collect();
        vec![
            ExtraColumn { name: "task_queue_id".into(), values: ExtraValues::U32(tq) },
            ExtraColumn { name: "kind".into(), values: ExtraValues::Str(kind) },
            ExtraColumn { name: "match_requests".into(), values: ExtraValues::U32(cycles) },
        ]
    }

    fn check_invariants(&self, jobs: &[Job]) -> Vec<String> {
        let mut bad = Vec::new();
        let mine = |j: &&Job| self.job_tq.get(job_index(j.id)).copied().flatten().is_some();
        let waiting = jobs.iter().filter(mine).filter(|j| j.status == JobStatus::Waiting).count() as u64;
        if waiting != self.tqs.waiting_jobs() {
            bad.push(format!("{waiting} waiting jobs but {} jobs in task queues", self.tqs.waiting_jobs()));
        }
        bad
    }
}

#[cfg(test)]
mod tests;
