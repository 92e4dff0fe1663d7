//! A pilot factory's Generator (seed 003 §1, §3) on the provisioning boundary: each cycle a
//! generic factory submits what its rate Gp gives ([`Generator`]), a startd factory what keeps
//! the standby count of its policy queued ([`StandbyController`]), round robin over its CEs;
//! a CE that refuses is skipped for the rest of the cycle.
//!
//! [`Generator`]: crate::factory::generic::Generator
//! [`StandbyController`]: crate::factory::standby::StandbyController

use super::factory::{CycleRow, Factory, Mode};
use crate::factory::generic::Observed;
use crate::factory::standby::StandbyObservation;
use crate::grid::{Grid, PilotShape, Refusal};
use crate::ids::{CeId, PilotId, WmsId};
use crate::wms::provision::{Provisioning, RunCtx, Submit};

/// What a factory's Generator sees of its WMS at a cycle (its own pilots it counts itself).
pub struct Demand {
    /// Jobs submitted to the WMS so far (the arrivals since the last cycle, for the adaptive
    /// standby controller).
    pub submitted: u64,
    /// What a startd factory's standby policy reads (none for a generic factory): the jobs
    /// waiting in the WMS for a pilot of the factory's queue (all of DIRAC's), and the free VMs
    /// of its running startd pilots.
    pub startd: Option<(u64, u32)>,
}

/// The world's side of a factory's submissions: the pilot is the factory's (its news and its
/// jobs go to the factories, not to the WMS).
pub(super) struct Owned<'a, 'c> {
    pub ctx: &'a mut (dyn RunCtx + 'c),
    /// The factory owning each pilot, by pilot id.
    pub owner: &'a mut Vec<Option<u32>>,
    pub factory: u32,
    /// The WMS its pilots fetch jobs from.
    pub wms: WmsId,
}

impl Submit<()> for Owned<'_, '_> {
    fn now(&self) -> crate::engine::SimTime {
        self.ctx.now()
    }

    fn grid(&self) -> &Grid {
        self.ctx.grid()
    }

    fn submit(&mut self, ce: CeId, shape: PilotShape, _: ()) -> Result<PilotId, Refusal> {
        let p = self.ctx.submit_pilot(self.wms, ce, shape)?;
        if self.owner.len() <= p as usize {
            self.owner.resize(p as usize + 1, None);
        }
        self.owner[p as usize] = Some(self.factory);
        Ok(p)
    }
}

impl Provisioning for Factory {
    type Demand<'a> = Demand;
    type Ticket = ();
    type Refused = Refusal;
    /// A startd Generator's record of the cycle, for `factory_cycles.parquet` (its `factory`
    /// index is the caller's to set).
    type Report = Option<CycleRow>;

    fn cycle(&mut self, demand: Demand, submit: &mut dyn Submit<()>) -> Option<CycleRow> {
        let now = submit.now();
        let elapsed = now - self.last_cycle;
        self.last_cycle = now;
        let arrived = demand.submitted - self.seen_submitted;
        self.seen_submitted = demand.submitted;
        let observed = Observed { queued: self.queued, running: self.running };
        let pool = if self.is_startd() { self.nodes(submit.grid()) } else { 0 };
        let mut row = None;
        let n = match &mut self.mode {
            Mode::Generic(g) => g.cycle(elapsed, observed).pilots,
            Mode::Startd { settings, standby, .. } => {
                let (queued_jobs, idle_vms) = demand.startd.unwrap_or_default();
                let removals = self.stats.removals - self.seen_removals;
                standby.observe_arrivals(arrived, elapsed);
                standby.observe_removals(removals, self.running + removals as u32, elapsed);
                self.seen_removals = self.stats.removals;
                let ended = self.stats.jobs_done + self.stats.jobs_failed;
                standby.observe_job_ends(ended - self.seen_ended, elapsed);
                self.seen_ended = ended;
                let obs = StandbyObservation {
                    queued_jobs,
                    running_startds: self.running,
                    queued_startds: self.queued,
                    idle_vms,
                    vms_per_startd: settings.vms,
                    pool_startds: pool,
                };
                let target = standby.target(&obs);
                let estimates = standby.estimates();
                // `standby` is counted after the cycle's submissions.
                row = Some(CycleRow { time: now, factory: 0, obs, target, standby: 0, estimates });
                target.saturating_sub(obs.queued_startds)
            }
        };
        self.stats.cycles += 1;
        self.stats.standby_sum += u64::from(self.queued);
        self.submit_round_robin(submit, n);
        row.map(|row| CycleRow { standby: self.queued, ..row })
    }
}

impl Factory {
    /// Submit `n` pilots round robin over its CEs; a CE that refuses is skipped for the rest
    /// of the cycle.
    fn submit_round_robin(&mut self, submit: &mut dyn Submit<()>, n: u32) {
        let cores = match &self.mode {
            Mode::Generic(_) => 1,
            Mode::Startd { settings, .. } => settings.vms,
        };
        let mut open: Vec<CeId> = self.ces.clone();
        for _ in 0..n {
            if open.is_empty() {
                break;
            }
            let k = self.next_ce % open.len();
            match submit.submit(open[k], PilotShape::cpu(cores), ()) {
                Ok(_) => {
                    self.next_ce = k + 1;
                    self.queued += 1;
                    self.stats.pilots_submitted += 1;
                }
                Err(_) => {
                    self.stats.pilots_refused += 1;
                    open.remove(k);
                }
            }
        }
    }
}
