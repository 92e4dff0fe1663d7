//! The DIRAC WMS on the world's boundary: the TaskQueueDB, the Matcher answering the pilots'
//! JobAgents, the TaskQueuesAgent's priorities (with the share corrector), the
//! TaskqueueDirector and the PilotStatusAgent's `PilotStalledDays` (seeds 000–002; reference
//! `dirac.md` §1–§5). It keeps its own tables — each job's task queue, each pilot's task queue
//! and identity — keyed by the neutral ids, and calls the pure `crate::dirac` modules.

pub mod setup;
pub mod shares;
pub mod waiting;

use std::collections::BTreeMap;

use setup::Static;
use shares::ShareKeys;
use waiting::WaitingPilots;

use crate::dirac::director;
use crate::dirac::matcher::{self, PilotIdentity, Resource};
use crate::dirac::priority::{self, EntityRecalculationShares, EntityShares};
use crate::dirac::taskqueue::{DefId, EmptyTqDeletion, TaskQueue, TaskQueueDb, TqChange, TqId};
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime};
use crate::grid::{Grid, PilotShape, ranking};
use crate::ids::{CeId, JobId, PilotId, job_index};
use crate::metrics::{ExtraColumn, ExtraValues};
use crate::scenario::Scenario;
use crate::scenario::dirac::{DiracConfig, DiracRules};
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
    /// Pilots in Submitted/Waiting per TQ within maxPilotWaitingHours, for the director.
    waiting: WaitingPilots,
    /// Streams: the director's draws, the Matcher's, and the gLite WMS's CE choice.
    director_rng: SimRng,
    matcher_rng: SimRng,
    middleware_rng: SimRng,
    /// CEs a pilot factory feeds for DIRAC (`factory[]` without `queue`, seed 003), by CE id:
    /// the director submits no pilots there.
    factory_ce: Vec<bool>,
    /// The list-match of each (TQ definition, submit pool) the director has asked for: the
    /// pool's CEs, outside the factories', that can run it. It depends only on the definition
    /// and on the CEs' configuration, which a run never changes, so each pair is matched once
    /// instead of once per cycle (at 10⁷ jobs, 500 CEs per TQ every 60 s).
    list_matches: BTreeMap<(DefId, u32), Vec<CeId>>,
    /// Buffers of the priority recomputation, reused.
    priority_scratch: priority::Scratch,
    /// The director's buffers for one submission: the CEs it may go to and their ranks.
    candidates: Vec<CeId>,
    ranks: ranking::Ranks,
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
            waiting: WaitingPilots::default(),
            director_rng: rngs.stream("dirac/director"),
            matcher_rng: rngs.stream("dirac/matcher"),
            middleware_rng: rngs.stream("grid/wms"),
            factory_ce: factory_fed(scenario, None),
            list_matches: BTreeMap::new(),
            priority_scratch: priority::Scratch::default(),
            candidates: Vec::new(),
            ranks: ranking::Ranks::default(),
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

    /// The index of an identity in `identities`, added if new.
    fn identity_index(&mut self, identity: PilotIdentity) -> u32 {
        let i = self.identities.iter().position(|&x| x == identity).unwrap_or_else(|| {
            self.identities.push(identity);
            self.identities.len() - 1
        });
        i as u32
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
        let now = ctx.now();
        let settings = &self.cfg.director;
        let horizon = now.saturating_sub(SimDuration::from_secs_f64(settings.max_pilot_waiting_hours * 3600.0));
        self.waiting.expire(horizon);
        let waiting = |tq: TqId| self.waiting.count(tq);
        // The director is shown no empty TQ (`retrieveTaskQueues` joins the jobs).
        let tqs: Vec<&TaskQueue> = self.tqs.iter().filter(|t| t.n_jobs > 0).collect();
        let max_cpu = self.rules.cpu_segments.max();
        let plan = director::plan_cycle(
            settings,
            &tqs,
            waiting,
            &self.st.default_pools,
            self.st.private_type,
            max_cpu,
            &mut self.director_rng,
        );
        // Whether `self.ranks` are the ranks of `self.candidates` now: not at a cycle's start
        // (pilots started and ended since the last one); always after a submission, refused
        // CEs removed from both.
        let mut ranks_current = false;
        for sub in plan {
            let tq = self.tqs.get(sub.tq).expect("planned from the db");
            let identity = if sub.private {
                PilotIdentity::Private { owner: tq.def.owner, group: tq.def.group }
            } else {
                PilotIdentity::Generic
            };
            let (st, cfg, factory_ce) = (&self.st, &self.cfg, &self.factory_ce);
            let listed = self
                .list_matches
                .entry((tq.def_id, sub.pool))
                .or_insert_with(|| list_match(st, cfg, factory_ce, ctx.grid(), tq, sub.pool));
            // A submission changes only the state of its CE, so only that CE is ranked again;
            // and nothing else changes a CE's state during the cycle, so a submission whose
            // candidates are those of the one before (most are: every TQ of a pool that all
            // its CEs can run) goes on with its ranks instead of ranking every CE again.
            let rank_of = |grid: &Grid, c: CeId| ranking::rank(&grid.state[c as usize], grid.ce_slots[c as usize]);
            if !ranks_current || self.candidates != *listed {
                self.candidates.clear();
                self.candidates.extend_from_slice(listed);
                let grid = ctx.grid();
                self.ranks.reset(self.candidates.iter().map(|&c| rank_of(grid, c)));
            }
            ranks_current = true;
            let identity = self.identity_index(identity);
            let (candidates, ranks) = (&mut self.candidates, &mut self.ranks);
            let mut submitted = 0;
            while submitted < sub.pilots {
                let Some(i) = ranks.choose(&mut self.middleware_rng) else { break };
                let ce = candidates[i];
                // A CE whose queue is full refuses the pilot: the middleware ranks the other
                // candidates for the rest of this cycle.
                // (A pool lists each CE once.)
                // The CE queue's `NumberOfGPUs` (0: a CPU pilot), from any of its GPU kinds.
                let gpus = ctx.grid().ces[ce as usize].number_of_gpus;
                let shape = PilotShape { gpus, ..PilotShape::default() };
                let Ok(p) = ctx.submit_pilot(ce, shape) else {
                    candidates.remove(i);
                    ranks.remove(i);
                    continue;
                };
                ranks.set(i, rank_of(ctx.grid(), ce));
                submitted += 1;
                Self::after(ctx, self.cfg.pilot_status.pilot_stalled_days * 86_400.0, PILOT_STALLED, p);
                let i = p as usize;
                if self.pilots.len() <= i {
                    self.pilots.resize(i + 1, DiracPilot::default());
                }
                self.pilots[i] =
                    DiracPilot { tq: sub.tq, identity, cycles: 0, failed_matches: 0, limited: !sub.private };
                self.waiting.submitted(sub.tq, p, now);
            }
        }
    }
}

/// CEs of the pool that can run the TQ (all of the pool's CEs without list-match), less those
/// a pilot factory feeds.
fn list_match(
    st: &Static,
    cfg: &DiracConfig,
    factory_ce: &[bool],
    grid: &Grid,
    tq: &TaskQueue,
    pool: u32,
) -> Vec<CeId> {
    let Some(pool_ces) = st.pool_ces.get(&pool) else { return Vec::new() };
    let ja = &cfg.job_agent;
    let fed = |c: CeId| factory_ce.get(c as usize).copied().unwrap_or(false);
    pool_ces
        .iter()
        .copied()
        .filter(|&c| !fed(c))
        .filter(|&c| {
            if !cfg.director.list_match {
                return true;
            }
            let ce = &grid.ces[c as usize];
            // Only the resource filters matter here: present the TQ owner's private identity, for
            // which the owner, group and pilot-type filters always pass.
            let r = st.resource(
                c,
                PilotIdentity::Private { owner: tq.def.owner, group: tq.def.group },
                ja.cpu_time_left(ce.max_walltime_s, 0.0, ce.cpu_power),
            );
            matcher::tq_matches(&tq.def, &r, |_| true)
        })
        .collect()
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
        self.waiting.left(tq, p);
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
