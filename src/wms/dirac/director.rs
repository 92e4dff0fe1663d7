//! DIRAC's TaskqueueDirector on the provisioning boundary (seed 000; reference `dirac.md` §4):
//! each cycle it plans pilots per task queue ([`director::plan_cycle`]: the waiting jobs, the
//! pilots still waiting within `maxPilotWaitingHours`, `extraPilotFraction`,
//! `pilotsPerIteration`) and submits each to a CE of the TQ's submit pool that can run it,
//! chosen by the middleware's ranking; a CE that refuses is dropped for the rest of the cycle.

use std::collections::BTreeMap;

use super::setup::Static;
use super::waiting::WaitingPilots;
use crate::dirac::director::{self, DirectorSettings};
use crate::dirac::matcher::{self, PilotIdentity};
use crate::dirac::taskqueue::{DefId, TaskQueue, TaskQueueDb, TqId};
use crate::engine::{RngStreams, SimDuration, SimRng};
use crate::grid::{Grid, PilotShape, Refusal, ranking};
use crate::ids::{CeId, PilotId};
use crate::scenario::dirac::DiracConfig;
use crate::wms::provision::{Provisioning, Submit};

/// What the director reads of DIRAC at a cycle (`retrieveTaskQueues`): the task queues and the
/// static configuration of the submit pools.
pub(super) struct TaskQueueView<'a> {
    pub tqs: &'a TaskQueueDb,
    pub st: &'a Static,
    pub cfg: &'a DiracConfig,
    /// The longest CPU time a TQ may ask for (the last CPU segment).
    pub max_cpu: f64,
}

/// What DIRAC records of a pilot the director submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DirectorPilot {
    /// The task queue it was submitted for.
    pub tq: TqId,
    /// Private (the TQ's owner's) or generic (limited to `MaxJobsInFillMode` cycles).
    pub identity: PilotIdentity,
}

/// The TaskqueueDirector's own state.
pub(super) struct TaskqueueDirector {
    /// Pilots in Submitted/Waiting per TQ within maxPilotWaitingHours.
    waiting: WaitingPilots,
    /// Streams: the director's draws and the gLite WMS's CE choice.
    rng: SimRng,
    middleware_rng: SimRng,
    /// CEs a pilot factory feeds for DIRAC (`factory[]` without `queue`, seed 003), by CE id:
    /// the director submits no pilots there.
    factory_ce: Vec<bool>,
    /// The list-match of each (TQ definition, submit pool) the director has asked for: the
    /// pool's CEs, outside the factories', that can run it. It depends only on the definition
    /// and on the CEs' configuration, which a run never changes, so each pair is matched once
    /// instead of once per cycle (at 10⁷ jobs, 500 CEs per TQ every 60 s).
    list_matches: BTreeMap<(DefId, u32), Vec<CeId>>,
    /// The buffers of one submission: the CEs it may go to and their ranks.
    candidates: Vec<CeId>,
    ranks: ranking::Ranks,
}

impl TaskqueueDirector {
    pub fn new(factory_ce: Vec<bool>, rngs: &RngStreams) -> Self {
        TaskqueueDirector {
            waiting: WaitingPilots::default(),
            rng: rngs.stream("dirac/director"),
            middleware_rng: rngs.stream("grid/wms"),
            factory_ce,
            list_matches: BTreeMap::new(),
            candidates: Vec::new(),
            ranks: ranking::Ranks::default(),
        }
    }

    /// Pilot `p` of TQ `tq` started or ended: it no longer counts as waiting (a second call
    /// for the same pilot changes nothing).
    pub fn pilot_left(&mut self, tq: TqId, p: PilotId) {
        self.waiting.left(tq, p);
    }
}

impl Provisioning for TaskqueueDirector {
    type Demand<'a> = TaskQueueView<'a>;
    type Ticket = DirectorPilot;
    type Refused = Refusal;
    type Report = ();

    fn cycle(&mut self, view: TaskQueueView<'_>, submit: &mut dyn Submit<DirectorPilot>) {
        let now = submit.now();
        let settings: &DirectorSettings = &view.cfg.director;
        let horizon = now.saturating_sub(SimDuration::from_secs_f64(settings.max_pilot_waiting_hours * 3600.0));
        self.waiting.expire(horizon);
        let waiting = |tq: TqId| self.waiting.count(tq);
        // The director is shown no empty TQ (`retrieveTaskQueues` joins the jobs).
        // Sized once (a filtered `collect` grows by doubling: 6 % of a small run's loop).
        let mut tqs: Vec<&TaskQueue> = Vec::with_capacity(view.tqs.len());
        tqs.extend(view.tqs.iter().filter(|t| t.n_jobs > 0));
        let st = view.st;
        let plan = director::plan_cycle(
            settings,
            &tqs,
            waiting,
            &st.default_pools,
            st.private_type,
            view.max_cpu,
            &mut self.rng,
        );
        // Whether `self.ranks` are the ranks of `self.candidates` now: not at a cycle's start
        // (pilots started and ended since the last one); always after a submission, refused
        // CEs removed from both.
        let mut ranks_current = false;
        for sub in plan {
            let tq = view.tqs.get(sub.tq).expect("planned from the db");
            let identity = if sub.private {
                PilotIdentity::Private { owner: tq.def.owner, group: tq.def.group }
            } else {
                PilotIdentity::Generic
            };
            let factory_ce = &self.factory_ce;
            let listed = self
                .list_matches
                .entry((tq.def_id, sub.pool))
                .or_insert_with(|| list_match(st, view.cfg, factory_ce, submit.grid(), tq, sub.pool));
            // A submission changes only the state of its CE, so only that CE is ranked again;
            // and nothing else changes a CE's state during the cycle, so a submission whose
            // candidates are those of the one before (most are: every TQ of a pool that all
            // its CEs can run) goes on with its ranks instead of ranking every CE again.
            let rank_of = |grid: &Grid, c: CeId| ranking::rank(&grid.state[c as usize], grid.ce_slots[c as usize]);
            if !ranks_current || self.candidates != *listed {
                self.candidates.clear();
                self.candidates.extend_from_slice(listed);
                let grid = submit.grid();
                self.ranks.reset(self.candidates.iter().map(|&c| rank_of(grid, c)));
            }
            ranks_current = true;
            let ticket = DirectorPilot { tq: sub.tq, identity };
            let (candidates, ranks) = (&mut self.candidates, &mut self.ranks);
            let mut submitted = 0;
            while submitted < sub.pilots {
                let Some(i) = ranks.choose(&mut self.middleware_rng) else { break };
                let ce = candidates[i];
                // The CE queue's `NumberOfGPUs` (0: a CPU pilot), from any of its GPU kinds.
                let gpus = submit.grid().ces[ce as usize].number_of_gpus;
                let shape = PilotShape { gpus, ..PilotShape::default() };
                // A CE whose queue is full refuses the pilot: the middleware ranks the other
                // candidates for the rest of this cycle (a pool lists each CE once).
                let Ok(p) = submit.submit(ce, shape, ticket) else {
                    candidates.remove(i);
                    ranks.remove(i);
                    continue;
                };
                ranks.set(i, rank_of(submit.grid(), ce));
                submitted += 1;
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
